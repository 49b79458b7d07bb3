"""Timeouts that are the tool's own, worker threads that stuck tools cannot starve, and validation that never
blocks the event loop (issue 8, §2 item 5, §4 items 2 and 5). No timing assertions: events and counters."""

from __future__ import annotations

import asyncio
import threading

import pytest

from agentkit import Registry, Tool, ToolCall, ToolTimeoutError, tool
from agentkit._threads import ToolThreads, tool_threads

# ---- a tool's own TimeoutError is the tool's exception ---------------------------------------------------


@tool(timeout=30)
async def slow_upstream() -> str:
    """Call a service that times out."""
    raise TimeoutError("upstream did not answer")


@tool(timeout=30)
def slow_upstream_sync() -> str:
    """The same, from a sync tool."""
    raise TimeoutError("upstream did not answer")


@tool
async def failing_upstream() -> str:
    """The same, from a tool without a timeout of its own (no deadline of agentkit's to mistake it for)."""
    raise TimeoutError("upstream did not answer")


@tool
def failing_upstream_sync() -> str:
    """The same, sync, without a timeout."""
    raise TimeoutError("upstream did not answer")


@tool(timeout=0.01)
async def inner() -> None:
    """Never finishes in time."""
    await asyncio.Event().wait()


@tool
async def outer() -> None:
    """Calls a tool that times out, without a timeout of its own."""
    await inner.ainvoke({})


@pytest.mark.parametrize(
    "item", [slow_upstream, slow_upstream_sync, failing_upstream, failing_upstream_sync], ids=lambda t: t.id
)
async def test_a_tools_own_timeout_error_is_reported_as_its_exception(item: Tool[..., str]) -> None:
    result = await Registry([item]).call(ToolCall("1", item.id, {}))
    assert result.error_kind == "exception"
    assert result.text == f"Tool {item.id!r} failed: TimeoutError: upstream did not answer"
    with pytest.raises(TimeoutError, match="upstream did not answer") as info:
        await item.ainvoke({})
    assert not isinstance(info.value, ToolTimeoutError)


async def test_another_tools_timeout_inside_a_tool_is_that_tools_exception() -> None:
    result = await Registry([outer]).call(ToolCall("1", "outer", {}))
    assert result.error_kind == "exception"
    assert "ToolTimeoutError: Tool 'inner' did not finish within its timeout of 0.01 s" in result.text


async def test_agentkits_own_deadline_is_still_a_timeout() -> None:
    result = await Registry([inner]).call(ToolCall("1", "inner", {}))
    assert result.error_kind == "timeout"
    assert result.text == "Tool 'inner' did not finish within its timeout of 0.01 s."


# ---- stuck sync tools do not starve the others ---------------------------------------------------------

RELEASE = threading.Event()
STARTED = threading.Semaphore(0)


@tool(timeout=0.05)
def stuck() -> None:
    """Blocks until the test releases it."""
    STARTED.release()
    RELEASE.wait(30)


@tool
def quick() -> str:
    """Answers at once."""
    return "done"


async def _wait_for(condition: object, what: str) -> None:
    for _ in range(3000):
        if callable(condition) and condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never happened: {what}")


async def test_more_stuck_sync_tools_than_any_pool_has_threads_then_a_quick_one_completes() -> None:
    pool = tool_threads()
    count = 40  # more than a default executor's threads (min(32, cpus + 4))
    RELEASE.clear()
    try:
        registry = Registry([stuck, quick])
        results = await registry.call_many([ToolCall(str(n), "stuck", {}) for n in range(count)])
        assert {r.error_kind for r in results} == {"timeout"}
        stats = pool.stats()  # calls still waiting for a slot at their deadline never started at all
        assert stats.running == 0 and stats.waiting == 0 and pool.max_workers <= stats.abandoned <= count
        answer = await asyncio.wait_for(registry.call(ToolCall("q", "quick", {})), 20)
        assert answer.text == "done"
        assert not RELEASE.is_set()  # the stuck calls were still stuck when the quick one finished
    finally:
        RELEASE.set()
    await _wait_for(lambda: pool.stats().abandoned == 0, "abandoned calls finishing once released")


async def test_the_pool_is_bounded_and_abandoned_calls_past_the_limit_keep_their_slot() -> None:
    pool = ToolThreads(max_workers=1, max_abandoned=1)
    gate = threading.Event()
    entered = threading.Semaphore(0)

    def block() -> str:
        entered.release()
        gate.wait(30)
        return "late"

    try:
        first = asyncio.ensure_future(pool.run(block))
        await _wait_for(lambda: entered.acquire(blocking=False), "the first call starting")
        first.cancel()  # abandoned: its slot is given back
        second = asyncio.ensure_future(pool.run(block))
        await _wait_for(lambda: entered.acquire(blocking=False), "the second call starting in a fresh thread")
        assert pool.stats().abandoned == 1 and pool.stats().running == 1
        second.cancel()  # past max_abandoned: it keeps its slot
        third = asyncio.ensure_future(pool.run(lambda: "third"))
        await _wait_for(lambda: pool.stats().waiting == 1, "the third call waiting for a slot")
        assert pool.stats() == type(pool.stats())(running=1, waiting=1, abandoned=1, threads=2)
        gate.set()
        assert await asyncio.wait_for(third, 20) == "third"
    finally:
        gate.set()
    await _wait_for(lambda: pool.stats().running == 0 and pool.stats().abandoned == 0, "everything finishing")
    with pytest.raises(asyncio.CancelledError):
        await first


async def test_worker_threads_keep_context_variables_and_exceptions() -> None:
    import contextvars

    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="unset")
    var.set("caller's")
    pool = ToolThreads(max_workers=2)
    assert await pool.run(var.get) == "caller's"

    def fail() -> None:
        raise KeyError("inside")

    with pytest.raises(KeyError, match="inside"):
        await pool.run(fail)


# ---- backtracking patterns are matched off the event loop, within the tool's timeout --------------------

LOOKAROUND_EVIL = "^(?=a)(a|aa)+$"  # not for a linear-time engine, catastrophic for a backtracking one


async def test_a_backtracking_pattern_never_holds_the_event_loop() -> None:
    made = Tool.from_json_schema(
        "evil",
        {"type": "object", "properties": {"s": {"type": "string", "pattern": LOOKAROUND_EVIL}}},
        fn=dict,
        timeout=0.2,
    )
    assert made.schema.needs_thread
    ticks = 0
    call = asyncio.ensure_future(Registry([made]).call(ToolCall("1", "evil", {"s": "a" * 60 + "!"})))
    while not call.done():
        await asyncio.sleep(0.005)
        ticks += 1
    result = call.result()
    assert ticks >= 3  # the loop kept running while the pattern was being matched
    assert result.error_kind == "invalid_arguments"
    # whichever stops first, the tool's deadline or the match's own budget (the same 0.2 s), says so
    assert "could not be validated within the tool's timeout of 0.2 s" in result.text or (
        "could not be matched against pattern" in result.text and "within 0.2 s" in result.text
    )
    ok = await Registry([made]).call(ToolCall("2", "evil", {"s": "aaaa"}))
    assert ok.output == {"s": "aaaa"}


def test_without_a_loop_a_backtracking_match_stops_at_its_budget() -> None:
    from agentkit import ToolInputError
    from agentkit._raw_schema import pattern_budget

    made = Tool.from_json_schema(
        "evil", {"type": "object", "properties": {"s": {"type": "string", "pattern": LOOKAROUND_EVIL}}}, fn=dict
    )
    with pattern_budget(0.05), pytest.raises(ToolInputError, match="could not be matched against pattern"):
        made.invoke({"s": "a" * 60 + "!"})
