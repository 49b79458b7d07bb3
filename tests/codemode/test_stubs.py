"""The module a program is shown: signatures from input schemas, return types from output schemas."""

from __future__ import annotations

import ast
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from agentkit import Registry, tool
from agentkit.codemode import CodeMode
from agentkit.codemode._stubs import FunctionSpec, build_stubs, python_name
from agentkit.exceptions import AgentSetupError, UnknownToolError


class Forecast(BaseModel):
    """The weather for one day."""

    day: str = Field(description="ISO date")
    high: float
    low: float | None = None


class Address(TypedDict):
    street: str
    city: str


@tool
def forecast(city: str, days: int = 3, unit: Literal["c", "f"] = "c") -> list[Forecast]:
    """The forecast for the next days.

    Args:
        city: City name, e.g. "Paris".
        days: How many days.
        unit: Temperature unit.
    """
    return []


@tool
def ship(to: Address, express: bool | None = None) -> dict[str, Any]:
    """Ship a parcel."""
    return {}


def _module(registry: Registry) -> str:
    return CodeMode().stubs(registry)


def test_the_module_reads_like_python_and_parses() -> None:
    text = _module(Registry({"forecast": forecast, "ship-parcel": ship}))
    tree = ast.parse(text)  # valid Python
    functions = {n.name: n for n in tree.body if isinstance(n, ast.AsyncFunctionDef)}
    assert set(functions) == {"forecast", "ship_parcel"}  # the key, as an identifier
    assert "async def forecast(city: str, days: int = 3, unit: Literal['c', 'f'] = 'c') -> list[" in text
    assert 'city: City name, e.g. "Paris".' in text  # parameter descriptions in Args:
    assert "The forecast for the next days." in text
    classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    assert len(classes) == 2  # the output item and the address, as TypedDicts
    assert "day: str  # ISO date" in text
    assert "low: NotRequired[float | None]" in text
    assert "async def ship_parcel(to: " in text and "express: bool | None = None" in text


def test_required_parameters_come_first_and_map_back_to_properties() -> None:
    @tool
    def odd(b: int = 1, *, a: str) -> str:
        return a

    module = build_stubs({"odd": odd})
    spec = module.functions["odd"]
    assert spec.params == ("a", "b")
    assert spec.arguments(("x",), {"b": 2}) == {"a": "x", "b": 2}


def test_names_that_are_not_identifiers_are_mapped_both_ways() -> None:
    assert python_name("my-tool") == "my_tool"
    assert python_name("print") == "print_"  # a builtin would be shadowed
    assert python_name("from") == "from_"
    assert python_name("2fa") == "_2fa"
    spec = FunctionSpec("k", "f", ("from_",), {"from_": "from"})
    assert spec.arguments((), {"from_": 1}) == {"from": 1}
    assert spec.arguments((), {"from": 1}) == {"from": 1}  # the schema's spelling works too


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((1, 2), {}, "takes 1 positional argument(s) but 2 were given"),
        ((), {"nope": 1}, "unexpected keyword argument 'nope'"),
        ((1,), {"a": 2}, "multiple values for argument 'a'"),
    ],
)
def test_a_call_that_does_not_fit_the_signature_is_a_type_error(
    args: tuple[Any, ...], kwargs: dict[str, Any], message: str
) -> None:
    spec = FunctionSpec("k", "f", ("a",), {"a": "a"})
    with pytest.raises(TypeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        spec.arguments(args, kwargs)


def test_two_keys_that_share_a_python_name_are_a_setup_error() -> None:
    registry = Registry({"a-b": forecast, "a_b": ship})
    with pytest.raises(AgentSetupError, match="'a-b' and 'a_b' would both be the Python function 'a_b'"):
        _module(registry)


def test_selection_by_keys_predicate_and_all() -> None:
    @tool(background=True)
    def slow() -> str:
        return ""

    registry = Registry({"forecast": forecast, "ship": ship, "slow": slow})
    assert CodeMode().select(registry) == ["forecast", "ship"]  # background tools never
    assert CodeMode(tools=["ship"]).select(registry) == ["ship"]
    assert CodeMode(tools=lambda key, item: key.startswith("f")).select(registry) == ["forecast"]
    with pytest.raises(UnknownToolError, match="forcast"):
        CodeMode(tools=["forcast"]).select(registry)
    with pytest.raises(AgentSetupError, match="runs in the background"):
        CodeMode(tools=["slow"]).select(registry)
    with pytest.raises(AgentSetupError, match="give 'all', a list of keys"):
        CodeMode(tools="some")


def test_apply_replaces_or_keeps_the_chosen_tools() -> None:
    registry = Registry({"forecast": forecast, "ship": ship})
    assert list(CodeMode(tools=["ship"]).apply(registry)) == ["forecast", "run_python"]
    assert list(CodeMode(tools=["ship"], replace=False).apply(registry)) == ["forecast", "ship", "run_python"]
    code_tool = CodeMode(key="program").apply(registry)["program"]
    assert code_tool.input_schema["required"] == ["code"]
    assert "async def forecast(" in code_tool.description
    with pytest.raises(AgentSetupError, match="already a tool's key"):
        CodeMode(key="ship").apply(registry)


def test_schemas_without_types_and_with_refs_render() -> None:
    raw = {
        "type": "object",
        "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
        "properties": {"node": {"$ref": "#/$defs/Node"}, "anything": {}, "tags": {"type": "array"}},
        "required": ["node"],
    }

    def walk(args: dict[str, Any]) -> None:
        return None

    item = tool(walk, input_schema=raw)
    text = build_stubs({"walk": item}).text
    ast.parse(text)
    assert "class Node(TypedDict):" in text and "next: NotRequired[Node]" in text  # recursion ends at the class
    assert "anything: Any = ..." in text and "tags: list[Any] = ..." in text
