"""Tools from callable objects, `functools.partial`, bound methods and ``-> Self`` methods (issue 8, §2 item 2)."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import warnings
from typing import Any

import pytest
from pydantic import BaseModel
from typing_extensions import Self

from agentkit import Registry, Tool, ToolCall, ToolContext, ToolDefinitionError, tool


class Adder:
    """Adds a fixed offset."""

    def __init__(self, offset: int) -> None:
        self.offset = offset
        self.schema = "an attribute of the object, not of the tool"

    def __call__(self, a: int, b: int = 0) -> int:
        """Add two numbers and the offset.

        Args:
            a: The first number.
            b: The second number.
        """
        return a + b + self.offset


class AsyncLookup:
    """Look a word up in a dictionary."""

    async def __call__(self, ctx: ToolContext[dict[str, str]], word: str) -> str:
        return ctx.deps.get(word, "?")


def power(base: float, exponent: int, *, api_key: object) -> float:
    """Raise a number to a power.

    Args:
        base: The base.
        exponent: The exponent.
        api_key: Fixed by the application.
    """
    assert api_key is SECRET
    return float(base**exponent)


async def apower(base: float, exponent: int) -> float:
    """Raise a number to a power, asynchronously."""
    return float(base**exponent)


SECRET = object()


class Counter(BaseModel):
    """A counter."""

    value: int = 0

    def bump(self, by: int = 1) -> Self:
        """Return a counter moved on by `by`."""
        return self.model_copy(update={"value": self.value + by})

    def merge(self, other: Self) -> Self:
        """Add another counter to this one."""
        return self.model_copy(update={"value": self.value + other.value})

    @classmethod
    def starting_at(cls, value: int) -> Self:
        """A counter starting at `value`."""
        return cls(value=value)

    def scaled(self, factor: int, offset: int) -> int:
        return self.value * factor + offset


adder = tool(Adder(10))
squared = tool(functools.partial(power, exponent=2, api_key=SECRET))


def test_a_callable_object_is_a_tool() -> None:
    assert adder.id == "Adder"
    assert adder.description == "Adds a fixed offset."  # the class's (issue 17 §2.5), parameters from __call__
    assert adder.input_schema == {
        "type": "object",
        "properties": {
            "a": {"type": "integer", "description": "The first number."},
            "b": {"type": "integer", "default": 0, "description": "The second number."},
        },
        "required": ["a"],
        "additionalProperties": False,
    }
    assert adder.output_schema == {"type": "integer"}
    assert adder(1, 2) == 13
    assert adder.invoke({"a": 1}) == 11
    assert not adder.is_async
    assert adder.schema.qualname == f"{__name__}.Adder.__call__"
    assert isinstance(adder.schema, type(Tool(lambda: 0, id="x").schema))  # the object's attributes stay its own


async def test_an_async_callable_object_is_an_async_tool_and_gets_its_context() -> None:
    lookup = tool(AsyncLookup())
    assert lookup.is_async
    assert lookup.description == "Look a word up in a dictionary."  # the class docstring: __call__ has none
    assert list(lookup.input_schema["properties"]) == ["word"]
    context = ToolContext(deps={"cat": "a small feline"})
    assert await lookup.ainvoke({"word": "cat"}, context=context) == "a small feline"
    result = await Registry({"lookup": lookup}).call(ToolCall("1", "lookup", {"word": "cat"}), deps={"cat": "feline"})
    assert result.text == "feline" and not result.is_error


def test_a_partial_hides_the_arguments_it_fixes() -> None:
    assert squared.id == "power"
    assert squared.description == "Raise a number to a power."
    assert squared.input_schema["properties"] == {"base": {"type": "number", "description": "The base."}}
    assert squared.input_schema["required"] == ["base"]
    assert squared.invoke({"base": 3}) == 9.0
    with pytest.raises(ValueError, match="exponent"):
        squared.invoke({"base": 3, "exponent": 3})  # a fixed argument cannot be overridden by the model
    positional = tool(functools.partial(power, 2.0, api_key=SECRET))
    assert list(positional.input_schema["properties"]) == ["exponent"]
    assert positional.invoke({"exponent": 10}) == 1024.0
    assert squared.schema.qualname == f"functools.partial({__name__}.power)"


def test_a_partial_of_an_async_function_is_async() -> None:
    cube = tool(functools.partial(apower, exponent=3))
    assert cube.is_async
    assert asyncio.run(cube.ainvoke({"base": 2})) == 8.0
    assert cube.invoke({"base": 3}) == 27.0


def test_partials_of_methods_and_of_callable_objects() -> None:
    counter = Counter(value=2)
    of_bound = tool(functools.partial(counter.scaled, offset=1))
    assert list(of_bound.input_schema["properties"]) == ["factor"]
    assert of_bound.invoke({"factor": 5}) == 11
    of_unbound = tool(functools.partial(Counter.scaled, counter))  # binds `self` positionally
    assert set(of_unbound.input_schema["properties"]) == {"factor", "offset"}
    assert of_unbound.invoke({"factor": 5, "offset": 0}) == 10
    of_object = tool(functools.partial(Adder(1), b=1))
    assert list(of_object.input_schema["properties"]) == ["a"]
    assert of_object.invoke({"a": 1}) == 3


def test_self_methods_return_the_bound_objects_class() -> None:
    counter = Counter(value=1)
    bump = tool(counter.bump)
    assert bump.output_schema == {
        "type": "object",
        "properties": {"value": {"type": "integer", "default": 0}},
        "description": "A counter.",
    }
    assert bump.invoke({"by": 2}) == Counter(value=3)
    merge = tool(counter.merge)
    assert merge.input_schema["properties"]["other"] == {"$ref": "#/$defs/Counter"}
    assert merge.invoke({"other": {"value": 4}}) == Counter(value=5)
    start = tool(Counter.starting_at)  # a classmethod, bound to its class
    assert start.invoke({"value": 7}) == Counter(value=7)
    assert start.output_schema is not None and start.output_schema["type"] == "object"


def test_bound_methods_and_staticmethods_keep_working() -> None:
    class Greeter:
        def __init__(self, greeting: str) -> None:
            self.greeting = greeting

        def greet(self, name: str) -> str:
            """Greet someone."""
            return f"{self.greeting}, {name}"

        @staticmethod
        def shout(text: str) -> str:
            """Shout."""
            return text.upper()

    greet = tool(Greeter("Hello").greet)
    assert greet.id == "greet" and greet.description == "Greet someone."
    assert greet.invoke({"name": "Ada"}) == "Hello, Ada"
    shout = tool(Greeter.__dict__["shout"])  # the staticmethod object itself, as a class body would pass it
    assert shout.invoke({"text": "hi"}) == "HI"


def test_what_cannot_be_a_tool_is_named_with_the_reason() -> None:
    with pytest.raises(ToolDefinitionError, match=r"Counter is a class: calling it constructs an instance"):
        tool(Counter)
    with pytest.raises(ToolDefinitionError, match=r"classmethod object, not bound to its class"):
        tool(Counter.__dict__["starting_at"])
    with pytest.raises(ToolDefinitionError, match=r"needs a function .* or a callable object"):
        Tool(42)  # type: ignore[arg-type]

    class Plain:
        def make(self) -> Self:
            return self

    with pytest.raises(ToolDefinitionError, match=r"Plain cannot be turned into a JSON Schema"):
        tool(Plain().make)  # `Self` is resolved: the error is about the class, not an unresolvable name


def test_a_registry_takes_callable_objects_and_partials() -> None:
    registry = Registry({"add": Adder(0), "square": functools.partial(power, exponent=2, api_key=SECRET)})
    assert registry["add"].invoke({"a": 2, "b": 3}) == 5
    assert registry["square"].invoke({"base": 4}) == 16.0


def _unused(value: Any) -> Any:  # keeps `Any` imported for the annotations above under mypy
    return value


def test_a_callable_objects_class_docstring_describes_it() -> None:
    """Issue 17 §2.5: the description came from ``__call__``; the class's is the tool's (FastMCP reads it so)."""

    class Search:
        """Search the product catalogue.

        Args:
            index: the index to search (a constructor argument: not a parameter of the tool).
            limit: at most this many hits.
        """

        def __init__(self, index: str = "main") -> None:
            self.index = index

        def __call__(self, query: str, limit: int = 10) -> list[str]:
            """Run the search.

            Args:
                query: what to look for.
            """
            return []

    @dataclasses.dataclass
    class Undocumented:
        offset: int = 0

        def __call__(self, a: int) -> int:
            """Add the offset."""
            return a + self.offset

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the class's `index` is not reported as a stale parameter
        search = tool(Search())
        assert search.description == "Search the product catalogue."
    properties = search.input_schema["properties"]
    assert properties["query"]["description"] == "what to look for."
    assert properties["limit"]["description"] == "at most this many hits."  # the class's, for what __call__ omits
    assert tool(Undocumented()).description == "Add the offset."  # not dataclasses' generated signature text
    assert tool(functools.partial(Search(), limit=3)).description == "Search the product catalogue."
