"""The result of a tool call whose function returned: the output validated, what the model reads made.

Shared by `Registry.call` and the loop's hook path (a hook may answer a call with a value of its own).
"""

from __future__ import annotations as _annotations

from typing import Any

from . import _tool_errors as failures
from .exceptions import ToolOutputError
from .messages import ToolCall, ToolResult
from .tools import Tool

__all__ = ["result_now", "result_of"]


async def result_of(
    item: Tool[..., Any],
    call: ToolCall,
    value: Any,
    *,
    mask: bool | None = None,
    redacted: bool | None = None,
) -> ToolResult:
    """The result of `call` whose tool returned `value`: the output validated, what the model receives made.

    A result that breaks the output schema (or a failing ``to_model_output``) is an error result under the
    error policy: `mask` and `redacted` as `Registry.call` (or a run, for a hook's answer) decided them;
    None: the tool's own settings.
    """
    if mask is None:
        mask = bool(item.mask_error_details)
    if redacted is None:
        redacted = item.transform is not None and item.transform.input is not None
    if not item.schema.needs_thread:
        return result_now(item, call, value, mask, redacted)
    try:
        value = await item.avalidate_output(value, name=call.name)
    except Exception as exc:  # noqa: BLE001 - reported as `result_now` reports it
        return _failed(item, call, exc, mask, redacted)
    return result_now(item, call, value, mask, redacted, validated=True)


def result_now(
    item: Tool[..., Any], call: ToolCall, value: Any, mask: bool, redacted: bool, *, validated: bool = False
) -> ToolResult:
    """`result_of` without awaiting: for a tool whose output is checked on the event loop (not `needs_thread`).

    `validated`: `value` was validated already (off the loop); only what the model receives is made.
    """
    try:
        if not validated:
            value = item.schema.validate_output(call.name, value)
        content = item.model_content(value)
    except Exception as exc:  # noqa: BLE001 - a failing to_model_output is reported, not raised
        return _failed(item, call, exc, mask, redacted)
    return ToolResult(call.id, call.name, content, value)


def _failed(item: Tool[..., Any], call: ToolCall, exc: Exception, mask: bool, redacted: bool) -> ToolResult:
    """The error result of a result that breaks the output schema, or that could not be shown."""
    if isinstance(exc, ToolOutputError):
        text = str(exc)
        if mask:
            text = failures.masked_text(call.name)
        elif redacted:  # the result may be (or quote) a redacted argument
            text = failures.Scrubber(call)(text)
        output_hidden = item.transform is not None and item.transform.output is not None
        failures.log_output_error(call, exc, redacted=redacted or output_hidden)
        return ToolResult.error(call, text, "invalid_output", type(exc).__name__)
    return failures.failure(call, "invalid_output", exc, mask=mask, redacted=redacted, what="result could not be shown")
