"""One model request of a run: sent (streamed when the run streams), raced with cancellation, observed.

A streamed turn's events (text deltas, tool calls starting, their arguments where a transform allows,
the typed answer taking shape) go to the stream as they arrive. Every call id of the response is made
unique in the run (`unique_ids`) before anything else sees it.
"""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from ..events import OutputDeltaEvent, TextDeltaEvent, ToolCallDeltaEvent, ToolCallStartEvent
from ..exceptions import ModelAPIError
from ..messages import ModelResponse, ToolCall
from ..models._base import ResponseDone, TextDelta, ToolCallArgsDelta, ToolCallStart
from ..tools import ToolTransform
from . import observe
from ._output import RunOutput
from ._steps import StepRequest
from .config import CANCEL, OBSERVED, REQUEST_WATCH, cancel_event
from .display import shape
from .interrupts import until_set
from .stream import Emit

if TYPE_CHECKING:
    from .config import RunConfig
    from .state import RunState

__all__ = ["request", "unique_ids"]


async def request(config: RunConfig, state: RunState, step: StepRequest, index: int) -> ModelResponse | None:
    """The model's response to `step`'s request; ``None`` when the run was cancelled meanwhile."""
    planned = step.request
    machinery = config.machinery
    if not machinery & REQUEST_WATCH:
        return await planned.model.request(planned.messages, planned.tools, planned.settings)
    if config.emit is None:
        sent: Awaitable[ModelResponse] = planned.model.request(planned.messages, planned.tools, planned.settings)
    else:
        sent = _streamed(config, state, step, index, config.emit)
    if machinery & OBSERVED:  # a span and/or DEBUG records around the request
        sent = observe.model_turn(config, planned, index, sent)
    if not machinery & CANCEL:
        return await sent
    finished, response = await until_set(sent, cancel_event(config, state))
    return response if finished else None


async def _streamed(config: RunConfig, state: RunState, step: StepRequest, index: int, emit: Emit) -> ModelResponse:
    planned = step.request
    names: dict[int, str] = {}
    ids: dict[int, str | None] = {}
    taken = set(state.call_ids)  # the ids `unique_ids` will give, calls in the same order
    response: ModelResponse | None = None
    output = config.output if config.output is not None and config.output.schema is not None else None
    if output is not None:
        output.turn_started()
    async for event in planned.model.stream(planned.messages, planned.tools, planned.settings):
        if isinstance(event, TextDelta):
            emit(TextDeltaEvent(event.text, index))
            if output is not None and output.streams_text:
                changed, partial = output.text_delta(event.text)
                if changed:
                    emit(OutputDeltaEvent(partial, index))
        elif output is not None and _answer_event(output, emit, event, names, index):
            continue
        elif isinstance(event, ToolCallStart):
            call_id = event.call_id
            if call_id is not None:
                call_id = _fresh_id(call_id, taken)
                taken.add(call_id)
            names[event.index] = event.tool_name
            ids[event.index] = call_id
            if output is None or event.tool_name != output.key:
                emit(ToolCallStartEvent(call_id, event.tool_name, event.index, index))
        elif isinstance(event, ToolCallArgsDelta):
            name = names.get(event.index, "")
            # Partial JSON cannot be redacted by an `input` transform: deltas (and the arguments parsed
            # so far) are shown only through an explicit `input_delta` (`input_partial`) transform.
            rules = config.rules(name)
            if rules.input_delta is not None or rules.input_partial is not None:
                emit(_delta_event(config, rules, name, ids.get(event.index), event, index))
        elif isinstance(event, ResponseDone):  # pyright: ignore[reportUnnecessaryIsInstance]  # others are ignored
            response = event.response
    if response is None:
        raise ModelAPIError(planned.model.name, "the stream ended without a complete response")
    return response


def _delta_event(
    config: RunConfig, rules: ToolTransform, name: str, call_id: str | None, event: ToolCallArgsDelta, index: int
) -> ToolCallDeltaEvent:
    shaped, error = shape(rules.input_delta, event.delta, "input_delta") if rules.input_delta else (None, None)
    partial: Any = None
    registry = config.tools.registry
    if rules.input_partial is not None and name in registry:
        so_far = registry[name].partial_arguments(event.arguments_so_far)
        partial, failed = shape(rules.input_partial, so_far, "input_partial")
        error = error or failed
    return ToolCallDeltaEvent(call_id, name, event.index, shaped, index, error, partial)


def _answer_event(output: RunOutput, emit: Emit, event: Any, names: dict[int, str], index: int) -> bool:
    """Whether `event` belongs to the output tool's call (shown as `OutputDeltaEvent`s, not tool events)."""
    if output.key is None or not isinstance(event, ToolCallArgsDelta) or names.get(event.index) != output.key:
        return False
    changed, partial = output.partial(event.arguments_so_far)
    if changed:
        emit(OutputDeltaEvent(partial, index))
    return True


def unique_ids(state: RunState, response: ModelResponse) -> ModelResponse:
    """`response` with every call id unique in the run.

    A duplicate (in this turn or an earlier one) becomes ``<id>_2``, ``<id>_3``..., an empty id
    ``call_1``, ... (the same renaming every time), so one approval decision can never stand for two
    calls, and every result links to exactly one call in the history every vendor is sent.
    """
    calls = response.message.tool_calls
    if not calls:
        return response
    taken = state.call_ids
    renamed: list[ToolCall] = []
    changed = False
    for call in calls:
        call_id = call.id
        if not call_id or call_id in taken:
            call_id = _fresh_id(call_id, taken)
            call = dataclasses.replace(call, id=call_id)
            changed = True
        taken.add(call_id)
        renamed.append(call)
    if not changed:
        return response
    message = dataclasses.replace(response.message, tool_calls=renamed)
    return dataclasses.replace(response, message=message)


def _fresh_id(call_id: str, taken: set[str]) -> str:
    if call_id and call_id not in taken:
        return call_id
    base, n = (call_id, 2) if call_id else ("call", 1)
    while f"{base}_{n}" in taken:
        n += 1
    return f"{base}_{n}"
