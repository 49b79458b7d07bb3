"""Typed events of `Agent.stream`: what a display or a transcript sees of a run, as it happens.

Every event carries `kind` (a string literal, handy for ``match`` and for JSON transcripts) and, where a
tool is involved, `tool_name`: the registry key the model called (``"weather"``, ``"agent-writer"``),
never the tool's own id.

Payload fields that come from tool calls (`ToolCallEvent.input`, `ToolCallDeltaEvent.delta`,
`ToolResultEvent.output`, `ToolErrorEvent.error`, `ApprovalRequestedEvent.payload`) are *display*
values: shaped by the tool's (or the agent's) `ToolTransform`. When a transform raises, that payload is
``None`` and `transform_error` says which transform failed (never the raw value, never the exception's
message, which could quote it). What the model receives is a separate matter (`to_model_output`).
"""

from __future__ import annotations as _annotations

from dataclasses import dataclass
from typing import Any, Literal, Union

from .messages import Usage

__all__ = [
    "AgentEvent",
    "ApprovalRequestedEvent",
    "BackgroundResultEvent",
    "ClientToolCallEvent",
    "FinishEvent",
    "OutputDeltaEvent",
    "OutputEvent",
    "RepeatEvent",
    "RunStatus",
    "StepFinishEvent",
    "SubagentEvent",
    "SuspendedEvent",
    "TextDeltaEvent",
    "ToolCallDeltaEvent",
    "ToolCallEvent",
    "ToolCallStartEvent",
    "ToolErrorEvent",
    "ToolProgressEvent",
    "ToolResultEvent",
]

RunStatus = Literal[
    "complete", "max_steps", "awaiting_approval", "suspended", "awaiting_client", "cancelled", "awaiting_background"
]
"""How a run ended: the model answered, `max_steps` ran out, or the run paused (`Agent.resume` continues it):
a call waits for approval, a tool suspended for data, a client tool's call waits for the caller's output, the
run was cancelled, or the model answered while background calls still run."""


class _Event:
    """JSON for every event: `to_dict` / `to_json` (payloads dumped as JSON, fail-closed; `agentkit.ui`)."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """This event as JSON-ready data (see `agentkit.ui.event_to_dict`)."""
        from .ui._serialize import event_to_dict

        return event_to_dict(self)  # type: ignore[arg-type]

    def to_json(self) -> str:
        """This event as compact JSON text (see `agentkit.ui.event_to_json`)."""
        from .ui._serialize import event_to_json

        return event_to_json(self)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class TextDeltaEvent(_Event):
    """A piece of the model's text in step `step`."""

    text: str
    step: int
    kind: Literal["text-delta"] = "text-delta"


@dataclass(frozen=True, slots=True)
class ToolCallStartEvent(_Event):
    """The model began a tool call; its arguments follow (as deltas, then `ToolCallEvent`)."""

    call_id: str | None
    tool_name: str
    index: int
    step: int
    kind: Literal["tool-call-start"] = "tool-call-start"


@dataclass(frozen=True, slots=True)
class ToolCallDeltaEvent(_Event):
    """A piece of a tool call's argument text, and the arguments so far, shaped by the transforms.

    `delta` is the new argument text, shaped by ``transform.input_delta``; `partial` is every argument
    received so far that already fits the tool's input schema (JSON data: a form filling in, see
    `Tool.partial_arguments`), shaped by ``transform.input_partial``. Each is ``None`` unless its transform
    exists, and the event is only sent for tools with at least one of them: a redacting ``input``
    transform cannot be applied to half a JSON text, so partial arguments are never shown by default.
    Nothing partial ever reaches the tool's function.
    """

    call_id: str | None
    tool_name: str
    index: int
    delta: Any
    step: int
    transform_error: str | None = None
    partial: Any = None
    kind: Literal["tool-call-delta"] = "tool-call-delta"


@dataclass(frozen=True, slots=True)
class ToolCallEvent(_Event):
    """A complete tool call; `input` is the arguments as shaped by ``transform.input``."""

    call_id: str
    tool_name: str
    input: Any
    step: int
    transform_error: str | None = None
    kind: Literal["tool-call"] = "tool-call"
    caller: str | None = None
    """Code mode: the id of the program's call (the code tool's) that made this call; None for the model's calls."""


@dataclass(frozen=True, slots=True)
class ToolResultEvent(_Event):
    """A tool call succeeded; `output` is the tool's result as shaped by ``transform.output``."""

    call_id: str
    tool_name: str
    output: Any
    step: int
    transform_error: str | None = None
    kind: Literal["tool-result"] = "tool-result"
    caller: str | None = None
    """Code mode: the id of the program's call (the code tool's) that made this call; None for the model's calls."""
    cache: Literal["hit", "miss"] | None = None
    """For a tool with ``cache=``: ``"hit"`` (the result came from its cache, or a concurrent identical call),
    ``"miss"`` (the tool ran); None for other tools (see `agentkit.cache`)."""


@dataclass(frozen=True, slots=True)
class ToolErrorEvent(_Event):
    """A tool call failed (or was denied); `error` is the message as shaped by ``transform.error``.

    `error_kind` is the `ToolResult.error_kind` (``invalid_arguments``, ``retry``, ``timeout``,
    ``denied``, ...); the model received the unshaped message as an error result.
    """

    call_id: str
    tool_name: str
    error: Any
    error_kind: str | None
    step: int
    transform_error: str | None = None
    kind: Literal["tool-error"] = "tool-error"
    caller: str | None = None
    """Code mode: the id of the program's call (the code tool's) that made this call; None for the model's calls."""


@dataclass(frozen=True, slots=True)
class ToolProgressEvent(_Event):
    """A value a running tool reported with `ToolContext.emit`, shaped by ``transform.progress``.

    For a tool whose input or output is redacted (an `input` / `output` transform) and that has no
    `progress` transform, `data` is ``None`` and `transform_error` says why: progress could quote the
    hidden values.
    """

    call_id: str | None
    tool_name: str
    data: Any
    transform_error: str | None = None
    kind: Literal["tool-progress"] = "tool-progress"
    caller: str | None = None
    """Code mode: the id of the program's call (the code tool's) that made this call; None for the model's calls."""


@dataclass(frozen=True, slots=True)
class ApprovalRequestedEvent(_Event):
    """A call waits for approval; the run stops after this step without calling it.

    `payload` is the arguments shaped by ``transform.approval`` (else ``transform.input``).
    Continue with `Agent.resume` / `Agent.resume_stream`.
    """

    call_id: str
    tool_name: str
    payload: Any
    step: int
    transform_error: str | None = None
    kind: Literal["approval-requested"] = "approval-requested"
    caller: str | None = None
    """Code mode: the id of the program's call (the code tool's) that made this call; None for the model's calls."""


@dataclass(frozen=True, slots=True)
class SuspendedEvent(_Event):
    """A running call suspended (`ToolContext.suspend`); the run stops after this step's other calls.

    `payload` is what the tool asked with, shaped by ``transform.suspension``; `schema` is the JSON Schema
    the answer must fit. Continue with ``Agent.resume(result, {call_id: data})``.
    """

    call_id: str
    tool_name: str
    payload: Any
    schema: Any
    step: int
    transform_error: str | None = None
    kind: Literal["tool-suspended"] = "tool-suspended"
    caller: str | None = None
    """Code mode: the id of the program's call (the code tool's) that made this call; None for the model's calls."""


@dataclass(frozen=True, slots=True)
class ClientToolCallEvent(_Event):
    """A call of a client tool: the caller runs it and resumes with its output.

    `input` is shaped by ``transform.input``; the run stops with status ``"awaiting_client"`` after this
    step's other calls.
    """

    call_id: str
    tool_name: str
    input: Any
    step: int
    transform_error: str | None = None
    output_schema: Any = None
    """The JSON Schema the caller's output must fit (``None``: any JSON value)."""
    kind: Literal["client-tool-call"] = "client-tool-call"
    caller: str | None = None
    """Code mode: the id of the program's call (the code tool's) that made this call; None for the model's calls."""


@dataclass(frozen=True, slots=True)
class BackgroundResultEvent(_Event):
    """A background call finished; its result joins the conversation before the next model turn.

    `output` (shaped by ``transform.output``) for a success, else `error` (shaped by ``transform.error``)
    with `error_kind`; `step` is the model turn it joins.
    """

    call_id: str
    tool_name: str
    output: Any
    error: Any
    error_kind: str | None
    step: int
    transform_error: str | None = None
    kind: Literal["background-result"] = "background-result"


@dataclass(frozen=True, slots=True)
class StepFinishEvent(_Event):
    """One model turn and its tool calls are done."""

    step: int
    finish_reason: str | None
    tool_calls: int
    usage: Usage
    kind: Literal["step-finish"] = "step-finish"


@dataclass(frozen=True, slots=True)
class FinishEvent(_Event):
    """The run ended. The full `RunResult` is on the stream (`AgentStream.result`) once iteration ends."""

    text: str
    status: RunStatus
    usage: Usage
    kind: Literal["finish"] = "finish"


@dataclass(frozen=True, slots=True)
class OutputDeltaEvent(_Event):
    """The structured answer so far, while it streams: what of it already fits the output schema.

    `partial` is JSON data (the fields received so far that are valid where they stand; for an output
    that is not an object, the value so far), sent whenever it grows; the validated value comes in
    `OutputEvent`. Only runs with an output type send it.
    """

    partial: Any
    step: int
    kind: Literal["output-delta"] = "output-delta"


@dataclass(frozen=True, slots=True)
class OutputEvent(_Event):
    """The run's answer, validated as its output type (after the output validators), just before `FinishEvent`."""

    output: Any
    step: int
    kind: Literal["output"] = "output"


@dataclass(frozen=True, slots=True)
class SubagentEvent(_Event):
    """An event of a subagent's own stream, forwarded while it runs as a tool.

    `tool_name` is the generated tool name (``"agent-writer"``), `agent_id` the subagent's `id`,
    `call_id` the parent's tool call running it; `event` is the subagent's event (possibly itself a
    `SubagentEvent`, for deeper nesting).
    """

    tool_name: str
    agent_id: str
    call_id: str | None
    event: AgentEvent
    kind: Literal["subagent"] = "subagent"


@dataclass(frozen=True, slots=True)
class RepeatEvent(_Event):
    """The model repeats itself: a call (or a whole turn) it made `count` times, with the same answer each time.

    `action` is what the run's `agentkit.repeats.RepeatPolicy` does: ``"warn"`` (the call runs) or
    ``"error"`` (the call gets a ``repeated`` error result instead of running). `scope` is ``"call"`` or
    ``"round"`` (the whole turn repeats the ones before it).
    """

    call_id: str
    tool_name: str
    count: int
    scope: str
    action: str
    step: int
    kind: Literal["repeat"] = "repeat"
    caller: str | None = None
    """Code mode: the id of the program's call (the code tool's) that made this call; None for the model's calls."""


AgentEvent = Union[
    TextDeltaEvent,
    ToolCallStartEvent,
    ToolCallDeltaEvent,
    ToolCallEvent,
    ToolResultEvent,
    ToolErrorEvent,
    ToolProgressEvent,
    ApprovalRequestedEvent,
    SuspendedEvent,
    ClientToolCallEvent,
    BackgroundResultEvent,
    StepFinishEvent,
    FinishEvent,
    OutputDeltaEvent,
    OutputEvent,
    SubagentEvent,
    RepeatEvent,
]
"""Any event `Agent.stream` yields."""
