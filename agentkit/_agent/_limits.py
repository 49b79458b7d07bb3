"""Budgets and concurrency for the tool calls of a run (the rules are in `agentkit.limits`).

Admission happens in call order before anything runs, so which calls a budget lets through is
deterministic; then the admitted calls run concurrently under the caps: the turn's, the run's (shared
with nested runs through a context variable), and each tool's limits, always acquired in one global
order so that no two calls can wait on each other.
"""

from __future__ import annotations as _annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Hashable, Mapping
from contextvars import ContextVar, Token
from typing import TYPE_CHECKING, Any, Literal

from .._tool_errors import described
from ..exceptions import ToolInputError
from ..messages import ToolCall, ToolResult
from ..registry import Registry
from ..tools import Tool

if TYPE_CHECKING:
    from .loop import Outcome, RunLoop
    from .results import Approval

__all__ = ["budget_error", "enter_run", "leave_run", "limited", "run_calls", "spent_tools"]

# The run-wide caps of the runs enclosing the current task, outermost first: a subagent's run started by
# a tool call holds its parent's cap too.
_RUN_CAPS: ContextVar[tuple[asyncio.Semaphore, ...]] = ContextVar("agentkit_run_caps", default=())


def enter_run(loop: RunLoop) -> Token[tuple[asyncio.Semaphore, ...]] | None:
    """Install this run's cap (if it has one) beneath its parents' for the duration of the run."""
    cap = loop.control.limits.max_concurrency
    if cap is None:
        return None
    return _RUN_CAPS.set((*_RUN_CAPS.get(), asyncio.Semaphore(cap)))


def leave_run(token: Token[tuple[asyncio.Semaphore, ...]] | None) -> None:
    """Undo `enter_run`."""
    if token is not None:
        _RUN_CAPS.reset(token)


# ---- budgets --------------------------------------------------------------------------------------


def spent_tools(loop: RunLoop) -> frozenset[str] | Literal["all"] | None:
    """The keys whose call budget is spent in this run, ``"all"`` when the run's budget is, else None."""
    limit = loop.control.limits.max_tool_calls
    state = loop.state
    if limit is not None and state.total_calls >= limit:
        return "all"
    registry = loop.registry
    spent = frozenset(
        key for key in loop.control.tools.budgeted if state.tool_calls.get(key, 0) >= (registry[key].max_calls or 0)
    )
    return spent or None


async def budget_error(loop: RunLoop, call: ToolCall, executor: Registry | None = None) -> str | None:
    """Why `call` may not run (a spent budget), else None; a call that may run is counted.

    `executor`: the tools the call runs against (default: the step's; a program's calls run against its own).
    """
    state = loop.state
    limit = loop.control.limits.max_tool_calls
    registry = loop.registry
    # the run's registry, not the step's: a tool hidden because its budget is spent still gets that error
    callable_keys = _callable(loop) if executor is None else executor
    item = registry.get(call.name) if call.name in registry and call.name in callable_keys else None
    if limit is not None and state.total_calls >= limit:
        return (
            f"This run's tool-call budget is spent ({limit} calls, Agent/RunLimits max_tool_calls): no more tools can "
            "be called in this run. Answer with what you have."
        )
    if item is None:
        return None  # an unknown tool: its error says so, and it counts for nothing
    if item.max_calls is not None and state.tool_calls.get(call.name, 0) >= item.max_calls:
        return (
            f"Tool {call.name!r} may be called at most {item.max_calls} time(s) per run, and that budget is spent; "
            "it is no longer available in this run. Answer with what you have, or use another tool."
        )
    if item.max_calls is not None or limit is not None:
        try:
            await item.avalidate_arguments(call.arguments, name=call.name)  # off the loop when patterns need it
        except ToolInputError:
            return None  # it will not run: invalid arguments spend the retry budget, not this one
        state.tool_calls[call.name] = state.tool_calls.get(call.name, 0) + 1
        state.total_calls += 1
    return None


def _callable(loop: RunLoop) -> set[str] | Registry:
    """The keys that could run in this step if no budget held them back."""
    spent = spent_tools(loop)
    if spent is None:
        return loop.executor
    return set(loop.executor) | (set(loop.registry) if spent == "all" else set(spent))


# ---- running a turn's calls -----------------------------------------------------------------------


async def run_calls(
    loop: RunLoop,
    calls: list[ToolCall],
    denied: Mapping[str, Approval],
    index: int,
    answers: Mapping[str, Any],
    run: Callable[[ToolCall, asyncio.Semaphore | None], Awaitable[Outcome]],
) -> list[Outcome]:
    """One outcome per call, in call order: denied and over-budget calls answered at once, the rest run.

    A ``sequential`` tool's call runs alone: the calls before it finish first, the ones after wait. A
    suspended call running again with its answer (in `answers`) was counted when it first ran.
    """
    results: list[Outcome | None] = [None] * len(calls)
    admitted: list[tuple[int, ToolCall]] = []
    for position, call in enumerate(calls):
        decision = denied.get(call.id)
        if decision is not None:
            results[position] = loop.deny(call, decision, index)
            continue
        error = None if call.id in answers else await budget_error(loop, call)
        if error is not None:
            result = ToolResult.error(call, error, "budget")
            loop.emit_result(result, index)
            results[position] = result
        else:
            admitted.append((position, call))
    cap = loop.control.limits.max_turn_concurrency
    turn = asyncio.Semaphore(cap) if cap is not None and cap < len(admitted) else None
    batch: list[tuple[int, ToolCall]] = []

    async def flush() -> None:
        if len(batch) == 1:
            position, call = batch[0]
            results[position] = await run(call, turn)
        elif batch:
            done = await asyncio.gather(*(run(call, turn) for _, call in batch))
            for (position, _), result in zip(batch, done, strict=True):
                results[position] = result
        batch.clear()

    for position, call in admitted:
        item = loop.executor.get(call.name) if call.name in loop.executor else None
        if item is not None and item.sequential:
            await flush()
            results[position] = await run(call, turn)
        else:
            batch.append((position, call))
    await flush()
    assert all(r is not None for r in results)
    return results  # type: ignore[return-value]


async def limited(
    item: Tool[..., Any] | None,
    call: ToolCall,
    turn: asyncio.Semaphore | None,
    run: Callable[[], Awaitable[ToolResult]],
) -> ToolResult:
    """`run()` holding the turn's cap, the enclosing runs' caps and the tool's limits."""
    limits = item.limits if item is not None else ()
    caps = () if item is None or getattr(item, "_nests_runs", False) else _RUN_CAPS.get()
    if turn is None and not caps and not limits:
        return await run()
    resources: list[Hashable] = []
    if any(limit.key is not None for limit in limits):
        assert item is not None
        try:
            arguments = item.approval_arguments(call.arguments, name=call.name)
        except ToolInputError:
            return await run()  # it fails validation before running anything
        try:
            resources = [limit.resource(arguments) for limit in limits]
        except Exception as exc:  # noqa: BLE001 - a failing key function fails this call, never the run
            return ToolResult.error(
                call,
                f"Tool {call.name!r} did not run: its concurrency limit's key could not be computed "
                f"({described(call, 'limit_error', exc, item)}).",
                "limit_error",
                type(exc).__name__,
            )
    else:
        resources = [None] * len(limits)
    async with contextlib.AsyncExitStack() as stack:
        if turn is not None:
            await stack.enter_async_context(turn)
        for cap in caps:
            await stack.enter_async_context(cap)
        for limit, resource in sorted(zip(limits, resources, strict=True), key=lambda pair: pair[0].order):
            await stack.enter_async_context(limit.hold(resource))
        return await run()
