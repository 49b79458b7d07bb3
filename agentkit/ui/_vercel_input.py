"""A ``useChat`` request body (``{id, messages: UIMessage[], trigger, ...}``) as a `RunInput`.

* The last message is the user's: a new turn. Its history is the recorded one when the conversation's
  last assistant message is one this server sent (`RunInput.anchor_id`), else the UI's messages
  converted: text, image files, and tool parts that reached an output state (display values, since
  that is all a UI holds). System messages from the browser are ignored: the agent's instructions are
  its system prompt.
* The last message is the assistant's with tool parts in state ``approval-responded`` (after
  ``addToolApprovalResponse``): the decisions for the paused run whose id is that message's id.
* Tool parts of the paused step that carry an output (``addToolOutput``) are client-tool results
  (issue 11): parsed into `RunInput.client_results`.
"""

from __future__ import annotations as _annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._jsonish import is_array, is_mapping
from ..messages import (
    AssistantMessage,
    ContentPart,
    ImagePart,
    Message,
    TextPart,
    ToolCall,
    ToolResult,
    ToolResultsMessage,
    UserMessage,
)
from ._runs import ClientToolResult, RunInput, UIInputError

if TYPE_CHECKING:
    from ..agent import Approval

__all__ = ["conversation_input", "parse_request", "ui_messages_to_history"]

_FINAL_STATES = frozenset({"output-available", "output-error", "output-denied"})


def _state(part: Mapping[str, Any]) -> str | None:
    """A part's ``state`` when it is text (a UI can send anything: an object there is no state)."""
    state = part.get("state")
    return state if isinstance(state, str) else None


def _is_tool_part(part: Mapping[str, Any]) -> bool:
    kind = part.get("type")
    return isinstance(kind, str) and (kind.startswith("tool-") or kind == "dynamic-tool")


def _tool_name(part: Mapping[str, Any]) -> str:
    if part.get("type") == "dynamic-tool":
        return str(part.get("toolName", ""))
    return str(part["type"])[len("tool-") :]


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _check_message(position: int, message: Any) -> Mapping[str, Any]:
    if not is_mapping(message):
        raise UIInputError(f"messages[{position}] must be an object (a UIMessage), got {type(message).__name__}")
    parts = message.get("parts")
    if message.get("role") not in ("user", "assistant", "system") or not is_array(parts):
        raise UIInputError(
            f"messages[{position}] must be a UIMessage with role 'user', 'assistant' or 'system' and a list of "
            "parts (ai v5+; the v4 'content' format is not supported)"
        )
    return message


def _user_message(position: int, parts: Sequence[Mapping[str, Any]]) -> UserMessage | None:
    content: list[ContentPart] = []
    for part in parts:
        kind = part.get("type")
        if kind == "text":
            content.append(TextPart(str(part.get("text", ""))))
        elif kind == "file":
            media = str(part.get("mediaType", ""))
            if not media.startswith("image/"):
                raise UIInputError(
                    f"messages[{position}] has a file part of type {media!r}: only images can be sent to the agent"
                )
            content.append(ImagePart(url=str(part.get("url", "")), media_type=media))
    if not content:
        return None
    if len(content) == 1 and isinstance(content[0], TextPart):
        return UserMessage(content[0].text)
    return UserMessage(content)


def _tool_result(part: Mapping[str, Any], call: ToolCall) -> ToolResult:
    state = _state(part)
    if state == "output-available":
        # a display value, all a UI holds: the model's text, never the tool's typed `output`
        return ToolResult(call.id, call.name, (TextPart(_text(part.get("output"))),))
    if state == "output-denied":
        return ToolResult.error(call, "The user denied this call.", "denied")
    return ToolResult.error(call, str(part.get("errorText") or "The tool failed."), "tool_error")


def _assistant_messages(parts: Sequence[Mapping[str, Any]]) -> list[Message]:
    """One assistant turn per step (``step-start`` parts split them), each followed by its results."""
    out: list[Message] = []
    text: list[str] = []
    calls: list[ToolCall] = []
    results: list[ToolResult] = []

    def close() -> None:
        if text or calls:
            out.append(AssistantMessage(text="".join(text), tool_calls=list(calls)))
        if results:
            out.append(ToolResultsMessage(list(results)))
        text.clear()
        calls.clear()
        results.clear()

    for part in parts:
        kind = part.get("type")
        if kind == "step-start":
            close()
        elif kind == "text":
            text.append(str(part.get("text", "")))
        elif _is_tool_part(part) and _state(part) in _FINAL_STATES:
            # unanswered calls are left out: every vendor rejects a call without a result
            shown = part.get("input")
            arguments = dict(shown) if is_mapping(shown) else {}  # a redacted input may be any value
            call = ToolCall(str(part.get("toolCallId", "")), _tool_name(part), arguments)
            calls.append(call)
            results.append(_tool_result(part, call))
    close()
    return out


def ui_messages_to_history(messages: Sequence[Any], start: int = 0) -> list[Message]:
    """UIMessages (from `start`) as neutral messages: what a UI holds, display values included."""
    history: list[Message] = []
    for position in range(start, len(messages)):
        message = _check_message(position, messages[position])
        parts = [p for p in message["parts"] if is_mapping(p)]
        if message["role"] == "user":
            user = _user_message(position, parts)
            if user is not None:
                history.append(user)
        elif message["role"] == "assistant":
            history.extend(_assistant_messages(parts))
    return history


def _last_step(parts: Sequence[Any]) -> list[Mapping[str, Any]]:
    start = 0
    for index, part in enumerate(parts):
        if is_mapping(part) and part.get("type") == "step-start":
            start = index + 1
    return [p for p in parts[start:] if is_mapping(p)]


def _decision(call_id: str, approval: Any) -> Approval | None:
    """The user's decision in an ``approval-responded`` part; None for an automatic approval (not a decision)."""
    from ..exceptions import ApprovalError
    from ..runs._answers import decision

    if not is_mapping(approval):
        raise UIInputError(f"tool part {call_id!r} is 'approval-responded' without an approval object")
    if approval.get("isAutomatic") is True:
        return None  # the server approved it itself (a call that needs no approval): nothing to decide
    reason = approval.get("reason")
    try:
        return decision(call_id, approval.get("approved"), reason)
    except ApprovalError as exc:
        raise UIInputError(
            f"tool part {call_id!r}: approval.approved must be a bool, reason a string ({exc})"
        ) from None


def _decisions(message: Mapping[str, Any]) -> RunInput:
    approvals: dict[str, Approval] = {}
    client: dict[str, ClientToolResult] = {}
    for part in _last_step(message["parts"]):
        if not _is_tool_part(part):
            continue
        call_id = str(part.get("toolCallId", ""))
        state = _state(part)
        if state == "approval-responded":
            decision = _decision(call_id, part.get("approval"))
            if decision is not None:
                approvals[call_id] = decision
        elif state in ("output-available", "output-error"):
            error = part.get("errorText")
            client[call_id] = ClientToolResult(
                call_id, _tool_name(part), part.get("output"), error if isinstance(error, str) else None
            )
    if not approvals and not client:
        raise UIInputError(
            "the last message is the assistant's and answers nothing: send a new user message, or approval "
            "decisions (addToolApprovalResponse) for its pending tool calls"
        )
    return RunInput(resume_run_id=str(message.get("id", "")), approvals=approvals, client_results=client)


def parse_request(body: Any) -> RunInput:
    """A ``useChat`` request body as a `RunInput` (see the module docstring).

    Raises:
        UIInputError: the body is not a chat request, or its last message asks nothing.
    """
    if not is_mapping(body) or not is_array(body.get("messages")) or not body["messages"]:
        raise UIInputError("the request body must be a JSON object with a non-empty 'messages' list (useChat's body)")
    messages: list[Any] = body["messages"]
    thread_id = body.get("id") if isinstance(body.get("id"), str) else None
    last = _check_message(len(messages) - 1, messages[-1])
    if last["role"] == "assistant":
        run_input = _decisions(last)
        run_input.thread_id = thread_id
        return run_input
    run_input = conversation_input(messages)
    run_input.thread_id = thread_id
    return run_input


def conversation_input(messages: Sequence[Any]) -> RunInput:
    """A new turn on `messages`: the whole conversation converted, anchored on its last assistant message."""
    anchor: str | None = None
    tail_start = 0
    for position in range(len(messages) - 1, -1, -1):
        message = _check_message(position, messages[position])
        if message["role"] == "assistant" and isinstance(message.get("id"), str):
            anchor, tail_start = message["id"], position + 1
            break
    history = ui_messages_to_history(messages)
    tail = ui_messages_to_history(messages, tail_start) if anchor is not None else []
    return RunInput(messages=history, anchor_id=anchor, tail=tail)
