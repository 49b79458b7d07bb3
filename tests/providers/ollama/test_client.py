"""Ollama: conversations in and out of `OllamaProvider`, and `OllamaModel` through ollama-python.

The model tests run the official SDK's ``AsyncClient`` against an in-process httpx transport (ollama-python
passes extra keyword arguments such as ``transport=`` on to ``httpx.AsyncClient``) serving recorded
responses, and check both directions: the body on the wire and the neutral result.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import ollama
import pytest

from agentkit import ImagePart, Registry, TextPart, ToolCall, ToolResult, tool
from agentkit.exceptions import ModelAPIError, ModelHTTPError
from agentkit.messages import AssistantMessage, Message, SystemMessage, ToolResultsMessage, UserMessage
from agentkit.models import (
    ModelSettings,
    ResponseDone,
    TextDelta,
    ToolCallArgsDelta,
    ToolCallStart,
    infer_model,
)
from agentkit.providers.ollama import OllamaModel, OllamaProvider
from tests.spec import assert_spec_valid

from ..client_common import QueueServer, assert_blocked, cut_before
from ..common import read_fixture
from ..forecast_tools import get_weather, local_time

FIXTURES = Path(__file__).parent / "fixtures" / "client"
LOCAL = "http://127.0.0.1:11434"


def fixture(name: str) -> Any:
    return read_fixture(FIXTURES, name)


@pytest.fixture
def registry() -> Registry:
    return Registry([get_weather, local_time])


# ---- format_messages / parse_response (pure) ----------------------------------------------------------


def test_format_messages(registry: Registry) -> None:
    messages: list[Message] = [
        SystemMessage("You are terse."),
        UserMessage(
            [
                TextPart("What is in this picture?"),
                ImagePart(data=b"\x89PNG"),
                ImagePart(url="data:image/jpeg;base64,/9j/AAAA"),
                ImagePart(url="https://example.com/cat.png"),
            ]
        ),
        AssistantMessage(
            "Let me check.",
            [ToolCall("call_k3v9q2xa", "get_weather", {"city": "Paris"})],
            provider_details={"ollama": {"thinking": "Need the weather."}},
        ),
        ToolResultsMessage([ToolResult("call_k3v9q2xa", "get_weather", [TextPart('{"temp": 21}')])]),
    ]
    out = OllamaProvider().format_messages(messages, registry=registry)["messages"]
    assert out[0] == {"role": "system", "content": "You are terse."}
    assert out[1]["role"] == "user"
    assert out[1]["images"] == [base64.b64encode(b"\x89PNG").decode(), "/9j/AAAA"]
    assert out[1]["content"].startswith("What is in this picture?\n[image: https://example.com/cat.png")
    assert out[2] == {
        "role": "assistant",
        "content": "Let me check.",
        "thinking": "Need the weather.",
        "tool_calls": [
            {"id": "call_k3v9q2xa", "function": {"index": 0, "name": "get_weather", "arguments": {"city": "Paris"}}}
        ],
    }
    assert out[3] == {
        "role": "tool",
        "tool_name": "get_weather",
        "tool_call_id": "call_k3v9q2xa",
        "content": '{"temp": 21}',
    }
    for message in out:
        assert_spec_valid("ollama.chat.message", message)


def test_plain_assistant_text_has_no_tool_calls_key() -> None:
    out = OllamaProvider().format_messages([AssistantMessage("Hello.")])["messages"]
    assert out == [{"role": "assistant", "content": "Hello."}]


def test_other_vendors_details_are_ignored() -> None:
    message = AssistantMessage(
        "",
        [ToolCall("toolu_1", "get_weather", '{"city": "Oslo"}', {"thoughtSignature": "c2ln"})],
        provider_details={"gemini": {"parts": [{"text": "x", "thought": True}]}, "cohere": {"content": []}},
    )
    (out,) = OllamaProvider().format_messages([message])["messages"]
    assert out == {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "toolu_1", "function": {"index": 0, "name": "get_weather", "arguments": {"city": "Oslo"}}}
        ],
    }
    assert_spec_valid("ollama.chat.message", out)


def test_arguments_that_are_not_an_object_are_kept_visible() -> None:
    message = AssistantMessage("", [ToolCall("c1", "get_weather", "[1, 2]")])
    (out,) = OllamaProvider().format_messages([message])["messages"]
    assert out["tool_calls"][0]["function"]["arguments"] == {"_raw_arguments": "[1, 2]"}


def test_parse_response_text() -> None:
    response = OllamaProvider().parse_response(fixture("text"))
    assert response.message.text == "Paris is sunny today, 21 °C."
    assert response.message.provider_details is None
    assert (response.usage.input_tokens, response.usage.output_tokens, response.usage.requests) == (52, 11, 1)
    assert response.finish_reason == "stop"
    assert response.model_name == "qwen3:8b"


def test_parse_response_tool_call_keeps_thinking_for_replay(registry: Registry) -> None:
    provider = OllamaProvider()
    response = provider.parse_response(fixture("tool_call"), registry=registry)
    assert response.finish_reason == "tool_calls"  # Ollama says "stop"
    (call,) = response.message.tool_calls
    assert (call.id, call.name, call.arguments) == ("call_k3v9q2xa", "get_weather", {"city": "Paris", "unit": "c"})
    thinking = "The user wants the weather in Paris, so I call get_weather."
    assert response.message.provider_details == {"ollama": {"thinking": thinking}}
    (replayed,) = provider.format_messages([response.message], registry=registry)["messages"]
    assert replayed["thinking"] == thinking
    assert replayed["tool_calls"][0]["id"] == "call_k3v9q2xa"


def test_length_is_kept() -> None:
    data = {"message": {"role": "assistant", "content": "It was a dark"}, "done": True, "done_reason": "length"}
    assert OllamaProvider().parse_response(data).finish_reason == "length"


# ---- OllamaModel through ollama-python ----------------------------------------------------------------


class Server(QueueServer):
    """An in-process Ollama server: records each request, answers from a queue."""

    def client(self, host: str = LOCAL) -> Any:
        return ollama.AsyncClient(host=host, transport=httpx.MockTransport(self))


def ok(name: str) -> httpx.Response:
    return httpx.Response(200, json=fixture(name))


def model_for(server: Server) -> OllamaModel:
    return OllamaModel("qwen3:8b", client=server.client())


async def test_plain_text_request(registry: Registry) -> None:
    server = Server(ok("text"))
    model = model_for(server)
    messages: list[Message] = [SystemMessage("Be brief."), UserMessage("Weather in Paris?")]
    response = await model.request(messages, registry, ModelSettings(max_tokens=64, temperature=0.1))

    (request,) = server.requests
    assert (request.method, request.url.path) == ("POST", "/api/chat")
    body = server.body()
    assert body == model.payload(messages, registry, ModelSettings(max_tokens=64, temperature=0.1))
    assert body["model"] == "qwen3:8b" and body["stream"] is False
    assert body["options"] == {"num_predict": 64, "temperature": 0.1}
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
    ]
    assert body["tools"] == OllamaProvider().format_tools(registry)["tools"]
    for entry in body["tools"]:
        assert_spec_valid("ollama.chat.tool", entry)

    assert model.name == "ollama:qwen3:8b"
    assert response.message.text == "Paris is sunny today, 21 °C."
    assert (response.usage.input_tokens, response.usage.output_tokens) == (52, 11)
    assert response.finish_reason == "stop"


async def test_tool_choice_none_sends_no_tools_and_a_key_sends_one(registry: Registry) -> None:
    server = Server(ok("text"), ok("text"))
    model = model_for(server)
    await model.request([UserMessage("hi")], registry, ModelSettings(tool_choice="none"))
    assert "tools" not in server.body()
    await model.request([UserMessage("hi")], registry, ModelSettings(tool_choice="local_time"))
    assert [t["function"]["name"] for t in server.body()["tools"]] == ["local_time"]


async def test_tool_call_round_trip_keeps_ids_on_the_wire(registry: Registry) -> None:
    server = Server(ok("tool_call"), ok("text"))
    model = model_for(server)
    messages: list[Message] = [UserMessage("Paris?")]
    first = await model.request(messages, registry, ModelSettings())
    (call,) = first.message.tool_calls
    assert (call.id, call.name) == ("call_k3v9q2xa", "get_weather")
    messages += [first.message, ToolResultsMessage([await registry.call(call)])]
    await model.request(messages, registry, ModelSettings())

    sent = server.body()["messages"]
    # ollama-python's chat() would have dropped both ids; the raw body keeps them
    assert sent[1]["tool_calls"][0]["id"] == "call_k3v9q2xa"
    assert sent[1]["thinking"] == "The user wants the weather in Paris, so I call get_weather."
    assert sent[2]["tool_call_id"] == "call_k3v9q2xa" and sent[2]["tool_name"] == "get_weather"
    assert json.loads(sent[2]["content"]) == {"city": "Paris", "temp": 21}
    for message in sent:
        assert_spec_valid("ollama.chat.message", message)


async def test_parallel_calls(registry: Registry) -> None:
    server = Server(ok("parallel_calls"))
    response = await model_for(server).request([UserMessage("Paris and Tokyo?")], registry, ModelSettings())
    calls = response.message.tool_calls
    assert [(c.id, c.name) for c in calls] == [
        ("call_p1a2b3c4", "get_weather"),
        ("call_t5d6e7f8", "get_weather"),
        ("call_z9y8x7w6", "local_time"),
    ]
    assert calls[0].arguments == {"city": "Paris"}  # the null sent for unit is dropped: its default applies
    assert response.finish_reason == "tool_calls"


async def test_schema_keywords_chat_would_drop_reach_the_server() -> None:
    @tool
    def pick(choice: int | str) -> str:
        """Pick one.

        Args:
            choice: A number or a name.
        """
        return str(choice)

    server = Server(ok("text"))
    await model_for(server).request([UserMessage("hi")], Registry([pick]), ModelSettings())
    sent = server.body()["tools"][0]["function"]["parameters"]["properties"]["choice"]
    assert (
        sent
        == OllamaProvider().format_tools(Registry([pick]))["tools"][0]["function"]["parameters"]["properties"]["choice"]
    )
    assert "anyOf" in sent


async def test_settings_extra_is_merged(registry: Registry) -> None:
    server = Server(ok("text"))
    extra = {"options": {"top_p": 0.9}, "keep_alive": "5m", "think": True}
    await model_for(server).request([UserMessage("hi")], registry, ModelSettings(max_tokens=8, extra=extra))
    body = server.body()
    assert body["options"] == {"num_predict": 8, "top_p": 0.9}
    assert (body["keep_alive"], body["think"]) == ("5m", True)


async def test_stream(registry: Registry) -> None:
    server = Server(httpx.Response(200, content=(FIXTURES / "stream.ndjson").read_bytes()))
    model = model_for(server)
    messages: list[Message] = [UserMessage("Paris?")]
    events = [e async for e in model.stream(messages, registry, ModelSettings())]

    expected = model.payload(messages, registry, ModelSettings())
    expected["stream"] = True
    assert server.body() == expected

    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Let me ", "check."]
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert [(s.index, s.call_id, s.tool_name) for s in starts] == [
        (0, "call_s1a2b3c4", "get_weather"),
        (1, "call_s5d6e7f8", "local_time"),
    ]
    args = [e for e in events if isinstance(e, ToolCallArgsDelta)]
    assert [json.loads(a.arguments_so_far) for a in args] == [{"city": "Paris"}, {"tz": "Europe/Paris"}]
    done = events[-1]
    assert isinstance(done, ResponseDone)
    response = done.response
    assert response.message.text == "Let me check."
    assert [c.id for c in response.message.tool_calls] == ["call_s1a2b3c4", "call_s5d6e7f8"]
    assert response.message.tool_calls[0].arguments == {"city": "Paris"}
    assert response.message.provider_details == {"ollama": {"thinking": "Two lookups are needed."}}
    assert response.finish_reason == "tool_calls"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (98, 31)


async def test_an_error_line_inside_a_stream(registry: Registry) -> None:
    lines = (
        b'{"model":"qwen3:8b","message":{"role":"assistant","content":"Hi"},"done":false}\n{"error":"out of memory"}\n'
    )
    server = Server(httpx.Response(200, content=lines))
    with pytest.raises(ModelAPIError, match="out of memory") as info:
        async for _ in model_for(server).stream([UserMessage("hi")], registry, ModelSettings()):
            pass
    assert not isinstance(info.value, ModelHTTPError)


@pytest.mark.parametrize("status", [400, 401, 429, 500])
async def test_http_errors_keep_status_body_and_headers(status: int, registry: Registry) -> None:
    body = fixture("errors")[str(status)]
    server = Server(httpx.Response(status, json=body, headers={"x-request-id": f"req-{status}"}))
    with pytest.raises(ModelHTTPError) as info:
        await model_for(server).request([UserMessage("hi")], registry, ModelSettings())
    error = info.value
    assert error.status_code == status
    assert error.body == body
    assert error.headers["x-request-id"] == f"req-{status}"
    assert error.kind == {400: "bad_request", 401: "auth", 429: "rate_limit", 500: "server_error"}[status]


async def test_stream_http_error(registry: Registry) -> None:
    server = Server(httpx.Response(404, json={"error": 'model "qwen9" not found, try pulling it first'}))
    with pytest.raises(ModelHTTPError) as info:
        async for _ in model_for(server).stream([UserMessage("hi")], registry, ModelSettings()):
            pass
    assert info.value.status_code == 404 and info.value.kind == "not_found"
    assert info.value.body == {"error": 'model "qwen9" not found, try pulling it first'}


async def test_connection_error(registry: Registry) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    model = OllamaModel("qwen3:8b", client=ollama.AsyncClient(host=LOCAL, transport=httpx.MockTransport(refuse)))
    with pytest.raises(ModelAPIError, match="could not reach Ollama at http://127.0.0.1:11434"):
        await model.request([UserMessage("hi")], registry, ModelSettings())


# ---- setup: host, keys, blocked requests, ownership ---------------------------------------------------


def test_default_host_and_no_key_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    monkeypatch.delenv("OLLAMA_API_KEY", raising=False)
    model = infer_model("ollama:qwen3:8b")
    assert isinstance(model, OllamaModel)
    assert model.name == "ollama:qwen3:8b" and model.model_name == "qwen3:8b"
    assert model.base_url == "http://127.0.0.1:11434"


def test_ollama_host_and_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "gpu-box.local.test:9999")
    model = OllamaModel("qwen3:8b", api_key="secret")
    assert model.base_url == "http://gpu-box.local.test:9999"
    assert model.client._client.headers["authorization"] == "Bearer secret"
    assert OllamaModel("qwen3:8b", base_url="http://127.0.0.1:1234").base_url == "http://127.0.0.1:1234"


async def test_requests_to_a_remote_host_are_blocked_in_tests(registry: Registry) -> None:
    server = Server(ok("text"))
    model = OllamaModel("qwen3:8b", client=server.client(host="https://ollama.com"))
    await assert_blocked(model, registry, server.requests)
    assert len(server.requests) == 1


async def test_client_ownership() -> None:
    server = Server()
    client = server.client()
    await OllamaModel("qwen3:8b", client=client).aclose()
    assert not client._client.is_closed
    built = OllamaModel("qwen3:8b", base_url=LOCAL)
    await built.aclose()
    assert built.client._client.is_closed


def test_importing_agentkit_does_not_load_ollama() -> None:
    code = (
        "import sys, agentkit, agentkit.models, agentkit.providers.ollama, agentkit.providers.ollama; "
        "assert 'ollama' not in sys.modules, 'loaded'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parents[2])


def test_missing_sdk_gives_an_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ollama", None)  # makes the import fail
    with pytest.raises(ImportError, match=r"pip install 'agentkit-tools\[ollama\]'"):
        OllamaModel("qwen3:8b")


async def test_a_stream_cut_before_done_is_no_turn(registry: Registry) -> None:
    data = (FIXTURES / "stream.ndjson").read_bytes()
    server = Server(httpx.Response(200, content=cut_before(data, b'"done":true', b"\n")))
    with pytest.raises(ModelAPIError, match="before the chunk with done: true"):
        [e async for e in model_for(server).stream([UserMessage("Paris?")], registry, ModelSettings())]


async def test_a_json_body_for_a_stream_request_is_no_turn(registry: Registry) -> None:
    data = json.dumps({**json.loads((FIXTURES / "tool_call.json").read_text()), "done": False}).encode()
    server = Server(httpx.Response(200, content=data, headers={"content-type": "application/json"}))
    with pytest.raises(ModelAPIError):
        [e async for e in model_for(server).stream([UserMessage("Paris?")], registry, ModelSettings())]
