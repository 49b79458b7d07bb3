"""Budgets and concurrency for the tool calls of a run (the rules are in `agentkit.limits`).

Admission (`admit`) happens in call order before anything runs, so which calls a budget lets through is
deterministic; then the admitted calls run under the caps (`limited`): the turn's, the run's and its
enclosing runs', and each tool's limits, always acquired in one global order so that no two calls can
wait on each other.
"""

from __future__ import annotations as _annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Hashable
from contextvars import ContextVar, Token
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from .._tool_errors import ErrorPolicy, described
from ..exceptions import ToolInputError
from ..messages import ToolCall, ToolResult
from ..registry import Registry
from ..tools import Tool

if TYPE_CHECKING:
    from .config import RunConfig
    from .state import RunState

__all__ = ["admit", "enclosing", "enter_run", "leave_run", "limited", "spent_tools", "turn_cap"]

# The runs enclosing the current task, outermost first, with their run-wide limits: a subagent's run (or any
# run that application code starts inside a tool call: a workflow step, a tool calling another agent) holds
# its parents' concurrency caps and draws from their tool-call budgets. A context variable, because such a
# run starts inside the application's own code, through which nothing of the parent's can be passed.
_ENCLOSING: ContextVar[tuple[_Scope, ...]] = ContextVar("agentkit_enclosing_runs", default=())


@dataclass(frozen=True)
class _Scope:
    """One run's run-wide limits, as the runs it encloses see them."""

    cap: asyncio.Semaphore | None
    limit: int | None
    state: RunState
    """The run's state: its `total_calls` count every call of the run, its nested runs' included."""


def enter_run(config: RunConfig, state: RunState) -> Token[tuple[_Scope, ...]] | None:
    """Install this run's cap and budget (if it has either) beneath its parents' for the duration of the run."""
    limits = config.request.limits
    if limits.max_concurrency is None and limits.max_tool_calls is None:
        return None
    cap = asyncio.Semaphore(limits.max_concurrency) if limits.max_concurrency is not None else None
    return _ENCLOSING.set((*_ENCLOSING.get(), _Scope(cap, limits.max_tool_calls, state)))


def leave_run(token: Token[tuple[_Scope, ...]] | None) -> None:
    """Undo `enter_run`."""
    if token is not None:
        _ENCLOSING.reset(token)


def enclosing() -> tuple[bool, bool]:
    """Whether a run starting now draws from an enclosing run's tool-call budget, and holds its caps."""
    scopes = _ENCLOSING.get()
    if not scopes:
        return False, False
    return any(s.limit is not None for s in scopes), any(s.cap is not None for s in scopes)


# ---- budgets --------------------------------------------------------------------------------------


def _spent_budget(config: RunConfig, state: RunState) -> tuple[int, bool] | None:
    """``(limit, own)`` of a spent tool-call budget: this run's, or an enclosing run's; None if none is spent."""
    limit = config.request.limits.max_tool_calls
    if limit is not None and state.total_calls >= limit:
        return limit, True
    for scope in _ENCLOSING.get():
        if scope.limit is not None and scope.state is not state and scope.state.total_calls >= scope.limit:
            return scope.limit, False
    return None


def spent_tools(config: RunConfig, state: RunState) -> frozenset[str] | Literal["all"] | None:
    """The keys whose call budget is spent in this run, ``"all"`` when the run's budget (or a parent's) is."""
    if _spent_budget(config, state) is not None:
        return "all"
    registry = config.tools.registry
    counts = state.tool_calls
    spent = frozenset(key for key in config.tools.budgeted if counts.get(key, 0) >= (registry[key].max_calls or 0))
    return spent or None


async def admit(config: RunConfig, state: RunState, executor: Registry, call: ToolCall) -> str | None:
    """Why `call` may not run (a spent budget), else None; a call that may run is counted."""
    registry = config.tools.registry
    # the run's registry, not the step's: a tool hidden because its budget is spent still gets that error
    item = (
        registry.get(call.name) if call.name in registry and call.name in _callable(config, state, executor) else None
    )
    scopes = [s for s in _ENCLOSING.get() if s.limit is not None and s.state is not state]
    counted = item is not None and (item.max_calls is not None or config.request.limits.max_tool_calls is not None)
    valid = True
    if item is not None and (counted or scopes):
        try:
            await item.avalidate_arguments(call.arguments, name=call.name)  # off the loop when patterns need it
        except ToolInputError:
            valid = False  # it will not run: invalid arguments spend the retry budget, not this one
    # checked and counted with no await in between: concurrent nested runs draw from one budget
    spent = _spent_budget(config, state)
    if spent is not None:
        limit, own = spent
        if own:
            return (
                f"This run's tool-call budget is spent ({limit} calls, Agent/RunLimits max_tool_calls): no more tools "
                "can be called in this run. Answer with what you have."
            )
        return (
            f"The tool-call budget of the run that called this agent is spent ({limit} calls, its max_tool_calls, "
            "which counts its subagents' calls too): no more tools can be called. Answer with what you have."
        )
    if item is None:
        return None  # an unknown tool: its error says so, and it counts for nothing
    if item.max_calls is not None and state.tool_calls.get(call.name, 0) >= item.max_calls:
        return (
            f"Tool {call.name!r} may be called at most {item.max_calls} time(s) per run, and that budget is spent; "
            "it is no longer available in this run. Answer with what you have, or use another tool."
        )
    if valid and (counted or scopes):
        state.tool_calls[call.name] = state.tool_calls.get(call.name, 0) + 1
        state.total_calls += 1
        for scope in scopes:
            scope.state.total_calls += 1
    return None


def _callable(config: RunConfig, state: RunState, executor: Registry) -> set[str] | Registry:
    """The keys that could run in this step if no budget held them back."""
    spent = spent_tools(config, state)
    if spent is None:
        return executor
    return set(executor) | (set(config.tools.registry) if spent == "all" else set(spent))


# ---- concurrency ----------------------------------------------------------------------------------


def turn_cap(config: RunConfig, admitted: int) -> asyncio.Semaphore | None:
    """The cap on the calls of one turn running at once (None when it cannot bind: fewer calls than slots)."""
    cap = config.request.limits.max_turn_concurrency
    return asyncio.Semaphore(cap) if cap is not None and cap < admitted else None


def _caps() -> tuple[asyncio.Semaphore, ...]:
    return tuple(scope.cap for scope in _ENCLOSING.get() if scope.cap is not None)


async def limited(
    item: Tool[..., Any] | None,
    call: ToolCall,
    turn: asyncio.Semaphore | None,
    run: Callable[[], Awaitable[ToolResult]],
    policy: ErrorPolicy,
) -> ToolResult:
    """`run()` holding the turn's cap, the enclosing runs' caps and the tool's limits."""
    limits = item.limits if item is not None else ()
    caps = () if item is None or getattr(item, "_nests_runs", False) else _caps()
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
                f"({described(call, 'limit_error', exc, item, policy)}).",
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
