"""Gemini: conversations in and out of `GeminiProvider`, and `GeminiModel` through google-genai.

The model tests run the official SDK against an in-process httpx2 transport (google-genai's default HTTP
library) serving recorded responses, and check both directions: the body the SDK put on the wire and
the neutral result.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
from google import genai
from google.genai import types

from agentkit import ImagePart, Registry, TextPart, ToolCall, ToolResult
from agentkit.exceptions import ModelAPIError, ModelHTTPError, ModelSetupError
from agentkit.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResultsMessage,
    UserMessage,
)
from agentkit.models import (
    ModelSettings,
    ResponseDone,
    TextDelta,
    ToolCallArgsDelta,
    ToolCallStart,
    infer_model,
)
from agentkit.providers.gemini import GeminiModel
from agentkit.providers.gemini._codec import GENERATED_ID_PREFIX, GeminiProvider
from tests.spec import assert_spec_valid

from ..client_common import QueueServer, assert_blocked, cut_before
from ..common import read_fixture
from ..forecast_tools import get_weather, local_time

FIXTURES = Path(__file__).parent / "fixtures" / "client"
LOCAL = "http://127.0.0.1:8765"


def fixture(name: str) -> Any:
    return read_fixture(FIXTURES, name)


@pytest.fixture
def registry() -> Registry:
    return Registry([get_weather, local_time])


# ---- format_messages / parse_response (pure) ----------------------------------------------------------


SIGNATURE = base64.b64encode(b"\x12\x34signature\xfe\xff").decode()


def history() -> list[Message]:
    return [
        SystemMessage("You are terse."),
        UserMessage([TextPart("Weather in Paris?"), ImagePart(data=b"\x89PNG", media_type="image/png")]),
        AssistantMessage(
            "Checking.",
            [ToolCall("x7k2p9qa", "get_weather", {"city": "Paris"}, {"thoughtSignature": SIGNATURE})],
        ),
        ToolResultsMessage([ToolResult("x7k2p9qa", "get_weather", [TextPart('{"city": "Paris", "temp": 21}')])]),
        SystemMessage("Answer in French."),
        UserMessage("And a picture: "),
        UserMessage(
            [
                ImagePart(url="data:image/jpeg;base64,/9j/AAAA"),
                ImagePart(url="https://generativelanguage.googleapis.com/v1beta/files/abc", media_type="image/webp"),
            ]
        ),
    ]


def test_format_messages_builds_system_instruction_and_contents(registry: Registry) -> None:
    body = GeminiProvider().format_messages(history(), registry=registry)
    assert body["systemInstruction"] == {"parts": [{"text": "You are terse."}, {"text": "Answer in French."}]}
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user", "user", "user"]
    user, model, results, _, images = body["contents"]
    assert user["parts"] == [
        {"text": "Weather in Paris?"},
        {"inlineData": {"mimeType": "image/png", "data": base64.b64encode(b"\x89PNG").decode()}},
    ]
    assert model["parts"] == [
        {"text": "Checking."},
        {
            "functionCall": {"id": "x7k2p9qa", "name": "get_weather", "args": {"city": "Paris"}},
            "thoughtSignature": SIGNATURE,
        },
    ]
    assert results["parts"] == [
        {
            "functionResponse": {
                "id": "x7k2p9qa",
                "name": "get_weather",
                "response": {"output": {"city": "Paris", "temp": 21}},
            }
        }
    ]
    assert images["parts"] == [
        {"inlineData": {"mimeType": "image/jpeg", "data": "/9j/AAAA"}},
        {
            "fileData": {
                "mimeType": "image/webp",
                "fileUri": "https://generativelanguage.googleapis.com/v1beta/files/abc",
            }
        },
    ]
    for content in body["contents"]:
        for part in content["parts"]:
            assert_spec_valid("gemini.part", part)
    for part in body["systemInstruction"]["parts"]:
        assert_spec_valid("gemini.part", part)


def test_history_without_system_sends_no_system_instruction() -> None:
    body = GeminiProvider().format_messages([UserMessage("hi")])
    assert body == {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}


def test_other_vendors_details_are_ignored(registry: Registry) -> None:
    message = AssistantMessage(
        "",
        [ToolCall("call_1", "get_weather", '{"city": "Oslo"}', {"item_id": "fc_1", "caller": {"type": "direct"}})],
        provider_details={"anthropic": {"blocks": [{"type": "thinking", "thinking": "x", "signature": "s"}]}},
    )
    body = GeminiProvider().format_messages([UserMessage("?"), message], registry=registry)
    assert body["contents"][1] == {
        "role": "model",
        "parts": [{"functionCall": {"id": "call_1", "name": "get_weather", "args": {"city": "Oslo"}}}],
    }


def test_arguments_that_are_not_an_object_are_kept_visible() -> None:
    message = AssistantMessage("", [ToolCall("call_1", "get_weather", '{"city": "Oslo"')])
    parts = GeminiProvider().format_messages([message])["contents"][0]["parts"]
    assert parts[0]["functionCall"]["args"] == {"_raw_arguments": '{"city": "Oslo"'}


def test_aliases_are_used_for_calls_and_results_alike() -> None:
    registry = Registry({"weather now": get_weather})
    gemini = GeminiProvider()
    wire = gemini.format_tools(registry, aliases=True)["tools"][0]["functionDeclarations"][0]["name"]
    assert wire != "weather now"
    messages: list[Message] = [
        AssistantMessage("", [ToolCall("c1", "weather now", {"city": "Rome"})]),
        ToolResultsMessage([ToolResult("c1", "weather now", [TextPart("ok")])]),
    ]
    contents = gemini.format_messages(messages, registry=registry, aliases=True)["contents"]
    assert contents[0]["parts"][0]["functionCall"]["name"] == wire
    assert contents[1]["parts"][0]["functionResponse"]["name"] == wire


def test_parse_response_text_usage_and_reason() -> None:
    response = GeminiProvider().parse_response(fixture("text"))
    assert response.message.text == "Paris is sunny today, 21 °C."
    assert response.message.tool_calls == []
    assert response.message.provider_details is None  # nothing beyond text: nothing to replay
    assert response.usage.input_tokens == 52 and response.usage.output_tokens == 11
    assert response.usage.requests == 1
    assert response.finish_reason == "stop"
    assert response.model_name == "gemini-2.5-flash"


def test_parse_response_counts_thinking_as_output(registry: Registry) -> None:
    response = GeminiProvider().parse_response(fixture("tool_call"), registry=registry)
    assert response.usage.output_tokens == 18 + 63
    assert response.finish_reason == "tool_calls"
    (call,) = response.message.tool_calls
    assert (call.id, call.name, call.arguments) == ("x7k2p9qa", "get_weather", {"city": "Paris", "unit": "c"})
    assert call.provider_details == {"thoughtSignature": "CiQBcsjafOSnpx3xMOoVDJFvR8cQTvmEFMfLG3b3e8y3K5YVZ8QKYgFyyNp8"}


@pytest.mark.parametrize(
    ("reason", "expected"),
    [("MAX_TOKENS", "length"), ("SAFETY", "content_filter"), ("MALFORMED_FUNCTION_CALL", "malformed_function_call")],
)
def test_finish_reasons_are_normalised(reason: str, expected: str) -> None:
    data = {"candidates": [{"content": {"role": "model", "parts": [{"text": "x"}]}, "finishReason": reason}]}
    assert GeminiProvider().parse_response(data).finish_reason == expected


def test_a_blocked_prompt_is_a_content_filter() -> None:
    data = {"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {"promptTokenCount": 9}}
    response = GeminiProvider().parse_response(data)
    assert response.finish_reason == "content_filter"
    assert response.message.text == "" and response.usage.input_tokens == 9


def test_thought_parts_are_not_text_but_are_replayed_verbatim() -> None:
    parts = [
        {"text": "Weighing the options...", "thought": True},
        {"text": "It is sunny.", "thoughtSignature": "c2lnbmF0dXJl"},
    ]
    gemini = GeminiProvider()
    response = gemini.parse_response({"candidates": [{"content": {"role": "model", "parts": parts}}]})
    assert response.message.text == "It is sunny."
    assert response.message.provider_details == {"gemini": {"parts": parts}}
    replayed = gemini.format_messages([response.message])["contents"][0]
    assert replayed == {"role": "model", "parts": parts}


def test_an_edited_message_is_rebuilt_instead_of_replayed() -> None:
    gemini = GeminiProvider()
    data = {"candidates": [{"content": {"role": "model", "parts": [{"text": "A", "thoughtSignature": "c2ln"}]}}]}
    message = gemini.parse_response(data).message
    message.text = "B"
    assert gemini.format_messages([message])["contents"][0] == {"role": "model", "parts": [{"text": "B"}]}


def test_snake_case_parts_are_stored_camel_case(registry: Registry) -> None:
    data = {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [
                        {
                            "function_call": {"id": "c1", "name": "local_time", "args": {"tz": "UTC"}},
                            "thought_signature": "c2ln",
                        }
                    ],
                },
                "finish_reason": "STOP",
            }
        ],
        "usage_metadata": {"prompt_token_count": 4, "candidates_token_count": 2},
        "model_version": "gemini-3-flash-preview",
    }
    gemini = GeminiProvider()
    response = gemini.parse_response(data, registry=registry)
    assert response.finish_reason == "tool_calls" and response.usage.total_tokens == 6
    parts = gemini.format_messages([response.message], registry=registry)["contents"][0]["parts"]
    assert parts == [
        {"functionCall": {"id": "c1", "name": "local_time", "args": {"tz": "UTC"}}, "thoughtSignature": "c2ln"}
    ]
    assert_spec_valid("gemini.part", parts[0])


def test_parallel_calls_replay_with_generated_ids_left_out(registry: Registry) -> None:
    gemini = GeminiProvider()
    response = gemini.parse_response(fixture("parallel_calls"), registry=registry)
    calls = response.message.tool_calls
    assert [c.name for c in calls] == ["get_weather", "get_weather", "local_time"]
    assert all(c.id.startswith(GENERATED_ID_PREFIX) for c in calls)
    assert calls[0].arguments == {"city": "Paris"}  # the null sent for unit is dropped: its default applies
    results = ToolResultsMessage([ToolResult(c.id, c.name, [TextPart("ok")]) for c in calls])
    contents = gemini.format_messages([response.message, results], registry=registry)["contents"]
    # the model turn goes back exactly as Gemini sent it (signature and null included)
    assert contents[0] == fixture("parallel_calls")["candidates"][0]["content"]
    sent = [p["functionResponse"] for p in contents[1]["parts"]]
    assert [r["name"] for r in sent] == ["get_weather", "get_weather", "local_time"]
    assert all("id" not in r for r in sent)


# ---- GeminiModel through google-genai -----------------------------------------------------------------


class Server(QueueServer):
    """An in-process Gemini endpoint: records each request, answers from a queue."""

    def client(self, base_url: str = LOCAL) -> Any:
        http = httpx2.AsyncClient(transport=httpx2.MockTransport(self))
        options = types.HttpOptions(base_url=base_url, httpx_async_client=http)
        return genai.Client(api_key="test-key", http_options=options)


def ok(name: str) -> httpx2.Response:
    return httpx2.Response(200, json=fixture(name))


def sse(name: str) -> httpx2.Response:
    text = (FIXTURES / name).read_text()
    return httpx2.Response(200, content=text.encode(), headers={"content-type": "text/event-stream"})


def model_for(server: Server, **kwargs: Any) -> GeminiModel:
    return GeminiModel("gemini-2.5-flash", client=server.client(), **kwargs)


async def test_plain_text_request(registry: Registry) -> None:
    server = Server(ok("text"))
    model = model_for(server)
    messages: list[Message] = [SystemMessage("Be brief."), UserMessage("Weather in Paris?")]
    settings = ModelSettings()
    response = await model.request(messages, registry, settings)

    (request,) = server.requests
    # google-genai 3.x calls /v1, 2.x (the last for Python 3.10) /v1beta: the same method either way
    assert re.fullmatch(r"/v1(beta)?/models/gemini-2\.5-flash:generateContent", request.url.path), request.url.path
    assert request.headers["x-goog-api-key"] == "test-key"
    body = server.body()
    assert body == model.payload(messages, registry, settings)
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert body["contents"] == [{"role": "user", "parts": [{"text": "Weather in Paris?"}]}]
    assert body["tools"] == GeminiProvider().format_tools(registry)["tools"]
    assert_spec_valid("gemini.tool", body["tools"][0])
    assert_spec_valid("gemini.tool_config", body["toolConfig"])

    assert model.name == "gemini:gemini-2.5-flash"
    assert response.message.text == "Paris is sunny today, 21 °C."
    assert response.finish_reason == "stop"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (52, 11)
    assert response.model_name == "gemini-2.5-flash"


async def test_tool_call_request_sends_tool_choice_unchanged(registry: Registry) -> None:
    server = Server(ok("tool_call"))
    model = model_for(server)
    settings = ModelSettings(tool_choice="get_weather", max_tokens=256, temperature=0.2)
    response = await model.request([UserMessage("Paris?")], registry, settings)

    body = server.body()
    expected = GeminiProvider().format_tools(registry, tool_choice="get_weather")
    assert body["tools"] == expected["tools"]
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}}
    assert body["generationConfig"] == {"maxOutputTokens": 256, "temperature": 0.2}
    # google-genai alone would have sent parameters_json_schema; extra_body keeps our camelCase form
    assert "parametersJsonSchema" in body["tools"][0]["functionDeclarations"][0]

    (call,) = response.message.tool_calls
    assert (call.id, call.name, call.arguments) == ("x7k2p9qa", "get_weather", {"city": "Paris", "unit": "c"})
    assert call.provider_details == {"thoughtSignature": "CiQBcsjafOSnpx3xMOoVDJFvR8cQTvmEFMfLG3b3e8y3K5YVZ8QKYgFyyNp8"}
    assert response.finish_reason == "tool_calls"


async def test_signatures_and_results_go_back_on_the_wire(registry: Registry) -> None:
    server = Server(ok("parallel_calls"), ok("text"))
    model = model_for(server)
    messages: list[Message] = [UserMessage("Paris and Tokyo?")]
    first = await model.request(messages, registry, ModelSettings())
    calls = first.message.tool_calls
    assert [c.name for c in calls] == ["get_weather", "get_weather", "local_time"]
    results = [await registry.call(c) for c in calls]
    messages += [first.message, ToolResultsMessage(results)]
    await model.request(messages, registry, ModelSettings())

    sent = server.body()["contents"]
    assert sent[1] == fixture("parallel_calls")["candidates"][0]["content"]
    assert sent[1]["parts"][1]["thoughtSignature"] == "CiIBcsjafJ2h4rR0v0nKQ2x1m3b8e5WzX4cYQnB6b7uE"
    responses = [p["functionResponse"] for p in sent[2]["parts"]]
    assert [r["response"]["output"] for r in responses] == [
        {"city": "Paris", "temp": 21},
        {"city": "Tokyo", "temp": 21},
        "10:00",
    ]
    for part in sent[1]["parts"] + sent[2]["parts"]:
        assert_spec_valid("gemini.part", part)


async def test_settings_extra_is_merged_into_the_body(registry: Registry) -> None:
    server = Server(ok("text"))
    model = model_for(server)
    extra = {
        "generationConfig": {"topP": 0.5},
        "safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}],
    }
    await model.request([UserMessage("hi")], Registry(), ModelSettings(max_tokens=5, extra=extra))
    body = server.body()
    assert body["generationConfig"] == {"maxOutputTokens": 5, "topP": 0.5}
    assert body["safetySettings"] == extra["safetySettings"]
    assert "tools" not in body


async def test_a_clients_own_extra_body_is_kept() -> None:
    server = Server(ok("text"))
    http = httpx2.AsyncClient(transport=httpx2.MockTransport(server))
    options = types.HttpOptions(
        base_url=LOCAL, httpx_async_client=http, extra_body={"generationConfig": {"topK": 4}, "cachedContent": "c/1"}
    )
    model = GeminiModel("gemini-2.5-flash", client=genai.Client(api_key="k", http_options=options))
    settings = ModelSettings(temperature=0.3, extra={"generationConfig": {"topK": 8}})
    await model.request([UserMessage("hi")], Registry(), settings)
    body = server.body()
    assert body == model.payload([UserMessage("hi")], Registry(), settings)
    assert body["generationConfig"] == {"temperature": 0.3, "topK": 8}  # settings.extra wins
    assert body["cachedContent"] == "c/1"


async def test_stream(registry: Registry) -> None:
    server = Server(sse("stream.sse"))
    model = model_for(server)
    messages: list[Message] = [UserMessage("Paris?")]
    events = [e async for e in model.stream(messages, registry, ModelSettings())]

    (request,) = server.requests
    # google-genai 3.x calls /v1, 2.x (the last for Python 3.10) /v1beta: the same method either way
    assert re.fullmatch(r"/v1(beta)?/models/gemini-2\.5-flash:streamGenerateContent", request.url.path), (
        request.url.path
    )
    assert request.url.params["alt"] == "sse"
    assert server.body() == model.payload(messages, registry, ModelSettings())

    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Let me ", "check both."]
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert [(s.index, s.tool_name) for s in starts] == [(0, "get_weather"), (1, "local_time")]
    args = [e for e in events if isinstance(e, ToolCallArgsDelta)]
    assert [json.loads(a.arguments_so_far) for a in args] == [{"city": "Paris"}, {"tz": "Europe/Paris"}]
    done = events[-1]
    assert isinstance(done, ResponseDone)
    response = done.response
    assert response.message.text == "Let me check both."
    assert [c.id for c in response.message.tool_calls] == [s.call_id for s in starts]
    assert response.message.tool_calls[0].provider_details == {
        "thoughtSignature": "CiIBcsjafJ2h4rR0v0nKQ2x1m3b8e5WzX4cYQnB6b7uE"
    }
    assert response.finish_reason == "tool_calls"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (98, 31)
    # the merged turn replays as one text part plus the calls, signature intact
    replay = GeminiProvider().format_messages([response.message], registry=registry)["contents"][0]["parts"]
    assert replay[0] == {"text": "Let me check both."}
    assert replay[1]["thoughtSignature"] == "CiIBcsjafJ2h4rR0v0nKQ2x1m3b8e5WzX4cYQnB6b7uE"


@pytest.mark.parametrize("status", [400, 401, 429, 500])
async def test_http_errors_keep_status_body_and_headers(status: int, registry: Registry) -> None:
    body = fixture("errors")[str(status)]
    server = Server(httpx2.Response(status, json=body, headers={"x-request-id": f"req-{status}"}))
    with pytest.raises(ModelHTTPError) as info:
        await model_for(server).request([UserMessage("hi")], registry, ModelSettings())
    error = info.value
    assert error.status_code == status
    assert error.body == body
    assert error.headers["x-request-id"] == f"req-{status}"
    assert error.model_name == "gemini:gemini-2.5-flash"
    assert error.kind == {400: "bad_request", 401: "auth", 429: "rate_limit", 500: "server_error"}[status]
    assert len(server.requests) == 1  # no silent retries


async def test_stream_http_error(registry: Registry) -> None:
    server = Server(httpx2.Response(429, json=fixture("errors")["429"]))
    with pytest.raises(ModelHTTPError) as info:
        async for _ in model_for(server).stream([UserMessage("hi")], registry, ModelSettings()):
            pass
    assert info.value.status_code == 429


async def test_connection_error_is_a_model_api_error(registry: Registry) -> None:
    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused", request=request)

    http = httpx2.AsyncClient(transport=httpx2.MockTransport(refuse))
    client = genai.Client(api_key="k", http_options=types.HttpOptions(base_url=LOCAL, httpx_async_client=http))
    with pytest.raises(ModelAPIError, match="could not reach Gemini") as info:
        await GeminiModel("gemini-2.5-flash", client=client).request([UserMessage("hi")], registry, ModelSettings())
    assert not isinstance(info.value, ModelHTTPError)


async def test_a_malformed_history_fails_before_any_request(registry: Registry) -> None:
    server = Server(ok("text"))
    bad = AssistantMessage("", [ToolCall("c1", "get_weather", {"city": "x"}, {"thoughtSignature": "not base64 !"})])
    with pytest.raises(ModelAPIError, match="google-genai refused"):
        await model_for(server).request([UserMessage("hi"), bad], registry, ModelSettings())
    assert server.requests == []


# ---- setup: keys, blocked requests, ownership ---------------------------------------------------------


def test_missing_api_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    with pytest.raises(ModelSetupError, match="GEMINI_API_KEY") as info:
        infer_model("gemini:gemini-2.5-flash")
    assert "GOOGLE_API_KEY" in str(info.value) and "test" in str(info.value)


@pytest.mark.parametrize("var", ["GEMINI_API_KEY", "GOOGLE_API_KEY"])
async def test_api_key_from_either_variable(monkeypatch: pytest.MonkeyPatch, var: str) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv(var, f"key-from-{var}")
    model = infer_model("gemini:gemini-2.5-flash")
    assert isinstance(model, GeminiModel) and model.name == "gemini:gemini-2.5-flash"
    assert model.client._api_client.api_key == f"key-from-{var}"
    await model.aclose()


async def test_requests_to_the_real_endpoint_are_blocked_in_tests(registry: Registry) -> None:
    server = Server(ok("text"))
    model = GeminiModel("gemini-2.5-flash", client=server.client(base_url="https://generativelanguage.googleapis.com/"))
    await assert_blocked(model, registry, server.requests)
    assert len(server.requests) == 1


async def test_a_default_client_points_at_google_and_is_blocked(registry: Registry) -> None:
    model = GeminiModel("gemini-2.5-flash", api_key="k")
    assert "googleapis.com" in (model.base_url or "")
    with pytest.raises(ModelSetupError, match="blocked"):
        await model.request([UserMessage("hi")], registry, ModelSettings())
    await model.aclose()


async def test_a_callers_client_is_not_closed() -> None:
    server = Server()
    client = server.client()
    model = GeminiModel("gemini-2.5-flash", client=client)
    await model.aclose()
    assert not client._api_client._async_httpx_client.is_closed


async def test_a_built_client_is_closed_and_uses_base_url() -> None:
    model = GeminiModel("gemini-2.5-flash", api_key="k", base_url=LOCAL)
    assert model.base_url == LOCAL
    http = model.client._api_client._async_httpx_client
    await model.aclose()
    assert http.is_closed


def test_importing_agentkit_does_not_load_google_genai() -> None:
    code = (
        "import sys, agentkit, agentkit.models, agentkit.providers.gemini, agentkit.providers.gemini; "
        "assert 'google.genai' not in sys.modules, 'loaded'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parents[2])


def test_missing_sdk_gives_an_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "google.genai", None)  # makes the import fail
    with pytest.raises(ImportError, match=r"pip install 'agentkit-tools\[gemini\]'"):
        GeminiModel("gemini-2.5-flash", api_key="k")


async def test_a_stream_cut_before_its_finish_reason_is_no_turn(registry: Registry) -> None:
    text = (FIXTURES / "stream.sse").read_bytes()
    cut = cut_before(text, b'"finishReason"')
    server = Server(httpx2.Response(200, content=cut, headers={"content-type": "text/event-stream"}))
    with pytest.raises(ModelAPIError, match="before a finishReason"):
        [e async for e in model_for(server).stream([UserMessage("Paris?")], registry, ModelSettings())]


async def test_a_json_body_for_a_stream_request_is_read_whole_not_as_an_empty_turn(registry: Registry) -> None:
    # google-genai reads a JSON body as one chunk: the whole answer (with its finishReason), never an empty one
    server = Server(ok("tool_call"), ok("tool_call"))
    model = model_for(server)
    events = [e async for e in model.stream([UserMessage("Paris?")], registry, ModelSettings())]
    assert isinstance(events[-1], ResponseDone)
    whole = await model.request([UserMessage("Paris?")], registry, ModelSettings())
    assert events[-1].response.message == whole.message and whole.message.tool_calls
