"""Property tests: a tool's input schema and its validator agree (issue 2, requirement 4.1).

For every tool in the zoo and every module-level tool of the test suite, arguments generated from the
JSON Schema (hypothesis-jsonschema) pass `invoke`'s validation, and mutations that break the schema
(a missing required key, a wrongly typed value, an unknown key) are rejected by both the JSON Schema
validator and agentkit.
"""

from __future__ import annotations

import copy
import importlib
import json
import pkgutil
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

import tests
from agentkit import Tool, ToolInputError
from agentkit.testing import generator_schema as _generator_schema

from .zoo import ZOO

SETTINGS = settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))


def _suite_tools() -> list[Tool[..., Any]]:
    found: dict[int, Tool[..., Any]] = {id(t): t for t in ZOO}
    for info in pkgutil.iter_modules(tests.__path__, "tests."):
        if not info.name.split(".")[-1].startswith("test_") or info.name == __name__:
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, Tool) and not value.schema.context_params:
                found.setdefault(id(value), value)
    for value in ZOO:
        found.setdefault(id(value), value)
    return list(found.values())


TOOLS = _suite_tools()


def _valid(item: Tool[..., Any], args: Any) -> bool:
    checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
    return jsonschema.Draft202012Validator(item.input_schema, format_checker=checker).is_valid(args)


FORMATS = {"uuid": st.uuids().map(str)}


@pytest.mark.parametrize("item", TOOLS, ids=lambda t: t.id)
def test_schema_valid_arguments_are_accepted(item: Tool[..., Any]) -> None:
    @SETTINGS
    @given(from_schema(_generator_schema(item.input_schema), custom_formats=FORMATS))
    def check(args: dict[str, Any]) -> None:
        assert _valid(item, args)
        item.schema.validate_arguments(item.id, args)  # must not raise, as a mapping ...
        item.schema.validate_arguments(item.id, json.dumps(args))  # ... or as the JSON text a model sends

    check()


WRONG_VALUES = [None, True, 3, 2.5, "text", [1], {"k": 1}]


@pytest.mark.parametrize("item", TOOLS, ids=lambda t: t.id)
def test_schema_invalid_arguments_are_rejected(item: Tool[..., Any]) -> None:
    schema = item.input_schema

    @SETTINGS
    @given(from_schema(_generator_schema(schema), custom_formats=FORMATS), st.data())
    def check(args: dict[str, Any], data: st.DataObject) -> None:
        mutated = copy.deepcopy(args)
        kind = data.draw(st.sampled_from(["drop", "retype", "extra"]))
        if kind == "drop" and schema.get("required"):
            del mutated[data.draw(st.sampled_from(schema["required"]))]
        elif kind == "retype" and mutated:
            key = data.draw(st.sampled_from(sorted(mutated)))
            mutated[key] = data.draw(st.sampled_from(WRONG_VALUES))
        else:
            mutated["__not_a_parameter__"] = 1
        if _valid(item, mutated):
            return  # the mutation happened to stay valid (e.g. null for a nullable field)
        with pytest.raises(ToolInputError):
            item.schema.validate_arguments(item.id, mutated)
        with pytest.raises(ToolInputError):
            item.schema.validate_arguments(item.id, json.dumps(mutated))

    check()
