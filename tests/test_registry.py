"""`Registry`: building, mapping behaviour, select, call and call_many (issue 2, section 3)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from agentkit import (
    ModelRetry,
    Registry,
    RegistryError,
    ToolCall,
    ToolContext,
    ToolError,
    UnknownToolError,
    tool,
)


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool(id="echo")
async def echo_text(text: str) -> str:
    """Echo."""
    return text


def subtract(a: int, b: int) -> int:
    """A plain function, wrapped on the way in."""
    return a - b


def test_built_from_dict_list_decorator_and_add() -> None:
    from_dict = Registry({"plus": add, "minus": subtract})
    from_list = Registry([add, echo_text, subtract])
    assert list(from_dict) == ["plus", "minus"]
    assert list(from_list) == ["add", "echo", "subtract"]  # key = the tool's id
    assert from_dict["minus"](5, 3) == 2

    filled = Registry()

    @filled.tool
    def first(x: int) -> int:
        return x

    @filled.tool(key="second-key", description="Second.")
    def second(x: int) -> int:
        return x

    filled.add("third", add)
    assert list(filled) == ["first", "second-key", "third"]
    assert filled["second-key"].description == "Second."
    assert first.invoke({"x": 1}) == 1  # the decorator returns the Tool
    assert len(filled) == 3 and "third" in filled and "missing" not in filled


def test_duplicate_key_names_both_tools() -> None:
    registry = Registry({"math": add})
    with pytest.raises(RegistryError) as info:
        registry.add("math", subtract)
    message = str(info.value)
    assert "'math'" in message and "test_registry.add" in message and "test_registry.subtract" in message
    with pytest.raises(RegistryError, match="Duplicate key 'add'"):
        Registry([add, add])


def test_bad_inputs() -> None:
    with pytest.raises(RegistryError, match="non-empty string"):
        Registry({"": add})
    with pytest.raises(RegistryError, match="expected a tool or a function"):
        Registry({"x": 42})
    with pytest.raises(RegistryError, match="dict of key"):
        Registry("add")  # type: ignore[arg-type]


def test_select_and_unknown_keys() -> None:
    registry = Registry({"plus": add, "minus": subtract, "echo": echo_text})
    subset = registry.select(["echo", "plus"])
    assert list(subset) == ["echo", "plus"]
    assert subset["plus"] is registry["plus"]
    with pytest.raises(UnknownToolError) as info:
        registry.select(["plsu"])
    assert info.value.suggestions == ["plus"]
    assert "Did you mean 'plus'?" in str(info.value)
    with pytest.raises(KeyError):
        registry["nope"]


async def test_call_uses_the_key_never_the_id() -> None:
    registry = Registry({"shout": echo_text})
    result = await registry.call(ToolCall(id="c1", name="shout", arguments='{"text": "hi"}'))
    assert (result.call_id, result.name, result.is_error, result.output, result.text) == (
        "c1",
        "shout",
        False,
        "hi",
        "hi",
    )


async def test_model_mistakes_become_error_results() -> None:
    @tool
    def fails() -> None:
        raise RuntimeError("disk on fire")

    @tool
    def retry() -> None:
        raise ModelRetry("use a smaller page size")

    @tool
    def refuse() -> None:
        raise ToolError("not allowed for this user")

    @tool
    def bad_output() -> int:
        return "x"  # type: ignore[return-value]

    registry = Registry({"add": add, "fails": fails, "retry": retry, "refuse": refuse, "bad_output": bad_output})
    cases = [
        (ToolCall(id="1", name="ad", arguments="{}"), ("unknown_tool", "Did you mean 'add'?")),
        (ToolCall(id="2", name="add", arguments='{"a": 1,'), ("invalid_arguments", "Invalid JSON")),
        (ToolCall(id="3", name="add", arguments={"a": "one"}), ("invalid_arguments", "$.a")),
        (ToolCall(id="4", name="fails", arguments={}), ("exception", "RuntimeError: disk on fire")),
        (ToolCall(id="5", name="retry", arguments={}), ("retry", "use a smaller page size")),
        (ToolCall(id="6", name="refuse", arguments={}), ("tool_error", "not allowed for this user")),
        (ToolCall(id="7", name="bad_output", arguments={}), ("invalid_output", "result of tool 'bad_output'")),
    ]
    for call, (kind, text) in cases:
        result = await registry.call(call)
        assert result.is_error, call
        assert result.error_kind == kind, (call, result)
        assert text in result.text, (call, result.text)
        assert result.call_id == call.id and result.name == call.name


async def test_invalid_arguments_message_lists_every_problem() -> None:
    result = await Registry([add]).call(ToolCall(id="1", name="add", arguments={"a": "x", "c": 1}))
    assert "$.a" in result.text and "$.b" in result.text and "$.c" in result.text
    assert "Fix the arguments" in result.text


async def test_sync_tools_run_in_a_worker_thread_unless_inline() -> None:
    threads: dict[str, int] = {}

    @tool
    def offloaded() -> None:
        threads["offloaded"] = threading.get_ident()

    @tool(inline=True)
    def inline() -> None:
        threads["inline"] = threading.get_ident()

    registry = Registry([offloaded, inline])
    await registry.call_many([ToolCall(id="1", name="offloaded"), ToolCall(id="2", name="inline")])
    assert threads["inline"] == threading.get_ident()
    assert threads["offloaded"] != threading.get_ident()


async def test_call_many_is_concurrent_ordered_and_total() -> None:
    arrived: list[str] = []
    everyone = asyncio.Event()

    @tool
    async def meet(name: str) -> str:
        """Finish only once both `meet` calls are running: calls made one after another would hang."""
        arrived.append(name)
        if len(arrived) == 2:
            everyone.set()
        await asyncio.wait_for(everyone.wait(), 10)
        return name

    @tool(timeout=0.1)
    async def hang() -> None:
        await asyncio.sleep(60)

    registry = Registry([meet, hang, add])
    calls = [
        ToolCall(id="a", name="meet", arguments={"name": "a"}),
        ToolCall(id="b", name="hang"),
        ToolCall(id="c", name="nope"),
        ToolCall(id="d", name="add", arguments={"a": 1, "b": 2}),
        ToolCall(id="e", name="meet", arguments={"name": "e"}),
    ]
    results = await registry.call_many(calls)
    assert [r.call_id for r in results] == ["a", "b", "c", "d", "e"]
    assert [r.is_error for r in results] == [False, True, True, False, False]
    assert results[1].error_kind == "timeout" and results[3].output == 3
    assert [results[0].output, results[4].output] == ["a", "e"]  # they met: the calls ran concurrently


async def test_context_is_built_per_call() -> None:
    seen: list[tuple[str | None, str | None, object]] = []

    @tool
    def who(ctx: ToolContext[str]) -> str:
        seen.append((ctx.call_id, ctx.tool_name, ctx.deps))
        return ctx.deps

    registry = Registry({"whoami": who})
    await registry.call(ToolCall(id="c9", name="whoami"), deps="alice")
    base = ToolContext(deps="bob")
    await registry.call(ToolCall(id="c10", name="whoami"), context=base)
    assert seen == [("c9", "whoami", "alice"), ("c10", "whoami", "bob")]
    assert base.call_id is None  # the caller's context is copied, not mutated
