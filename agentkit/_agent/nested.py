"""Calls made by programs (code mode): the one entry by which they join a run's tool-call pipeline.

`call_nested` runs a call a program made exactly as a call of the model: approval (decided again here, and
asked for with a pending record when the call has no answer yet), budgets, hooks, limits, timeouts, events,
traces and usage, every event naming the program's call as its `caller`. `agentkit.codemode` drives it for
agentkit's own sandbox; calls of a program the vendor runs arrive as ordinary calls (`hosted_caller` names
their program for the events).
"""

from __future__ import annotations as _annotations

from typing import TYPE_CHECKING, Any

from .._jsonish import is_mapping
from ..codemode._host import NOT_ANSWERED
from ..events import ApprovalRequestedEvent, RunStatus, ToolCallEvent
from ..messages import ToolCall, ToolResult
from ._limits import budget_error
from .display import display_arguments, shape
from .interrupts import Interrupt
from .results import Approval, PendingItem

if TYPE_CHECKING:
    from ..registry import Registry
    from .loop import RunLoop

__all__ = ["call_nested", "hosted_caller", "pause_status"]


async def call_nested(
    loop: RunLoop, call: ToolCall, caller: str, executor: Registry, answer: Any = NOT_ANSWERED
) -> ToolResult | PendingItem:
    """Run `call`, made by the program of the call `caller`, against `executor` (the program's tools).

    `answer` is what a resume brought for it: an `Approval`, a suspension's data, or a client tool's
    `ToolResult`. Returns the result, or the pending record of a call that must wait (its program, and then
    the run, pause on it).
    """
    loop.callers[call.id] = caller
    loop.call_ids.add(call.id)  # a later model call never gets this id
    index = loop.steps[-1].index if loop.steps else 0
    resumed = answer is not NOT_ANSWERED
    if not resumed and loop.emit is not None:
        shaped, error = shape(loop.rules(call.name).input, display_arguments(call), "input")
        loop.emit(ToolCallEvent(call.id, call.name, shaped, index, error, caller=caller))
    if isinstance(answer, Approval):
        if not answer.approved:
            return loop.deny(call, answer, index)
    elif isinstance(answer, ToolResult):  # a client tool's output
        loop.emit_result(answer, index)
        return answer
    elif not resumed and loop.needs_approval(call, executor):
        pending = loop._pending(call)  # pyright: ignore[reportPrivateUsage]  # the loop's own record, as for its calls
        if loop.emit is not None:
            payload, error = pending.payload, pending.transform_error
            loop.emit(ApprovalRequestedEvent(call.id, call.name, payload, index, error, caller=caller))
        return pending
    if not resumed:
        error = await budget_error(loop, call, executor)
        if error is not None:
            result = ToolResult.error(call, error, "budget")
            loop.emit_result(result, index)
            return result
    answers = {call.id: answer} if resumed and not isinstance(answer, Approval) else {}
    outcome = await loop._call(call, index, answers, None, executor)  # pyright: ignore[reportPrivateUsage]  # the step's own pipeline
    if isinstance(outcome, Interrupt):
        return loop._interrupted(outcome, index)  # pyright: ignore[reportPrivateUsage]  # its pause record and event
    return outcome


def hosted_caller(call: ToolCall) -> str | None:
    """The id of the vendor-run program that made `call` (OpenAI's ``caller_id``, Anthropic's ``tool_id``)."""
    caller = call.provider_details.get("caller") if call.provider_details else None
    if not is_mapping(caller):
        return None
    found = caller.get("caller_id") or caller.get("tool_id")
    return found if isinstance(found, str) else None


def pause_status(pending: list[PendingItem]) -> RunStatus:
    """A turn's pause: waiting for approval when any call does (calls made by programs), else for data or clients."""
    kinds = {item.kind for item in pending}
    if "approval" in kinds:
        return "awaiting_approval"
    return "suspended" if "suspension" in kinds else "awaiting_client"
