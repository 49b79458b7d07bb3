"""OpenAI Chat and Responses models through the real ``openai`` SDK, over an in-process HTTP transport.

Each test checks both directions: the body the SDK put on the wire (our messages/tools unchanged and
valid against OpenAI's OpenAPI spec) and the neutral response or events we made of the recorded answer.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentkit import Registry, Tool
from agentkit.exceptions import ModelAPIError, ModelHTTPError, ModelSetupError
from agentkit.messages import (
    ImagePart,
    Message,
    SystemMessage,
    TextPart,
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
from agentkit.providers.openai import OpenAIChatModel, OpenAIChatProvider, OpenAIResponsesModel, OpenAIResponsesProvider
from tests.providers.client_common import QueueServer, assert_blocked, cut_before
from tests.providers.common import read_fixture
from tests.providers.openai.test_chat import PNG, httpx_module, make_registry, openapi_errors
from tests.spec import assert_spec_valid

FIXTURES = Path(__file__).parent / "fixtures" / "client"
httpx = httpx_module()  # httpx2 for the installed SDK (httpx for older ones)


def load(name: str) -> Any:
    return read_fixture(FIXTURES, name)


def sse(name: str) -> bytes:
    return (FIXTURES / f"{name}.sse").read_bytes()


class Server(QueueServer):
    """An in-process HTTP endpoint: records each request and answers from a queue of replies."""

    def client(self, *, base_url: str = "http://127.0.0.1:8080/v1", max_retries: int = 0) -> Any:
        import openai

        return openai.AsyncOpenAI(
            api_key="sk-test",
            base_url=base_url,
            max_retries=max_retries,
            http_client=httpx.AsyncClient(transport=httpx.MockTransport(self)),
        )


def ok(payload: Any) -> Any:
    return httpx.Response(200, json=payload, headers={"x-request-id": "req_ok"})


def event_stream(name: str) -> Any:
    return httpx.Response(200, content=sse(name), headers={"content-type": "text/event-stream"})


@pytest.fixture
def registry() -> Registry:
    return make_registry()  # get_weather, place_order, tally (see tests/providers/test_openai_chat.py)


SETTINGS = ModelSettings()


# ---- Chat Completions ------------------------------------------------------------------------------------


async def test_chat_text(registry: Registry) -> None:
    server = Server(ok(load("chat_text")))
    model = OpenAIChatModel("gpt-4.1", client=server.client())
    history: list[Message] = [SystemMessage("Be brief."), UserMessage("Weather in Paris?")]
    response = await model.request(history, registry, SETTINGS)

    assert type(response.raw).__name__ == "ChatCompletion"  # the SDK's parsed object, for debugging
    assert (response.message.text, response.message.tool_calls) == ("It is sunny in Paris today.", [])
    assert (response.usage.input_tokens, response.usage.output_tokens, response.usage.requests) == (57, 8, 1)
    assert response.finish_reason == "stop" and response.model_name == "gpt-4.1-2025-04-14"

    [request] = server.requests
    assert (request.method, request.url.path) == ("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == "Bearer sk-test"  # the SDK's auth still applies
    assert request.headers["content-type"] == "application/json"
    body = server.bodies[0]
    assert body == model.payload(history, registry, SETTINGS)  # payload() is exactly what was sent
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
    ]
    assert body["tools"] == OpenAIChatProvider().format_tools(registry)["tools"]
    assert openapi_errors("CreateChatCompletionRequest", body) == []


async def test_chat_tool_call_restores_defaults(registry: Registry) -> None:
    server = Server(ok(load("chat_tool_call")))
    model = OpenAIChatModel("gpt-4.1", client=server.client())
    settings = ModelSettings(tool_choice="get_weather", parallel_tool_calls=False)
    response = await model.request([UserMessage("Paris, 2 days")], registry, settings)

    [call] = response.message.tool_calls
    assert (call.id, call.name) == ("call_Wx7pQ2", "get_weather")
    assert call.arguments_dict() == {"city": "Paris", "days": 2}  # strict null dropped: the default applies
    assert response.finish_reason == "tool_calls" and response.message.text == ""
    body = server.bodies[0]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert body["parallel_tool_calls"] is False
    assert openapi_errors("CreateChatCompletionRequest", body) == []


async def test_chat_parallel_calls_and_the_follow_up_turn(registry: Registry) -> None:
    server = Server(ok(load("chat_parallel")), ok(load("chat_text")))
    model = OpenAIChatModel("gpt-4.1", client=server.client())
    history: list[Message] = [SystemMessage("Be brief."), UserMessage("Weather in Paris, and order one ABC-1.")]
    first = await model.request(history, registry, SETTINGS)
    assert [c.name for c in first.message.tool_calls] == ["get_weather", "place_order"]
    assert first.message.text == "Looking both up."
    results = await registry.call_many(first.message.tool_calls)
    assert results[0].output == {"city": "Paris", "unit": "c", "days": 1}

    history += [first.message, ToolResultsMessage(results)]
    second = await model.request(history, registry, SETTINGS)
    assert second.message.text == "It is sunny in Paris today."

    body = server.bodies[1]
    assert openapi_errors("CreateChatCompletionRequest", body) == []
    assistant, *tool_messages = body["messages"][2:]
    assert_spec_valid("openai.chat.assistant_message", assistant)
    assert assistant["content"] == "Looking both up."
    assert [c["id"] for c in assistant["tool_calls"]] == ["call_paris01", "call_order02"]
    assert (
        assistant["tool_calls"][1]["function"]["arguments"]
        == (load("chat_parallel")["choices"][0]["message"]["tool_calls"][1]["function"]["arguments"])
    )  # the arguments text goes back as the model wrote it
    for message in tool_messages:
        assert_spec_valid("openai.chat.tool_message", message)
    assert [m["tool_call_id"] for m in tool_messages] == ["call_paris01", "call_order02"]


async def test_chat_stream(registry: Registry) -> None:
    server = Server(event_stream("chat_stream"))
    model = OpenAIChatModel("gpt-4.1", client=server.client())
    events = [e async for e in model.stream([UserMessage("Paris and Oslo?")], registry, SETTINGS)]

    body = server.bodies[0]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert openapi_errors("CreateChatCompletionRequest", body) == []
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Checking ", "both cities."]
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert starts == [ToolCallStart(0, "call_s0", "get_weather"), ToolCallStart(1, "call_s1", "get_weather")]
    args = [e for e in events if isinstance(e, ToolCallArgsDelta)]
    assert [e.index for e in args] == [0, 0, 1]
    assert args[1].arguments_so_far == '{"city":"Paris","unit":"f","days":2}'
    assert events.index(starts[1]) < events.index(args[2])  # a call starts before its arguments

    done = events[-1]
    assert isinstance(done, ResponseDone)
    response = done.response
    assert response.message.text == "Checking both cities."
    assert [c.arguments_dict() for c in response.message.tool_calls] == [
        {"city": "Paris", "unit": "f", "days": 2},
        {"city": "Oslo"},
    ]
    assert (response.usage.input_tokens, response.usage.output_tokens) == (140, 48)
    assert response.finish_reason == "tool_calls"


async def test_chat_images_and_aliases() -> None:
    def weather_now(city: str) -> str:
        """Weather now.

        Args:
            city: City.
        """
        return f"sunny in {city}"

    registry = Registry({"weather now": weather_now})
    provider = OpenAIChatProvider()
    wire = provider.names(registry, aliases=True).name_for("weather now")
    completion = load("chat_tool_call")
    completion["choices"][0]["message"]["tool_calls"][0]["function"] = {"name": wire, "arguments": '{"city":"Oslo"}'}
    server = Server(ok(completion), ok(load("chat_text")))
    model = OpenAIChatModel("gpt-4.1", client=server.client())
    settings = ModelSettings(aliases=True)
    history: list[Message] = [UserMessage([TextPart("What is this?"), ImagePart(data=PNG)])]
    first = await model.request(history, registry, settings)
    assert first.message.tool_calls[0].name == "weather now"  # the alias mapped back to the key

    await model.request([*history, first.message], registry, settings)
    user, assistant = server.bodies[1]["messages"]
    assert user["content"][1] == {"type": "image_url", "image_url": {"url": ImagePart(data=PNG).data_url}}
    assert assistant["tool_calls"][0]["function"]["name"] == wire  # replayed under the alias it was sent as
    assert server.bodies[0]["tools"][0]["function"]["name"] == wire
    assert openapi_errors("CreateChatCompletionRequest", server.bodies[1]) == []


def test_chat_settings_in_the_body(registry: Registry) -> None:
    local = OpenAIChatModel("llama", client=Server().client())
    settings = ModelSettings(max_tokens=64, temperature=0.2, extra={"top_p": 0.9, "tool_choice": "none"})
    body = local.payload([UserMessage("hi")], registry, settings)
    assert body["max_tokens"] == 64 and "max_completion_tokens" not in body  # what compatible servers read
    assert (body["temperature"], body["top_p"], body["tool_choice"]) == (0.2, 0.9, "none")  # extra wins
    official = OpenAIChatModel("gpt-5", client=Server().client(base_url="https://api.openai.com/v1"))
    body = official.payload([UserMessage("hi")], registry, ModelSettings(max_tokens=64))
    assert body["max_completion_tokens"] == 64 and "max_tokens" not in body  # reasoning models reject max_tokens
    assert official.payload([UserMessage("hi")], Registry(), SETTINGS) == {
        "model": "gpt-5",
        "messages": [{"role": "user", "content": "hi"}],
    }  # no tools: no tools key and no tool_choice (the API rejects both)


async def test_chat_tool_changes_reach_the_wire(registry: Registry) -> None:
    server = Server(ok(load("chat_text")), ok(load("chat_text")), ok(load("chat_text")))
    model = OpenAIChatModel("gpt-4.1", client=server.client())
    await model.request([UserMessage("hi")], registry, SETTINGS)

    def extra_tool(x: int) -> int:
        """Echo.

        Args:
            x: A number.
        """
        return x

    registry.add("extra_tool", extra_tool)
    await model.request([UserMessage("hi")], registry, SETTINGS)
    replaced = [{"type": "function", "function": {"name": "only", "parameters": {"type": "object"}}}]
    await model.request([UserMessage("hi")], registry, ModelSettings(extra={"tools": replaced}))
    first, second, third = server.bodies
    assert [t["function"]["name"] for t in first["tools"]] == ["get_weather", "place_order", "tally"]
    assert [t["function"]["name"] for t in second["tools"]] == ["get_weather", "place_order", "tally", "extra_tool"]
    assert third["tools"] == replaced


# ---- Responses ---------------------------------------------------------------------------------------------


async def test_responses_text_and_instructions(registry: Registry) -> None:
    server = Server(ok(load("responses_text")))
    model = OpenAIResponsesModel("gpt-5", client=server.client())
    history: list[Message] = [SystemMessage("Be brief."), UserMessage("Weather in Paris?"), SystemMessage("No emoji.")]
    response = await model.request(history, registry, ModelSettings(max_tokens=300))
    assert type(response.raw).__name__ == "Response"

    assert response.message.text == "It is sunny in Paris today."
    assert (response.usage.input_tokens, response.usage.output_tokens) == (61, 30)
    assert response.finish_reason == "stop" and response.model_name == "gpt-5-2025-08-07"
    assert response.message.provider_details is not None
    assert [i["type"] for i in response.message.provider_details["openai-responses"]["output"]] == [
        "reasoning",
        "message",
    ]
    [request] = server.requests
    assert request.url.path == "/v1/responses"
    body = server.bodies[0]
    assert body == model.payload(history, registry, ModelSettings(max_tokens=300))
    assert body["instructions"] == "Be brief.\n\nNo emoji."
    assert body["input"] == [{"role": "user", "content": "Weather in Paris?"}]
    assert body["max_output_tokens"] == 300
    assert body["tools"] == OpenAIResponsesProvider().format_tools(registry)["tools"]
    assert openapi_errors("CreateResponse", body) == []


async def test_responses_reasoning_is_replayed_with_the_calls(registry: Registry) -> None:
    server = Server(ok(load("responses_tool_call")), ok(load("responses_text")))
    model = OpenAIResponsesModel("gpt-5", client=server.client())
    history: list[Message] = [UserMessage("Paris, 2 days")]
    first = await model.request(history, registry, ModelSettings(tool_choice="required"))
    [call] = first.message.tool_calls
    assert (call.id, call.name, call.arguments_dict()) == ("call_Wx7pQ2", "get_weather", {"city": "Paris", "days": 2})
    assert call.provider_details == {"item_id": "fc_call01"}
    assert first.finish_reason == "tool_calls"

    results = await registry.call_many(first.message.tool_calls)
    history += [first.message, ToolResultsMessage(results)]
    await model.request(history, registry, SETTINGS)
    body = server.bodies[1]
    assert openapi_errors("CreateResponse", body) == []
    user, reasoning, function_call, output = body["input"]
    assert reasoning == load("responses_tool_call")["output"][0]  # verbatim, encrypted content included
    assert function_call == {
        "type": "function_call",
        "call_id": "call_Wx7pQ2",
        "name": "get_weather",
        "arguments": '{"city":"Paris","days":2}',  # the neutral call: the strict null already dropped
        "id": "fc_call01",  # the item the reasoning item led to
    }
    assert_spec_valid("openai.responses.function_call", function_call)
    assert_spec_valid("openai.responses.function_call_output", output)
    assert output["call_id"] == "call_Wx7pQ2"
    assert json.loads(output["output"]) == {"city": "Paris", "unit": "c", "days": 2}


async def test_responses_parallel_calls(registry: Registry) -> None:
    server = Server(ok(load("responses_parallel")), ok(load("responses_text")))
    model = OpenAIResponsesModel("gpt-5", client=server.client())
    first = await model.request([UserMessage("Weather and order")], registry, SETTINGS)
    assert first.message.text == "Looking both up."
    assert [c.id for c in first.message.tool_calls] == ["call_paris01", "call_order02"]
    results = await registry.call_many(first.message.tool_calls)
    await model.request(
        [UserMessage("Weather and order"), first.message, ToolResultsMessage(results)], registry, SETTINGS
    )
    body = server.bodies[1]
    assert [i.get("type") for i in body["input"][1:]] == [
        "reasoning",
        "message",
        "function_call",
        "function_call",
        "function_call_output",
        "function_call_output",
    ]
    assert body["input"][2]["id"] == "msg_0001"  # the unchanged message goes back with its id
    assert openapi_errors("CreateResponse", body) == []


async def test_responses_stream(registry: Registry) -> None:
    server = Server(event_stream("responses_stream"))
    model = OpenAIResponsesModel("gpt-5", client=server.client())
    events = [e async for e in model.stream([UserMessage("Paris and Oslo?")], registry, SETTINGS)]

    body = server.bodies[0]
    assert body["stream"] is True and openapi_errors("CreateResponse", body) == []
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Checking both cities."
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert starts == [ToolCallStart(0, "call_s0", "get_weather"), ToolCallStart(1, "call_s1", "get_weather")]
    args = [e for e in events if isinstance(e, ToolCallArgsDelta)]
    assert [(e.index, e.delta) for e in args] == [
        (0, '{"city":'),
        (0, '"Paris","unit":"f","days":2}'),
        (1, '{"city":"Oslo","unit":null,"days":null}'),
    ]
    done = events[-1]
    assert isinstance(done, ResponseDone)
    response = done.response
    assert response.message.text == "Checking both cities."
    assert [c.arguments_dict() for c in response.message.tool_calls] == [
        {"city": "Paris", "unit": "f", "days": 2},
        {"city": "Oslo"},
    ]
    assert (response.usage.input_tokens, response.usage.output_tokens) == (150, 70)
    assert response.message.provider_details is not None
    assert response.message.provider_details["openai-responses"]["output"][0]["type"] == "reasoning"


async def test_responses_stream_failure_and_incomplete(registry: Registry) -> None:
    failed = (
        b'event: response.failed\ndata: {"type":"response.failed","sequence_number":0,"response":'
        b'{"id":"resp_f","object":"response","created_at":1,"model":"gpt-5","status":"failed","output":[],'
        b'"error":{"code":"server_error","message":"The model failed."},"tools":[],"tool_choice":"auto",'
        b'"parallel_tool_calls":true}}\n\n'
    )
    server = Server(httpx.Response(200, content=failed, headers={"content-type": "text/event-stream"}))
    model = OpenAIResponsesModel("gpt-5", client=server.client())
    with pytest.raises(ModelAPIError, match="The model failed"):
        [e async for e in model.stream([UserMessage("hi")], registry, SETTINGS)]

    incomplete = load("responses_text") | {
        "status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"},
    }
    server = Server(ok(incomplete))
    model = OpenAIResponsesModel("gpt-5", client=server.client())
    response = await model.request([UserMessage("hi")], registry, SETTINGS)
    assert response.finish_reason == "length"


# ---- errors, retries, setup ------------------------------------------------------------------------------


@pytest.mark.parametrize("model_class", [OpenAIChatModel, OpenAIResponsesModel])
@pytest.mark.parametrize(
    ("status", "kind"), [(401, "auth"), (429, "rate_limit"), (400, "bad_request"), (500, "server_error")]
)
async def test_http_errors_keep_status_body_and_headers(
    registry: Registry, model_class: Callable[..., Any], status: int, kind: str
) -> None:
    body = load(f"error_{status}")
    reply = httpx.Response(status, json=body, headers={"x-request-id": "req_123", "retry-after": "1"})
    server = Server(reply, reply)
    model = model_class("gpt-4.1", client=server.client())
    with pytest.raises(ModelHTTPError) as caught:
        await model.request([UserMessage("hi")], registry, SETTINGS)
    error = caught.value
    assert (error.status_code, error.kind, error.body) == (status, kind, body)
    assert error.headers["x-request-id"] == "req_123"
    assert error.model_name == model.name and body["error"]["message"][:40] in str(error)

    with pytest.raises(ModelHTTPError) as caught:  # a stream fails the same way when it is opened
        [e async for e in model.stream([UserMessage("hi")], registry, SETTINGS)]
    assert (caught.value.status_code, caught.value.body) == (status, body)


async def test_sdk_retries_still_apply(registry: Registry) -> None:
    busy = httpx.Response(500, json=load("error_500"), headers={"retry-after-ms": "1"})
    server = Server(busy, ok(load("chat_text")))
    model = OpenAIChatModel("gpt-4.1", client=server.client(max_retries=1))
    response = await model.request([UserMessage("hi")], registry, SETTINGS)
    assert response.message.text == "It is sunny in Paris today."
    assert len(server.requests) == 2
    assert server.requests[0].content == server.requests[1].content  # the same bytes resent


async def test_connection_and_stream_errors(registry: Registry) -> None:
    server = Server(httpx.ConnectError("connection refused"))
    model = OpenAIChatModel("gpt-4.1", client=server.client())
    with pytest.raises(ModelAPIError, match="connection") as caught:
        await model.request([UserMessage("hi")], registry, SETTINGS)
    assert not isinstance(caught.value, ModelHTTPError)

    broken = b'data: {"error": {"message": "overloaded mid-stream", "type": "server_error"}}\n\n'
    server = Server(httpx.Response(200, content=broken, headers={"content-type": "text/event-stream"}))
    model = OpenAIChatModel("gpt-4.1", client=server.client())
    with pytest.raises(ModelAPIError, match="overloaded mid-stream"):
        [e async for e in model.stream([UserMessage("hi")], registry, SETTINGS)]


def test_missing_api_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    makers: list[Callable[[], object]] = [
        lambda: OpenAIChatModel("gpt-4.1"),
        lambda: OpenAIResponsesModel("gpt-5"),
        lambda: infer_model("openai:x"),
    ]
    for make in makers:
        with pytest.raises(ModelSetupError, match="OPENAI_API_KEY") as caught:
            make()
        assert "TestModel" in str(caught.value)


async def test_clients_built_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    model = infer_model("openai:gpt-4.1")
    assert isinstance(model, OpenAIChatModel) and model.name == "openai:gpt-4.1"
    assert model.client.api_key == "sk-env"
    responses = infer_model("openai-responses:gpt-5")
    assert isinstance(responses, OpenAIResponsesModel) and responses.name == "openai-responses:gpt-5"

    monkeypatch.delenv("OPENAI_API_KEY")
    local = OpenAIChatModel("local", base_url="http://127.0.0.1:8080/v1")  # llama.cpp needs no key
    assert local.base_url == "http://127.0.0.1:8080/v1/"
    await local.aclose()
    assert local.client.is_closed()  # built here, closed here
    with pytest.raises(ModelSetupError, match="not both"):
        OpenAIChatModel("gpt-4.1", client=Server().client(), api_key="sk-other")


async def test_a_passed_client_is_never_closed() -> None:
    client = Server().client()
    model = OpenAIChatModel("gpt-4.1", client=client)
    async with model:
        assert model.client is client
    assert not client.is_closed()
    await client.close()


async def test_requests_to_real_endpoints_are_blocked(registry: Registry) -> None:
    server = Server(ok(load("chat_text")))
    model = OpenAIChatModel("gpt-4.1", client=server.client(base_url="https://api.openai.com/v1"))
    assert (await assert_blocked(model, registry, server.requests)).message.text


def test_importing_the_module_does_not_load_the_sdk() -> None:
    code = "import sys, agentkit.providers.openai; print('openai' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


# ---- 1,000 tools: the body skips the SDK's parameter walk -------------------------------------------------------


def big_registry(size: int = 1000) -> Registry:
    registry = Registry()
    for i in range(size):
        schema = {
            "type": "object",
            "properties": {"q": {"type": "string", "description": f"query {i}"}, "n": {"type": "integer"}},
            "required": ["q"],
        }
        registry.add(f"tool_{i}", Tool.from_json_schema(f"tool_{i}", schema, description=f"Tool number {i}."))
    return registry


async def test_one_step_with_1000_tools_skips_the_sdk_transform(monkeypatch: pytest.MonkeyPatch) -> None:
    import openai._utils._transform as transform

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the SDK walked the request parameters")

    monkeypatch.setattr(transform, "_async_transform_recursive", refuse)
    monkeypatch.setattr(transform, "_transform_recursive", refuse)
    registry = big_registry()
    reply = load("chat_tool_call")
    reply["choices"][0]["message"]["tool_calls"][0]["function"] = {"name": "tool_7", "arguments": '{"q":"x"}'}
    server = Server(*[ok(reply) for _ in range(6)])
    model = OpenAIChatModel("gpt-4.1", client=server.client())
    history = [UserMessage("find x")]
    for _ in range(6):
        response = await model.request(history, registry, SETTINGS)
    assert response.message.tool_calls[0].name == "tool_7"
    assert len(server.bodies[-1]["tools"]) == 1000
    # the speed itself (issue 4 §5.3, <= 30 ms a step) is measured by benchmarks/bench_openai_step.py


async def test_the_tools_json_is_encoded_once_for_repeated_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    import agentkit.providers.openai._client as module

    encoded_tool_lists = []
    real = module._dumps

    def counting(value: Any) -> bytes:
        if isinstance(value, list):
            encoded_tool_lists.append(len(value))
        return real(value)

    monkeypatch.setattr(module, "_dumps", counting)
    registry = big_registry(50)
    reply = load("chat_tool_call")
    reply["choices"][0]["message"]["tool_calls"][0]["function"] = {"name": "tool_7", "arguments": '{"q":"x"}'}
    server = Server(*[ok(reply) for _ in range(3)])
    model = OpenAIChatModel("gpt-4.1", client=server.client())
    for _ in range(3):
        await model.request([UserMessage("find x")], registry, SETTINGS)
    assert encoded_tool_lists == [50]  # the cached payload's JSON is reused, not rebuilt per request
    assert all(len(body["tools"]) == 50 for body in server.bodies)


_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(
    history=st.lists(st.dictionaries(st.text(max_size=6), _JSON_VALUES, max_size=3), max_size=4),
    rest=st.dictionaries(st.sampled_from(["model", "temperature", "user", "store"]), _JSON_VALUES, max_size=3),
    key=st.sampled_from(["messages", "input"]),
    tools=st.lists(st.dictionaries(st.text(max_size=4), _JSON_VALUES, max_size=2), max_size=2),
)
def test_the_body_encoder_writes_the_body_itself(
    history: list[Any], rest: dict[str, Any], key: str, tools: list[Any]
) -> None:
    from agentkit.providers.openai._client import _BodyEncoder

    body: dict[str, Any] = {**rest, key: history, "tools": tools}
    assert json.loads(_BodyEncoder().encode(body)) == json.loads(json.dumps(body))


def test_a_nan_in_the_history_is_refused_as_json_dumps_refuses_it() -> None:
    from agentkit.providers.openai._client import _BodyEncoder

    encoder = _BodyEncoder()
    text = encoder.encode({"model": "m", "input": [{"type": "message", "content": "NaN and Infinity as words"}]})
    assert json.loads(text)["input"][0]["content"] == "NaN and Infinity as words"
    for number in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match="JSON compliant"):
            encoder.encode({"model": "m", "messages": [{"role": "user", "score": number}]})


async def test_a_failed_response_raises(registry: Registry) -> None:
    failed = load("responses_text") | {
        "status": "failed",
        "output": [],
        "error": {"code": "server_error", "message": "Boom."},
    }
    server = Server(ok(failed))
    model = OpenAIResponsesModel("gpt-5", client=server.client())
    with pytest.raises(ModelAPIError, match="Boom"):
        await model.request([UserMessage("hi")], registry, SETTINGS)


async def test_older_sdks_get_the_body_as_a_dict(registry: Registry, monkeypatch: pytest.MonkeyPatch) -> None:
    import agentkit.providers.openai._client as module

    # an SDK whose post() takes no ready bytes and knows no request security (openai 1.x)
    monkeypatch.setattr(module, "_sdk_support", lambda client_class: (False, {}))
    server = Server(ok(load("chat_tool_call")), event_stream("chat_stream"))
    model = OpenAIChatModel("gpt-4.1", client=server.client())
    response = await model.request([UserMessage("Paris")], registry, SETTINGS)
    assert response.message.tool_calls[0].name == "get_weather"
    assert server.bodies[0] == model.payload([UserMessage("Paris")], registry, SETTINGS)
    assert server.requests[0].headers["authorization"] == "Bearer sk-test"
    events = [e async for e in model.stream([UserMessage("Paris")], registry, SETTINGS)]
    assert isinstance(events[-1], ResponseDone) and server.bodies[1]["stream"] is True


# ---- a stream is only a turn once the vendor says it has ended (issue 8 §4.6) ------------------------------


async def test_a_chat_stream_cut_before_its_finish_reason_is_no_turn(registry: Registry) -> None:
    cut = cut_before(sse("chat_stream"), b'"finish_reason":"tool_calls"')
    server = Server(httpx.Response(200, content=cut, headers={"content-type": "text/event-stream"}))
    model = OpenAIChatModel("gpt-4.1", client=server.client())
    events: list[Any] = []
    with pytest.raises(ModelAPIError, match="before a finish_reason"):
        async for event in model.stream([UserMessage("Paris and Oslo?")], registry, SETTINGS):
            events.append(event)
    assert events and not any(isinstance(e, ResponseDone) for e in events)


async def test_a_responses_stream_cut_before_completed_is_no_turn(registry: Registry) -> None:
    cut = cut_before(sse("responses_stream"), b"event: response.completed")
    server = Server(httpx.Response(200, content=cut, headers={"content-type": "text/event-stream"}))
    model = OpenAIResponsesModel("gpt-5", client=server.client())
    with pytest.raises(ModelAPIError, match="before response.completed"):
        [e async for e in model.stream([UserMessage("Paris and Oslo?")], registry, SETTINGS)]


@pytest.mark.parametrize(
    ("model_class", "fixture"), [(OpenAIChatModel, "chat_tool_call"), (OpenAIResponsesModel, "responses_tool_call")]
)
async def test_a_json_body_for_a_stream_request_is_no_turn(registry: Registry, model_class: Any, fixture: str) -> None:
    server = Server(ok(load(fixture)))
    model = model_class("gpt-4.1", client=server.client())
    with pytest.raises(ModelAPIError, match="no stream events"):
        [e async for e in model.stream([UserMessage("Paris?")], registry, SETTINGS)]


async def test_the_loop_runs_no_tool_from_a_cut_stream() -> None:
    from agentkit import Agent

    ran: list[str] = []

    def get_weather(city: str) -> str:
        """Weather.

        Args:
            city: City.
        """
        ran.append(city)
        return "sunny"

    cut = cut_before(sse("chat_stream"), b'"finish_reason":"tool_calls"')
    server = Server(httpx.Response(200, content=cut, headers={"content-type": "text/event-stream"}))
    agent = Agent(
        model=OpenAIChatModel("gpt-4.1", client=server.client()), tools=Registry({"get_weather": get_weather})
    )
    with pytest.raises(ModelAPIError):
        [e async for e in agent.stream("Paris?")]
    assert ran == []


# ---- request ids, vendor and endpoint on each response -------------------------------------------------------


async def test_each_response_carries_the_request_id_header_and_where_it_came_from(registry: Registry) -> None:
    reply = httpx.Response(200, json=load("chat_text"), headers={"x-request-id": "req_8d1c2b"})
    server = Server(reply)
    response = await OpenAIChatModel("gpt-4.1", client=server.client()).request([UserMessage("hi")], registry, SETTINGS)
    assert response.request_id == "req_8d1c2b"
    assert response.response_id == load("chat_text")["id"]
    assert (response.provider_name, response.provider_url) == ("openai", "http://127.0.0.1:8080/v1/")


async def test_a_stream_carries_the_request_id_of_its_response_headers(registry: Registry) -> None:
    for model_class, name in ((OpenAIChatModel, "chat_stream"), (OpenAIResponsesModel, "responses_stream")):
        reply = httpx.Response(
            200, content=sse(name), headers={"content-type": "text/event-stream", "x-request-id": "req_stream7"}
        )
        model = model_class("gpt-4.1", client=Server(reply).client())
        events = [e async for e in model.stream([UserMessage("Paris and Oslo?")], registry, SETTINGS)]
        done = events[-1]
        assert isinstance(done, ResponseDone)
        assert done.response.request_id == "req_stream7", name
        assert done.response.provider_name == model.vendor


async def test_no_request_id_header_is_none_not_a_guess(registry: Registry) -> None:
    server = Server(httpx.Response(200, json=load("responses_text")))
    response = await OpenAIResponsesModel("gpt-5", client=server.client()).request(
        [UserMessage("hi")], registry, SETTINGS
    )
    assert response.request_id is None
    assert response.response_id == load("responses_text")["id"]


# ---- use_sdk_create: the SDK's typed create(), for instrumentation that patches it -----------------------


@pytest.mark.parametrize(
    ("model_class", "resource", "whole", "streamed"),
    [
        (OpenAIChatModel, ("chat", "completions"), "chat_text", "chat_stream"),
        (OpenAIResponsesModel, ("responses",), "responses_text", "responses_stream"),
    ],
)
async def test_use_sdk_create_sends_the_same_body_through_create(
    registry: Registry, model_class: Any, resource: tuple[str, ...], whole: str, streamed: str
) -> None:
    settings = ModelSettings(temperature=0.5, extra={"top_p": 0.9, "agentkit_unknown_field": 1})
    plain, created = Server(ok(load(whole)), event_stream(streamed)), Server(ok(load(whole)), event_stream(streamed))
    history: list[Message] = [UserMessage("Paris and Oslo?")]
    baseline = model_class("gpt-4.1", client=plain.client())
    expected = await baseline.request(history, registry, settings)
    [_ async for _ in baseline.stream(history, registry, settings)]

    client = created.client()
    target = client
    for name in resource:
        target = getattr(target, name)
    seen: list[dict[str, Any]] = []
    original = target.create

    @functools.wraps(original)  # as instrumentation wrappers do (wrapt): the signature stays readable
    async def patched(**kwargs: Any) -> Any:  # look, then call
        seen.append(kwargs)
        return await original(**kwargs)

    target.create = patched
    model = model_class("gpt-4.1", client=client, use_sdk_create=True)
    response = await model.request(history, registry, settings)
    events = [e async for e in model.stream(history, registry, settings)]

    assert created.bodies == plain.bodies  # the same JSON on the wire, unknown fields included
    assert len(seen) == 2 and seen[0]["extra_body"] == {"agentkit_unknown_field": 1}
    assert response.message.text == expected.message.text and response.usage == expected.usage
    assert response.request_id == "req_ok"
    assert isinstance(events[-1], ResponseDone)
