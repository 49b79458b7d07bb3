"""AnthropicModel through the real ``anthropic`` SDK over an in-process ``httpx2`` transport, and the
Anthropic provider's conversation formatting (`format_messages` / `parse_response`).

Each SDK test checks both directions: the JSON body the SDK put on the wire (our messages and tools
unchanged, valid against the SDK-derived spec schemas) and the neutral response or events made of a
recorded answer (``fixtures/anthropic/``, written from the Messages API docs).
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest

from agentkit import Registry
from agentkit.exceptions import ModelAPIError, ModelHTTPError, ModelSetupError
from agentkit.messages import (
    AssistantMessage,
    ImagePart,
    Message,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
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
from agentkit.providers.anthropic import DEFAULT_MAX_TOKENS, AnthropicModel
from agentkit.providers.anthropic._codec import ANTHROPIC_ID_RULE, AnthropicProvider
from tests.providers.common import PNG, read_fixture
from tests.spec import SPECS, assert_spec_valid

from ..client_common import QueueServer, assert_blocked, make_registry

FIXTURES = Path(__file__).parent / "fixtures" / "client"
TOOL, CHOICE = "anthropic.messages.tool", "anthropic.messages.tool_choice"
RESULT, USE = "anthropic.messages.tool_result_block", "anthropic.messages.tool_use_block_param"
MODEL = "claude-sonnet-4-6"


def fixture(name: str) -> Any:
    return read_fixture(FIXTURES, name, drop_source=True)


def block_schema_errors(definition: str, block: dict[str, Any]) -> list[str]:
    """Validate a user block (text, image) against the SDK's param shapes kept in the result schema."""
    import jsonschema

    defs = json.loads((SPECS / f"{RESULT}.schema.json").read_text())["$defs"]
    validator = jsonschema.Draft202012Validator({"$defs": defs, "$ref": f"#/$defs/{definition}"})
    return [e.message for e in validator.iter_errors(block)]


def assert_conversation_valid(body: dict[str, Any]) -> None:
    """Every block of every turn valid against the spec; roles alternate; results open their user turn."""
    roles = [turn["role"] for turn in body["messages"]]
    assert all(a != b for a, b in zip(roles, roles[1:], strict=False)), roles
    for turn in body["messages"]:
        content = turn["content"]
        if isinstance(content, str):
            assert content
            continue
        kinds = [block["type"] for block in content]
        if "tool_result" in kinds:
            assert kinds[: kinds.count("tool_result")] == ["tool_result"] * kinds.count("tool_result"), kinds
        for block in content:
            if block["type"] == "tool_result":
                assert_spec_valid(RESULT, block)
            elif block["type"] == "tool_use":
                assert_spec_valid(USE, block)
            elif block["type"] == "text":
                assert block_schema_errors("TextBlockParam", block) == []
                assert block["text"]
            elif block["type"] == "image":
                assert block_schema_errors("ImageBlockParam", block) == []
    for entry in body.get("tools", []):
        assert_spec_valid(TOOL, entry)
    if "tool_choice" in body:
        assert_spec_valid(CHOICE, body["tool_choice"])


class Server(QueueServer):
    """An in-process Messages API: serves recorded replies in order and keeps every request."""

    def client(self, base_url: str = "http://127.0.0.1:8080") -> Any:
        import anthropic

        return anthropic.AsyncAnthropic(
            api_key="test-key",
            base_url=base_url,
            max_retries=0,  # errors must surface at once, not after backoff sleeps
            http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(self)),
        )

    def model(self) -> AnthropicModel:
        return AnthropicModel(MODEL, client=self.client())


def reply(name: str) -> httpx2.Response:
    return httpx2.Response(200, json=fixture(name))


def sse(events: list[dict[str, Any]]) -> httpx2.Response:
    """Server-sent events as the Messages API streams them (named events)."""
    body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
    return httpx2.Response(200, content=body, headers={"content-type": "text/event-stream"})


@pytest.fixture
def registry() -> Registry:
    return make_registry()


# ---- requests through the SDK ----------------------------------------------------------------------------


async def test_plain_text(registry: Registry) -> None:
    server = Server(reply("text"))
    model = server.model()
    history: list[Message] = [SystemMessage("Be brief."), UserMessage("Weather in Paris?")]
    response = await model.request(history, Registry(), ModelSettings())

    [body] = server.bodies
    assert server.requests[0].url.path == "/v1/messages"
    headers = server.requests[0].headers
    assert "test-key" in (headers.get("x-api-key") or headers.get("authorization", ""))
    assert body == {
        "model": MODEL,
        "max_tokens": DEFAULT_MAX_TOKENS,
        "system": "Be brief.",
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
    }
    assert body == model.payload(history, Registry(), ModelSettings())
    assert response.message.text == "It is sunny in Paris, 21 degrees."
    assert response.message.tool_calls == [] and response.message.provider_details is None
    assert response.finish_reason == "stop"
    assert (response.usage.input_tokens, response.usage.output_tokens, response.usage.requests) == (1025, 12, 1)
    assert response.model_name == MODEL
    assert model.name == f"anthropic:{MODEL}"


async def test_a_tool_call_and_its_follow_up(registry: Registry) -> None:
    server = Server(reply("tool_call"), reply("text"))
    model = server.model()
    settings = ModelSettings(tool_choice="auto", parallel_tool_calls=False)
    history: list[Message] = [UserMessage("Weather in Paris?")]
    first = await model.request(history, registry, settings)

    sent = server.bodies[0]
    tools = AnthropicProvider().format_tools(registry, parallel_tool_calls=False)
    assert sent["tools"] == tools["tools"] and sent["tool_choice"] == tools["tool_choice"]
    assert sent["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
    assert_conversation_valid(sent)

    assert first.finish_reason == "tool_calls"
    assert first.message.text == "Let me look that up."
    assert first.message.tool_calls == [ToolCall("toolu_01A09q90qw90lq917835lq9", "get_weather", {"city": "Paris"})]
    thinking = fixture("tool_call")["content"][0]
    assert first.message.provider_details == {"anthropic": {"blocks": [thinking]}}

    results = await registry.call_many(first.message.tool_calls)
    history += [first.message, ToolResultsMessage(results)]
    second = await model.request(history, registry, settings)
    assert second.message.text.startswith("It is sunny")

    follow_up = server.bodies[1]
    assert_conversation_valid(follow_up)
    assistant, results_turn = follow_up["messages"][1:]
    # the thinking block goes back unmodified and first, as extended thinking with tools demands
    assert assistant == {
        "role": "assistant",
        "content": [
            thinking,
            {"type": "text", "text": "Let me look that up."},
            {
                "type": "tool_use",
                "id": "toolu_01A09q90qw90lq917835lq9",
                "name": "get_weather",
                "input": {"city": "Paris"},
            },
        ],
    }
    [result] = results_turn["content"]
    assert result["tool_use_id"] == "toolu_01A09q90qw90lq917835lq9"
    assert json.loads(result["content"]) == {"city": "Paris", "unit": "c"}


async def test_parallel_calls_are_answered_in_one_user_turn(registry: Registry) -> None:
    server = Server(reply("parallel_calls"), reply("text"))
    model = server.model()
    history: list[Message] = [UserMessage("Paris and Berlin, and order two ABC-1.")]
    first = await model.request(history, registry, ModelSettings(tool_choice="required"))
    assert server.bodies[0]["tool_choice"] == {"type": "any"}
    calls = first.message.tool_calls
    assert [(c.name, c.arguments) for c in calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_weather", {"city": "Berlin", "unit": "f"}),
        ("place_order", {"sku": "ABC-1", "qty": 2}),
    ]
    results = await registry.call_many(calls)
    # a user remark after the results lands in the same turn, after the tool_result blocks
    history += [first.message, ToolResultsMessage(results), UserMessage("Thanks!")]
    await model.request(history, registry, ModelSettings())

    body = server.bodies[1]
    assert_conversation_valid(body)
    assert [t["role"] for t in body["messages"]] == ["user", "assistant", "user"]
    last = body["messages"][2]["content"]
    assert [b["type"] for b in last] == ["tool_result", "tool_result", "tool_result", "text"]
    assert [b["tool_use_id"] for b in last[:3]] == [c.id for c in calls]
    assert last[3] == {"type": "text", "text": "Thanks!"}


async def test_stream_yields_text_and_calls_then_the_whole_turn(registry: Registry) -> None:
    events = fixture("stream")["events"]
    server = Server(sse(events))
    model = server.model()
    history: list[Message] = [UserMessage("Paris and Berlin?")]
    settings = ModelSettings(tool_choice="get_weather", max_tokens=512)
    seen = [event async for event in model.stream(history, registry, settings)]

    [body] = server.bodies
    assert body == {**model.payload(history, registry, settings), "stream": True}
    assert body["tool_choice"] == {"type": "tool", "name": "get_weather"} and body["max_tokens"] == 512

    assert [e.text for e in seen if isinstance(e, TextDelta)] == [
        "Okay, let's check the weather",
        " in Paris and Berlin:",
    ]
    starts = [e for e in seen if isinstance(e, ToolCallStart)]
    assert starts == [
        ToolCallStart(0, "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather"),
        ToolCallStart(1, "toolu_01Vb2yXqH7kP3mW9sLrT4nQz", "get_weather"),
    ]
    deltas = [e for e in seen if isinstance(e, ToolCallArgsDelta)]
    assert deltas[-1] == ToolCallArgsDelta(1, '"Berlin"}', '{"city": "Berlin"}')
    assert [d.arguments_so_far for d in deltas if d.index == 0][-1] == '{"city": "Paris", "unit": "f"}'
    # every start comes before the deltas of its call
    assert seen.index(starts[1]) < seen.index(deltas[-1])

    done = seen[-1]
    assert isinstance(done, ResponseDone) and sum(isinstance(e, ResponseDone) for e in seen) == 1
    response = done.response
    assert response.message.text == "Okay, let's check the weather in Paris and Berlin:"
    assert [(c.id, c.arguments) for c in response.message.tool_calls] == [
        ("toolu_01T1x1fJ34qAmk2tNTrN7Up6", {"city": "Paris", "unit": "f"}),
        ("toolu_01Vb2yXqH7kP3mW9sLrT4nQz", {"city": "Berlin"}),
    ]
    assert (response.usage.input_tokens, response.usage.output_tokens) == (472, 89)
    assert response.finish_reason == "tool_calls" and response.model_name == MODEL

    # exactly what request() returns for the same turn, not streamed
    whole = {**events[0]["message"], "stop_reason": "tool_use", "usage": {"input_tokens": 472, "output_tokens": 89}}
    whole["content"] = [
        {"type": "text", "text": response.message.text},
        {
            "type": "tool_use",
            "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
            "name": "get_weather",
            "input": {"city": "Paris", "unit": "f"},
        },
        {
            "type": "tool_use",
            "id": "toolu_01Vb2yXqH7kP3mW9sLrT4nQz",
            "name": "get_weather",
            "input": {"city": "Berlin"},
        },
    ]
    requested = await Server(httpx2.Response(200, json=whole)).model().request(history, registry, settings)
    assert (requested.message, requested.usage, requested.finish_reason) == (
        response.message,
        response.usage,
        response.finish_reason,
    )


async def test_an_error_event_inside_the_stream_is_an_http_error(registry: Registry) -> None:
    model = Server(sse(fixture("stream_error")["events"])).model()
    seen: list[Any] = []
    with pytest.raises(ModelHTTPError) as info:
        async for event in model.stream([UserMessage("hi")], registry, ModelSettings()):
            seen.append(event)
    assert seen == [TextDelta("Partial")]  # what arrived before the error was still delivered
    assert info.value.status_code == 529 and info.value.kind == "server_error"
    assert info.value.body["error"]["type"] == "overloaded_error"


@pytest.mark.parametrize(
    ("status", "kind"), [(401, "auth"), (429, "rate_limit"), (400, "bad_request"), (500, "server_error")]
)
async def test_http_errors_keep_status_body_and_headers(registry: Registry, status: int, kind: str) -> None:
    recorded = fixture("errors")[str(status)]
    model = Server(httpx2.Response(status, json=recorded["body"], headers=recorded["headers"])).model()
    with pytest.raises(ModelHTTPError) as info:
        await model.request([UserMessage("hi")], registry, ModelSettings())
    error = info.value
    assert (error.status_code, error.kind, error.model_name) == (status, kind, f"anthropic:{MODEL}")
    assert error.body == recorded["body"]
    for name, value in recorded["headers"].items():
        assert error.headers[name] == value
    assert recorded["body"]["error"]["message"] in str(error)


async def test_errors_when_streaming_too(registry: Registry) -> None:
    recorded = fixture("errors")["429"]
    model = Server(httpx2.Response(429, json=recorded["body"], headers=recorded["headers"])).model()
    with pytest.raises(ModelHTTPError) as info:
        async for _ in model.stream([UserMessage("hi")], registry, ModelSettings()):
            pass
    assert info.value.status_code == 429 and info.value.headers["retry-after"] == "17"


async def test_a_connection_failure_is_an_api_error(registry: Registry) -> None:
    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused", request=request)

    import anthropic

    client = anthropic.AsyncAnthropic(
        api_key="k",
        base_url="http://127.0.0.1:9",
        max_retries=0,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(refuse)),
    )
    with pytest.raises(ModelAPIError) as info:
        await AnthropicModel(MODEL, client=client).request([UserMessage("hi")], registry, ModelSettings())
    assert not isinstance(info.value, ModelHTTPError) and "connection" in str(info.value).lower()


# ---- setup, settings, blocking ---------------------------------------------------------------------------


def test_a_missing_api_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ModelSetupError) as info:
        AnthropicModel(MODEL)
    assert "ANTHROPIC_API_KEY" in str(info.value) and "model='test'" in str(info.value)
    with pytest.raises(ModelSetupError, match="ANTHROPIC_API_KEY"):
        infer_model(f"anthropic:{MODEL}")


async def test_infer_model_builds_a_client_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
    model = infer_model(f"anthropic:{MODEL}")
    assert isinstance(model, AnthropicModel) and model.name == f"anthropic:{MODEL}"
    assert model.client.api_key == "sk-ant-from-env"
    await model.aclose()
    assert model.client.is_closed()  # built here, so closed here


async def test_a_callers_client_is_used_as_is_and_never_closed(registry: Registry) -> None:
    server = Server(reply("text"), reply("text"))
    client = server.client()
    async with AnthropicModel(MODEL, client=client) as model:
        await model.request([UserMessage("hi")], registry, ModelSettings())
    assert not client.is_closed()
    await AnthropicModel(MODEL, client=client).request([UserMessage("again")], registry, ModelSettings())
    assert len(server.requests) == 2


def test_a_client_and_a_key_together_are_refused() -> None:
    with pytest.raises(ModelSetupError, match="not both"):
        AnthropicModel(MODEL, client=Server().client(), api_key="k")


async def test_requests_to_a_real_endpoint_are_blocked_in_tests(registry: Registry) -> None:
    server = Server(reply("text"))
    model = AnthropicModel(MODEL, client=server.client(base_url="https://api.anthropic.com"))
    response = await assert_blocked(model, registry, server.requests)
    assert response.message.text  # allowed again, the in-process transport answers


async def test_a_base_url_for_a_local_server_is_allowed(registry: Registry) -> None:
    model = AnthropicModel(MODEL, api_key="x", base_url="http://127.0.0.1:8080")
    assert str(model.client.base_url).startswith("http://127.0.0.1:8080")
    server = Server(reply("text"))
    model.client = model.client.with_options(http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(server)))
    await model.request([UserMessage("hi")], registry, ModelSettings())
    assert server.requests[0].url.host == "127.0.0.1"


async def test_settings_reach_the_body_and_extra_is_merged_last(registry: Registry) -> None:
    server = Server(reply("text"))
    settings = ModelSettings(
        max_tokens=100,
        temperature=0.2,
        active_tools=("place_order",),
        extra={"top_k": 5, "metadata": {"user_id": "u1"}, "future_field": {"on": True}, "max_tokens": 64},
    )
    model = server.model()
    await model.request([UserMessage("order")], registry, settings)
    [body] = server.bodies
    assert body["temperature"] == 0.2 and body["top_k"] == 5 and body["metadata"] == {"user_id": "u1"}
    assert body["max_tokens"] == 64  # extra wins
    assert body["future_field"] == {"on": True}  # unknown to the SDK: sent through extra_body
    assert [t["name"] for t in body["tools"]] == ["place_order"]
    assert body == model.payload([UserMessage("order")], registry, settings)


def test_importing_agentkit_does_not_load_the_sdk() -> None:
    code = "import sys, agentkit, agentkit.models, agentkit.providers.anthropic; print('anthropic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# ---- format_messages / parse_response (pure) ---------------------------------------------------------------


def test_system_messages_join_the_top_level_system_and_users_merge() -> None:
    provider = AnthropicProvider()
    fragment = provider.format_messages(
        [
            SystemMessage("You are terse."),
            UserMessage("Look:"),
            UserMessage([TextPart("this"), ImagePart(data=PNG), ImagePart(url="https://example.com/a.jpg")]),
            SystemMessage("Answer in French."),
            AssistantMessage(),  # an empty turn is dropped, not sent empty
            UserMessage(""),
        ]
    )
    assert fragment["system"] == "You are terse.\n\nAnswer in French."
    [turn] = fragment["messages"]
    assert turn["content"] == [
        {"type": "text", "text": "Look:"},
        {"type": "text", "text": "this"},
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": base64.b64encode(PNG).decode()},
        },
        {"type": "image", "source": {"type": "url", "url": "https://example.com/a.jpg"}},
    ]
    assert_conversation_valid(fragment)
    note = provider.format_messages([UserMessage([ImagePart(data=b"<svg/>", media_type="image/svg+xml")])])
    assert "image/svg+xml" in note["messages"][0]["content"] and "tool results" not in note["messages"][0]["content"]


def test_a_history_from_another_vendor_is_remapped_consistently(registry: Registry) -> None:
    provider = AnthropicProvider()
    foreign = "functions.get_weather:0"  # an OpenAI-compatible id Anthropic refuses
    call = ToolCall(foreign, "get_weather", '{"city": "Oslo"}', provider_details={"thoughtSignature": "c2ln"})
    history: list[Message] = [
        UserMessage("Oslo?"),
        AssistantMessage("", [call], provider_details={"gemini": {"parts": ["ignored"]}}),
        ToolResultsMessage([ToolResult(foreign, "get_weather", [TextPart("cold")])]),
    ]
    body = provider.build_request(history, registry)
    assert_conversation_valid(body)
    use = body["messages"][1]["content"][0]
    result = body["messages"][2]["content"][0]
    assert use == {
        "type": "tool_use",
        "id": provider.wire_id(foreign),
        "name": "get_weather",
        "input": {"city": "Oslo"},
    }
    assert ANTHROPIC_ID_RULE.accepts(use["id"]) and result["tool_use_id"] == use["id"]
    assert body == provider.build_request(history, registry)  # the same ids every time the history is sent


def test_names_are_sent_as_aliases_and_read_back_as_keys() -> None:
    registry = Registry()

    @registry.tool(key="weather.get")
    def weather(city: str) -> str:
        """Weather."""
        return city

    provider = AnthropicProvider()
    history: list[Message] = [
        UserMessage("x"),
        AssistantMessage("", [ToolCall("toolu_1", "weather.get", {"city": "A"})]),
    ]
    body = provider.build_request(history, registry, aliases=True)
    wire = body["tools"][0]["name"]
    assert wire != "weather.get" and body["messages"][1]["content"][0]["name"] == wire
    message = {
        "content": [{"type": "tool_use", "id": "toolu_2", "name": wire, "input": {"city": "B"}}],
        "stop_reason": "tool_use",
    }
    parsed = provider.parse_response(message, registry=registry, aliases=True)
    assert parsed.message.tool_calls[0].name == "weather.get"


def test_an_empty_registry_with_tool_history_still_defines_the_tools() -> None:
    provider = AnthropicProvider()
    history: list[Message] = [
        UserMessage("x"),
        AssistantMessage(
            "", [ToolCall("toolu_1", "get_weather", {"city": "A"}), ToolCall("toolu_2", "bad name!", "{}")]
        ),
        ToolResultsMessage(
            [ToolResult("toolu_1", "get_weather", [TextPart("ok")]), ToolResult("toolu_2", "bad name!", [])]
        ),
    ]
    body = provider.build_request(history, Registry())
    assert_conversation_valid(body)
    names = [t["name"] for t in body["tools"]]
    assert names[0] == "get_weather" and names[1] != "bad name!"  # refused names get an alias everywhere
    assert names[1] == body["messages"][1]["content"][1]["name"]
    assert body["tool_choice"] == {"type": "none"}  # declared only so the history is accepted
    assert "tools" not in provider.build_request([UserMessage("hi")], Registry())


@pytest.mark.parametrize(
    ("stop", "expected"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("tool_use", "tool_calls"),
        ("max_tokens", "length"),
        ("model_context_window_exceeded", "length"),
        ("refusal", "content_filter"),
        ("pause_turn", "pause_turn"),
    ],
)
def test_finish_reasons_are_normalised(stop: str, expected: str) -> None:
    parsed = AnthropicProvider().parse_response({"content": [], "stop_reason": stop, "usage": {}})
    assert parsed.finish_reason == expected


def test_results_open_the_user_turn_even_after_a_user_remark() -> None:
    history: list[Message] = [
        UserMessage("x"),
        AssistantMessage("", [ToolCall("toolu_1", "get_weather", {"city": "A"})]),
        UserMessage("(still there?)"),  # recorded before the results arrived
        ToolResultsMessage([ToolResult("toolu_1", "get_weather", [TextPart("ok")])]),
    ]
    body = AnthropicProvider().build_request(history, make_registry())
    assert_conversation_valid(body)
    assert [b["type"] for b in body["messages"][2]["content"]] == ["tool_result", "text"]


async def test_a_stream_cut_before_message_stop_is_no_turn(registry: Registry) -> None:
    events = fixture("stream")["events"]
    assert events[-1]["type"] == "message_stop"
    server = Server(sse(events[:-1]))
    seen: list[Any] = []
    with pytest.raises(ModelAPIError, match="before message_stop"):
        async for event in server.model().stream([UserMessage("Paris and Berlin?")], registry, ModelSettings()):
            seen.append(event)
    assert seen and not any(isinstance(e, ResponseDone) for e in seen)


async def test_a_json_body_for_a_stream_request_is_no_turn(registry: Registry) -> None:
    server = Server(reply("tool_call"))
    with pytest.raises(ModelAPIError):
        [e async for e in server.model().stream([UserMessage("Paris?")], registry, ModelSettings())]


async def test_responses_carry_the_request_id_header_whole_and_streamed(registry: Registry) -> None:
    body = fixture("text")
    whole = httpx2.Response(200, json=body, headers={"request-id": "req_011CSHoEeqs5C35K2UUqR7Fy"})
    streamed = sse(fixture("stream")["events"])
    streamed.headers["request-id"] = "req_011CSHstream"
    server = Server(whole, streamed)
    model = server.model()
    response = await model.request([UserMessage("hi")], registry, ModelSettings())
    assert (response.request_id, response.response_id) == ("req_011CSHoEeqs5C35K2UUqR7Fy", body["id"])
    assert (response.provider_name, response.provider_url) == ("anthropic", "http://127.0.0.1:8080")
    events = [e async for e in model.stream([UserMessage("hi")], registry, ModelSettings())]
    done = events[-1]
    assert isinstance(done, ResponseDone)
    assert done.response.request_id == "req_011CSHstream"
