"""CohereProvider conversations and CohereModel through the official cohere SDK, served in-process.

Every request goes through ``cohere.AsyncClientV2`` with an ``httpx.MockTransport`` that records what the
SDK put on the wire and answers with a recorded response from ``fixtures/cohere``. Both directions are
checked: the body against our payload and Cohere's wire format (schemas made from its SDK's types), the
answer as neutral types/events.
"""

from __future__ import annotations

import json
import subprocess
import sys
from functools import partial
from pathlib import Path
from typing import Any

import cohere
import httpx
import pytest

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
from agentkit.providers.cohere import CohereModel
from agentkit.providers.cohere._codec import CohereProvider, normalise_finish_reason
from tests.spec import assert_openapi_valid as assert_vendor_openapi_valid
from tests.spec import assert_spec_valid, cohere_sdk

from ..client_common import FixtureServer, assert_blocked, cut_before, get_weather, ping, place_order, send
from ..client_common import history as common_history

FIXTURES = Path(__file__).parent / "fixtures" / "client"
LOCAL = "http://127.0.0.1:8766"


# ---- the tools (get_weather, ping, place_order: see common.py) --------------------------------------


@pytest.fixture
def registry() -> Registry:
    # nested models, $defs, bounds and an optional field: what the SDK must carry through untouched
    return Registry({"get_weather": get_weather, "ping": ping, "place_order": place_order})


@pytest.fixture(autouse=True)
def _no_endpoint_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # requests to anything but 127.0.0.1 are blocked by tests/conftest.py; the SDK must not read another URL
    monkeypatch.delenv("CO_API_URL", raising=False)


# ---- the in-process server --------------------------------------------------------------------------


class Server(FixtureServer):
    """Answers with a fixture from ``fixtures/cohere`` through an httpx MockTransport."""

    folder = FIXTURES
    http = httpx


def sdk_client(server: Any, base_url: str | None = LOCAL) -> cohere.AsyncClientV2:
    options: dict[str, Any] = {"base_url": base_url} if base_url else {}
    # max_retries=0: the SDK would otherwise retry 429/5xx with back-off (the default for clients we build)
    return cohere.AsyncClientV2(
        api_key="test-key",
        httpx_client=httpx.AsyncClient(transport=httpx.MockTransport(server)),
        max_retries=0,
        **options,
    )


def model_for(server: Any) -> CohereModel:
    return CohereModel("command-a-03-2025", client=sdk_client(server))


def without_stream_flag(wire: dict[str, Any], *, stream: bool = False) -> dict[str, Any]:
    """The wire body minus ``stream``, the one field the SDK adds (asserting its value)."""
    body = dict(wire)
    assert body.pop("stream") is stream
    return body


# ---- Cohere's wire format (dev/cohere_schemas.py, from its SDK's types), for whole bodies ----------------------


assert_openapi_valid = partial(assert_vendor_openapi_valid, "cohere")


def history(call_ids: tuple[str, str] = ("call_Ab12", "toolu_01XyZ")) -> list[Message]:
    """A conversation with calls made by another vendor, a JSON result, an error result and an image."""
    return common_history(call_ids, ImagePart(url="https://x.test/a.png"))


# ---- format_messages / parse_response (pure) --------------------------------------------------------


def test_format_messages_maps_every_role(registry: Registry) -> None:
    provider = CohereProvider()
    messages = provider.format_messages(history(), registry=registry)["messages"]

    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool", "assistant", "user"]
    assert messages[0] == {"role": "system", "content": "You are terse."}
    assert messages[1]["content"] == [
        {"type": "text", "text": "Weather in Paris and Oslo? And this picture:"},
        {"type": "image_url", "image_url": {"url": "https://x.test/a.png"}},
    ]
    assistant, ok, failed = messages[2], messages[3], messages[4]
    # text from another vendor beside its calls is kept as content; ids need no remapping for Cohere
    assert assistant == {
        "role": "assistant",
        "tool_calls": [
            {
                "id": "call_Ab12",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            },
            {
                "id": "toolu_01XyZ",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Oslo", "unit": "f"}'},
            },
        ],
        "content": "Checking both.",
    }
    assert ok == {
        "role": "tool",
        "tool_call_id": "call_Ab12",
        "content": [{"type": "document", "document": {"data": {"temp": 21}}}],
    }
    assert failed == {
        "role": "tool",
        "tool_call_id": "toolu_01XyZ",
        "content": [{"type": "text", "text": "Error: weather service down"}],
    }
    assert messages[5] == {"role": "assistant", "content": "Paris is 21 C; Oslo is unavailable."}

    for message in (assistant, messages[5]):
        assert_spec_valid("cohere.v2.assistant_message", message)
    for message in (ok, failed):
        assert_spec_valid("cohere.v2.tool_message", message)
    assert_openapi_valid("UserChatMessageV2", messages[1])
    assert_openapi_valid("SystemChatMessageV2", messages[0])
    assert_openapi_valid("V2ChatRequest", {"model": "m", **provider.build_request(history(), registry)})


def test_tool_plan_round_trips(registry: Registry) -> None:
    provider = CohereProvider()
    response = json.loads((FIXTURES / "parallel_tool_calls.json").read_text())
    parsed = provider.parse_response(response, registry=registry)
    assert parsed.message.text == ""  # the plan is not the answer
    assert parsed.finish_reason == "tool_calls"
    replayed = provider.format_messages([parsed.message], registry=registry)["messages"][0]
    assert replayed == {"role": "assistant", **response["message"]}  # exactly what Cohere sent
    assert_spec_valid("cohere.v2.assistant_message", replayed)


def test_aliases_apply_to_calls_and_parsing() -> None:
    registry = Registry({"get-weather": get_weather})  # Cohere names take no dashes
    provider = CohereProvider()
    call = ToolCall(id="c1", name="get-weather", arguments={"city": "Paris"})
    with pytest.raises(Exception, match="get-weather"):
        provider.format_messages([AssistantMessage(tool_calls=[call])], registry=registry)
    [message] = provider.format_messages([AssistantMessage(tool_calls=[call])], registry=registry, aliases=True)[
        "messages"
    ]
    wire_name = message["tool_calls"][0]["function"]["name"]
    assert wire_name == provider.format_tools(registry, aliases=True)["tools"][0]["function"]["name"]
    assert "-" not in wire_name
    response = json.loads((FIXTURES / "tool_call.json").read_text())
    response["message"]["tool_calls"][0]["function"]["name"] = wire_name
    assert (
        provider.parse_response(response, registry=registry, aliases=True).message.tool_calls[0].name == "get-weather"
    )


def test_vendor_items_are_replayed_to_cohere_only() -> None:
    provider = CohereProvider()
    response = json.loads((FIXTURES / "thinking.json").read_text())
    parsed = provider.parse_response(response)
    assert parsed.message.text == "It is 21 degrees in Paris."  # thinking is not text
    assert parsed.message.provider_details == {"cohere": {"content": response["message"]["content"]}}
    replayed = provider.format_messages([parsed.message])["messages"][0]
    assert replayed == {"role": "assistant", "content": response["message"]["content"]}
    assert_spec_valid("cohere.v2.assistant_message", replayed)
    foreign = AssistantMessage(text="Hi.", provider_details={"mistral": {"content": [{"type": "thinking"}]}})
    assert provider.format_messages([foreign])["messages"] == [{"role": "assistant", "content": "Hi."}]


@pytest.mark.parametrize(
    ("reason", "expected"),
    [("COMPLETE", "stop"), ("STOP_SEQUENCE", "stop"), ("TOOL_CALL", "tool_calls"), ("MAX_TOKENS", "length"),
     ("ERROR", "error"), ("TIMEOUT", "timeout"), (None, None)],
)  # fmt: skip
def test_finish_reasons_are_normalised(reason: str | None, expected: str | None) -> None:
    assert normalise_finish_reason(reason) == expected


def test_usage_falls_back_to_billed_units() -> None:
    parsed = CohereProvider().parse_response(json.loads((FIXTURES / "max_tokens.json").read_text()))
    assert (parsed.usage.input_tokens, parsed.usage.output_tokens, parsed.finish_reason) == (37, 5, "length")


@pytest.mark.parametrize("name", ["text", "tool_call", "parallel_tool_calls", "thinking", "max_tokens"])
def test_fixtures_are_spec_valid_responses(name: str) -> None:
    # the recorded answers themselves follow Cohere's spec, so the tests read what Cohere would send
    assert_openapi_valid("V2ChatResponse", json.loads((FIXTURES / f"{name}.json").read_text()))


# ---- CohereModel through the SDK --------------------------------------------------------------------


async def test_plain_text(registry: Registry) -> None:
    server = Server("text.json")
    model = model_for(server)
    settings = ModelSettings(max_tokens=200, temperature=0.2)
    messages: list[Message] = [SystemMessage("Be brief."), UserMessage("Weather in Paris?")]

    response = await model.request(messages, registry, settings)

    assert model.name == "cohere:command-a-03-2025"
    assert response.message.text == "It is 21 degrees and sunny in Paris."
    assert response.message.tool_calls == []
    assert (response.usage.input_tokens, response.usage.output_tokens, response.usage.requests) == (1015, 52, 1)
    assert (response.finish_reason, response.model_name) == ("stop", "command-a-03-2025")
    request = server.requests[0]
    assert request.method == "POST" and str(request.url) == f"{LOCAL}/v2/chat"
    assert request.headers["authorization"] == "Bearer test-key"
    sent = server.sent
    assert without_stream_flag(sent) == model.payload(messages, registry, settings)  # our dicts, unchanged
    assert sent["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
    ]
    assert (sent["max_tokens"], sent["temperature"]) == (200, 0.2)
    assert sent["tools"] == CohereProvider().format_tools(registry)["tools"]
    assert_openapi_valid("V2ChatRequest", sent)


async def test_a_tool_call(registry: Registry) -> None:
    server = Server("tool_call.json")
    model = model_for(server)
    settings = ModelSettings(tool_choice="required")

    response = await model.request([UserMessage("Weather in Paris?")], registry, settings)

    [call] = response.message.tool_calls
    assert (call.id, call.name, call.arguments_dict()) == ("get_weather_1byjy32y4hvq", "get_weather", {"city": "Paris"})
    assert call.provider_details == {"tool_plan": "I will look up the weather in Paris."}
    assert response.finish_reason == "tool_calls"
    sent = server.sent
    expected = CohereProvider().format_tools(registry, tool_choice="required")
    assert sent["tools"] == expected["tools"] and sent["tool_choice"] == "REQUIRED"
    assert sent.get("strict_tools") == expected.get("strict_tools")
    for tool in sent["tools"]:
        assert_spec_valid("cohere.v2.tool", tool)
    assert_spec_valid("cohere.v2.tool_choice", sent["tool_choice"])
    assert without_stream_flag(sent) == model.payload([UserMessage("Weather in Paris?")], registry, settings)


async def test_parallel_tool_calls_and_the_next_turn(registry: Registry) -> None:
    server = Server("parallel_tool_calls.json")
    model = model_for(server)
    first: list[Message] = [UserMessage("Paris and Tokyo?")]

    response = await model.request(first, registry, ModelSettings())

    calls = response.message.tool_calls
    assert [(c.id, c.arguments_dict()) for c in calls] == [
        ("get_weather_1byjy32y4hvq", {"city": "Paris"}),
        ("get_weather_e8s1k2z0fwa3", {"city": "Tokyo", "unit": "f"}),
    ]

    # the next request carries the assistant turn (with its plan) and both results
    second = Server("text.json")
    results = ToolResultsMessage(
        [ToolResult(call_id=c.id, name=c.name, content=[TextPart(json.dumps({"temp": 21}))]) for c in calls]
    )
    turn = [*first, response.message, results]
    await model_for(second).request(turn, registry, ModelSettings())
    sent = second.sent
    assert without_stream_flag(sent) == model.payload(turn, registry, ModelSettings())
    assistant = sent["messages"][1]
    assert assistant["tool_plan"] == "I will look up the weather in Paris and Tokyo."
    assert [c["id"] for c in assistant["tool_calls"]] == [m["tool_call_id"] for m in sent["messages"][2:]]
    assert sent["messages"][2]["content"] == [{"type": "document", "document": {"data": {"temp": 21}}}]
    assert_openapi_valid("V2ChatRequest", sent)


async def test_stream_of_parallel_tool_calls(registry: Registry) -> None:
    server = Server("stream_tool_calls.sse")
    model = model_for(server)

    events = [e async for e in model.stream([UserMessage("Paris and Oslo?")], registry, ModelSettings())]

    assert events[:-1] == [
        ToolCallStart(0, "get_weather_nsz5zm3w56q3", "get_weather"),
        ToolCallArgsDelta(0, '{\n    "', '{\n    "'),
        ToolCallArgsDelta(0, 'city": "Paris"\n}', '{\n    "city": "Paris"\n}'),
        ToolCallStart(1, "get_weather_j0kqsde5ldnf", "get_weather"),
        ToolCallArgsDelta(1, '{"city": "Oslo", "unit": "f"}', '{"city": "Oslo", "unit": "f"}'),
    ]
    done = events[-1]
    assert isinstance(done, ResponseDone)
    calls = done.response.message.tool_calls
    assert [(c.id, c.name, c.arguments_dict()) for c in calls] == [
        ("get_weather_nsz5zm3w56q3", "get_weather", {"city": "Paris"}),
        ("get_weather_j0kqsde5ldnf", "get_weather", {"city": "Oslo", "unit": "f"}),
    ]
    assert all(c.provider_details == {"tool_plan": "I will search for the weather."} for c in calls)
    assert (done.response.usage.input_tokens, done.response.usage.output_tokens) == (1015, 52)
    assert done.response.finish_reason == "tool_calls"
    assert server.requests[0].url.path == "/v2/chat"
    assert without_stream_flag(server.sent, stream=True) == model.payload(
        [UserMessage("Paris and Oslo?")], registry, ModelSettings()
    )


async def test_stream_of_text(registry: Registry) -> None:
    model = model_for(Server("stream_text.sse"))
    events = [e async for e in model.stream([UserMessage("Weather?")], registry, ModelSettings())]
    assert events[:-1] == [TextDelta("It is 21 degrees"), TextDelta(" and sunny in Paris.")]
    done = events[-1]
    assert isinstance(done, ResponseDone)
    assert done.response.message.text == "It is 21 degrees and sunny in Paris."
    assert (done.response.finish_reason, done.response.usage.output_tokens) == ("stop", 12)


def test_stream_fixtures_are_spec_valid_events() -> None:
    # the event union's members overlap, so each event is checked against the member its type names
    mapping = cohere_sdk()["x-stream-events"]
    for name in ("stream_text.sse", "stream_tool_calls.sse"):
        for line in (FIXTURES / name).read_text().splitlines():
            if line.startswith("data: "):
                event = json.loads(line[len("data: ") :])
                assert_openapi_valid(mapping[event["type"]], event)


@pytest.mark.parametrize(
    ("status", "fixture", "kind", "message"),
    [
        (401, "error_401.json", "auth", "invalid api token"),
        (429, "error_429.json", "rate_limit", "You are using a Trial key"),
        (400, "error_400.json", "bad_request", "invalid request: model 'command-nope' not found"),
        (500, "error_500.json", "server_error", "internal server error"),
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
    assert (error.status_code, error.kind, error.model_name) == (status, kind, "cohere:command-a-03-2025")
    assert error.body == json.loads((FIXTURES / fixture).read_text())
    assert error.body["message"].startswith(message)
    assert error.headers["x-request-id"] == "req-42"
    assert len(server.requests) == 1


async def test_connection_failure_is_an_api_error(registry: Registry) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    model = model_for(refuse)
    with pytest.raises(ModelAPIError, match="ConnectError") as caught:
        await model.request([UserMessage("hi")], registry, ModelSettings())
    assert not isinstance(caught.value, ModelHTTPError)


async def test_settings_extra_is_merged_last_including_fields_the_sdk_lacks(registry: Registry) -> None:
    server = Server("text.json")
    model = model_for(server)
    extra = {"p": 0.5, "seed": 7, "temperature": 0.1, "future_field": {"on": True}}
    settings = ModelSettings(temperature=0.9, extra=extra)
    await model.request([UserMessage("hi")], registry, settings)
    sent = server.sent
    assert (sent["p"], sent["seed"], sent["temperature"]) == (0.5, 7, 0.1)
    assert sent["future_field"] == {"on": True}  # sent through the SDK's additional_body_parameters
    assert without_stream_flag(sent) == model.payload([UserMessage("hi")], registry, settings)


async def test_blocked_when_requests_are_disabled_and_the_url_is_not_local(registry: Registry) -> None:
    server = Server("text.json")
    model = CohereModel("command-r7b-12-2024", client=sdk_client(server, base_url=None))
    assert model.base_url == "https://api.cohere.com"
    response = await assert_blocked(model, registry, server.requests)  # the same model goes through once allowed
    assert response.message.text.startswith("It is 21")


def test_missing_api_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CO_API_KEY", raising=False)
    monkeypatch.delenv("COHERE_API_KEY", raising=False)
    with pytest.raises(ModelSetupError, match="CO_API_KEY") as caught:
        CohereModel("command-a-03-2025")
    assert "COHERE_API_KEY" in str(caught.value) and "test" in str(caught.value)
    with pytest.raises(ModelSetupError, match="CO_API_KEY"):
        infer_model("cohere:command-a-03-2025")


@pytest.mark.parametrize("variable", ["CO_API_KEY", "COHERE_API_KEY"])
async def test_api_key_from_either_variable(monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    monkeypatch.delenv("CO_API_KEY", raising=False)
    monkeypatch.delenv("COHERE_API_KEY", raising=False)
    monkeypatch.setenv(variable, "env-key")
    model = infer_model("cohere:command-a-03-2025")
    assert isinstance(model, CohereModel) and model.name == "cohere:command-a-03-2025"
    headers = model.client._client_wrapper.get_headers()
    assert headers["Authorization"] == "Bearer env-key"
    await model.aclose()


async def test_client_ownership() -> None:
    built = CohereModel("m", api_key="k", base_url=LOCAL)
    assert built.base_url == LOCAL
    inner = built.client._client_wrapper.httpx_client.httpx_client
    await built.aclose()
    assert inner.is_closed  # the client we built is closed

    http = httpx.AsyncClient(transport=httpx.MockTransport(Server("text.json")))
    caller = CohereModel("m", client=cohere.AsyncClientV2(api_key="k", base_url=LOCAL, httpx_client=http))
    await caller.aclose()
    assert not http.is_closed  # a caller's client is theirs to close
    await http.aclose()


def test_constructor_rejects_mixed_setup() -> None:
    client = cohere.AsyncClientV2(api_key="k", base_url=LOCAL)
    with pytest.raises(ModelSetupError, match="either client"):
        CohereModel("m", client=client, base_url="http://127.0.0.1:1")
    with pytest.raises(ModelSetupError, match="CohereProvider"):
        CohereModel("m", client=client, provider=object())  # type: ignore[arg-type]


def test_importing_the_model_module_does_not_load_the_sdk() -> None:
    probe = "import sys, agentkit.providers.cohere\nprint('cohere' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "False"


async def test_a_stream_cut_before_message_end_is_no_turn(registry: Registry) -> None:
    server = Server("stream_tool_calls.sse")
    server.body = cut_before(server.body, b"event: message-end")
    with pytest.raises(ModelAPIError, match="before message-end"):
        [e async for e in model_for(server).stream([UserMessage("Paris and Oslo?")], registry, ModelSettings())]


async def test_a_json_body_for_a_stream_request_is_no_turn(registry: Registry) -> None:
    server = Server("tool_call.json")
    with pytest.raises(ModelAPIError):
        [e async for e in model_for(server).stream([UserMessage("Paris?")], registry, ModelSettings())]
