"""Typing tests: mypy --strict and pyright (strict) check this file in CI; pytest runs it too.

`assert_type` fails the type check when a type is wrong, under both checkers; a ``# type: ignore``
on a line that stopped being an error fails them too (mypy's ``warn_unused_ignores``, pyright's
``reportUnnecessaryTypeIgnoreComment``), so misuse stays a type error.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import pytest
from typing_extensions import assert_type

from agentkit import Registry, Tool, ToolContext, tool
from agentkit.registry import Registry as RegistryClass


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


async def fetch(url: str, retries: int = 1) -> bytes:
    """Fetch a page."""
    return url.encode() * retries


def with_context(ctx: ToolContext[int], n: int) -> int:
    """Add the deps to n."""
    return ctx.deps + n


registry = Registry()


@registry.tool
def echo(text: str) -> str:
    """Echo text."""
    return text


@registry.tool(key="echo-async", timeout=3)
async def echo_async(text: str) -> str:
    """Echo text, asynchronously."""
    return text


def test_sync_tools_keep_their_signature() -> None:
    as_callable: Callable[[int, int], int] = add
    assert as_callable(1, 2) == 3
    assert_type(add(1), int)
    assert_type(add(1, b=3), int)


def test_async_tools_stay_async() -> None:
    coroutine = multiply(2.0, 3.0)
    as_coroutine: Coroutine[Any, Any, float] = coroutine  # what `async def` returns, for both checkers
    assert asyncio.run(as_coroutine) == 6.0
    as_awaitable: Callable[[float, float], Awaitable[float]] = multiply
    assert asyncio.run(_await(as_awaitable(1.0, 2.0))) == 2.0


async def _await(value: Awaitable[float]) -> float:
    return await value


def test_from_function_keeps_the_types() -> None:
    shouted = Tool.from_function(shout)
    assert_type(shouted("a"), str)
    assert_type(shouted.invoke({"text": "a"}), str)
    fetched = Tool.from_function(fetch, timeout=2)
    assert_type(fetched.invoke({"url": "x"}), bytes)
    contextual = Tool.from_function(with_context)
    assert_type(contextual(ToolContext(deps=1), 2), int)
    built = Tool(shout, id="shout2")
    assert_type(built("b"), str)


def test_registry_tools_keep_their_types_and_lookups_are_tools() -> None:
    assert_type(echo("x"), str)
    assert_type(echo.invoke({"text": "x"}), str)
    assert_type(echo_async.invoke({"text": "x"}), str)
    looked_up = registry["echo"]
    assert_type(looked_up, Tool[..., Any])
    assert looked_up.invoke({"text": "y"}) == "y"
    assert isinstance(registry, RegistryClass)


def test_invoke_returns_the_awaited_result_type() -> None:
    assert_type(add.invoke({"a": 1}), int)
    assert_type(multiply.invoke({"a": 1, "b": 2}), float)
    assert add.invoke({"a": 1}) == 3
    assert multiply.invoke('{"a": 2, "b": 4}') == 8.0


async def test_ainvoke_returns_the_awaited_result_type() -> None:
    assert_type(await add.ainvoke({"a": 1}), int)
    assert_type(await multiply.ainvoke({"a": 1, "b": 2}), float)
    assert_type(await Tool.from_function(fetch).ainvoke({"url": "u"}), bytes)
    assert_type(await echo_async.ainvoke({"text": "z"}), str)


def test_misuse_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        add("1", 2)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        add(1, c=3)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Tool.from_function(shout, idd="typo")  # type: ignore[call-arg]  # options are typed keywords
    with pytest.raises(TypeError):
        tool(timeout="soon")(shout)  # type: ignore[call-overload]
