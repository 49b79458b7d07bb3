"""The events a streamed run emits about its turns and calls, shaped by the display transforms.

Every payload goes through the tool's transforms over the run's policy (`RunConfig.rules`), failing
closed (`agentkit._agent.display`). Each function does nothing for a run that does not stream, except
the ones that also make the record a pause keeps (`interrupted`).
"""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from .._jsonish import is_mapping
from ..events import (
    ApprovalRequestedEvent,
    BackgroundResultEvent,
    ClientToolCallEvent,
    FinishEvent,
    RunStatus,
    StepFinishEvent,
    SuspendedEvent,
    ToolCallEvent,
    ToolErrorEvent,
    ToolResultEvent,
)
from ..messages import ModelResponse, ToolCall, ToolResult, Usage
from .display import display_arguments, error_text, shape, tool_made
from .interrupts import Interrupt
from .pending import PendingClientCall, PendingSuspension
from .results import PendingApproval, PendingItem

if TYPE_CHECKING:
    from .config import RunConfig
    from .state import RunState

__all__ = [
    "announce_call",
    "announce_calls",
    "approvals_requested",
    "background_joined",
    "finished",
    "hosted_caller",
    "interrupted",
    "pause_status",
    "result_event",
    "step_finished",
]


def announce_calls(config: RunConfig, state: RunState, index: int, calls: Sequence[ToolCall]) -> None:
    """A `ToolCallEvent` per call of a turn, before any of them runs (the output tool's calls are answers).

    A call made by a program the vendor runs (hosted code mode) names that program's call as its caller,
    in this event and the call's later ones.
    """
    emit = config.emit
    if emit is None:
        return
    output_key = config.output.key if config.output is not None else None
    for call in calls:
        if call.name == output_key:
            continue  # the answer: an `OutputEvent` once it is valid, never a tool event
        caller = hosted_caller(call)
        if caller is not None:
            state.callers[call.id] = caller
        announce_call(config, call, index, caller)


def announce_call(config: RunConfig, call: ToolCall, index: int, caller: str | None = None) -> None:
    """The `ToolCallEvent` of one call."""
    if config.emit is not None:
        shaped, error = shape(config.rules(call.name).input, display_arguments(call), "input")
        config.emit(ToolCallEvent(call.id, call.name, shaped, index, error, caller=caller))


def hosted_caller(call: ToolCall) -> str | None:
    """The id of the vendor-run program that made `call` (OpenAI's ``caller_id``, Anthropic's ``tool_id``)."""
    caller = call.provider_details.get("caller") if call.provider_details else None
    if not is_mapping(caller):
        return None
    found = caller.get("caller_id") or caller.get("tool_id")
    return found if isinstance(found, str) else None


def approvals_requested(
    config: RunConfig, index: int, items: Sequence[PendingApproval], caller: str | None = None
) -> None:
    """An `ApprovalRequestedEvent` per call the turn (or a program, `caller`) waits on."""
    if config.emit is not None:
        for item in items:
            payload, error = item.payload, item.transform_error
            config.emit(ApprovalRequestedEvent(item.call_id, item.tool_name, payload, index, error, caller=caller))


def result_event(
    config: RunConfig,
    result: ToolResult,
    index: int,
    caller: str | None = None,
    cache: Literal["hit", "miss"] | None = None,
) -> None:
    """Report a call's result to the stream, shaped by the tool's transforms.

    `caller`: a program's call (code mode); `cache`: a cached tool's ``"hit"`` or ``"miss"``.
    """
    emit = config.emit
    if emit is None:
        return
    rules = config.rules(result.name)
    if result.is_error:
        shaped, error = shape(rules.error, error_text(result, rules), "error")
        kind = result.error_kind
        emit(ToolErrorEvent(result.call_id, result.name, shaped, kind, index, error, caller=caller))
    else:
        shaped, error = shape(rules.output, result.output, "output")
        emit(ToolResultEvent(result.call_id, result.name, shaped, index, error, caller=caller, cache=cache))


def step_finished(config: RunConfig, index: int, response: ModelResponse, calls: int) -> None:
    """The `StepFinishEvent` of step `index`."""
    if config.emit is not None:
        config.emit(StepFinishEvent(index, response.finish_reason, calls, dataclasses.replace(response.usage)))


def finished(config: RunConfig, text: str, status: RunStatus, usage: Usage) -> None:
    """The `FinishEvent`, the run's last."""
    if config.emit is not None:
        config.emit(FinishEvent(text, status, usage))


def interrupted(config: RunConfig, state: RunState, item: Interrupt, index: int) -> list[PendingItem]:
    """What an interrupted call waits for (and its event): its own pending record, or a paused program's calls'."""
    if item.kind == "program":
        records: list[PendingItem] = item.request
        return records
    call = item.call
    caller = state.callers.get(call.id)
    rules = config.rules(call.name)
    arguments = display_arguments(call)
    if item.kind == "suspension":
        payload, error = tool_made(rules, "suspension", item.request)  # withheld if the tool's values are redacted
        if config.emit is not None:
            config.emit(SuspendedEvent(call.id, call.name, payload, item.schema, index, error, caller=caller))
        return [PendingSuspension(call.id, call.name, arguments, item.request, payload, item.schema, error)]
    payload, error = shape(rules.input, arguments, "input")
    if config.emit is not None:
        config.emit(ClientToolCallEvent(call.id, call.name, payload, index, error, item.schema, caller=caller))
    return [PendingClientCall(call.id, call.name, arguments, payload, item.schema, error)]


def pause_status(pending: Sequence[PendingItem]) -> RunStatus:
    """A turn's pause: waiting for approval when any call does (calls made by programs), else for data or clients."""
    kinds = {item.kind for item in pending}
    if "approval" in kinds:
        return "awaiting_approval"
    return "suspended" if "suspension" in kinds else "awaiting_client"


def background_joined(config: RunConfig, result: ToolResult, index: int) -> None:
    """The `BackgroundResultEvent` of a background call whose result joined the conversation."""
    if config.emit is None:
        return
    rules = config.rules(result.name)
    if result.is_error:
        shown, problem = shape(rules.error, error_text(result, rules), "error")
        event = BackgroundResultEvent(result.call_id, result.name, None, shown, result.error_kind, index, problem)
    else:
        shown, problem = shape(rules.output, result.output, "output")
        event = BackgroundResultEvent(result.call_id, result.name, shown, None, None, index, problem)
    config.emit(event)
