"""An agent run as AG-UI events: validated ``ag_ui.core`` models, sent as server-sent events.

Needs the ``ui`` extra (``pip install 'agentkit-tools[ui]'``, which brings ``ag-ui-protocol``).

Mapping (AG-UI 1.0):

* the run: ``RUN_STARTED`` ... ``RUN_FINISHED`` (``result`` = the structured answer as JSON data for a
  run with an output type, else the final text; ``usage`` = one ``TokenUsage``; ``metadata.agentkit``:
  ``status`` and ``reason``, why the run ended in words), or ``RUN_ERROR`` (``code`` = the exception type);
* a model turn: ``STEP_STARTED`` / ``STEP_FINISHED`` named ``step-<n>``; ``STEP_FINISHED.metadata.agentkit``
  carries the finish reason, the number of tool calls and the step's usage;
* text: ``TEXT_MESSAGE_START`` / ``CONTENT`` / ``END``; one assistant message id per step, also the
  ``parentMessageId`` of the step's tool calls;
* a tool call: ``TOOL_CALL_START``, ``TOOL_CALL_ARGS`` (the deltas when an ``input_delta`` transform
  allows them, else the whole ``input``-shaped arguments as one JSON text), ``TOOL_CALL_END``, then
  ``TOOL_CALL_RESULT`` (the output as text, JSON for non-strings; for a failure the error text and
  ``metadata.agentkit = {"error": true, "errorKind": ...}``);
* approvals: the run ends with ``RUN_FINISHED`` whose outcome is ``interrupt``: one ``Interrupt`` per
  pending call (``reason: "tool_call"``, ``toolCallId`` = the call id, ``responseSchema``
  ``{approved: boolean, reason?: string}``, ``metadata.agentkit.payload`` shaped by the ``approval``
  transform). Its ``id`` is ``<pause key>:<call id>``, the pause key unguessable and made by the server
  for this pause: the paused run is stored under it (not under the client-chosen thread id), so only a
  client that received the interrupts can answer them. The next request on the same thread answers with
  ``resume`` entries;
* suspensions and client tools: ``Interrupt``s too (``reason: "input_required"`` / ``"client_tool"``,
  ``responseSchema`` = the suspension's schema / the tool's output schema); a resume entry's ``payload``
  is the data / the output;
* progress: ``CUSTOM`` named ``agentkit.tool_progress``; a background call's result: ``CUSTOM`` named
  ``agentkit.background_result``; a structured answer: ``CUSTOM`` named ``agentkit.output`` (``partial``
  while it streams, then ``output``); the model repeating itself (`RepeatEvent`): ``CUSTOM`` named
  ``agentkit.repeat``;
* subagents: ``SUBAGENT_STARTED`` (``parentToolCallId`` = the call running it), the subagent's own
  steps, texts and tool calls attributed with its ``subagentRunId``, then ``SUBAGENT_FINISHED``
  (``result`` = its answer) or ``SUBAGENT_ERROR``.

Inputs (``RunAgentInput``): ``messages`` become the history (user texts and images, assistant texts and
tool calls, tool results; system, developer, activity and reasoning messages are ignored: the agent's
instructions are its system prompt); ``resume`` entries decide the thread's pending calls (``resolved``
with ``{"approved": bool, "reason"?: str}``; ``cancelled`` denies). Following the protocol, a resume
must answer every open interrupt, and new input on a thread with open interrupts is refused
(``RUN_ERROR``, naming no interrupt: only the client that started the run knows them). ``editedArgs``
(approve with edits) is refused: agentkit runs the arguments the model sent, or nothing. Client-declared
``tools``, ``state``, ``context`` and ``forwardedProps`` are not used.
"""

from __future__ import annotations as _annotations

import json
import logging
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

try:
    from ag_ui.core import AssistantMessage as AGAssistantMessage
    from ag_ui.core import (
        BaseEvent,
        CustomEvent,
        Interrupt,
        RunAgentInput,
        RunErrorEvent,
        RunFinishedEvent,
        RunFinishedInterruptOutcome,
        RunFinishedSuccessOutcome,
        RunStartedEvent,
        StepFinishedEvent,
        StepStartedEvent,
        SubagentErrorEvent,
        SubagentFinishedEvent,
        SubagentStartedEvent,
        TextMessageContentEvent,
        TextMessageEndEvent,
        TextMessageStartEvent,
        TokenUsage,
        ToolCallArgsEvent,
        ToolCallEndEvent,
        ToolCallResultEvent,
    )
    from ag_ui.core import ImagePart as AGImagePart
    from ag_ui.core import TextPart as AGTextPart
    from ag_ui.core import ToolCallStartEvent as AGToolCallStartEvent
    from ag_ui.core import ToolMessage as AGToolMessage
    from ag_ui.core import UserMessage as AGUserMessage
    from ag_ui.encoder import EventEncoder
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("agentkit.ui.agui needs the AG-UI models: pip install 'agentkit-tools[ui]'") from exc
from pydantic import ValidationError
from pydantic_core import PydanticSerializationError
from typing_extensions import assert_never

from .._jsonish import is_mapping, is_object
from .._status import status_reason
from ..events import (
    AgentEvent,
    ApprovalRequestedEvent,
    BackgroundResultEvent,
    ClientToolCallEvent,
    FinishEvent,
    OutputDeltaEvent,
    OutputEvent,
    RepeatEvent,
    StepFinishEvent,
    SubagentEvent,
    SuspendedEvent,
    TextDeltaEvent,
    ToolCallDeltaEvent,
    ToolCallEvent,
    ToolCallStartEvent,
    ToolErrorEvent,
    ToolProgressEvent,
    ToolResultEvent,
)
from ..messages import (
    AssistantMessage,
    ContentPart,
    ImagePart,
    Message,
    TextPart,
    ToolCall,
    ToolResult,
    ToolResultsMessage,
    Usage,
    UserMessage,
)
from ._runs import ClientToolResult, RunInput, RunStore, UIInputError, new_id, start_stream
from ._serialize import ErrorText, display_text, jsonable, masked_error_text, shown

if TYPE_CHECKING:
    from ..agent import Agent, Approval
    from ..runs import RunSnapshot

__all__ = [
    "APPROVAL_SCHEMA",
    "IGNORED_EVENTS",
    "SSE_HEADERS",
    "agui_events",
    "agui_messages_to_history",
    "encode_event",
    "open_agui_stream",
    "parse_input",
]

logger = logging.getLogger("agentkit.ui")

SSE_HEADERS: Mapping[str, str] = {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    "x-accel-buffering": "no",
}
"""Response headers for an AG-UI event stream."""

IGNORED_EVENTS: Mapping[type[AgentEvent], str] = {}
"""The event kinds this adapter sends nothing for (none: each is mapped, see the module docstring)."""

APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"approved": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["approved"],
}
"""The ``responseSchema`` of an approval interrupt: what a ``resume`` entry's ``payload`` holds."""


def _agentkit(**values: Any) -> dict[str, Any]:
    """``{"agentkit": {...}}`` metadata without the unset keys (a withheld payload stays, as null)."""
    return {"agentkit": {k: v for k, v in values.items() if v is not None or k == "payload"}}


class _Scope:
    """One agent's events (the run's, or a subagent's, attributed by `subagent_run_id`)."""

    def __init__(self, subagent_run_id: str | None = None, interrupt_key: str | None = None) -> None:
        self.sub = subagent_run_id
        self.interrupt_key = interrupt_key
        self.step: int | None = None
        self.step_message: str | None = None
        self.text_open = False
        self.calls: dict[str, bool] = {}  # call id -> whether TOOL_CALL_ARGS were sent
        self.ended: set[str] = set()
        self.children: dict[str, _Scope] = {}
        self.open_children: set[str] = set()
        self.interrupts: list[Interrupt] = []
        self.last_message: str | None = None
        self.output: tuple[Any] | None = None  # the validated structured answer, once sent (JSON data)

    # ---- text and steps ----------------------------------------------------------------------

    def end_text(self) -> list[BaseEvent]:
        if not self.text_open or self.step_message is None:
            return []
        self.text_open = False
        return [TextMessageEndEvent(message_id=self.step_message, subagent_run_id=self.sub)]

    def enter_step(self, step: int) -> list[BaseEvent]:
        if self.step == step:
            return []
        out = self.end_step()
        self.step = step
        self.step_message = new_id("msg")
        out.append(StepStartedEvent(step_name=f"step-{step}", subagent_run_id=self.sub))
        return out

    def end_step(self, metadata: dict[str, Any] | None = None) -> list[BaseEvent]:
        if self.step is None:
            return []
        out = self.end_text()
        out.append(StepFinishedEvent(step_name=f"step-{self.step}", subagent_run_id=self.sub, metadata=metadata))
        self.step = None
        return out

    # ---- tool calls --------------------------------------------------------------------------

    def start_call(self, call_id: str, tool_name: str) -> list[BaseEvent]:
        if call_id in self.calls:
            return []
        self.calls[call_id] = False
        return [
            AGToolCallStartEvent(
                tool_call_id=call_id,
                tool_call_name=tool_name,
                parent_message_id=self.step_message,
                subagent_run_id=self.sub,
            )
        ]

    def end_call(self, event: ToolCallEvent) -> list[BaseEvent]:
        out = self.start_call(event.call_id, event.tool_name)
        metadata = None
        if not self.calls[event.call_id]:
            data, problem = shown(event.input, event.transform_error)
            arguments = json.dumps(data if isinstance(data, dict) else {}, ensure_ascii=False)
            metadata = _agentkit(transformError=problem) if problem is not None else None
            out.append(ToolCallArgsEvent(tool_call_id=event.call_id, delta=arguments, subagent_run_id=self.sub))
        self.ended.add(event.call_id)
        out.append(ToolCallEndEvent(tool_call_id=event.call_id, subagent_run_id=self.sub, metadata=metadata))
        return out

    def result(self, call_id: str, content: str, metadata: dict[str, Any] | None) -> list[BaseEvent]:
        self.last_message = new_id("msg")
        return [
            ToolCallResultEvent(
                message_id=self.last_message,
                tool_call_id=call_id,
                content=content,
                role="tool",
                subagent_run_id=self.sub,
                metadata=metadata,
            )
        ]

    # ---- events ------------------------------------------------------------------------------

    def translate(self, event: AgentEvent) -> list[BaseEvent]:  # noqa: C901 - one flat branch per event kind
        out: list[BaseEvent] = []
        if isinstance(event, TextDeltaEvent):
            out += self.enter_step(event.step)
            if not self.text_open and self.step_message is not None:
                self.text_open = True
                self.last_message = self.step_message
                out.append(
                    TextMessageStartEvent(message_id=self.step_message, role="assistant", subagent_run_id=self.sub)
                )
            if self.step_message is not None:
                out.append(
                    TextMessageContentEvent(message_id=self.step_message, delta=event.text, subagent_run_id=self.sub)
                )
        elif isinstance(event, ToolCallStartEvent):
            out += self.enter_step(event.step) + self.end_text()
            if event.call_id is not None:
                out += self.start_call(event.call_id, event.tool_name)
        elif isinstance(event, ToolCallDeltaEvent):
            if event.call_id is not None and event.transform_error is None and event.delta is not None:
                out += self.enter_step(event.step) + self.start_call(event.call_id, event.tool_name)
                self.calls[event.call_id] = True
                delta = display_text(event.delta)
                out.append(ToolCallArgsEvent(tool_call_id=event.call_id, delta=delta, subagent_run_id=self.sub))
        elif isinstance(event, ToolCallEvent):
            out += self.enter_step(event.step) + self.end_text() + self.end_call(event)
        elif isinstance(event, ToolResultEvent):
            out += self.enter_step(event.step) + self.finish_child(event.call_id, None)
            data, problem = shown(event.output, event.transform_error)
            content = display_text(data, f"Output withheld: {problem}.")
            out += self.result(event.call_id, content, _agentkit(transformError=problem) if problem else None)
        elif isinstance(event, ToolErrorEvent):
            data, problem = shown(event.error, event.transform_error)
            text = display_text(data, f"Error withheld: {problem}.")
            out += self.enter_step(event.step) + self.finish_child(event.call_id, text)
            meta = _agentkit(error=True, errorKind=event.error_kind, transformError=problem)
            out += self.result(event.call_id, text, meta)
        elif isinstance(event, ApprovalRequestedEvent):
            self.interrupts.append(_interrupt(event, self.interrupt_key))
        elif isinstance(event, (SuspendedEvent, ClientToolCallEvent)):
            self.interrupts.append(_input_interrupt(event, self.interrupt_key))
        elif isinstance(event, ToolProgressEvent):
            data, problem = jsonable(event.data)
            value = {"toolCallId": event.call_id, "toolName": event.tool_name, "data": data}
            if problem is not None:
                value["serializeError"] = problem
            out.append(CustomEvent(name="agentkit.tool_progress", value=value, subagent_run_id=self.sub))
        elif isinstance(event, StepFinishEvent):
            if self.step != event.step:
                out += self.enter_step(event.step)
            usage, _ = jsonable(event.usage)
            meta = _agentkit(finishReason=event.finish_reason, toolCalls=event.tool_calls, usage=usage)
            out += self.end_step(meta)
        elif isinstance(event, SubagentEvent):
            out += self.subagent(event)
        elif isinstance(event, FinishEvent):  # a subagent's end (the run's own is handled by agui_events)
            out += self.end_step()
        elif isinstance(event, BackgroundResultEvent):
            out.append(
                CustomEvent(name="agentkit.background_result", value=_background(event), subagent_run_id=self.sub)
            )
        elif isinstance(event, RepeatEvent):
            repeat = {"toolCallId": event.call_id, "toolName": event.tool_name, "count": event.count}
            repeat.update(scope=event.scope, action=event.action)
            out.append(CustomEvent(name="agentkit.repeat", value=repeat, subagent_run_id=self.sub))
        elif isinstance(event, (OutputDeltaEvent, OutputEvent)):  # pyright: ignore[reportUnnecessaryIsInstance]  # the last kinds: assert_never checks the chain is whole
            if isinstance(event, OutputDeltaEvent):  # in output-tool mode it is the step's only event
                out += self.enter_step(event.step)
            value = _output(event)
            if "output" in value and "serializeError" not in value:
                self.output = (value["output"],)
            out.append(CustomEvent(name="agentkit.output", value=value, subagent_run_id=self.sub))
        else:
            assert_never(event)
        return out

    def subagent(self, event: SubagentEvent) -> list[BaseEvent]:
        key = event.call_id or event.tool_name
        out: list[BaseEvent] = []
        child = self.children.get(key)
        if child is None:
            child = self.children[key] = _Scope(new_id("sub"))
            self.open_children.add(key)
            assert child.sub is not None
            out.append(
                SubagentStartedEvent(
                    subagent_run_id=child.sub,
                    name=event.agent_id,
                    parent_tool_call_id=event.call_id,
                    parent_subagent_run_id=self.sub,
                    parent_message_id=self.step_message,
                )
            )
        out += child.translate(event.event)
        if isinstance(event.event, FinishEvent) and key in self.open_children:
            self.open_children.discard(key)
            assert child.sub is not None
            out.append(SubagentFinishedEvent(subagent_run_id=child.sub, result=event.event.text or None))
        return out

    def finish_child(self, call_id: str, error: str | None) -> list[BaseEvent]:
        """Close a subagent still open when its call ends (it failed before finishing its own run)."""
        if call_id not in self.open_children:
            return []
        self.open_children.discard(call_id)
        child = self.children[call_id]
        assert child.sub is not None
        out = child.end_step()
        if error is not None:
            out.append(SubagentErrorEvent(subagent_run_id=child.sub, message=error))
        else:
            out.append(SubagentFinishedEvent(subagent_run_id=child.sub))
        return out


def _background(event: BackgroundResultEvent) -> dict[str, Any]:
    """A background call's result (the call's own TOOL_CALL_RESULT said it started)."""
    if event.error_kind is None:
        data, problem = shown(event.output, event.transform_error)
        value: dict[str, Any] = {"output": data}
    else:
        text, problem = shown(event.error, event.transform_error)
        value = {"error": display_text(text, f"Error withheld: {problem}."), "errorKind": event.error_kind}
    value.update(toolCallId=event.call_id, toolName=event.tool_name, step=event.step)
    if problem is not None:
        value["transformError"] = problem
    return value


def _output(event: OutputDeltaEvent | OutputEvent) -> dict[str, Any]:
    """The structured answer so far (``partial``) or validated (``output``)."""
    final = isinstance(event, OutputEvent)
    data, problem = jsonable(event.output if isinstance(event, OutputEvent) else event.partial)
    value: dict[str, Any] = {"output" if final else "partial": data, "step": event.step}
    if problem is not None:
        value["serializeError"] = problem
    return value


def _interrupt_id(key: str | None, call_id: str) -> str:
    return call_id if key is None else f"{key}:{call_id}"


def _interrupt(event: ApprovalRequestedEvent, key: str | None) -> Interrupt:
    data, problem = shown(event.payload, event.transform_error)
    return Interrupt(
        id=_interrupt_id(key, event.call_id),
        reason="tool_call",
        message=f"Approve the call to {event.tool_name!r}?",
        tool_call_id=event.call_id,
        response_schema=APPROVAL_SCHEMA,
        metadata=_agentkit(toolName=event.tool_name, payload=data, transformError=problem),
    )


def _input_interrupt(event: SuspendedEvent | ClientToolCallEvent, key: str | None) -> Interrupt:
    """A suspension (the tool's question and schema) or a client tool's call (its input and output schema)."""
    if isinstance(event, SuspendedEvent):
        data, problem = shown(event.payload, event.transform_error)
        schema, reason, message = event.schema, "input_required", f"The call to {event.tool_name!r} asks for input."
        kind = "suspension"
    else:
        data, problem = shown(event.input, event.transform_error)
        schema, reason, message = event.output_schema, "client_tool", f"Run {event.tool_name!r} and send its output."
        kind = "client"
    return Interrupt(
        id=_interrupt_id(key, event.call_id),
        reason=reason,
        message=message,
        tool_call_id=event.call_id,
        response_schema=schema if is_object(schema) else None,
        metadata=_agentkit(toolName=event.tool_name, kind=kind, payload=data, transformError=problem),
    )


def _usage(event: FinishEvent, before: Usage | None) -> list[TokenUsage]:
    """This run's tokens: a resumed run reports only its own calls, not the interrupted run's (AG-UI 1.0)."""
    usage = event.usage
    input_tokens = usage.input_tokens - (before.input_tokens if before is not None else 0)
    output_tokens = usage.output_tokens - (before.output_tokens if before is not None else 0)
    return [
        TokenUsage(input_tokens=input_tokens, output_tokens=output_tokens, total_tokens=input_tokens + output_tokens)
    ]


async def agui_events(
    events: AsyncIterable[AgentEvent],
    *,
    thread_id: str,
    run_id: str,
    on_finish: Callable[[str | None], Awaitable[None]] | None = None,
    on_error: ErrorText | None = None,
    usage_before: Usage | None = None,
    interrupt_key: str | None = None,
) -> AsyncIterator[BaseEvent]:
    """The AG-UI events for a run's events (see the module docstring for the mapping).

    Args:
        events: an `AgentStream` (or any async iterable of agentkit events).
        thread_id: the conversation (``RunAgentInput.threadId``).
        run_id: this run (``RunAgentInput.runId``).
        on_finish: awaited after the run's last event, before ``RUN_FINISHED``, with the id of the last
            message sent (to record the history under it), e.g. to store a paused run first.
        on_error: the ``RUN_ERROR`` message for an exception (default: its type only); it is logged in full.
        usage_before: for a resumed run, the paused run's usage (``RUN_FINISHED.usage`` counts this run only).
        interrupt_key: when set, each interrupt's ``id`` is ``<interrupt_key>:<call id>`` (`open_agui_stream`
            passes the unguessable key it stores the paused run under); else the call id.
    """
    scope = _Scope(interrupt_key=interrupt_key)
    yield RunStartedEvent(thread_id=thread_id, run_id=run_id)
    finish: FinishEvent | None = None
    try:
        async for event in events:
            if isinstance(event, FinishEvent):
                finish = event
                continue
            for item in scope.translate(event):
                yield item
        if on_finish is not None:
            await on_finish(scope.last_message)
    except UIInputError as exc:  # the request lost a race (another request resumed the run): said as it is
        yield RunErrorEvent(message=exc.message, code="invalid_input")
        return
    except Exception as exc:  # reported as RUN_ERROR, logged in full
        logger.exception("agent run failed while streaming AG-UI run %s", run_id)
        yield RunErrorEvent(message=(on_error or masked_error_text)(exc), code=type(exc).__name__)
        return
    for item in scope.end_step():
        yield item
    if finish is None:
        yield RunFinishedEvent(thread_id=thread_id, run_id=run_id)
        return
    outcome: RunFinishedInterruptOutcome | RunFinishedSuccessOutcome = (
        RunFinishedInterruptOutcome(interrupts=scope.interrupts) if scope.interrupts else RunFinishedSuccessOutcome()
    )
    yield RunFinishedEvent(
        thread_id=thread_id,
        run_id=run_id,
        result=scope.output[0] if scope.output is not None else finish.text or None,
        outcome=outcome,
        usage=_usage(finish, usage_before),
        metadata=_agentkit(status=finish.status, reason=status_reason(finish.status)),
    )


# ---- inputs --------------------------------------------------------------------------------------


def _user(message: AGUserMessage) -> UserMessage:
    if isinstance(message.content, str):
        return UserMessage(message.content)
    parts: list[ContentPart] = []
    for part in message.content:
        if isinstance(part, AGTextPart):
            parts.append(TextPart(part.text))
        elif isinstance(part, AGImagePart):
            source = part.source
            if source.type == "url":
                parts.append(ImagePart(url=source.value, media_type=source.mime_type or "image/png"))
            elif source.type == "data":
                parts.append(
                    ImagePart(url=f"data:{source.mime_type};base64,{source.value}", media_type=source.mime_type)
                )
            else:
                raise UIInputError(f"message {message.id!r}: image source {source.type!r} is not supported", 422)
        else:
            raise UIInputError(f"message {message.id!r}: {part.type!r} parts are not supported (text and images)", 422)
    return UserMessage(parts)


def agui_messages_to_history(messages: Sequence[Any]) -> list[Message]:
    """AG-UI messages as neutral messages (tool messages grouped after the assistant turn they answer)."""
    history: list[Message] = []
    names: dict[str, str] = {}
    for message in messages:
        if isinstance(message, AGUserMessage):
            history.append(_user(message))
        elif isinstance(message, AGAssistantMessage):
            calls = [ToolCall(c.id, c.function.name, c.function.arguments or "{}") for c in message.tool_calls or []]
            names.update((c.id, c.name) for c in calls)
            history.append(AssistantMessage(text=message.content or "", tool_calls=calls))
        elif isinstance(message, AGToolMessage):
            content = (
                message.content
                if isinstance(message.content, str)
                else json.dumps([p.model_dump(by_alias=True) for p in message.content])
            )
            name = names.get(message.tool_call_id, "")
            error = message.error is not None
            result = ToolResult(
                message.tool_call_id,
                name,
                (TextPart(message.error or content),),
                None,
                error,
                "tool_error" if error else None,
            )
            last = history[-1] if history else None
            if isinstance(last, ToolResultsMessage):
                last.results.append(result)
            else:
                history.append(ToolResultsMessage([result]))
    return history


def _decision(entry: Any) -> Approval:
    from ..agent import Approval
    from ..exceptions import ApprovalError
    from ..runs._answers import decision

    if entry.status == "cancelled":
        return Approval(False, "The user dismissed the approval request.")
    payload = entry.payload
    if not is_mapping(payload):
        raise UIInputError(
            f'resume entry {entry.interrupt_id!r}: payload must be {{"approved": true|false}} (responseSchema)', 422
        )
    if "editedArgs" in payload:
        raise UIInputError(
            f"resume entry {entry.interrupt_id!r}: editedArgs is not supported: approve or deny the call as proposed",
            422,
        )
    try:
        return decision(entry.interrupt_id, payload.get("approved"), payload.get("reason"))
    except ApprovalError as exc:
        raise UIInputError(
            f'resume entry {entry.interrupt_id!r}: payload must be {{"approved": true|false}} ({exc})', 422
        ) from None


def _answers(paused: RunSnapshot, entries: Sequence[Any], run_input: RunInput) -> None:
    """Resume entries as the answers their interrupts' kinds take (approvals, data, client outputs)."""
    kinds = {p.call_id: p.kind for p in paused.pending}
    for entry in entries:
        call_id = _call_of(entry.interrupt_id)
        kind = kinds.get(call_id, "approval")
        if kind == "approval":
            run_input.approvals[call_id] = _decision(entry)
        elif entry.status == "cancelled":
            raise UIInputError(
                f"resume entry {entry.interrupt_id!r} is cancelled, but the call needs an answer (see its "
                "responseSchema); send a new message instead to move on",
                422,
            )
        elif kind == "client":
            run_input.client_results[call_id] = ClientToolResult(call_id, None, entry.payload)
        else:
            run_input.data[call_id] = entry.payload


def _call_of(interrupt_id: str) -> str:
    return interrupt_id.split(":", 1)[1] if ":" in interrupt_id else interrupt_id


def _thread_key(thread_id: str) -> str:
    """Where a thread's open interrupts are marked (so new input on it is refused), never how they are answered."""
    return f"ag-ui-thread:{thread_id}"


def _pause_key(thread_id: str, key: str) -> str:
    """Where a paused run waits: its thread and the server-made key its interrupt ids carry."""
    return f"ag-ui:{thread_id}:{key}"


def _resume_key(thread_id: str, entries: Sequence[Any]) -> str:
    keys = {e.interrupt_id.split(":", 1)[0] for e in entries if ":" in e.interrupt_id}
    if len(keys) != 1 or any(":" not in e.interrupt_id for e in entries):
        raise UIInputError(
            f"the resume entries answer no paused run of thread {thread_id!r}: answer the interrupts of one "
            "RUN_FINISHED, by the ids it gave",
            409,
        )
    return _pause_key(thread_id, keys.pop())


def parse_input(body: Any) -> tuple[RunAgentInput, RunInput]:
    """A ``RunAgentInput`` body, validated, and its `RunInput`.

    Raises:
        UIInputError: the body is not a valid ``RunAgentInput``, or a resume entry cannot be used.
    """
    try:
        request = RunAgentInput.model_validate(body)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:5])
        raise UIInputError(f"the body is not a valid AG-UI RunAgentInput: {problems}") from None
    if request.resume:
        entries = list(request.resume)
        key = _resume_key(request.thread_id, entries)
        run_input = RunInput(
            thread_id=request.thread_id, resume_run_id=key, also_take=(_thread_key(request.thread_id),)
        )
        run_input.settle = lambda paused: _answers(paused, entries, run_input)
        return request, run_input
    messages = list(request.messages)
    anchor: str | None = None
    tail_start = 0
    for position in range(len(messages) - 1, -1, -1):
        if not isinstance(messages[position], AGUserMessage):
            anchor, tail_start = messages[position].id, position + 1
            break
    history = agui_messages_to_history(messages)
    tail = agui_messages_to_history(messages[tail_start:]) if anchor is not None else []
    return request, RunInput(thread_id=request.thread_id, messages=history, anchor_id=anchor, tail=tail)


async def _refuse_if_pending(store: RunStore, thread_id: str) -> None:
    if await store.paused(_thread_key(thread_id)) is not None:
        # no interrupt id is named: whoever asks may not be the client that started the run
        raise UIInputError(
            f"thread {thread_id!r} has a run waiting for answers to its interrupts: answer them with 'resume' "
            "(the client that started it has their ids), then send new input",
            409,
        )


async def open_agui_stream(
    agent: Agent[Any, Any],
    body: Any,
    *,
    store: RunStore,
    on_error: ErrorText | None = None,
    **run_options: Any,
) -> AsyncIterator[str]:
    """Answer one AG-UI request body with its server-sent events (problems become ``RUN_ERROR``).

    A run that pauses for approval is stored under its thread; a finished run's history is stored under
    the last message id sent, so the next input on the thread continues from the exact history.
    """
    thread_id = _text_field(body, "threadId")
    run_id = _text_field(body, "runId")
    try:
        request, run_input = parse_input(body)
        thread_id, run_id = request.thread_id, request.run_id
        if not run_input.is_resume:
            await _refuse_if_pending(store, thread_id)
        stream = await start_stream(agent, run_input, store, **run_options)
    except UIInputError as exc:
        yield encode_event(RunStartedEvent(thread_id=thread_id, run_id=run_id))
        yield encode_event(RunErrorEvent(message=exc.message, code="invalid_input"))
        return
    key = new_id("pause")  # where this run waits if it pauses: only its interrupts' ids carry it

    async def on_finish(last_message: str | None) -> None:
        result = stream.result
        if result.paused:
            snapshot = result.snapshot()
            await store.save_paused(_pause_key(thread_id, key), snapshot)
            await store.save_paused(_thread_key(thread_id), snapshot)
        elif last_message is not None:
            await store.save_history(last_message, result.messages)

    before = run_input.resumed.usage if run_input.resumed is not None else None
    events = agui_events(
        stream,
        thread_id=thread_id,
        run_id=run_id,
        on_finish=on_finish,
        on_error=on_error,
        usage_before=before,
        interrupt_key=key,
    )
    async for event in events:
        yield encode_event(event)


def encode_event(event: BaseEvent) -> str:
    """One AG-UI event as a server-sent event (``EventEncoder``'s form), always encodable as UTF-8."""
    try:
        return _ENCODER.encode(event)
    except PydanticSerializationError:  # a lone surrogate ("\ud800") in some text: JSON's escape keeps it
        data = event.model_dump(mode="json", by_alias=True)
        return f"data: {json.dumps(data, ensure_ascii=True, separators=(',', ':'))}\n\n"


_ENCODER = EventEncoder()


def _text_field(body: Any, name: str) -> str:
    """A text field of a body that may not be valid (for the RUN_STARTED before its RUN_ERROR)."""
    value = body.get(name) if is_mapping(body) else None
    return value if isinstance(value, str) else ""
