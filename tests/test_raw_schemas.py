"""Raw JSON Schemas: references checked at definition, patterns matched in linear time (issue 8, §4 items 2, 3)."""

from __future__ import annotations

from typing import Any

import pytest

from agentkit import Registry, Tool, ToolCall, ToolDefinitionError, ToolInputError, tool
from agentkit.interop import tool_from_definition

OBJECT = {"type": "object"}


@pytest.mark.parametrize(
    ("schema", "ref"),
    [
        ({**OBJECT, "properties": {"a": {"$ref": "#/$defs/missing"}}}, "#/$defs/missing"),
        ({**OBJECT, "properties": {"a": {"$ref": "#/properties/nope"}}}, "#/properties/nope"),
        ({**OBJECT, "properties": {"a": {"items": {"$ref": "other.json"}}}}, "other.json"),
        (
            {**OBJECT, "properties": {"a": {"$ref": "https://example.com/schema.json"}}},
            "https://example.com/schema.json",
        ),
        ({**OBJECT, "$defs": {"x": {"anyOf": [{"$ref": "#/$defs/y"}]}}}, "#/$defs/y"),
        ({**OBJECT, "properties": {"a": {"$dynamicRef": "#nowhere"}}}, "#nowhere"),
    ],
)
def test_a_reference_that_cannot_resolve_is_a_definition_error(schema: dict[str, Any], ref: str) -> None:
    with pytest.raises(ToolDefinitionError, match="does not resolve") as info:
        Tool.from_json_schema("t", schema, fn=dict)
    assert repr(ref) in str(info.value) and "remote references are never fetched" in str(info.value)

    with pytest.raises(ToolDefinitionError, match="does not resolve"):

        @tool(input_schema=schema)
        def f(args: dict[str, Any]) -> None: ...

    with pytest.raises(ToolDefinitionError, match="output_schema= has a"):

        @tool(output_schema=schema)
        def g() -> Any: ...

    with pytest.raises(ToolDefinitionError, match="does not resolve"):
        tool_from_definition({"name": "t", "parameters": schema}, warn=False)


def test_references_that_resolve_are_fine() -> None:
    made = Tool.from_json_schema(
        "t",
        {
            **OBJECT,
            "properties": {
                "a": {"$ref": "#/$defs/A"},
                "b": {"$ref": "#/properties/a"},
                "c": {"$ref": "#anchored"},
                "d": {"$ref": "sub.json#/$defs/inner"},
                "e": {"$ref": "#/$defs/with~1slash"},
            },
            "$defs": {
                "A": {"type": "string"},
                "B": {"$anchor": "anchored", "type": "integer"},
                "C": {"$id": "sub.json", "$defs": {"inner": {"type": "boolean"}}},
                "with/slash": {"type": "null"},
            },
        },
        fn=dict,
    )
    assert made.invoke({"a": "x", "b": "y", "c": 1, "d": True, "e": None})["c"] == 1
    with pytest.raises(ToolInputError):
        made.invoke({"d": "not a boolean"})


# ---- linear-time patterns -----------------------------------------------------------------------------

EVIL = "^(a+)+$"


def test_a_catastrophic_pattern_is_matched_in_linear_time() -> None:
    # With Python's backtracking `re` this input takes longer than the age of the universe; the test's
    # timeout (pytest-timeout) is what would catch a regression, not a timing assertion.
    made = Tool.from_json_schema("re", {**OBJECT, "properties": {"s": {"type": "string", "pattern": EVIL}}}, fn=dict)
    assert not made.schema.needs_thread
    with pytest.raises(ToolInputError, match="does not match"):
        made.invoke({"s": "a" * 5000 + "!"})
    assert made.invoke({"s": "aaaa"}) == {"s": "aaaa"}


def test_pattern_properties_and_additional_properties_use_the_same_engine() -> None:
    made = Tool.from_json_schema(
        "pp",
        {**OBJECT, "patternProperties": {EVIL: {"type": "integer"}}, "additionalProperties": False},
        fn=dict,
    )
    assert not made.schema.needs_thread
    assert made.invoke({"aaa": 1}) == {"aaa": 1}
    with pytest.raises(ToolInputError) as info:
        made.invoke({"a" * 5000 + "!": 1})
    assert info.value.errors[0].kind == "additionalProperties"
    with pytest.raises(ToolInputError):
        made.invoke({"aaa": "not an integer"})


def test_patterns_the_linear_engine_cannot_compile_are_marked_for_a_worker_thread() -> None:
    lookahead = Tool.from_json_schema(
        "la", {**OBJECT, "properties": {"s": {"type": "string", "pattern": "^(?=a)(a+)+$"}}}, fn=dict
    )
    assert lookahead.schema.needs_thread
    assert lookahead.invoke({"s": "aa"}) == {"s": "aa"}  # still validated, with Python's `re`
    backreference = Tool.from_json_schema(
        "br", {**OBJECT, "properties": {"s": {"type": "string"}}}, output_schema={"pattern": r"(a)\1"}, fn=dict
    )
    assert backreference.schema.needs_thread  # output schemas count too


async def test_registry_call_with_a_catastrophic_pattern_returns_quickly() -> None:
    made = Tool.from_json_schema(
        "re", {**OBJECT, "properties": {"s": {"type": "string", "pattern": EVIL}}}, fn=dict, timeout=0.1
    )
    result = await Registry([made]).call(ToolCall("1", "re", {"s": "a" * 100 + "!"}))
    assert result.error_kind == "invalid_arguments" and "does not match" in result.text


def test_importing_a_definition_never_backtracks_on_its_defaults() -> None:
    definition = {
        "name": "evil",
        "parameters": {
            "type": "object",
            "properties": {
                "s": {"type": "string", "pattern": EVIL, "default": "a" * 40 + "!"},
                "t": {"type": "string", "pattern": "^(?=a)(a|aa)+$", "default": "a" * 60 + "!"},
            },
        },
    }
    made = tool_from_definition(definition, warn=False)  # Python's `re` would take minutes on these defaults
    properties = made.input_schema["properties"]
    assert "default" not in properties["s"] and "Default:" in properties["s"]["description"]
    assert "default" not in properties["t"]
