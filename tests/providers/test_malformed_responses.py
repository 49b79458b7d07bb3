"""Wrong-typed fields in a vendor response never escape as raw exceptions (issue 8 §4 item 4).

Every vendor's recorded responses and streams (the codec fixtures) are fuzzed with hypothesis: one field
anywhere in a response, or in one stream event, is replaced by a value of another type (a tool name that
is a number, a call that is not an object, arguments of the wrong type, content that is not a list,
usage counts as strings...) or removed. Reading it (`parse_response`, `parse_tool_calls`, the stream
decoder's `decode` / `feed` / `flush` / `response`) may only give a well-formed `ModelResponse` or raise
`ModelAPIError`; every call that comes out is answered by `Registry.call` with a result, never a raise.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentkit import Registry, Tool
from agentkit.exceptions import ModelAPIError
from agentkit.messages import AssistantMessage, ModelResponse, ToolCall, ToolResult, Usage
from agentkit.providers import Provider, get_provider

from .common import get_weather, ping, place_order

HERE = Path(__file__).parent
REGISTRY = Registry(
    {
        "get_weather": Tool(get_weather),
        "place_order": Tool(place_order),
        "ping": Tool(ping),
        "create_order": Tool(place_order, id="create_order"),
    }
)

# (vendor, fixture folder, whole responses, streams)
FIXTURES = {
    "openai": (
        "openai/fixtures/chat",
        ["single_call", "parallel_calls", "text_only", "usage_details"],
        ["stream_parallel"],
    ),
    "openai-responses": (
        "openai/fixtures/responses",
        ["single_call", "parallel_calls", "text_only", "usage_details"],
        ["stream_parallel"],
    ),
    "anthropic": (
        "anthropic/fixtures/codec",
        ["single_call", "parallel_calls", "text_only", "usage_details"],
        ["stream_tool_use"],
    ),
    "gemini": (
        "gemini/fixtures/codec",
        ["single_call", "parallel_calls", "text_only", "sdk_snake_case", "usage_details"],
        ["stream"],
    ),
    "bedrock": (
        "bedrock/fixtures/codec",
        ["converse_single_call", "converse_parallel_calls", "converse_text_only", "usage_details"],
        ["converse_stream"],
    ),
    "mistral": (
        "mistral/fixtures/codec",
        ["response_single", "response_parallel", "response_text", "usage_details"],
        ["stream"],
    ),
    "cohere": (
        "cohere/fixtures/codec",
        ["response_single", "response_parallel", "response_text", "usage_details"],
        ["stream"],
    ),
    "ollama": (
        "ollama/fixtures/codec",
        ["response_single", "response_parallel", "response_text", "usage_details"],
        ["stream"],
    ),
}
VENDORS = tuple(FIXTURES)

WRONG: list[Any] = [None, 0, 7, -3, 2.5, True, False, "", "x", "12", [], [1, "a"], [{}], {}, {"k": 1}, {"type": 5}]
"""Values of every JSON type, put where something else belongs."""
_DROP = object()


@cache
def load(vendor: str, name: str) -> Any:
    folder, _, _ = FIXTURES[vendor]
    data = json.loads((HERE / folder / f"{name}.json").read_text())
    if isinstance(data, dict):
        data.pop("_source", None)
        if "events" in data and len(data) == 1:
            return data["events"]
        if "response" in data and "expected" in data:  # the usage fixtures: a response beside what it reads as
            return data["response"]
    return data


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every position in a JSON document (keys and indexes), the document itself excluded."""
    found: list[tuple[Any, ...]] = []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        found.append((*prefix, key))
        found.extend(paths(value, (*prefix, key)))
    return found


def replaced(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    out = copy.deepcopy(document)
    parent = out
    for key in path[:-1]:
        parent = parent[key]
    if value is _DROP:
        del parent[path[-1]]
    else:
        parent[path[-1]] = copy.deepcopy(value)
    return out


def check_response(response: ModelResponse) -> None:
    """What a parsed turn promises, and that every call in it is answered, not raised."""
    assert isinstance(response, ModelResponse)
    assert isinstance(response.message, AssistantMessage) and isinstance(response.message.text, str)
    assert isinstance(response.usage, Usage)
    for field in dataclasses.fields(Usage):
        count = getattr(response.usage, field.name)
        assert isinstance(count, int) and not isinstance(count, bool) and count >= 0, field.name
    for name in ("finish_reason", "model_name", "response_id", "request_id", "provider_name", "provider_url"):
        assert getattr(response, name) is None or isinstance(getattr(response, name), str), name
    check_calls(response.message.tool_calls)


def check_calls(calls: list[ToolCall]) -> None:
    for call in calls:
        assert isinstance(call.id, str) and isinstance(call.name, str)
        assert isinstance(call.arguments, (str, dict)) or hasattr(call.arguments, "items")
    results = asyncio.run(_answer(calls))
    assert all(isinstance(result, ToolResult) for result in results)


async def _answer(calls: list[ToolCall]) -> list[ToolResult]:
    return [await REGISTRY.call(call) for call in calls]


def mutations(vendor: str, documents: list[str]) -> st.SearchStrategy[tuple[str, tuple[Any, ...], Any]]:
    """(fixture, path, value) with the path drawn among the fixture's positions."""
    return st.sampled_from(documents).flatmap(
        lambda name: st.tuples(
            st.just(name), st.sampled_from(paths(load(vendor, name))), st.sampled_from([*WRONG, _DROP])
        )
    )


def read_whole(provider: Provider, document: Any) -> None:
    for registry in (REGISTRY, None):
        try:
            response = provider.parse_response(document, registry=registry)
        except ModelAPIError:
            pass
        else:
            check_response(response)
        try:
            calls = provider.parse_tool_calls(document, registry=registry)
        except ModelAPIError:
            pass
        else:
            check_calls(calls)


def read_stream(provider: Provider, events: list[Any]) -> None:
    decoder = provider.decoder(registry=REGISTRY)
    try:
        for event in events:
            decoder.decode(event)
        decoder.flush()
        response = decoder.response()
    except ModelAPIError:
        return
    check_response(response)
    accumulator = provider.stream(registry=REGISTRY)
    try:
        for event in events:
            accumulator.feed(event)
        calls = accumulator.tool_calls()
    except ModelAPIError:
        return
    check_calls(calls)


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("vendor", VENDORS)
def test_the_recorded_fixtures_read_cleanly(vendor: str) -> None:
    provider = get_provider(vendor)
    _, whole, streams = FIXTURES[vendor]
    for name in whole:
        check_response(provider.parse_response(load(vendor, name), registry=REGISTRY))
    for name in streams:
        decoder = provider.decoder(registry=REGISTRY)
        for event in load(vendor, name):
            decoder.decode(event)
        decoder.flush()
        check_response(decoder.response())


@pytest.mark.parametrize("vendor", VENDORS)
def test_a_wrong_typed_field_in_a_response_is_a_model_api_error(vendor: str) -> None:
    provider = get_provider(vendor)
    _, whole, _ = FIXTURES[vendor]

    @FUZZ
    @given(mutations(vendor, whole))
    def check(mutation: tuple[str, tuple[Any, ...], Any]) -> None:
        name, path, value = mutation
        read_whole(provider, replaced(load(vendor, name), path, value))

    check()


@pytest.mark.parametrize("vendor", VENDORS)
def test_a_wrong_typed_field_in_a_stream_event_is_a_model_api_error(vendor: str) -> None:
    provider = get_provider(vendor)
    _, _, streams = FIXTURES[vendor]

    @FUZZ
    @given(mutations(vendor, streams))
    def check(mutation: tuple[str, tuple[Any, ...], Any]) -> None:
        name, path, value = mutation
        read_stream(provider, replaced(load(vendor, name), path, value))

    check()


@pytest.mark.parametrize("vendor", VENDORS)
@pytest.mark.parametrize("value", WRONG, ids=repr)
def test_a_whole_response_of_the_wrong_type_is_a_model_api_error(vendor: str, value: Any) -> None:
    read_whole(get_provider(vendor), value)
    read_stream(get_provider(vendor), [value])


def test_examples_from_the_issue() -> None:
    """A tool name that is a number, a call that is not an object, arguments of the wrong type."""
    openai = get_provider("openai")
    single = load("openai", "single_call")
    with pytest.raises(ModelAPIError, match="name is not a string"):
        openai.parse_response(replaced(single, ("choices", 0, "message", "tool_calls", 0, "function", "name"), 5))
    with pytest.raises(ModelAPIError, match="does not have the shape the API documents"):
        openai.parse_response(replaced(single, ("choices", 0, "message", "tool_calls", 0), "call"))
    wrong_args = openai.parse_response(
        replaced(single, ("choices", 0, "message", "tool_calls", 0, "function", "arguments"), [1, 2]),
        registry=REGISTRY,
    )
    [call] = wrong_args.message.tool_calls
    [result] = asyncio.run(_answer([call]))
    assert result.is_error and "object" in result.text  # the model is told, the run goes on
    anthropic = get_provider("anthropic")
    with pytest.raises(ModelAPIError, match="anthropic: a tool call whose id is not a string: 3"):
        anthropic.parse_response(
            replaced(load("anthropic", "single_call"), ("content",), [{"type": "tool_use", "id": 3}])
        )
    usage = anthropic.parse_response(replaced(load("anthropic", "single_call"), ("usage", "output_tokens"), "12"))
    assert usage.usage.output_tokens == 0  # not a count: read as 0, the turn itself is kept
