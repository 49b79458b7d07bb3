"""MistralProvider conversations and MistralModel through the official mistralai SDK, served in-process.

Every request goes through ``mistralai.Mistral`` with an ``httpx2.MockTransport`` that records what the SDK
put on the wire and answers with a recorded response from ``fixtures/mistral``. Both directions are
checked: the body against our payload and Mistral's OpenAPI spec, the answer as neutral types/events.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from functools import partial
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mistralai.client import Mistral

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
from agentkit.providers.mistral import MistralModel
from agentkit.providers.mistral._codec import MistralProvider, normalise_finish_reason
from tests.spec import assert_openapi_valid as assert_vendor_openapi_valid
from tests.spec import assert_spec_valid

from ..client_common import FixtureServer, assert_blocked, cut_before, get_weather, ping, place_order, send
from ..client_common import history as common_history

FIXTURES = Path(__file__).parent / "fixtures" / "client"
LOCAL = "http://127.0.0.1:8765"
NINE_ALNUM = re.compile(r"^[a-zA-Z0-9]{9}$")


# ---- the tools (get_weather, ping, place_order: see common.py) --------------------------------------


@pytest.fixture
def registry() -> Registry:
    # nested models, $defs, bounds and an optional field: what the SDK must carry through untouched
    return Registry({"get_weather": get_weather, "ping": ping, "place_order": place_order})


# ---- the in-process server --------------------------------------------------------------------------


class Server(FixtureServer):
    """Answers with a fixture from ``fixtures/mistral`` through an httpx2 MockTransport."""

    folder = FIXTURES
    http = httpx2


def sdk_client(server: Any, server_url: str | None = LOCAL) -> Mistral:
    return Mistral(
        api_key="test-key",
        server_url=server_url,
        async_client=httpx2.AsyncClient(transport=httpx2.MockTransport(server)),
    )


def model_for(server: Any) -> MistralModel:
    return MistralModel("mistral-large-latest", client=sdk_client(server))


def without_sdk_defaults(wire: dict[str, Any], *, stream: bool = False) -> dict[str, Any]:
    """The wire body minus the three defaults the SDK always adds (asserting their values)."""
    body = json.loads(json.dumps(wire))
    assert body.pop("stream") is stream
    for message in body["messages"]:
        if message["role"] == "assistant":
            assert message.pop("prefix") is False
            for call in message.get("tool_calls") or ():
                assert call.pop("index") == 0
    return body


# ---- Mistral's own OpenAPI spec, for whole request bodies -------------------------------------------


assert_openapi_valid = partial(assert_vendor_openapi_valid, "mistral")


def history(call_ids: tuple[str, str] = ("call_Ab12", "toolu_01XyZ")) -> list[Message]:
    """A conversation with calls made under another vendor's ids, an error result and an image."""
    return common_history(call_ids, ImagePart(data=b"\x89PNG"))


# ---- format_messages / parse_response (pure) --------------------------------------------------------


def test_format_messages_maps_every_role_and_links_ids(registry: Registry) -> None:
    provider = MistralProvider()
    messages = provider.format_messages(history(), registry=registry)["messages"]

    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool", "assistant", "user"]
    assert messages[0] == {"role": "system", "content": "You are terse."}
    assert messages[1]["content"] == [
        {"type": "text", "text": "Weather in Paris and Oslo? And this picture:"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw=="}},
    ]
    assistant, ok, failed = messages[2], messages[3], messages[4]
    assert assistant["content"] == "Checking both."
    sent_ids = [c["id"] for c in assistant["tool_calls"]]
    # foreign ids become nine alphanumerics, the same way in the call and in the result answering it
    assert all(NINE_ALNUM.match(i) for i in sent_ids) and len(set(sent_ids)) == 2
    assert sent_ids == [provider.wire_id("call_Ab12"), provider.wire_id("toolu_01XyZ")]
    assert [ok["tool_call_id"], failed["tool_call_id"]] == sent_ids
    assert assistant["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    assert assistant["tool_calls"][1]["function"]["arguments"] == '{"city": "Oslo", "unit": "f"}'
    assert ok == {"role": "tool", "tool_call_id": sent_ids[0], "name": "get_weather", "content": '{"temp": 21}'}
    assert failed["content"] == "Error: weather service down"
    assert messages[5] == {"role": "assistant", "content": "Paris is 21 C; Oslo is unavailable."}

    assert_spec_valid("mistral.chat.assistant_message", assistant)
    assert_spec_valid("mistral.chat.assistant_message", messages[5])
    for message in (ok, failed):
        assert_spec_valid("mistral.chat.tool_message", message)
    assert_openapi_valid("UserMessage", messages[1])
    assert_openapi_valid("SystemMessage", messages[0])
    assert_openapi_valid("ChatCompletionRequest", {"model": "m", **provider.build_request(history(), registry)})


def test_ids_already_mistral_shaped_pass_unchanged(registry: Registry) -> None:
    messages = MistralProvider().format_messages(history(("a1B2c3D4e", "Z9y8X7w6V")), registry=registry)["messages"]
    assert [c["id"] for c in messages[2]["tool_calls"]] == ["a1B2c3D4e", "Z9y8X7w6V"]
    assert [m["tool_call_id"] for m in messages[3:5]] == ["a1B2c3D4e", "Z9y8X7w6V"]


def test_aliases_apply_to_calls_results_and_parsing() -> None:
    registry = Registry({"weather.get": get_weather})  # the dot breaks Mistral's name rule
    provider = MistralProvider()
    call = ToolCall(id="call_1", name="weather.get", arguments={"city": "Paris"})
    result = ToolResult(call_id="call_1", name="weather.get", content=[TextPart("21")])
    with pytest.raises(Exception, match="weather.get"):
        provider.format_messages([AssistantMessage(tool_calls=[call])], registry=registry)
    messages = provider.format_messages(
        [AssistantMessage(tool_calls=[call]), ToolResultsMessage([result])], registry=registry, aliases=True
    )["messages"]
    wire_name = messages[0]["tool_calls"][0]["function"]["name"]
    assert wire_name != "weather.get" and re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", wire_name)
    assert messages[1]["name"] == wire_name
    response = json.loads((FIXTURES / "tool_call.json").read_text())
    response["choices"][0]["message"]["tool_calls"][0]["function"]["name"] = wire_name
    parsed = provider.parse_response(response, registry=registry, aliases=True)
    assert parsed.message.tool_calls[0].name == "weather.get"


def test_vendor_items_are_replayed_to_mistral_only() -> None:
    provider = MistralProvider()
    response = json.loads((FIXTURES / "thinking.json").read_text())
    parsed = provider.parse_response(response)
    assert parsed.message.text == "It is 21 degrees in Paris."  # thinking is not text
    assert parsed.message.provider_details == {"mistral": {"content": response["choices"][0]["message"]["content"]}}
    replayed = provider.format_messages([parsed.message])["messages"][0]
    assert replayed == {"role": "assistant", "content": response["choices"][0]["message"]["content"]}
    assert_spec_valid("mistral.chat.assistant_message", replayed)
    # another vendor's items are ignored: only the text goes
    foreign = AssistantMessage(text="Hi.", provider_details={"anthropic": {"content": [{"type": "thinking"}]}})
    assert provider.format_messages([foreign])["messages"] == [{"role": "assistant", "content": "Hi."}]


@pytest.mark.parametrize(
    ("reason", "expected"),
    [("stop", "stop"), ("tool_calls", "tool_calls"), ("length", "length"), ("model_length", "length"),
     ("error", "error"), (None, None)],
)  # fmt: skip
def test_finish_reasons_are_normalised(reason: str | None, expected: str | None) -> None:
    assert normalise_finish_reason(reason) == expected


def test_fixtures_are_spec_valid() -> None:
    # the recorded answers follow Mistral's spec (ChatCompletionResponse itself wrongly requires `data`,
    # so its parts are checked), so the tests read what Mistral would send
    for name in ("text", "tool_call", "parallel_tool_calls", "thinking", "length"):
        response = json.loads((FIXTURES / f"{name}.json").read_text())
        for choice in response["choices"]:
            assert_openapi_valid("ChatCompletionChoice", choice)
        assert_openapi_valid("UsageInfo", response["usage"])
    for name in ("stream_text.sse", "stream_tool_calls.sse", "stream_empty_arguments.sse"):
        for line in (FIXTURES / name).read_text().splitlines():
            if line.startswith("data: {"):
                assert_openapi_valid("CompletionChunk", json.loads(line[len("data: ") :]))


def test_parse_response_reads_a_length_cut() -> None:
    parsed = MistralProvider().parse_response(json.loads((FIXTURES / "length.json").read_text()))
    assert (parsed.message.text, parsed.finish_reason) == ("It is 21 deg", "length")


# ---- MistralModel through the SDK -------------------------------------------------------------------


async def test_plain_text(registry: Registry) -> None:
    server = Server("text.json")
    model = model_for(server)
    settings = ModelSettings(max_tokens=200, temperature=0.2)
    messages: list[Message] = [SystemMessage("Be brief."), UserMessage("Weather in Paris?")]

    response = await model.request(messages, registry, settings)

    assert model.name == "mistral:mistral-large-latest"
    assert response.message.text == "It is 21 degrees and sunny in Paris."
    assert response.message.tool_calls == []
    assert (response.usage.input_tokens, response.usage.output_tokens, response.usage.requests) == (84, 21, 1)
    assert (response.finish_reason, response.model_name) == ("stop", "mistral-large-latest")
    request = server.requests[0]
    assert request.method == "POST" and str(request.url) == f"{LOCAL}/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer test-key"
    sent = server.sent
    assert without_sdk_defaults(sent) == model.payload(messages, registry, settings)
    assert sent["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
    ]
    assert (sent["max_tokens"], sent["temperature"]) == (200, 0.2)
    assert sent["tools"] == MistralProvider().format_tools(registry)["tools"]
    assert_openapi_valid("ChatCompletionRequest", sent)


async def test_a_tool_call(registry: Registry) -> None:
    server = Server("tool_call.json")
    model = model_for(server)
    settings = ModelSettings(tool_choice="required")

    response = await model.request([UserMessage("Weather in Paris?")], registry, settings)

    [call] = response.message.tool_calls
    assert (call.id, call.name, call.arguments_dict()) == ("D681PevKs", "get_weather", {"city": "Paris"})
    assert response.finish_reason == "tool_calls"
    sent = server.sent
    expected_tools = MistralProvider().format_tools(registry, tool_choice="required")
    assert sent["tools"] == expected_tools["tools"] and sent["tool_choice"] == "any"
    for tool in sent["tools"]:
        assert_spec_valid("mistral.chat.tool", tool)
    assert_spec_valid("mistral.chat.tool_choice", sent["tool_choice"])
    assert without_sdk_defaults(sent) == model.payload([UserMessage("Weather in Paris?")], registry, settings)


async def test_parallel_tool_calls_and_the_next_turn(registry: Registry) -> None:
    server = Server("parallel_tool_calls.json")
    model = model_for(server)
    settings = ModelSettings(parallel_tool_calls=False, tool_choice="get_weather")

    response = await model.request([UserMessage("Paris and Tokyo?")], registry, settings)

    assert [(c.id, c.arguments_dict()) for c in response.message.tool_calls] == [
        ("a1B2c3D4e", {"city": "Paris"}),
        ("Z9y8X7w6V", {"city": "Tokyo", "unit": "f"}),
    ]
    assert server.sent["parallel_tool_calls"] is False
    assert server.sent["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}

    # the second request replays a history whose ids came from another vendor
    second = Server("text.json")
    turn = history()
    await model_for(second).request(turn, registry, ModelSettings())
    sent = second.sent
    assert without_sdk_defaults(sent) == model.payload(turn, registry, ModelSettings())
    call_ids = [c["id"] for c in sent["messages"][2]["tool_calls"]]
    assert [m["tool_call_id"] for m in sent["messages"][3:5]] == call_ids
    assert all(NINE_ALNUM.match(i) for i in call_ids)
    assert_openapi_valid("ChatCompletionRequest", sent)


async def test_stream_of_parallel_tool_calls(registry: Registry) -> None:
    server = Server("stream_tool_calls.sse")
    model = model_for(server)

    events = [e async for e in model.stream([UserMessage("Paris and Oslo?")], registry, ModelSettings())]

    assert events[:-1] == [
        ToolCallStart(0, "q7W3e9R1t", "get_weather"),
        ToolCallArgsDelta(0, '{"city": ', '{"city": '),
        ToolCallArgsDelta(0, '"Paris"}', '{"city": "Paris"}'),
        ToolCallStart(1, "m2N4b6V8c", "get_weather"),
        ToolCallArgsDelta(1, '{"city": "Oslo", "unit": "f"}', '{"city": "Oslo", "unit": "f"}'),
    ]
    done = events[-1]
    assert isinstance(done, ResponseDone)
    calls = done.response.message.tool_calls
    assert [(c.id, c.name, c.arguments_dict()) for c in calls] == [
        ("q7W3e9R1t", "get_weather", {"city": "Paris"}),
        ("m2N4b6V8c", "get_weather", {"city": "Oslo", "unit": "f"}),
    ]
    assert (done.response.usage.input_tokens, done.response.usage.output_tokens) == (120, 40)
    assert done.response.finish_reason == "tool_calls"
    assert server.requests[0].url.path == "/v1/chat/completions"
    assert server.requests[0].headers["accept"] == "text/event-stream"
    assert without_sdk_defaults(server.sent, stream=True) == model.payload(
        [UserMessage("Paris and Oslo?")], registry, ModelSettings()
    )
    assert_openapi_valid("ChatCompletionRequest", server.sent)  # the spec has one request schema for both


async def test_stream_announces_a_call_that_streamed_no_arguments(registry: Registry) -> None:
    model = model_for(Server("stream_empty_arguments.sse"))
    events = [e async for e in model.stream([UserMessage("Up?")], registry, ModelSettings())]
    assert events[:-1] == [ToolCallStart(0, "p1N2g3X4y", "ping")]
    done = events[-1]
    assert isinstance(done, ResponseDone)
    [call] = done.response.message.tool_calls
    assert (call.id, call.name, call.arguments_dict()) == ("p1N2g3X4y", "ping", {})


async def test_stream_of_text(registry: Registry) -> None:
    model = model_for(Server("stream_text.sse"))
    events = [e async for e in model.stream([UserMessage("Weather?")], registry, ModelSettings())]
    assert events[:-1] == [TextDelta("It is 21 degrees"), TextDelta(" and sunny in Paris.")]
    done = events[-1]
    assert isinstance(done, ResponseDone)
    assert done.response.message.text == "It is 21 degrees and sunny in Paris."
    assert (done.response.finish_reason, done.response.usage.output_tokens) == ("stop", 12)


@pytest.mark.parametrize(
    ("status", "fixture", "kind", "message"),
    [
        (401, "error_401.json", "auth", "Unauthorized"),
        (429, "error_429.json", "rate_limit", "Requests rate limit exceeded"),
        (400, "error_400.json", "bad_request", "Invalid model: mistral-nope"),
        (500, "error_500.json", "server_error", "Internal server error"),
    ],
)
@pytest.mark.parametrize("streaming", [False, True])
async def test_http_errors(
    registry: Registry, status: int, fixture: str, kind: str, message: str, streaming: bool
) -> None:
    server = Server(fixture, status=status, headers={"x-request-id": "req-42"})
    model = model_for(server)
    with pytest.raises(ModelHTTPError) as caught:
        await send(model, registry, streaming=streaming)
    error = caught.value
    assert (error.status_code, error.kind, error.model_name) == (status, kind, "mistral:mistral-large-latest")
    assert error.body == json.loads((FIXTURES / fixture).read_text())
    assert error.body["message"] == message
    assert error.headers["x-request-id"] == "req-42"
    assert len(server.requests) == 1  # no retries unless the caller configures them on the client


async def test_validation_error_keeps_its_detail(registry: Registry) -> None:
    model = model_for(Server("error_422.json", status=422))
    with pytest.raises(ModelHTTPError) as caught:
        await model.request([UserMessage("hi")], registry, ModelSettings())
    assert caught.value.status_code == 422
    assert caught.value.body["detail"][0]["msg"] == "Field required"


async def test_connection_failure_is_an_api_error(registry: Registry) -> None:
    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused", request=request)

    model = model_for(refuse)
    with pytest.raises(ModelAPIError, match="ConnectError") as caught:
        await model.request([UserMessage("hi")], registry, ModelSettings())
    assert not isinstance(caught.value, ModelHTTPError)


async def test_settings_extra_is_merged_last_and_unknown_fields_are_refused(registry: Registry) -> None:
    server = Server("text.json")
    model = model_for(server)
    settings = ModelSettings(temperature=0.9, extra={"top_p": 0.5, "random_seed": 7, "temperature": 0.1})
    await model.request([UserMessage("hi")], registry, settings)
    assert (server.sent["top_p"], server.sent["random_seed"], server.sent["temperature"]) == (0.5, 7, 0.1)

    with pytest.raises(ModelSetupError, match="not_a_mistral_field"):
        await model.request([UserMessage("hi")], registry, ModelSettings(extra={"not_a_mistral_field": 1}))
    with pytest.raises(ModelSetupError, match="timeout_ms"):  # an SDK option, not a request field
        await model.request([UserMessage("hi")], registry, ModelSettings(extra={"timeout_ms": 5}))
    assert len(server.requests) == 1  # refused before anything was sent


async def test_blocked_when_requests_are_disabled_and_the_url_is_not_local(registry: Registry) -> None:
    server = Server("text.json")
    model = MistralModel("mistral-small-latest", client=sdk_client(server, server_url=None))
    assert model.base_url == "https://api.mistral.ai"
    response = await assert_blocked(model, registry, server.requests)  # the same model goes through once allowed
    assert response.message.text.startswith("It is 21")


def test_missing_api_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MISTRAL_API_KEY", raising=False)
    with pytest.raises(ModelSetupError, match="MISTRAL_API_KEY") as caught:
        MistralModel("mistral-large-latest")
    assert "test" in str(caught.value)  # points to the offline test model
    with pytest.raises(ModelSetupError, match="MISTRAL_API_KEY"):
        infer_model("mistral:mistral-large-latest")


async def test_client_ownership(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MISTRAL_API_KEY", "env-key")
    own = infer_model("mistral:mistral-large-latest")
    assert isinstance(own, MistralModel) and own.name == "mistral:mistral-large-latest"
    built = MistralModel("m", api_key="k", base_url=LOCAL)
    assert built.base_url == LOCAL
    await built.aclose()
    assert built.client.sdk_configuration.async_client is None  # the client we built is closed

    http = httpx2.AsyncClient(transport=httpx2.MockTransport(Server("text.json")))
    caller = MistralModel("m", client=Mistral(api_key="k", server_url=LOCAL, async_client=http))
    await caller.aclose()
    assert not http.is_closed  # a caller's client is theirs to close
    await http.aclose()
    await own.aclose()


def test_constructor_rejects_mixed_setup() -> None:
    client = Mistral(api_key="k", server_url=LOCAL)
    with pytest.raises(ModelSetupError, match="either client"):
        MistralModel("m", client=client, api_key="other")
    with pytest.raises(ModelSetupError, match="MistralProvider"):
        MistralModel("m", client=client, provider=object())  # type: ignore[arg-type]


def test_importing_the_model_module_does_not_load_the_sdk() -> None:
    probe = "import sys, agentkit.providers.mistral\nprint('mistralai' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "False"


async def test_a_stream_cut_before_its_finish_reason_is_no_turn(registry: Registry) -> None:
    server = Server("stream_tool_calls.sse")
    server.body = cut_before(server.body, b'"finish_reason":"tool_calls"')
    with pytest.raises(ModelAPIError, match="before a finish_reason"):
        [e async for e in model_for(server).stream([UserMessage("Paris and Oslo?")], registry, ModelSettings())]


async def test_a_json_body_for_a_stream_request_is_no_turn(registry: Registry) -> None:
    server = Server("tool_call.json")
    with pytest.raises(ModelAPIError):
        [e async for e in model_for(server).stream([UserMessage("Paris?")], registry, ModelSettings())]
