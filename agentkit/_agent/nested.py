"""Calls made by programs (code mode): the one entry by which they join a run's tool-call pipeline.

`call_nested` runs a call a program made exactly as a call of the model: approval (decided again here, and
asked for with a pending record when the call has no answer yet), budgets, hooks, limits, timeouts, events,
traces and usage, every event naming the program's call as its `caller`. `agentkit.codemode` drives it for
agentkit's own sandbox; calls of a program the vendor runs arrive as ordinary calls
(`agentkit._agent._emit.hosted_caller` names their program for the events).
"""

from __future__ import annotations as _annotations

from typing import TYPE_CHECKING, Any

from ..codemode._host import NOT_ANSWERED
from ..messages import ToolCall, ToolResult
from ._approvals import denied, needs_approval, pending_approval
from ._calls import call_tool
from ._emit import announce_call, approvals_requested, interrupted, result_event
from ._limits import admit
from .interrupts import Interrupt
from .results import Approval, PendingItem

if TYPE_CHECKING:
    from ..registry import Registry
    from .config import RunConfig
    from .state import RunState

__all__ = ["call_nested"]


async def call_nested(
    config: RunConfig,
    state: RunState,
    call: ToolCall,
    caller: str,
    executor: Registry,
    answer: Any = NOT_ANSWERED,
) -> ToolResult | PendingItem:
    """Run `call`, made by the program of the call `caller`, against `executor` (the program's tools).

    `answer` is what a resume brought for it: an `Approval`, a suspension's data, or a client tool's
    `ToolResult`. Returns the result, or the pending record of a call that must wait (its program, and then
    the run, pause on it).
    """
    state.callers[call.id] = caller
    state.call_ids.add(call.id)  # a later model call never gets this id
    index = state.steps[-1].index if state.steps else 0
    resumed = answer is not NOT_ANSWERED
    if not resumed:
        announce_call(config, call, index, caller)
    if isinstance(answer, Approval):
        if not answer.approved:
            result = denied(call, answer)
            result_event(config, result, index, caller)
            return result
    elif isinstance(answer, ToolResult):  # a client tool's output
        result_event(config, answer, index, caller)
        return answer
    elif not resumed and needs_approval(config, state, executor, call):
        pending = pending_approval(config, call)
        approvals_requested(config, index, [pending], caller)
        return pending
    if not resumed:
        error = await admit(config, state, executor, call)
        if error is not None:
            result = ToolResult.error(call, error, "budget")
            result_event(config, result, index, caller)
            return result
    answers = {call.id: answer} if resumed and not isinstance(answer, Approval) else {}
    outcome = await call_tool(config, state, executor, call, index, answers, None, nested=True)
    if isinstance(outcome, Interrupt):
        (record,) = interrupted(config, state, outcome, index)  # its pause record and event
        return record
    return outcome
