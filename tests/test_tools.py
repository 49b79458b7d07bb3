"""`@tool`, `Tool`, explicit schemas, definition errors, invoke/ainvoke (issue 2, section 2)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict

from agentkit import (
    AgentkitError,
    ImagePart,
    TextPart,
    Tool,
    ToolDefinitionError,
    ToolInputError,
    ToolOutputError,
    ToolTimeoutError,
    ToolTransform,
    tool,
)


class Query(BaseModel):
    text: str
    limit: int = 5


class QueryDict(TypedDict):
    text: str


@dataclass
class QueryData:
    text: str


def test_bare_configured_and_from_function_forms() -> None:
    def plain(a: int) -> int:
        """Plain."""
        return a * 2

    transform = ToolTransform(output=str)
    configured = tool(
        id="double",
        description="Doubles.",
        strict=True,
        timeout=1.5,
        requires_approval=lambda args: args["a"] > 10,
        to_model_output=lambda v: f"{v}!",
        transform=transform,
    )(plain)
    bare = tool(plain)
    built = Tool.from_function(plain, id="other")
    assert (bare.id, configured.id, built.id) == ("plain", "double", "other")
    assert configured.description == "Doubles."
    assert configured.strict is True and configured.timeout == 1.5 and configured.transform is transform
    assert configured.needs_approval({"a": 11}) and not configured.needs_approval({"a": 1})
    assert configured.model_content(4) == [TextPart("4!")]
    assert bare(3) == configured(3) == built(3) == 6
    assert bare.__name__ == "plain" and bare.__doc__ == "Plain."


def test_direct_call_is_not_validated() -> None:
    @tool
    def f(a: int) -> int:
        return a

    assert f("not an int") == "not an int"  # type: ignore[arg-type]


async def test_async_tool_stays_async() -> None:
    @tool
    async def f(a: int) -> int:
        await asyncio.sleep(0)
        return a + 1

    coro = f(1)
    assert asyncio.iscoroutine(coro)
    assert await coro == 2
    assert await f.ainvoke({"a": 1}) == 2
    assert f.is_async


def test_invoke_from_sync_code_runs_async_tools() -> None:
    @tool
    async def f(a: int) -> int:
        return a + 1

    assert f.invoke('{"a": 41}') == 42


def test_invoke_reports_every_problem_with_path_and_value() -> None:
    @tool
    def f(name: str, query: Query, tags: list[str]) -> None:
        """F."""

    with pytest.raises(ToolInputError) as info:
        f.invoke({"name": 1, "query": {"limit": "x"}, "tags": ["a", 2], "extra": True})
    err = info.value
    assert isinstance(err, ValueError) and isinstance(err, AgentkitError)
    found = {(e.path, e.kind): e.value for e in err.errors}
    assert found == {
        ("$.name", "string_type"): 1,
        ("$.query.text", "missing"): {"limit": "x"},
        ("$.query.limit", "int_type"): "x",
        ("$.tags[1]", "string_type"): 2,
        ("$.extra", "unexpected_argument"): True,
    }
    assert "$.tags[1]" in str(err) and "5 problems" in str(err)


def test_invoke_rejects_malformed_json_and_non_objects() -> None:
    @tool
    def f(a: int) -> int:
        return a

    with pytest.raises(ToolInputError) as info:
        f.invoke('{"a": 1')
    assert info.value.errors[0].kind == "json_invalid"
    with pytest.raises(ToolInputError):
        f.invoke("[1, 2]")
    with pytest.raises(ToolInputError):
        f.invoke([1, 2])  # type: ignore[arg-type]


def test_validation_is_strict_like_the_schema() -> None:
    @tool
    def f(a: int, flag: bool = False) -> int:
        return a

    for bad in ({"a": "3"}, {"a": 1.5}, {"a": 1, "flag": 1}):
        with pytest.raises(ToolInputError):
            f.invoke(bad)
    assert f.invoke({"a": 3}) == 3


def test_output_is_validated() -> None:
    @tool
    def good() -> Query:
        return {"text": "x"}  # type: ignore[return-value]  # a dict is validated into the model

    @tool
    def bad() -> int:
        return "nope"  # type: ignore[return-value]

    assert good.invoke() == Query(text="x")
    with pytest.raises(ToolOutputError) as info:
        bad.invoke()
    assert info.value.errors[0].value == "nope"


@pytest.mark.parametrize("schema", [Query, QueryDict, QueryData])
def test_explicit_input_schema_types(schema: type[Any]) -> None:
    received: list[Any] = []

    def handler(query: Any) -> str:
        received.append(query)
        return "ok"

    t = Tool.from_function(handler, input_schema=schema)
    assert t.input_schema["required"] == ["text"]
    assert t.invoke({"text": "hello"}) == "ok"
    assert getattr(received[0], "text", None) == "hello" or received[0] == {"text": "hello"}
    with pytest.raises(ToolInputError):
        t.invoke({"text": 3})


def test_explicit_raw_json_schema_is_validated_with_a_real_validator() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "exclusiveMinimum": 0}},
        "required": ["n"],
        "additionalProperties": False,
    }

    @tool(input_schema=schema, output_schema={"type": "string"})
    def f(args: dict[str, Any]) -> Any:
        return "x" * args["n"]

    assert f.input_schema == schema
    assert f.output_schema == {"type": "string"}
    assert f.invoke({"n": 3}) == "xxx"
    with pytest.raises(ToolInputError) as info:
        f.invoke({"n": 0, "m": 1})
    assert {e.kind for e in info.value.errors} == {"exclusiveMinimum", "additionalProperties"}


def test_explicit_output_schema_rejects_bad_results() -> None:
    @tool(output_schema={"type": "object", "required": ["x"]})
    def f() -> Any:
        return {"y": 1}

    with pytest.raises(ToolOutputError):
        f.invoke()


def test_tool_from_json_schema() -> None:
    t = Tool.from_json_schema(
        "lookup", {"type": "object", "properties": {"q": {"type": "string"}}}, fn=lambda a: a["q"].upper()
    )
    assert t.invoke({"q": "x"}) == "X"
    assert t.id == "lookup"


def test_timeout_becomes_a_timeout_error() -> None:
    @tool(timeout=0.05)
    async def slow() -> None:
        await asyncio.sleep(5)

    @tool(timeout=0.05)
    def slow_sync() -> None:
        time.sleep(0.3)

    with pytest.raises(ToolTimeoutError, match="0.05"):
        slow.invoke()
    with pytest.raises(ToolTimeoutError):
        slow_sync.invoke()


def test_to_model_output_parts() -> None:
    image = ImagePart(data=b"\x89PNG", media_type="image/png")

    @tool(to_model_output=lambda v: ["summary", image])
    def f() -> dict[str, int]:
        return {"rows": 1000}

    assert f.model_content({"rows": 1}) == [TextPart("summary"), image]
    assert image.data_url.startswith("data:image/png;base64,")


# ---- definition-time errors ---------------------------------------------------------------------


def _definition_error(fn: Any, **options: Any) -> ToolDefinitionError:
    with pytest.raises(ToolDefinitionError) as info:
        Tool.from_function(fn, **options)
    return info.value


def test_missing_annotation_and_star_args_are_reported_together() -> None:
    def f(a, *rest: int, **extra: int):  # type: ignore[no-untyped-def]
        pass

    err = _definition_error(f)
    assert err.qualname.endswith("test_missing_annotation_and_star_args_are_reported_together.<locals>.f")
    text = str(err)
    assert "'a' has no type annotation" in text and "a: str" in text
    assert "*rest" in text and "list[str]" in text
    assert "**extra" in text and "dict[str, str]" in text
    assert len(err.problems) == 3
    assert isinstance(err, TypeError)


def test_type_pydantic_cannot_schema_is_a_definition_error() -> None:
    class Opaque:
        pass

    def f(x: Opaque) -> None:
        pass

    with pytest.raises(ToolDefinitionError) as info:
        tool(f)  # resolved where the decorator is applied: `Opaque` is local to this test
    err = info.value
    assert "parameter 'x'" in str(err) and "Opaque" in str(err)


def test_input_schema_that_does_not_fit_the_function() -> None:
    def two(a: int, b: int) -> None:
        pass

    def wrong_type(q: int) -> None:
        pass

    assert "exactly one parameter" in str(_definition_error(two, input_schema=Query))
    assert "annotate it as Query" in str(_definition_error(wrong_type, input_schema=Query))
    assert "not a valid JSON Schema" in str(_definition_error(wrong_type, input_schema={"type": 5}))
    assert "pydantic model, TypedDict" in str(_definition_error(wrong_type, input_schema=int))


def test_bad_options_are_definition_errors() -> None:
    def f(a: int) -> int:
        return a

    assert "timeout" in str(_definition_error(f, timeout=-1))
    with pytest.raises(ToolDefinitionError, match="id="):
        tool("name")  # type: ignore[call-overload]
