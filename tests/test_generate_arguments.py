"""`generate_arguments` returns values valid for every schema it accepts (issue 8, §2 item 8)."""

from __future__ import annotations

import warnings
from typing import Any

import jsonschema
import pytest

from agentkit import Tool
from agentkit.testing import generate_arguments
from benchmarks import corpus_report as corpus
from tests.test_properties import TOOLS

CHECKER = jsonschema.Draft202012Validator.FORMAT_CHECKER


def _assert_valid(schema: dict[str, Any], seeds: range = range(20)) -> None:
    validator = jsonschema.Draft202012Validator(schema, format_checker=CHECKER)
    for seed in seeds:
        args = generate_arguments(schema, seed=seed)
        errors = [e.message for e in validator.iter_errors(args)]
        assert not errors, (seed, args, errors)


def _object(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties)}


@pytest.mark.parametrize(
    "schema",
    [
        _object(empty={"type": "string", "maxLength": 0}),
        _object(short={"type": "string", "minLength": 0, "maxLength": 1}),
        _object(pair={"type": "array", "prefixItems": [{"type": "boolean"}, {"type": "boolean"}], "uniqueItems": True}),
        _object(pair={"type": "array", "prefixItems": [{"enum": [1, 2]}, {"enum": [1, 2]}], "uniqueItems": True}),
        _object(
            rest={"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "integer"}, "minItems": 3}
        ),
        _object(code={"type": "string", "pattern": "^[A-Z]{3}-[0-9]{2,4}$"}),
        _object(code={"type": "string", "pattern": r"^\d+(\.\d+)?$", "maxLength": 6}),
        _object(code={"type": "string", "pattern": "^(red|green|blue)$"}),
        _object(code={"type": "string", "pattern": r"^(\w)\1$"}),
        _object(code={"type": "string", "pattern": "[^a-z]+"}),
        _object(n={"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 3}),
        _object(n={"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.5}),
        _object(n={"type": "integer", "minimum": 2.5, "maximum": 4.5}),
        _object(tags={"type": "array", "items": {"enum": ["a", "b", "c"]}, "uniqueItems": True, "minItems": 3}),
        _object(tags={"type": "array", "contains": {"const": "x"}, "items": {"type": "string"}}),
        {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}, "c": {"type": "string"}},
            "minProperties": 2,
            "dependentRequired": {"a": ["b"]},
        },
        {"type": "object", "allOf": [_object(a={"type": "integer"}), _object(b={"type": "string"})]},
        {"type": "object", "additionalProperties": {"type": "integer"}, "minProperties": 1},
    ],
    ids=lambda s: str(s)[:60],
)
def test_generated_values_satisfy_tricky_schemas(schema: dict[str, Any]) -> None:
    _assert_valid(schema)


def test_a_schema_no_attempt_satisfies_is_an_error_naming_the_rule() -> None:
    impossible = _object(x={"type": "string", "minLength": 5, "maxLength": 2})
    with pytest.raises(ValueError, match=r"found no value valid .* at \$\.x"):
        generate_arguments(impossible)


@pytest.mark.parametrize("item", TOOLS, ids=lambda t: t.id)
def test_every_tool_of_the_suite(item: Tool[..., Any]) -> None:
    _assert_valid(item.input_schema, range(5))


@pytest.mark.parametrize("name", ["bfcl", "mcp"])
def test_every_tool_of_the_corpus(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tools = corpus.tools(name)
    assert len(tools) > 50
    failures = []
    for item in tools:
        validator = jsonschema.Draft202012Validator(item.input_schema, format_checker=CHECKER)
        for seed in range(3):
            args = generate_arguments(item.input_schema, seed=seed)
            if not validator.is_valid(args):
                failures.append((item.id, seed, args))
    assert failures == []


def test_a_catastrophic_pattern_is_checked_in_linear_time() -> None:
    """Issue 17 §4.2: a schema from outside (an MCP server's) is checked by the bounded engine, never `re`."""
    import time

    from agentkit._generate import _validator  # pyright: ignore[reportPrivateUsage]  # the check every value passes

    schema = {"type": "object", "properties": {"code": {"type": "string", "pattern": "^(a+)+$"}}}
    started = time.perf_counter()
    errors = list(_validator(schema).iter_errors({"code": "a" * 26 + "!"}))  # `re`: about 20 s, doubling per "a"
    assert errors and time.perf_counter() - started < 5  # a bound on a stall, not a speed figure
