"""Where a run's side effects go: in this process by default, or to a durable engine (`agentkit.temporal`).

A run takes model turns and calls tools through `ExecutionHooks`. The default runs everything here; a
durable engine sets its own hooks for the duration of a run to run each tool call as an activity, make
ids deterministic, and claim nothing in a run store (the engine itself applies each answer once). A
context variable, because the engine drives the agent through its public entry points (`generate`,
`resume`), which have no place for it, and concurrent runs must keep theirs.

Background calls (`Tool.background`) run as tasks kept in `BACKGROUND`, keyed by run id and call id, so a
run that ended before them (status ``"awaiting_background"``) finds them again on `resume`.
"""

from __future__ import annotations as _annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..messages import TextPart, ToolCall, ToolResult
from .results import new_pause_token

if TYPE_CHECKING:
    from ..context import ToolContext
    from ..registry import Registry

__all__ = ["BACKGROUND", "ExecutionHooks", "background_result", "current_hooks", "start_background"]

CallTool = Callable[["Registry", ToolCall, Any, "ToolContext[Any] | None"], Awaitable[ToolResult]]
"""``(executor, call, deps, context) -> result``: run one tool call (raising `ToolSuspended` to pause)."""


@dataclass(frozen=True)
class ExecutionHooks:
    """How a run calls tools, makes pause ids, and claims a pause on resume."""

    call_tool: CallTool | None = None
    """How a durable engine runs one call (its activity, which applies the agent's error policy itself);
    None: in this process, through `Registry.call` with the run's error policy."""
    new_pause_id: Callable[[], str] = new_pause_token
    claims: bool = True
    """Whether `resume` claims the pause in the agent's run store (False where the engine guarantees it)."""
    durable: bool = False
    """Whether background calls outlive the process (then a run waits for them instead of ending first)."""


IN_PROCESS = ExecutionHooks()
current_hooks: ContextVar[ExecutionHooks] = ContextVar("agentkit_execution_hooks", default=IN_PROCESS)

BACKGROUND: dict[tuple[str, str], asyncio.Task[ToolResult]] = {}
"""Background calls of this process: (run id, call id) -> the task computing the result."""


def start_background(run_id: str, call: ToolCall, work: Coroutine[Any, Any, ToolResult]) -> None:
    """Run `work` (the call) as a background task of this process, found again by run id and call id."""
    # named after the tool's key: a task cancelled before it ran cannot say whose call it was otherwise
    BACKGROUND[(run_id, call.id)] = asyncio.get_running_loop().create_task(work, name=call.name)


def background_result(run_id: str, call_id: str) -> ToolResult | None:
    """The result of a background call of this process that ended; None while it runs, or if it is not here.

    A call cancelled before it finished (the event loop running it closed: a script's ``asyncio.run``
    ended) ends as an error result saying so, never as a bare `CancelledError` for whoever reads it.
    """
    task = BACKGROUND.get((run_id, call_id))
    if task is None or not task.done():
        return None
    if task.cancelled():
        text = (
            f"The background call {call_id} to {task.get_name()!r} was cancelled before it finished (the event "
            "loop running it closed). Call the tool again if its result is still needed."
        )
        content = [TextPart(text)]
        return ToolResult(call_id, task.get_name(), content, is_error=True, error_kind="cancelled")
    return task.result()
