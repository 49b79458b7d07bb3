r"""An agent run as the Vercel AI SDK's UI message stream: what ``useChat`` (``ai`` v5 to v7) consumes.

```python
message_id = "msg_1"  # the assistant message's id; a resume continues it
async for chunk in ui_message_chunks(agent.stream("Refund order 42"), message_id=message_id):
    send(to_sse(chunk))        # 'data: {"type":"text-delta",...}\n\n'
send(DONE)
```

Mapping (each agentkit event -> chunks of the ``ai`` package's ``uiMessageChunkSchema``):

* the response: ``start`` (``messageId``) ... ``finish`` (``finishReason``; ``messageMetadata.agentkit``
  carries the run's ``status``, the ``reason`` it ended in words, its usage and cost);
* a model turn: ``start-step`` ... ``finish-step``, and a ``data-agentkit-step`` part (step, finish
  reason, tool calls, usage) at its end;
* text: ``text-start`` / ``text-delta`` / ``text-end``;
* a tool call: ``tool-input-start``, ``tool-input-delta`` (only when an ``input_delta`` transform exists:
  agentkit never shows raw partial arguments), ``tool-input-available`` (``input`` shaped by the
  ``input`` transform);
* its outcome: ``tool-output-available``, ``tool-output-error`` (``errorText``), ``tool-output-denied``;
* an approval: ``tool-approval-request`` (``approvalId`` = the call id, ``approvalDescriptor.payload``
  shaped by the ``approval`` transform); the response then finishes with ``finishReason: "tool-calls"``.
  The turn's calls that need no approval wait with it (agentkit runs a turn's calls together): each gets
  an automatic approval (``tool-approval-request`` with ``isAutomatic: true``, then ``tool-approval-response``),
  so ``lastAssistantMessageIsCompleteWithApprovalResponses`` sends the decisions back once the user has
  decided the others (such parts are not decisions: the server ignores them);
* progress (`ToolContext.emit`): a ``data-agentkit-progress`` part per call, updated in place;
* a suspension: a ``data-agentkit-suspension`` part (its question shaped by the ``suspension`` transform);
* a background call's result: a ``data-agentkit-background`` part per call;
* the model repeating itself (`RepeatEvent`): a ``data-agentkit-repeat`` part per call;
* a structured answer: a ``data-agentkit-output`` part, updated in place (``partial`` while it streams,
  then ``output``), in every output mode (in ``tool`` mode the output tool's call is not shown as a call);
* not sent (`IGNORED_EVENTS`): a client tool's call (its ``tool-input-available`` already asks the UI to run
  it), and the run's end, which is ``finish``;
* a subagent's events: *preliminary* outputs of the call running it (``preliminary: true``), each a
  summary ``{"agentkit": "subagent", "agentId", "text", "toolCalls": [...]}``; the call's final output
  replaces it. Subagent text joins the summary at the subagent's next event (not per token);
* a failure: ``error`` (``errorText`` from `on_error`; by default only the exception's type).

A payload whose transform failed (or that cannot be serialized) is ``null`` with
``toolMetadata.agentkit.transformError`` saying which failed; an error text is replaced by that notice.
"""

from __future__ import annotations as _annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from typing_extensions import TypeIs, assert_never

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
from ..exceptions import UIInputError
from ._serialize import ErrorText, display_text, jsonable, masked_error_text, shown
from ._vercel_input import parse_request

if TYPE_CHECKING:
    from ..agent import Agent, AgentStream
    from ._runs import RunStore

__all__ = [
    "DONE",
    "IGNORED_EVENTS",
    "UI_MESSAGE_STREAM_HEADERS",
    "open_ui_message_stream",
    "parse_request",
    "to_sse",
    "ui_message_chunks",
]

logger = logging.getLogger("agentkit.ui")

UI_MESSAGE_STREAM_HEADERS: Mapping[str, str] = {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    "connection": "keep-alive",
    "x-vercel-ai-ui-message-stream": "v1",
    "x-accel-buffering": "no",
}
"""The response headers the ``ai`` package sends with a UI message stream (``UI_MESSAGE_STREAM_HEADERS``)."""

DONE = "data: [DONE]\n\n"
"""The last server-sent event of a UI message stream."""

IGNORED_EVENTS: Mapping[type[AgentEvent], str] = {
    ClientToolCallEvent: "its tool-input-available part already asks the UI to run the call (onToolCall)",
    FinishEvent: "the run's end is the finish chunk (a subagent's end updates its call's summary)",
}
"""The event kinds that send no chunk of their own, and why; every other kind is mapped."""

_FINISH_REASONS = {
    "complete": "stop",
    "awaiting_approval": "tool-calls",
    "awaiting_client": "tool-calls",
    "max_steps": "other",
}

Chunk = dict[str, Any]


def to_sse(chunk: Chunk) -> str:
    """One chunk as a server-sent event: ``data: <json>`` and a blank line (always encodable as UTF-8)."""
    text = json.dumps(chunk, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    try:
        text.encode()
    except UnicodeEncodeError:  # a lone surrogate ("\ud800") in some text: JSON's escape keeps it, UTF-8 cannot
        text = json.dumps(chunk, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    return f"data: {text}\n\n"


@dataclass
class _SubagentView:
    """What a UI is shown of a running subagent, rebuilt from its forwarded events."""

    agent_id: str
    text: str = ""
    calls: dict[str, dict[str, Any]] = field(default_factory=lambda: {})
    children: dict[str, _SubagentView] = field(default_factory=lambda: {})
    status: str | None = None

    def apply(self, event: AgentEvent) -> bool | None:
        """Fold one event in: True to send the change now, False to send it later (text), None: no change.

        A summary shows the subagent's text, calls, outcomes and status; the other kinds change nothing in it.
        """
        if isinstance(event, TextDeltaEvent):
            self.text += event.text
            return False
        if isinstance(event, ToolCallEvent):
            self.calls[event.call_id] = _call_entry(event.tool_name, event.call_id, event.input, event.transform_error)
        elif isinstance(event, ToolResultEvent):
            entry = self._entry(event.call_id, event.tool_name)
            entry.update(state="output-available", output=_value(event.output, event.transform_error))
        elif isinstance(event, ToolErrorEvent):
            entry = self._entry(event.call_id, event.tool_name)
            entry.update(state="output-error", errorText=_error_text(event))
        elif isinstance(event, ApprovalRequestedEvent):
            self._entry(event.call_id, event.tool_name)["state"] = "approval-requested"
        elif isinstance(event, SubagentEvent):
            key = event.call_id or event.tool_name
            child = self.children.setdefault(key, _SubagentView(event.agent_id))
            child.apply(event.event)
            self._entry(key, event.tool_name)["subagent"] = child.summary()
        elif isinstance(event, FinishEvent):
            self.status = event.status
            self.text = event.text or self.text
        elif isinstance(  # pyright: ignore[reportUnnecessaryIsInstance]  # the last kinds: assert_never checks the chain is whole
            event,
            (
                ToolCallStartEvent,
                ToolCallDeltaEvent,
                ToolProgressEvent,
                SuspendedEvent,
                ClientToolCallEvent,
                BackgroundResultEvent,
                StepFinishEvent,
                OutputDeltaEvent,
                OutputEvent,
                RepeatEvent,
            ),
        ):
            return None  # starts, deltas, progress, pauses and step ends change nothing shown in a summary
        else:
            assert_never(event)
        return True

    def _entry(self, call_id: str, tool_name: str) -> dict[str, Any]:
        if call_id not in self.calls:
            self.calls[call_id] = _call_entry(tool_name, call_id, None, None)
        return self.calls[call_id]

    def summary(self) -> dict[str, Any]:
        """The preliminary output a UI shows for the call running this subagent."""
        return {
            "agentkit": "subagent",
            "agentId": self.agent_id,
            "text": self.text,
            "toolCalls": list(self.calls.values()),
            "status": self.status,
        }


def _call_entry(tool_name: str, call_id: str, value: Any, transform_error: str | None) -> dict[str, Any]:
    return {
        "toolCallId": call_id,
        "toolName": tool_name,
        "state": "input-available",
        "input": _value(value, transform_error),
    }


def _value(value: Any, transform_error: str | None) -> Any:
    data, _ = shown(value, transform_error)
    return data


def _error_text(event: ToolErrorEvent) -> str:
    data, problem = shown(event.error, event.transform_error)
    if problem is not None:
        return f"Error withheld: {problem}."
    return display_text(data)


def _metadata(problem: str | None) -> dict[str, Any]:
    return {"toolMetadata": {"agentkit": {"transformError": problem}}} if problem is not None else {}


def _background(event: BackgroundResultEvent) -> Chunk:
    """A background call's result, as a data part of its own (the call's part already holds "started")."""
    if event.error_kind is None:
        data, problem = shown(event.output, event.transform_error)
        outcome: dict[str, Any] = {"output": data}
    else:
        text, problem = shown(event.error, event.transform_error)
        shown_text = f"Error withheld: {problem}." if problem is not None else display_text(text)
        outcome = {"errorText": shown_text, "errorKind": event.error_kind}
    result = {"toolCallId": event.call_id, "toolName": event.tool_name, "step": event.step, **outcome}
    if problem is not None:
        result["transformError"] = problem
    return {"type": "data-agentkit-background", "id": f"background_{event.call_id}", "data": result}


def _output(event: OutputDeltaEvent | OutputEvent) -> Chunk:
    """The structured answer so far (``partial``) or validated (``output``): one data part, updated in place."""
    final = isinstance(event, OutputEvent)
    data, problem = jsonable(event.output if isinstance(event, OutputEvent) else event.partial)
    answer: dict[str, Any] = {"output" if final else "partial": data, "step": event.step}
    if problem is not None:
        answer["serializeError"] = problem
    return {"type": "data-agentkit-output", "id": "output", "data": answer}


class _Translator:
    """Turns one run's events into UI message chunks, keeping the open text part, steps and calls."""

    def __init__(self, message_id: str) -> None:
        self.message_id = message_id
        self.text_id: str | None = None
        self.texts = 0
        self.step: int | None = None
        self.announced: set[str] = set()
        self.subagents: dict[str, _SubagentView] = {}
        self.dirty: set[str] = set()
        self.step_calls: list[str] = []  # this step's calls (ToolCallEvent), in order
        self.step_approvals: set[str] = set()  # ... those that wait for approval
        self.step_outcomes: set[str] = set()  # ... those that have a result or an error

    def end_text(self) -> list[Chunk]:
        if self.text_id is None:
            return []
        chunk = {"type": "text-end", "id": self.text_id}
        self.text_id = None
        return [chunk]

    def enter_step(self, step: int) -> list[Chunk]:
        if self.step == step:
            return []
        out = self.end_text()
        if self.step is not None:
            out.append({"type": "finish-step"})
        self.step = step
        self.step_calls, self.step_approvals, self.step_outcomes = [], set(), set()
        out.append({"type": "start-step"})
        return out

    def announce(self, call_id: str, tool_name: str) -> list[Chunk]:
        if call_id in self.announced:
            return []
        self.announced.add(call_id)
        return [{"type": "tool-input-start", "toolCallId": call_id, "toolName": tool_name}]

    def flush_subagents(self) -> list[Chunk]:
        out = [
            {
                "type": "tool-output-available",
                "toolCallId": call_id,
                "output": self.subagents[call_id].summary(),
                "preliminary": True,
            }
            for call_id in sorted(self.dirty)
        ]
        self.dirty.clear()
        return out

    def translate(self, event: AgentEvent) -> list[Chunk]:  # noqa: C901 - one flat branch per event kind
        if isinstance(event, SubagentEvent):
            return self.subagent(event)
        out = self.flush_subagents()
        if isinstance(event, TextDeltaEvent):
            out += self.enter_step(event.step)
            if self.text_id is None:
                self.texts += 1
                self.text_id = f"text_{self.texts}"
                out.append({"type": "text-start", "id": self.text_id})
            out.append({"type": "text-delta", "id": self.text_id, "delta": event.text})
        elif isinstance(event, ToolCallStartEvent):
            out += self.enter_step(event.step) + self.end_text()
            if event.call_id is not None:  # without an id the call is announced with its complete input
                out += self.announce(event.call_id, event.tool_name)
        elif isinstance(event, ToolCallDeltaEvent):
            if event.call_id is not None and event.transform_error is None and event.delta is not None:
                out += self.enter_step(event.step) + self.announce(event.call_id, event.tool_name)
                delta = display_text(event.delta)
                out.append({"type": "tool-input-delta", "toolCallId": event.call_id, "inputTextDelta": delta})
        elif isinstance(event, ToolCallEvent):
            out += self.enter_step(event.step) + self.end_text() + self.announce(event.call_id, event.tool_name)
            self.step_calls.append(event.call_id)
            data, problem = shown(event.input, event.transform_error)
            out.append(
                {
                    "type": "tool-input-available",
                    "toolCallId": event.call_id,
                    "toolName": event.tool_name,
                    "input": data,
                    **_metadata(problem),
                }
            )
        elif isinstance(event, ToolResultEvent):
            self.step_outcomes.add(event.call_id)
            data, problem = shown(event.output, event.transform_error)
            out.append({"type": "tool-output-available", "toolCallId": event.call_id, "output": data})
            out[-1].update(_metadata(problem))
        elif isinstance(event, ToolErrorEvent):
            self.step_outcomes.add(event.call_id)
            if event.error_kind == "denied":
                out.append({"type": "tool-output-denied", "toolCallId": event.call_id})
            else:
                out.append({"type": "tool-output-error", "toolCallId": event.call_id, "errorText": _error_text(event)})
        elif isinstance(event, ApprovalRequestedEvent):
            self.step_approvals.add(event.call_id)
            data, problem = shown(event.payload, event.transform_error)
            descriptor: dict[str, Any] = {"payload": data}
            if problem is not None:
                descriptor["transformError"] = problem
            out.append(
                {
                    "type": "tool-approval-request",
                    "approvalId": event.call_id,
                    "toolCallId": event.call_id,
                    "approvalDescriptor": descriptor,
                }
            )
        elif isinstance(event, SuspendedEvent):
            data, problem = shown(event.payload, event.transform_error)
            asked = {"toolCallId": event.call_id, "toolName": event.tool_name, "payload": data, "schema": event.schema}
            if problem is not None:
                asked["transformError"] = problem
            out.append({"type": "data-agentkit-suspension", "id": f"suspension_{event.call_id}", "data": asked})
        elif isinstance(event, ToolProgressEvent):
            data, problem = jsonable(event.data)
            progress = {"toolCallId": event.call_id, "toolName": event.tool_name, "data": data}
            if problem is not None:
                progress["serializeError"] = problem
            out.append({"type": "data-agentkit-progress", "id": f"progress_{event.call_id}", "data": progress})
        elif isinstance(event, BackgroundResultEvent):
            out.append(_background(event))
        elif isinstance(event, RepeatEvent):
            repeat = {"toolCallId": event.call_id, "toolName": event.tool_name, "count": event.count}
            repeat.update(scope=event.scope, action=event.action)
            out.append({"type": "data-agentkit-repeat", "id": f"repeat_{event.call_id}", "data": repeat})
        elif isinstance(event, (OutputDeltaEvent, OutputEvent)):
            if isinstance(event, OutputDeltaEvent):  # in output-tool mode it is the step's only event
                out += self.enter_step(event.step)
            out.append(_output(event))
        elif isinstance(event, StepFinishEvent):
            out += self.step_finish(event)
        elif isinstance(event, (ClientToolCallEvent, FinishEvent)):  # pyright: ignore[reportUnnecessaryIsInstance]  # the last kinds: assert_never checks the chain is whole
            pass  # IGNORED_EVENTS says why
        else:
            assert_never(event)
        return out

    def automatic_approvals(self) -> list[Chunk]:
        """For a step that waits for approvals: an automatic approval of each call that needs none.

        They wait with the others (the turn runs together on resume); approved automatically, their parts
        let the AI SDK's ``lastAssistantMessageIsCompleteWithApprovalResponses`` send the user's decisions.
        """
        if not self.step_approvals:
            return []
        out: list[Chunk] = []
        for call_id in self.step_calls:
            if call_id in self.step_approvals or call_id in self.step_outcomes:
                continue
            descriptor = {"automatic": "needs no approval: runs with the turn's other calls once they are decided"}
            out.append(
                {
                    "type": "tool-approval-request",
                    "approvalId": call_id,
                    "toolCallId": call_id,
                    "isAutomatic": True,
                    "approvalDescriptor": descriptor,
                }
            )
            out.append({"type": "tool-approval-response", "approvalId": call_id, "approved": True})
        return out

    def step_finish(self, event: StepFinishEvent) -> list[Chunk]:
        out = self.end_text() + self.automatic_approvals()
        usage, _ = jsonable(event.usage)
        step = {"step": event.step, "finishReason": event.finish_reason, "toolCalls": event.tool_calls, "usage": usage}
        out.append({"type": "data-agentkit-step", "id": f"step_{event.step}", "data": step})
        if self.step == event.step:
            out.append({"type": "finish-step"})
            self.step = None
        return out

    def subagent(self, event: SubagentEvent) -> list[Chunk]:
        key = event.call_id
        if key is None:
            return []
        view = self.subagents.setdefault(key, _SubagentView(event.agent_id))
        change = view.apply(event.event)
        if change is None:
            return []
        self.dirty.add(key)
        return self.flush_subagents() if change else []  # text waits for the next event

    def finish(self, event: FinishEvent | None, cost: Decimal | None = None) -> list[Chunk]:
        out = self.flush_subagents() + self.end_text()
        if self.step is not None:
            out.append({"type": "finish-step"})
            self.step = None
        if event is None:
            out.append({"type": "finish"})
            return out
        usage, _ = jsonable(event.usage)
        # cost: the run's estimate in USD as decimal text (exact), None when a request's price is unknown
        run = {
            "runId": self.message_id,
            "status": event.status,
            "reason": status_reason(event.status),
            "usage": usage,
            "cost": _decimal_text(cost),
        }
        metadata = {"agentkit": run}
        finish_reason = _FINISH_REASONS.get(event.status, "other")
        out.append({"type": "finish", "finishReason": finish_reason, "messageMetadata": metadata})
        return out


async def ui_message_chunks(
    events: AsyncIterable[AgentEvent],
    *,
    message_id: str,
    on_finish: Callable[[], Awaitable[None]] | None = None,
    on_error: ErrorText | None = None,
) -> AsyncIterator[Chunk]:
    """The UI message chunks for a run's events (see the module docstring for the mapping).

    Args:
        events: an `AgentStream` (or any async iterable of agentkit events).
        message_id: the assistant message's id (``start.messageId``); a resumed run continues the same
            message, so pass the paused response's id again.
        on_finish: awaited after the run's last event and before ``finish`` is sent, e.g. to store a
            paused run before the UI can answer its approval request.
        on_error: the ``errorText`` for an exception that ends the run (default: its type only). The
            exception is also logged (logger ``agentkit.ui``) with its traceback.
    """
    translator = _Translator(message_id)
    yield {"type": "start", "messageId": message_id}
    finish: FinishEvent | None = None
    try:
        async for event in events:
            if isinstance(event, FinishEvent):
                finish = event  # sent after on_finish, so a paused run is stored before the UI sees the end
                continue
            for chunk in translator.translate(event):
                yield chunk
        if on_finish is not None:
            await on_finish()
        cost = await _run_cost(events) if finish is not None else None
    except UIInputError as exc:  # the request lost a race (another request resumed the run): said as it is
        for chunk in translator.end_text():
            yield chunk
        yield {"type": "error", "errorText": exc.message}
        return
    except Exception as exc:  # reported to the UI as an error chunk, logged in full
        logger.exception("agent run failed while streaming UI message %s", message_id)
        for chunk in translator.end_text():
            yield chunk
        yield {"type": "error", "errorText": (on_error or masked_error_text)(exc)}
        return
    for chunk in translator.finish(finish, cost):
        yield chunk


async def _run_cost(events: AsyncIterable[AgentEvent]) -> Decimal | None:
    """The estimated cost of the finished run behind `events` (an `AgentStream`, a `UIRun`), off the event loop.

    The price table loads on its first use (a few tenths of a second): a worker thread does it. None for
    other iterables of events, and when a request's price is unknown.
    """
    if not _is_stream(events):
        return None
    result = events.result
    return await asyncio.to_thread(result.cost)


def _is_stream(events: object) -> TypeIs[AgentStream[Any]]:
    from ..agent import AgentStream

    return isinstance(events, AgentStream)  # a UIRun too


def _decimal_text(value: Decimal | None) -> str | None:
    return None if value is None else format(value, "f")


async def open_ui_message_stream(
    agent: Agent[Any, Any],
    body: Any,
    *,
    store: RunStore,
    on_error: ErrorText | None = None,
    **run_options: Any,
) -> AsyncIterator[str]:
    """Answer one ``useChat`` request body: its server-sent events, ending with `DONE`.

    Parses the body (`parse_request`) and checks it against the paused run or picks the history; the
    returned events start the run (taking a paused run from `store` only then: a client gone before the
    response streams loses nothing) and store its outcome: a paused run under the response's message id
    (an unguessable id: the UI's answers name it), a finished history under the same id (the next turn
    continues from it). `run_options` go to `Agent.stream` / `Agent.resume_stream` (``deps=...``, ...).

    Raises:
        UIInputError: before anything is streamed, for a request that cannot be answered (its ``status``
            is the HTTP status to send).
    """
    from ._runs import new_id, start_stream

    run_input = parse_request(body)
    stream = await start_stream(agent, run_input, store, **run_options)
    message_id = run_input.resume_run_id or new_id("msg")

    async def on_finish() -> None:
        result = stream.result
        if result.paused:
            await store.save_paused(message_id, result.snapshot())
        else:
            await store.save_history(message_id, result.messages)

    async def sse() -> AsyncIterator[str]:
        async for chunk in ui_message_chunks(stream, message_id=message_id, on_finish=on_finish, on_error=on_error):
            yield to_sse(chunk)
        yield DONE

    return sse()
