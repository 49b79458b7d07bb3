"""Arguments nested 5,000 levels deep become error results everywhere they are walked (issue 8, §4 item 1)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentkit import Agent, Registry, Tool, ToolCall, tool
from agentkit._text import _dumps_iteratively, json_text
from agentkit.providers import get_provider, provider_names
from tests.agent_helpers import calls, scripted

DEPTH = 5000


def _deep_list(depth: int = DEPTH) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def _deep_dict(depth: int = DEPTH) -> Any:
    value: Any = {}
    for _ in range(depth):
        value = {"child": value}
    return value


DEEP_TEXT = '{"tree": ' + "[" * DEPTH + "]" * DEPTH + "}"


@tool
def take_any(tree: Any = None) -> str:
    """Takes anything."""
    return "ok"


@tool
def take_list(tree: list[Any] | None = None) -> str:
    """Takes a list."""
    return "ok"


recursive = Tool.from_json_schema(
    "recursive",
    {
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/Node"}},
        "$defs": {"Node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Node"}}}},
    },
    fn=lambda args: "ok",
)


@pytest.mark.parametrize("item", [take_any, take_list, recursive], ids=lambda t: t.id)
@pytest.mark.parametrize(
    "arguments",
    [{"tree": _deep_list()}, {"tree": _deep_dict()}, DEEP_TEXT, json.dumps({"tree": _deep_dict(900)})],
    ids=["list", "dict", "text", "dict-text-900"],
)
async def test_registry_call_makes_an_error_result(item: Tool[..., Any], arguments: Any) -> None:
    result = await Registry([item]).call(ToolCall("1", item.id, arguments))
    assert result.is_error and result.error_kind == "invalid_arguments", result.text
    assert len(result.text) < 2000  # the value is not echoed back whole


@pytest.mark.parametrize("vendor", ["openai", "anthropic", "gemini", "mistral", "ollama"])
def test_parse_tool_calls_with_a_registry_never_raises_recursion_error(vendor: str) -> None:
    registry = Registry([take_any])
    provider = get_provider(vendor)
    deep = {"tree": _deep_list()}
    response = _response_with_call(vendor, deep)
    parsed = provider.parse_tool_calls(response, registry=registry)
    assert [c.name for c in parsed] == ["take_any"]


def _response_with_call(vendor: str, arguments: Any) -> dict[str, Any]:
    if vendor in ("openai", "mistral"):
        call = {"id": "call_1", "type": "function", "function": {"name": "take_any", "arguments": DEEP_TEXT}}
        return {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [call]}}]}
    if vendor == "anthropic":
        return {"content": [{"type": "tool_use", "id": "toolu_1", "name": "take_any", "input": arguments}]}
    if vendor == "gemini":
        part = {"functionCall": {"name": "take_any", "args": arguments}}
        return {"candidates": [{"content": {"role": "model", "parts": [part]}}]}
    function = {"name": "take_any", "arguments": arguments}
    return {"message": {"role": "assistant", "tool_calls": [{"function": function}]}}


@pytest.mark.parametrize("arguments", [{"tree": _deep_list()}, DEEP_TEXT], ids=["mapping", "text"])
async def test_agent_stream_reports_the_call_and_goes_on(arguments: Any) -> None:
    model, _ = scripted(calls(ToolCall("c1", "take_any", arguments)), "done")
    agent = Agent(model=model, tools=[take_any])
    stream = agent.stream("go")
    events = [event async for event in stream]
    assert stream.result.text == "done"
    (result,) = stream.result.tool_results
    assert result.error_kind == "invalid_arguments"
    assert any(type(e).__name__ == "ToolCallEvent" for e in events)
    model, _ = scripted(calls(ToolCall("c1", "take_any", arguments)), "done")
    generated = await Agent(model=model, tools=[take_any]).generate("go")
    assert generated.text == "done"


async def test_two_deep_calls_of_one_tool_in_a_turn_go_on() -> None:
    """Regression: loop detection compared the turn's calls by decoding their text, and 5,000 nested arrays
    raised RecursionError out of the run (`agentkit run` on tests.cli_fixtures:deep failed with it)."""
    text = '{"tree": ' + "[" * DEPTH + "1" + "]" * DEPTH + "}"
    turn = calls(ToolCall("c1", "take_any", text), ToolCall("c2", "take_any", {"tree": _deep_list()}))
    model, _ = scripted(turn, "done")
    result = await Agent(model=model, tools=[take_any]).generate("go")
    assert result.text == "done"
    assert [r.error_kind for r in result.tool_results] == ["invalid_arguments", "invalid_arguments"]


VENDORS = provider_names()


@pytest.mark.parametrize("vendor", VENDORS)
@pytest.mark.parametrize("arguments", [{"tree": _deep_list()}, DEEP_TEXT], ids=["mapping", "text"])
async def test_the_next_request_can_still_be_built(vendor: str, arguments: Any) -> None:
    from agentkit.messages import AssistantMessage, ToolResultsMessage, UserMessage

    registry = Registry([take_any])
    call = ToolCall("call_1", "take_any", arguments)
    result = await registry.call(call)
    history = [UserMessage("go"), AssistantMessage(tool_calls=[call]), ToolResultsMessage(results=[result])]
    body = get_provider(vendor).build_request(history, registry)
    assert body


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(JSON_VALUES, st.booleans(), st.booleans(), st.booleans())
def test_the_iterative_json_encoder_writes_what_json_dumps_writes(
    value: Any, sort_keys: bool, ensure_ascii: bool, compact: bool
) -> None:
    separators = (",", ":") if compact else (", ", ": ")
    expected = json.dumps(value, sort_keys=sort_keys, ensure_ascii=ensure_ascii, separators=separators)
    assert _dumps_iteratively(value, sort_keys, ensure_ascii, separators) == expected
    assert json_text(value, sort_keys=sort_keys, ensure_ascii=ensure_ascii, compact=compact) == expected


def test_json_text_of_a_value_deeper_than_python_recurses() -> None:
    text = json_text({"tree": _deep_list()}, compact=True)
    assert text == '{"tree":' + "[" * DEPTH + "1" + "]" * DEPTH + "}"


async def test_a_function_models_stream_of_deep_arguments_is_an_error_result() -> None:
    from agentkit.testing import FunctionModel

    async def stream(messages: Any, info: Any) -> Any:
        if len(messages) == 1:
            yield ToolCall("c1", "take_any", {"tree": _deep_list()})
        else:
            yield "done"

    agent = Agent(model=FunctionModel(stream_fn=stream), tools=[take_any])
    events = agent.stream("go")
    _ = [event async for event in events]
    assert events.result.text == "done"
    assert events.result.tool_results[0].error_kind == "invalid_arguments"
