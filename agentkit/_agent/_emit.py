"""The events a streamed run emits about its turns and calls, shaped by the display transforms.

Every payload goes through the tool's transforms over the run's policy (`RunConfig.rules`), failing
closed (`agentkit._agent.display`). Each function does nothing for a run that does not stream, except
the ones that also make the record a pause keeps (`interrupted`).
"""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

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
from .display import display_arguments, error_text, shape
from .interrupts import Interrupt
from .pending import PendingClientCall, PendingSuspension
from .results import PendingApproval, PendingItem

if TYPE_CHECKING:
    from .config import RunConfig

__all__ = [
    "announce_calls",
    "approvals_requested",
    "background_joined",
    "finished",
    "interrupted",
    "result_event",
    "step_finished",
]


def announce_calls(config: RunConfig, index: int, calls: Sequence[ToolCall]) -> None:
    """A `ToolCallEvent` per call of a turn, before any of them runs (the output tool's calls are answers)."""
    emit = config.emit
    if emit is None:
        return
    output_key = config.output.key if config.output is not None else None
    for call in calls:
        if call.name == output_key:
            continue  # the answer: an `OutputEvent` once it is valid, never a tool event
        shaped, error = shape(config.rules(call.name).input, display_arguments(call), "input")
        emit(ToolCallEvent(call.id, call.name, shaped, index, error))


def approvals_requested(config: RunConfig, index: int, items: Sequence[PendingApproval]) -> None:
    """An `ApprovalRequestedEvent` per call the turn waits on."""
    if config.emit is not None:
        for item in items:
            config.emit(ApprovalRequestedEvent(item.call_id, item.tool_name, item.payload, index, item.transform_error))


def result_event(config: RunConfig, result: ToolResult, index: int) -> None:
    """Report a call's result to the stream, shaped by the tool's transforms."""
    emit = config.emit
    if emit is None:
        return
    rules = config.rules(result.name)
    if result.is_error:
        shaped, error = shape(rules.error, error_text(result, rules), "error")
        emit(ToolErrorEvent(result.call_id, result.name, shaped, result.error_kind, index, error))
    else:
        shaped, error = shape(rules.output, result.output, "output")
        emit(ToolResultEvent(result.call_id, result.name, shaped, index, error))


def step_finished(config: RunConfig, index: int, response: ModelResponse, calls: int) -> None:
    """The `StepFinishEvent` of step `index`."""
    if config.emit is not None:
        config.emit(StepFinishEvent(index, response.finish_reason, calls, dataclasses.replace(response.usage)))


def finished(config: RunConfig, text: str, status: RunStatus, usage: Usage) -> None:
    """The `FinishEvent`, the run's last."""
    if config.emit is not None:
        config.emit(FinishEvent(text, status, usage))


def interrupted(config: RunConfig, item: Interrupt, index: int) -> PendingItem:
    """The pending record of a call that suspended or belongs to a client tool (and its event)."""
    call = item.call
    rules = config.rules(call.name)
    arguments = display_arguments(call)
    if item.kind == "suspension":
        payload, error = shape(rules.suspension, item.request, "suspension")
        if config.emit is not None:
            config.emit(SuspendedEvent(call.id, call.name, payload, item.schema, index, error))
        return PendingSuspension(call.id, call.name, arguments, item.request, payload, item.schema, error)
    payload, error = shape(rules.input, arguments, "input")
    if config.emit is not None:
        config.emit(ClientToolCallEvent(call.id, call.name, payload, index, error, item.schema))
    return PendingClientCall(call.id, call.name, arguments, payload, item.schema, error)


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
