"""Typing tests: mypy --strict checks this file in CI (see [tool.mypy] files); pytest runs it too."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
from typing_extensions import assert_type

from agentkit import Registry, Tool, ToolContext, tool


@tool
def add(a: int, b: int = 2) -> int:
    """Add two numbers."""
    return a + b


@tool(id="mul", timeout=5)
async def multiply(a: float, b: float) -> float:
    """Multiply two numbers."""
    return a * b


def shout(text: str) -> str:
    """Upper-case text."""
    return text.upper()


def with_context(ctx: ToolContext[int], n: int) -> int:
    """Add the deps to n."""
    return ctx.deps + n


registry = Registry()


@registry.tool
def echo(text: str) -> str:
    """Echo text."""
    return text


def test_signatures_survive_decoration() -> None:
    as_callable: Callable[[int, int], int] = add
    assert as_callable(1, 2) == 3
    assert_type(add(1), int)
    assert_type(add(1, b=3), int)
    coroutine = assert_type(multiply(2.0, 3.0), Coroutine[Any, Any, float])
    assert asyncio.run(coroutine) == 6.0


def test_misuse_is_a_type_error() -> None:
    # mypy runs with warn_unused_ignores: if a call below stopped being an error, the ignore would fail CI.
    with pytest.raises(TypeError):
        add("1", 2)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        add(1, c=3)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Tool.from_function(shout, idd="typo")  # type: ignore[call-arg]  # options are typed keywords
    with pytest.raises(TypeError):
        tool(timeout="soon")(shout)  # type: ignore[call-overload]
    shouted = Tool.from_function(shout)
    assert_type(shouted("a"), str)
    assert_type(echo("x"), str)
    assert_type(Tool.from_function(with_context)(ToolContext(deps=1), 2), int)


def test_invoke_returns_the_awaited_result_type() -> None:
    assert_type(add.invoke({"a": 1}), int)
    assert_type(multiply.invoke({"a": 1, "b": 2}), float)
    assert add.invoke({"a": 1}) == 3
    assert multiply.invoke('{"a": 2, "b": 4}') == 8.0


async def test_ainvoke_returns_the_awaited_result_type() -> None:
    assert_type(await add.ainvoke({"a": 1}), int)
    assert_type(await multiply.ainvoke({"a": 1, "b": 2}), float)
