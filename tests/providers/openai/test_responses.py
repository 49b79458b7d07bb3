"""OpenAI Responses provider, checked against the vendor's own spec and SDK."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentkit import Registry, tool
from agentkit.exceptions import ModelAPIError
from agentkit.messages import ImagePart, TextPart, ToolCall, ToolResult
from agentkit.providers import InvalidToolNameError, get_provider
from agentkit.providers.openai import OpenAIResponsesProvider
from tests.providers.openai.test_chat import (
    PNG,
    fixture,
    get_weather,
    httpx_module,
    make_registry,
    openapi_errors,
    sdk_client,
    sse,
    strict_lint_errors,
    tally,
)
from tests.spec import assert_spec_valid, sample, spec_errors

FIXTURES = Path(__file__).parent / "fixtures" / "responses"


def load(name: str) -> Any:
    return fixture(name, FIXTURES)


@pytest.fixture
def provider() -> OpenAIResponsesProvider:
    return OpenAIResponsesProvider()


@pytest.fixture
def registry() -> Registry:
    return make_registry()


def by_name(payload: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in payload["tools"]}


# ---- format_tools ----------------------------------------------------------------------------------------


def test_get_provider_returns_this_class() -> None:
    assert isinstance(get_provider("openai-responses"), OpenAIResponsesProvider)


def test_tools_are_flat_spec_valid_and_always_say_strict(provider: OpenAIResponsesProvider, registry: Registry) -> None:
    payload = provider.format_tools(registry)
    for entry in payload["tools"]:
        assert_spec_valid("openai.responses.function_tool", entry)
        assert_spec_valid("openai.responses.tool", entry)
        assert "function" not in entry  # flat, unlike Chat
    assert_spec_valid("openai.responses.tool_choice", payload["tool_choice"])
    tools = by_name(payload)
    assert tools["get_weather"]["strict"] is True and tools["place_order"]["strict"] is True
    for name in ("get_weather", "place_order"):
        assert strict_lint_errors(tools[name]["parameters"]) == []
    # the server would try strict on its own if the key were missing: the fallback is explicit
    assert tools["tally"]["strict"] is False
    assert tools["tally"]["parameters"] == registry["tally"].input_schema
    loose = by_name(provider.format_tools(registry, strict=False))
    assert all(entry["strict"] is False for entry in loose.values())


def test_strict_optional_params_are_required_and_nullable(
    provider: OpenAIResponsesProvider, registry: Registry
) -> None:
    params = by_name(provider.format_tools(registry))["get_weather"]["parameters"]
    assert params["required"] == ["city", "unit", "days"]
    assert params["properties"]["days"]["type"] == ["integer", "null"]
    assert "default: 1" in params["properties"]["days"]["description"]


def test_output_schema_is_sent_when_the_model_reads_the_json(provider: OpenAIResponsesProvider) -> None:
    def shout(text: str) -> str:
        """Shout.

        Args:
            text: What to shout.
        """
        return text.upper()

    def forget(key: str) -> None:
        """Forget a key.

        Args:
            key: The key.
        """

    reg = Registry(
        {
            "weather": get_weather,
            "shout": shout,
            "shout_image": tool(shout, to_model_output=lambda v: ImagePart(data=PNG)),
            "forget": forget,
        }
    )
    tools = by_name(provider.format_tools(reg))
    assert tools["weather"]["output_schema"] == reg["weather"].output_schema
    assert tools["shout"]["output_schema"] == {"type": "string"}
    assert "output_schema" not in tools["shout_image"]  # the model gets an image, not the JSON value
    assert "output_schema" not in tools["forget"]
    for entry in tools.values():
        assert_spec_valid("openai.responses.function_tool", entry)


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"tool_choice": "auto"}, "auto"),
        ({"tool_choice": "none"}, "none"),
        ({"tool_choice": "required"}, "required"),
        ({"tool_choice": "place_order"}, {"type": "function", "name": "place_order"}),
        (
            {"active_tools": ["get_weather", "tally"]},
            {
                "type": "allowed_tools",
                "mode": "auto",
                "tools": [{"type": "function", "name": "get_weather"}, {"type": "function", "name": "tally"}],
            },
        ),
        (
            {"tool_choice": "required", "active_tools": ["tally"]},
            {"type": "allowed_tools", "mode": "required", "tools": [{"type": "function", "name": "tally"}]},
        ),
        ({"tool_choice": "tally", "active_tools": ["tally"]}, {"type": "function", "name": "tally"}),
        ({"tool_choice": "none", "active_tools": ["tally"]}, "none"),
        ({"active_tools": []}, "none"),
    ],
)
def test_tool_choice_forms(
    provider: OpenAIResponsesProvider, registry: Registry, options: dict[str, Any], expected: Any
) -> None:
    payload = provider.format_tools(registry, **options)
    assert_spec_valid("openai.responses.tool_choice", payload["tool_choice"])
    assert payload["tool_choice"] == expected
    assert json.dumps(payload["tools"]) == json.dumps(provider.format_tools(registry)["tools"])


@pytest.mark.parametrize("flag", [True, False])
def test_parallel_tool_calls(provider: OpenAIResponsesProvider, registry: Registry, flag: bool) -> None:
    payload = provider.format_tools(registry, parallel_tool_calls=flag)
    assert payload["parallel_tool_calls"] is flag
    assert openapi_errors("CreateResponse", {"model": "gpt-5", "input": "hi", **payload}) == []


def test_empty_registry_sends_nothing(provider: OpenAIResponsesProvider) -> None:
    assert provider.format_tools(Registry()) == {}


@pytest.mark.parametrize(
    "name",
    [
        "openai_responses_function_tool_no_strict_key",
        "openai_responses_function_call_output_callid_too_long",
        "openai_responses_namespace_member_bad_name",
    ],
)
def test_the_spec_check_bites(name: str) -> None:
    case = sample(name)
    assert spec_errors(case["schema"], case["payload"]), f"{name} should break {case['schema']}"


# ---- results -----------------------------------------------------------------------------------------------


async def test_results_ok_error_and_image(provider: OpenAIResponsesProvider, registry: Registry) -> None:
    ok, bad = await registry.call_many(
        [
            ToolCall(id="call_ok", name="get_weather", arguments='{"city": "Paris"}'),
            ToolCall(id="call_bad", name="nope", arguments="{}"),
        ]
    )
    picture = ToolResult(call_id="call_img", name="chart", content=(TextPart("chart attached"), ImagePart(data=PNG)))
    failed_picture = ToolResult(
        call_id="call_x", name="chart", content=(ImagePart(url="https://e.x/a.png"),), is_error=True
    )
    items = provider.format_tool_results([ok, bad, picture, failed_picture])
    for item in items:
        assert_spec_valid("openai.responses.function_call_output", item)
        assert item["type"] == "function_call_output"
    assert [i["call_id"] for i in items] == ["call_ok", "call_bad", "call_img", "call_x"]
    assert json.loads(items[0]["output"]) == {"city": "Paris", "unit": "c", "days": 1}
    assert items[1]["output"].startswith("Error: Unknown tool 'nope'")
    assert items[2]["output"] == [
        {"type": "input_text", "text": "chart attached"},
        {"type": "input_image", "image_url": ImagePart(data=PNG).data_url, "detail": "auto"},
    ]
    assert items[3]["output"][0] == {"type": "input_text", "text": "Error:"}
    assert items[3]["output"][1]["image_url"] == "https://e.x/a.png"


def test_long_call_ids_are_shortened_deterministically(provider: OpenAIResponsesProvider) -> None:
    long_id = "toolu_" + "a1" * 40  # e.g. an id from another vendor's history
    result = ToolResult(call_id=long_id, name="x", content=(TextPart("ok"),))
    first = provider.format_tool_results([result])[0]
    assert len(first["call_id"]) <= 64 and first["call_id"] != long_id
    assert provider.format_tool_results([result])[0]["call_id"] == first["call_id"]
    assert_spec_valid("openai.responses.function_call_output", first)
    assert provider.wire_id("call_short") == "call_short"


# ---- parsing -------------------------------------------------------------------------------------------------


def test_parse_text_only(provider: OpenAIResponsesProvider) -> None:
    assert provider.parse_tool_calls(load("text_only")) == []


def test_parse_single_call_skips_reasoning(provider: OpenAIResponsesProvider) -> None:
    response = load("single_call")
    assert_spec_valid("openai.responses.function_call", response["output"][1])
    [call] = provider.parse_tool_calls(response)
    assert call.id == "call_12345xyz"  # call_id: what function_call_output links to
    assert call.provider_details == {"item_id": "fc_0001"}
    assert call.arguments == '{"city":"Paris","unit":null,"days":3}'


def test_parse_parallel_calls(provider: OpenAIResponsesProvider) -> None:
    calls = provider.parse_tool_calls(load("parallel_calls"))
    assert [(c.id, c.name) for c in calls] == [("call_paris01", "get_weather"), ("call_order02", "place_order")]
    # a bare list of output items works too
    assert provider.parse_tool_calls(load("parallel_calls")["output"]) == calls


async def test_null_means_default_end_to_end(provider: OpenAIResponsesProvider, registry: Registry) -> None:
    weather, order = provider.parse_tool_calls(load("parallel_calls"), registry=registry)
    assert weather.arguments == {"city": "Paris", "unit": "c"}
    results = await registry.call_many([weather, order])
    assert [r.output for r in results] == [{"city": "Paris", "unit": "c", "days": 1}, "Ada: 2 item(s) to Paris"]


def test_stream_accumulates_parallel_calls(provider: OpenAIResponsesProvider, registry: Registry) -> None:
    events = load("stream_parallel")
    for event in events:
        if event["type"] == "response.function_call_arguments.delta":
            assert_spec_valid("openai.responses.function_call_arguments_delta", event)
        if event["type"] == "response.function_call_arguments.done":
            assert_spec_valid("openai.responses.function_call_arguments_done", event)
    stream = provider.stream(registry=registry)
    deltas = [d for event in events for d in stream.feed(event)]
    # calls are numbered in the order they start (output_index 1 and 2 here, after a reasoning item)
    assert sorted({d.index for d in deltas}) == [0, 1]
    assert [d.arguments_delta for d in deltas if d.index == 0] == ['{"ci', 'ty":"Pa', 'ris","unit":', '"f","days":2}']
    assert deltas[-1].id == "call_s1" and deltas[-1].name == "get_weather"
    first, second = stream.tool_calls()
    assert (first.id, first.arguments) == ("call_s0", '{"city":"Paris","unit":"f","days":2}')
    assert first.provider_details == {"item_id": "fc_s0"}
    assert second.arguments == {"city": "Oslo"}


def test_stream_recovers_missed_and_garbled_deltas(provider: OpenAIResponsesProvider) -> None:
    events = load("stream_parallel")
    stream = provider.stream()
    # drop every delta of the first call, and garble one of the second
    kept = []
    for event in events:
        if event["type"] == "response.function_call_arguments.delta":
            if event["item_id"] == "fc_s0":
                continue
            if event["delta"] == ':"Oslo",':
                event = {**event, "delta": "GARBLED"}
        kept.append(event)
    deltas = [d for event in kept for d in stream.feed(event)]
    # the done event fills in what never arrived, as one delta
    assert [d.arguments_delta for d in deltas if d.index == 0] == ['{"city":"Paris","unit":"f","days":2}']
    first, second = stream.tool_calls()
    assert first.arguments == '{"city":"Paris","unit":"f","days":2}'
    assert second.arguments == '{"city":"Oslo","unit":null,"days":null}'  # the complete text wins


def test_stream_from_completed_event_alone(provider: OpenAIResponsesProvider) -> None:
    completed = load("stream_parallel")[-1]
    stream = provider.stream()
    stream.feed(completed)
    assert [c.id for c in stream.tool_calls()] == ["call_s0", "call_s1"]


# ---- names -------------------------------------------------------------------------------------------------------


def test_rejected_key_raises(provider: OpenAIResponsesProvider) -> None:
    with pytest.raises(InvalidToolNameError) as info:
        provider.format_tools(Registry({"weather now": get_weather}))
    assert (info.value.key, info.value.vendor) == ("weather now", "openai-responses")
    assert "^[a-zA-Z0-9_-]{1,64}$" in str(info.value)


def test_aliases_are_sent_and_mapped_back(provider: OpenAIResponsesProvider) -> None:
    reg = Registry({"weather now": get_weather, "tally": tally})
    payload = provider.format_tools(reg, aliases=True, active_tools=["weather now"])
    assert [t["name"] for t in payload["tools"]] == ["weather_now", "tally"]
    assert payload["tool_choice"]["tools"] == [{"type": "function", "name": "weather_now"}]
    response = load("single_call")
    response["output"][1]["name"] = "weather_now"
    [call] = provider.parse_tool_calls(response, registry=reg, aliases=True)
    assert call.name == "weather now" and call.arguments == {"city": "Paris", "days": 3}
    stream = provider.stream(registry=reg, aliases=True)
    for event in json.loads(json.dumps(load("stream_parallel")).replace('"get_weather"', '"weather_now"')):
        stream.feed(event)
    assert {c.name for c in stream.tool_calls()} == {"weather now"}


# ---- through the official SDK ---------------------------------------------------------------------------------


async def test_sdk_round_trip(provider: OpenAIResponsesProvider, registry: Registry) -> None:
    httpx = httpx_module()
    bodies: list[dict[str, Any]] = []
    replies = [load("parallel_calls"), load("text_only")]

    def handler(request: Any) -> Any:
        assert request.url.path == "/v1/responses"
        bodies.append(json.loads(request.content))
        return httpx.Response(200, json=replies[len(bodies) - 1])

    client = sdk_client(handler)
    payload = provider.format_tools(registry, tool_choice="required", parallel_tool_calls=True)
    user = {"role": "user", "content": "Weather in Paris, and order one ABC-1 for Ada."}
    response = await client.responses.create(model="gpt-5", input=[user], **payload)
    assert bodies[0]["tools"] == payload["tools"] and bodies[0]["tool_choice"] == "required"
    assert openapi_errors("CreateResponse", bodies[0]) == []

    calls = provider.parse_tool_calls(response, registry=registry)  # the SDK's Response object
    assert [c.id for c in calls] == ["call_paris01", "call_order02"]
    results = await registry.call_many(calls)
    replay = [item.model_dump(mode="json", exclude_none=True) for item in response.output]  # reasoning included
    follow_up = [user, *replay, *provider.format_tool_results(results)]
    final = await client.responses.create(model="gpt-5", input=follow_up, **payload)
    assert bodies[1]["input"] == follow_up
    assert openapi_errors("CreateResponse", bodies[1]) == []
    assert provider.parse_tool_calls(final) == []


async def test_sdk_stream(provider: OpenAIResponsesProvider, registry: Registry) -> None:
    httpx = httpx_module()
    seen: list[dict[str, Any]] = []

    def handler(request: Any) -> Any:
        seen.append(json.loads(request.content))
        body = sse(load("stream_parallel"), named=True)
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

    client = sdk_client(handler)
    payload = provider.format_tools(registry, tool_choice="get_weather", strict=False)
    stream = await client.responses.create(model="gpt-5", input="Paris and Oslo?", stream=True, **payload)
    accumulator = provider.stream(registry=registry)
    kinds = []
    async for event in stream:  # SDK event objects
        kinds.append(type(event).__name__)
        accumulator.feed(event)
    assert "ResponseFunctionCallArgumentsDeltaEvent" in kinds
    assert seen[0]["stream"] is True and seen[0]["tool_choice"] == {"type": "function", "name": "get_weather"}
    assert all(t["strict"] is False for t in seen[0]["tools"])
    calls = accumulator.tool_calls()
    results = await registry.call_many(calls)
    assert [r.output for r in results] == [
        {"city": "Paris", "unit": "f", "days": 2},
        {"city": "Oslo", "unit": "c", "days": 1},
    ]
    items = provider.format_tool_results(results)
    assert [i["call_id"] for i in items] == ["call_s0", "call_s1"]


def test_stream_links_events_by_item_id_or_output_index(provider: OpenAIResponsesProvider) -> None:
    stream = provider.stream()
    item = {"type": "function_call", "id": "fc_9", "call_id": "call_9", "name": "tally", "arguments": ""}
    stream.feed({"type": "response.output_item.added", "output_index": 3, "item": item})
    stream.feed({"type": "response.function_call_arguments.delta", "output_index": 3, "delta": '{"counts":'})
    stream.feed({"type": "response.function_call_arguments.delta", "item_id": "fc_9", "delta": "{}}"})
    [call] = stream.tool_calls()
    assert (call.id, call.name, call.arguments) == ("call_9", "tally", '{"counts":{}}')


# ---- whole conversations: format_messages / parse_response ------------------------------------------------


def test_format_messages_instructions_user_parts_and_foreign_history(
    provider: OpenAIResponsesProvider, registry: Registry
) -> None:
    from agentkit.messages import AssistantMessage, SystemMessage, ToolResultsMessage, UserMessage

    long_id = "toolu_" + "x" * 80  # another vendor's id: longer than call_id's 64 characters
    call = ToolCall(long_id, "tally", {"counts": {"a": 1}}, provider_details={"item_id": "toolu_item"})
    history = [
        SystemMessage("Be brief."),
        UserMessage([TextPart("Look:"), ImagePart(data=PNG)]),
        SystemMessage("Use tools."),
        AssistantMessage(text="Counting.", tool_calls=[call], provider_details={"anthropic": {"x": 1}}),
        ToolResultsMessage([ToolResult(long_id, "tally", (TextPart("1"),), output=1)]),
    ]
    fragment = provider.format_messages(history, registry=registry)
    assert fragment["instructions"] == "Be brief.\n\nUse tools."
    user, message, function_call, output = fragment["input"]
    assert user["content"][1] == {"type": "input_image", "image_url": ImagePart(data=PNG).data_url, "detail": "auto"}
    assert message == {"role": "assistant", "content": "Counting."}
    assert function_call == {
        "type": "function_call",
        "call_id": provider.wire_id(long_id),  # shortened the same way as the result's
        "name": "tally",
        "arguments": '{"counts":{"a":1}}',
    }  # no "id": only fc_ item ids are accepted
    assert output["call_id"] == function_call["call_id"] and len(output["call_id"]) <= 64
    assert_spec_valid("openai.responses.function_call", function_call)
    assert_spec_valid("openai.responses.function_call_output", output)
    # a user message with parts fits both EasyInputMessage and InputMessage, so the spec's oneOf over
    # input items cannot accept it; it is checked against its own component, the rest as a whole body
    assert openapi_errors("EasyInputMessage", user) == []
    body = {"model": "gpt-5", **provider.build_request(history, registry)}
    body["input"][0] = {"role": "user", "content": "Look:"}
    assert openapi_errors("CreateResponse", body) == []
    assert "instructions" not in provider.format_messages([UserMessage("hi")])


def test_replay_follows_the_stored_order_and_the_edited_message(
    provider: OpenAIResponsesProvider, registry: Registry
) -> None:
    from dataclasses import replace

    response = provider.parse_response(load("parallel_calls"), registry=registry)
    stored = load("parallel_calls")["output"]
    assert response.message.provider_details == {"openai-responses": {"output": stored}}
    items = provider.format_messages([response.message], registry=registry)["input"]
    assert [(i["type"], i.get("id")) for i in items] == [
        ("reasoning", "rs_0001"),
        ("function_call", "fc_0001"),
        ("function_call", "fc_0002"),
    ]
    assert items[0] == stored[0]

    # the caller edits the turn: new text, one call dropped -> reasoning kept, what is left follows it
    edited = replace(response.message, text="Only the weather.", tool_calls=response.message.tool_calls[:1])
    items = provider.format_messages([edited], registry=registry)["input"]
    assert [i.get("type", i.get("role")) for i in items] == ["reasoning", "function_call", "assistant"]
    assert items[2] == {"role": "assistant", "content": "Only the weather."}
    assert [i["call_id"] for i in items if i.get("type") == "function_call"] == ["call_paris01"]

    # a message item replays verbatim (with its id) only while its text is unchanged
    with_text = load("parallel_calls")
    message_item = {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "On it.", "annotations": []}],
    }
    with_text["output"].insert(1, message_item)
    turn = provider.parse_response(with_text, registry=registry).message
    assert turn.text == "On it."
    assert provider.format_messages([turn], registry=registry)["input"][1] == message_item
    changed = provider.format_messages([replace(turn, text="Changed.")], registry=registry)["input"]
    assert changed[1] == {"role": "assistant", "content": "Changed."}
    assert openapi_errors("CreateResponse", {"model": "gpt-5", "input": changed}) == []


def test_parse_response_finish_reasons_usage_and_sdk_objects(
    provider: OpenAIResponsesProvider, registry: Registry
) -> None:
    from openai.types.responses import Response

    data = load("parallel_calls")
    data["usage"]["input_tokens_details"]["cache_write_tokens"] = 0  # required by this SDK's types
    response = provider.parse_response(Response.model_validate(data), registry=registry)
    assert [c.id for c in response.message.tool_calls] == ["call_paris01", "call_order02"]
    assert (response.usage.input_tokens, response.usage.output_tokens, response.usage.requests) == (91, 40, 1)
    assert response.finish_reason == "tool_calls" and response.model_name == "gpt-5-2025-08-07"

    text = load("text_only")
    assert provider.parse_response(text).finish_reason == "stop"
    cut = text | {"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}}
    assert provider.parse_response(cut).finish_reason == "length"
    filtered = text | {"status": "incomplete", "incomplete_details": {"reason": "content_filter"}}
    assert provider.parse_response(filtered).finish_reason == "content_filter"
    assert provider.parse_response(text | {"status": "failed"}).finish_reason == "failed"
    refusal = {
        "status": "completed",
        "output": [{"type": "message", "role": "assistant", "content": [{"type": "refusal", "refusal": "No."}]}],
    }
    assert provider.parse_response(refusal).message.text == "No."
    empty = provider.parse_response({"status": "completed", "output": []})
    assert (empty.message.text, empty.message.provider_details, empty.finish_reason) == ("", None, "stop")
    with pytest.raises(ModelAPIError, match="no output"):  # not an empty answer (issue 17 §2.2)
        provider.parse_response({})
