"""Background calls of a run (`Tool.background`): started, joined to the conversation when done, awaited.

A background call is answered at once ("started"); its task keeps running (`hooks.BACKGROUND`, by run id
and call id) and its result joins the conversation as a message before a later model turn. A run that
ends before them pauses ``"awaiting_background"``; `resume` waits for them in the process that runs them.
"""

from __future__ import annotations as _annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from ..exceptions import ClientCallRequested, ToolSuspended
from ..messages import ToolCall, ToolResult
from ._emit import background_joined
from .display import display_arguments
from .hooks import BACKGROUND, background_result, start_background
from .interrupts import background_message, background_started
from .pending import PendingBackground
from .results import PendingItem

if TYPE_CHECKING:
    from .config import RunConfig
    from .state import RunState

__all__ = ["join", "pending", "run_id", "start", "wait"]


def run_id(config: RunConfig, state: RunState) -> str:
    """The run's id, made when first needed (a pause, a background call) and kept across its pauses."""
    if not state.run_id:
        state.run_id = config.engine.new_pause_id()
    return state.run_id


def start(
    config: RunConfig, state: RunState, call: ToolCall, run: Callable[[ToolCall], Awaitable[ToolResult]]
) -> ToolResult:
    """Start `call` in the background (through `run`, the rest of its pipeline); its "started" result."""

    async def work() -> ToolResult:
        try:
            return await run(call)  # under the call's limits and the run's hooks, as any call
        except (ToolSuspended, ClientCallRequested):
            return ToolResult.error(call, f"The background call to {call.name!r} cannot pause the run.", "tool_error")

    start_background(run_id(config, state), call, work())
    state.background[call.id] = None
    return background_started(call)


def join(config: RunConfig, state: RunState, index: int) -> None:
    """Add every finished background call's result to the conversation (before the model turn `index`)."""
    background = state.background
    for call_id in list(background):
        result = background[call_id]
        if result is None:
            result = background_result(state.run_id, call_id)
            if result is None:
                continue
        BACKGROUND.pop((state.run_id, call_id), None)
        del background[call_id]
        state.messages.append(background_message(result))
        background_joined(config, result, index)


async def wait(state: RunState) -> None:
    """Wait for the run's background calls running in this process; their results stay in the state."""
    for call_id, result in list(state.background.items()):
        task = BACKGROUND.get((state.run_id, call_id)) if result is None else None
        if task is not None:
            if not task.done():
                await asyncio.wait([task])  # a cancelled call is an error result, not a raise
            state.background[call_id] = background_result(state.run_id, call_id)


def pending(state: RunState) -> list[PendingItem]:
    """What a run ending before its background calls waits for."""
    calls = {c.id: c for step in state.steps for c in step.tool_calls}
    waiting: list[PendingItem] = []
    for call_id, result in state.background.items():
        call = calls.get(call_id)
        task = BACKGROUND.get((state.run_id, call_id))
        done = result is not None or (task is not None and task.done())
        name = call.name if call is not None else (result.name if result is not None else "")
        arguments = display_arguments(call) if call is not None else None
        waiting.append(PendingBackground(call_id, name, arguments, done))
    return waiting


def lost(state: RunState) -> list[str]:
    """The ids of background calls that run in another process (or ended with one): not awaitable here."""
    return [c for c, r in state.background.items() if r is None and (state.run_id, c) not in BACKGROUND]
