"""One policy for unknown arguments; validation as exact as the schema for integers (issue 8, §2 item 7)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from agentkit import Tool, ToolInputError, tool


class SearchArgs(BaseModel):
    query: str
    limit: int = 10


class OpenArgs(BaseModel):
    model_config = ConfigDict(extra="allow")
    query: str


class AliasedArgs(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    query: str = Field(alias="q")


class SearchDict(TypedDict):
    query: str


@dataclass
class SearchData:
    query: str


@pytest.mark.parametrize("model", [SearchArgs, SearchDict, SearchData], ids=lambda m: m.__name__)
def test_an_explicit_python_schema_refuses_unknown_arguments_and_says_so(model: type[Any]) -> None:
    @tool(input_schema=model)
    def search(args: Any) -> str:
        return "found"

    schema = search.input_schema
    assert schema["additionalProperties"] is False  # what the model is shown ...
    assert not jsonschema.Draft202012Validator(schema).is_valid({"query": "x", "colour": "red"})
    with pytest.raises(ToolInputError) as info:  # ... is what is enforced
        search.invoke({"query": "x", "colour": "red"})
    assert [(e.path, e.kind) for e in info.value.errors] == [("$.colour", "unexpected_argument")]
    with pytest.raises(ToolInputError) as both:  # reported together with the other problems
        search.invoke('{"colour": "red"}')
    assert {e.kind for e in both.value.errors} == {"missing", "unexpected_argument"}
    assert search.invoke({"query": "x"}) == "found"


def test_a_class_that_chooses_its_extra_policy_keeps_it() -> None:
    @tool(input_schema=OpenArgs)
    def search(args: OpenArgs) -> dict[str, Any]:
        return args.model_dump()

    assert search.input_schema.get("additionalProperties") is True
    assert search.invoke({"query": "x", "colour": "red"}) == {"query": "x", "colour": "red"}


def test_field_names_pydantic_accepts_are_not_unknown() -> None:
    @tool(input_schema=AliasedArgs)
    def search(args: AliasedArgs) -> str:
        return args.query

    assert search.invoke({"q": "a"}) == "a"
    assert search.invoke({"query": "b"}) == "b"


def test_a_raw_schema_is_validated_as_written() -> None:
    open_schema = Tool.from_json_schema("open", {"type": "object", "properties": {"a": {"type": "string"}}}, fn=dict)
    assert open_schema.invoke({"a": "x", "b": 1}) == {"a": "x", "b": 1}  # JSON Schema allows extra keys here
    closed = Tool.from_json_schema(
        "closed", {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False}, fn=dict
    )
    with pytest.raises(ToolInputError):
        closed.invoke({"a": "x", "b": 1})


@tool
def counts(n: int, items: list[int], choice: int | str = 0, exact: Literal[1, 2] = 1, ratio: float = 0.5) -> Any:
    """Integers in several positions."""
    return [n, items, choice, exact, ratio]


def test_integral_floats_are_integers_as_json_schema_says() -> None:
    assert counts.invoke({"n": 1.0, "items": [2.0, 3], "choice": 4.0, "exact": 2.0}) == [1, [2, 3], 4, 2, 0.5]
    assert counts.invoke('{"n": 1e2, "items": []}') == [100, [], 0, 1, 0.5]
    result = counts.invoke({"n": 1.0, "items": []})
    assert type(result[0]) is int
    with pytest.raises(ToolInputError) as info:
        counts.invoke({"n": 1.5, "items": [2.5], "choice": 1.0})
    assert {e.path for e in info.value.errors} == {"$.n", "$.items[0]"}

    @tool(input_schema=SearchArgs)
    def search(args: SearchArgs) -> int:
        return args.limit

    assert search.invoke({"query": "x", "limit": 5.0}) == 5


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(
    st.one_of(st.integers(-(10**20), 10**20), st.floats(allow_nan=False, allow_infinity=False)),
    st.lists(st.one_of(st.integers(-1000, 1000), st.floats(-1e6, 1e6)), max_size=4),
)
def test_integer_validation_agrees_with_the_schema(n: float, items: list[float]) -> None:
    args = {"n": n, "items": items}
    valid = jsonschema.Draft202012Validator(counts.input_schema).is_valid(args)
    try:
        counts.schema.validate_arguments("counts", json.dumps(args))
    except ToolInputError:
        assert not valid, args
    else:
        assert valid, args
