"""The fast meta-schema pass (issue 18, Faster §3): never looser than jsonschema, and taken by real schemas."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from agentkit import Tool, ToolDefinitionError
from agentkit._meta_schema import MAX_FAST_DEPTH, certainly_valid
from benchmarks import corpus_report as corpus

KEYWORDS = [
    "type", "properties", "required", "items", "prefixItems", "additionalProperties", "patternProperties",
    "pattern", "enum", "const", "default", "anyOf", "allOf", "oneOf", "not", "if", "then", "else", "$defs",
    "definitions", "$ref", "$dynamicRef", "$anchor", "$dynamicAnchor", "$id", "$schema", "minimum", "maximum",
    "exclusiveMinimum", "multipleOf", "minLength", "maxItems", "minContains", "uniqueItems", "deprecated",
    "title", "description", "format", "dependentRequired", "dependentSchemas", "dependencies", "propertyNames",
    "contains", "unevaluatedProperties", "contentSchema", "examples", "$comment", "$recursiveRef", "x-extra",
]  # fmt: skip
ODD_STRINGS = ["string", "object", "integer", "nope", "(", "^a+$", "#/$defs/a", "a#b", "#x", "9bad", "", "é"]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(ODD_STRINGS),
    st.text(max_size=4),
)


def _schemas() -> st.SearchStrategy[Any]:
    def extend(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        value = st.one_of(
            inner,
            st.lists(inner, max_size=3),
            st.dictionaries(st.sampled_from(ODD_STRINGS), inner, max_size=3),
            st.lists(st.sampled_from(ODD_STRINGS), max_size=3),
        )
        return st.dictionaries(st.sampled_from(KEYWORDS), value, max_size=5)

    return st.recursive(st.one_of(st.booleans(), st.just({}), SCALARS), extend, max_leaves=12)


def _plausible() -> st.SearchStrategy[Any]:
    """Valid keyword values, now and then an odd one: schemas near the boundary."""
    names = st.lists(st.sampled_from(["a", "b", "c"]), max_size=3, unique=True)
    odd = st.one_of(SCALARS, st.sampled_from([["a", "a"], [], ["strin"], {"a": 1}, -1, 0, "(", "#/%zz", 1.5]))

    def extend(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        value = {
            "type": st.one_of(
                st.sampled_from(["string", "object", "array", "null"]),
                st.lists(st.sampled_from(["string", "null", "integer"]), min_size=1, max_size=3, unique=True),
            ),
            "properties": st.dictionaries(st.sampled_from(ODD_STRINGS), inner, max_size=3),
            "required": names,
            "items": inner,
            "anyOf": st.lists(inner, min_size=1, max_size=3),
            "$defs": st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2),
            "$ref": st.sampled_from(["#/$defs/a", "#", "#/properties/a", "http://x/y#z"]),
            "pattern": st.sampled_from(["^a+$", "\\d", "x|y"]),
            "patternProperties": st.dictionaries(st.sampled_from(["^a", "b"]), inner, max_size=2),
            "minLength": st.integers(0, 3),
            "maxItems": st.integers(0, 3),
            "minimum": st.one_of(st.integers(), st.floats(allow_nan=False, allow_infinity=False)),
            "multipleOf": st.one_of(st.integers(1, 3), st.floats(0.1, 2)),
            "enum": st.lists(SCALARS, max_size=3),
            "const": SCALARS,
            "description": st.text(max_size=3),
            "dependentRequired": st.dictionaries(st.sampled_from(["a"]), names, max_size=2),
            "dependencies": st.dictionaries(st.sampled_from(["a"]), st.one_of(names, inner), max_size=2),
            "$anchor": st.sampled_from(["ok", "a-b.c"]),
            "uniqueItems": st.booleans(),
            "x-extra": SCALARS,
        }
        return st.fixed_dictionaries({}, optional=value)

    valid = st.recursive(st.one_of(st.booleans(), st.just({})), extend, max_leaves=20)
    return st.builds(_mutate, valid, odd, st.randoms(use_true_random=False))


def _mutate(schema: Any, odd: Any, rng: random.Random) -> Any:
    """`schema` with, half the time, one keyword of one of its objects set to `odd`."""
    nodes: list[dict[str, Any]] = []
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            nodes.append(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    if nodes and rng.random() < 0.5:
        rng.choice(nodes)[rng.choice(KEYWORDS)] = odd
    return schema


def _jsonschema_accepts(schema: Any) -> bool:
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError:
        return False
    return True


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.one_of(_schemas(), _plausible()))
def test_the_fast_pass_never_accepts_what_jsonschema_refuses(schema: Any) -> None:
    if certainly_valid(schema):
        assert _jsonschema_accepts(schema), schema


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "strin"},
        {"type": []},
        {"type": ["string", "string"]},
        {"required": "a"},
        {"required": ["a", "a"]},
        {"properties": {"a": 3}},
        {"properties": []},
        {"items": [{"type": "string"}]},  # draft 2020-12: prefixItems
        {"anyOf": []},
        {"minLength": -1},
        {"minLength": True},
        {"minimum": "3"},
        {"multipleOf": 0},
        {"pattern": "("},
        {"patternProperties": {"(": {}}},
        {"uniqueItems": "yes"},
        {"dependentRequired": {"a": [1]}},
        {"dependencies": {"a": 3}},
        {"$anchor": "9bad"},
        {"enum": "a"},
        {"description": 3},
    ],
)
def test_what_jsonschema_refuses_is_still_refused_with_its_message(schema: dict[str, Any]) -> None:
    assert not certainly_valid(schema) and not _jsonschema_accepts(schema)
    with pytest.raises(ToolDefinitionError, match="is not a valid JSON Schema"):
        Tool.from_json_schema("t", {"type": "object", "properties": {"a": schema}})


def test_unsure_cases_go_to_jsonschema_and_pass_when_it_accepts() -> None:
    odd = {"type": "object", "properties": {"a": {"minLength": 2.0, "maximum": float("inf"), "$id": "x"}}}
    assert not certainly_valid(odd) and _jsonschema_accepts(odd)
    assert Tool.from_json_schema("t", odd).input_schema == odd


def test_a_deep_schema_goes_to_jsonschema() -> None:
    deep: dict[str, Any] = {"type": "object"}
    for _ in range(MAX_FAST_DEPTH + 1):
        deep = {"type": "object", "properties": {"a": deep}}
    assert not certainly_valid(deep) and _jsonschema_accepts(deep)
    for _ in range(3000):
        deep = {"type": "object", "properties": {"a": deep}}
    with pytest.raises(ToolDefinitionError, match="nested too deeply to be checked"):
        Tool.from_json_schema("t", deep)


@pytest.mark.parametrize("name", ["bfcl", "mcp"])
def test_every_corpus_schema_takes_the_fast_path(name: str) -> None:
    made = corpus.tools(name)
    slow = [t.id for t in made if not certainly_valid(t.input_schema)]
    assert slow == [] and all(_jsonschema_accepts(t.input_schema) for t in made[:: max(1, len(made) // 50)])
