"""A tool call that failed: what the model is told (the error-details policy) and what is logged.

The model is told, by default, the exception's type and message (``Tool 'x' failed: KeyError: 'id'``), so
it can react. ``mask_error_details=True`` (on the tool, its registry or the agent: the most specific one
set wins) replaces that with a generic text, as FastMCP's option of the same name does, for tools whose
exceptions may carry internals (a connection string, a file path, a query). `ToolError` and `ModelRetry`
messages are written for the model and always go through, masked or not.

When the call's input is redacted (an ``input`` display transform, the tool's own or the agent's), no
error text echoes it: every argument value found in a message (an exception's, a signal's, a validation
error's) is replaced by ``[redacted]`` and validation errors leave out the offending values, in the
model's text and the log alike. The rest of the message stays, so the model can still act on it.
Displays withhold these messages altogether, as before (`agentkit._agent.display.error_text`).

Logging (logger ``agentkit.tools``, a child of ``agentkit``; nothing is configured or installed here):

* ERROR, with the traceback: an exception in the tool, or in its ``to_model_output``;
* WARNING: a result that breaks the output schema, a timeout;
* INFO: `ToolError`, `ModelRetry`, invalid arguments, an unknown tool name (the model's mistakes and
  the tool's own signals, which the run handles).

Every record carries ``tool_name`` (the registry key), ``tool_call_id`` and ``error_kind`` as attributes
(``extra``), for structured handlers. A redacted call's traceback is logged frame by frame, each
exception's message scrubbed of the argument values.
"""

from __future__ import annotations as _annotations

import contextlib
import logging
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from ._describe import describe_exception
from ._jsonish import is_mapping
from .exceptions import ToolInputError, ToolOutputError
from .messages import ToolCall, ToolResult

__all__ = [
    "DEFAULT_POLICY",
    "ErrorPolicy",
    "Scrubber",
    "described",
    "failure",
    "invalid_arguments",
    "log_output_error",
    "logger",
    "masked_text",
    "scrubbed_traceback",
    "signal",
    "unknown_tool",
]

logger = logging.getLogger("agentkit.tools")


@dataclass(frozen=True)
class ErrorPolicy:
    """What the model and the logs may be told of failing calls: a run passes its own to each call."""

    mask: bool | None = None
    """Tell the model a generic text for an exception (the tool's and its registry's own settings win)."""
    redact_input: bool = False
    """No error text quotes the call's arguments (the run's transform policy redacts every input)."""


DEFAULT_POLICY = ErrorPolicy()
"""Outside a run: nothing masked but what a tool or registry masks, nothing redacted but redacted inputs."""


_LEVELS = {
    "exception": logging.ERROR,
    "hook_error": logging.ERROR,
    "limit_error": logging.ERROR,
    "invalid_output": logging.WARNING,
    "timeout": logging.WARNING,
    "tool_error": logging.INFO,
    "retry": logging.INFO,
    "invalid_arguments": logging.INFO,
    "unknown_tool": logging.INFO,
}


def masked_text(key: str) -> str:
    """What the model is told of a failure whose details are masked."""
    return f"Tool {key!r} failed because of an internal error; the details are not shown."


def failure(
    call: ToolCall,
    kind: str,
    exc: BaseException,
    *,
    mask: bool,
    redacted: bool,
    what: str = "failed",
) -> ToolResult:
    """The error result of a call whose tool raised `exc` (``exception``/``invalid_output``), logged.

    `what` says what failed, as the default text shows it (``failed``, ``result could not be shown``).
    """
    key = call.name
    scrub = Scrubber(call) if redacted else None
    if mask:
        text = masked_text(key)
    else:
        described = describe_exception(exc)
        text = f"Tool {key!r} {what}: {scrub(described) if scrub is not None else described}"
    _log(call, kind, exc, scrub=scrub)
    return ToolResult.error(call, text, kind, type(exc).__name__)


def signal(call: ToolCall, kind: str, message: str, *, redacted: bool) -> ToolResult:
    """The error result of a `ToolError`, `ModelRetry` or timeout: its message goes to the model as it is.

    Only a redacted input's values are scrubbed from it.
    """
    if redacted:
        message = Scrubber(call)(message)
    _log(call, kind, None, message=message)
    return ToolResult.error(call, message, kind)


def invalid_arguments(call: ToolCall, exc: ToolInputError, *, redacted: bool) -> ToolResult:
    """The error result of arguments that do not fit the schema: every problem, with its path.

    With a redacted input, the offending values are left out and the messages scrubbed of argument values
    (the paths and what is wrong stay, which is what the model needs to fix the call).
    """
    if redacted:
        scrub = Scrubber(call)
        lines = "\n".join(f"- {e.path}: {scrub(e.message)}" for e in exc.errors)
    else:
        lines = "\n".join(f"- {e}" for e in exc.errors)
    text = f"Invalid arguments for tool {exc.tool!r}:\n{lines}\nFix the arguments and call the tool again."
    _log(call, "invalid_arguments", None, message=lines.replace("\n", "; "))
    return ToolResult.error(call, text, "invalid_arguments")


def log_output_error(call: ToolCall, exc: ToolOutputError, *, redacted: bool) -> None:
    """Log a result that breaks the tool's output schema (its values left out when the call is redacted)."""
    if redacted:
        scrub = Scrubber(call)
        message = "; ".join(f"{e.path}: {scrub(e.message)}" for e in exc.errors)
    else:
        message = "; ".join(str(e) for e in exc.errors)
    _log(call, "invalid_output", None, message=message)


def described(
    call: ToolCall, kind: str, exc: BaseException, tool: Any = None, policy: ErrorPolicy = DEFAULT_POLICY
) -> str:
    """`exc` as the model may read it in the error text of `call` (``hook_error``, ``limit_error``), logged.

    The application's own code failed around the call (a hook, a concurrency limit's key function): the
    same policy as a tool's exception applies, `tool`'s own settings first, then the run's `policy`.
    """
    own = getattr(tool, "mask_error_details", None)
    mask = own if own is not None else bool(policy.mask)
    transform = getattr(tool, "transform", None)
    scrub = Scrubber(call) if policy.redact_input or getattr(transform, "input", None) is not None else None
    _log(call, kind, exc, scrub=scrub)
    if mask:
        return "an internal error (details not shown)"
    text = describe_exception(exc)
    return scrub(text) if scrub is not None else text


def unknown_tool(call: ToolCall, text: str) -> ToolResult:
    """The error result of a call to a key the registry does not hold."""
    _log(call, "unknown_tool", None, message="no tool under this key")
    return ToolResult.error(call, text, "unknown_tool")


def _log(
    call: ToolCall,
    kind: str,
    exc: BaseException | None,
    *,
    scrub: Scrubber | None = None,
    message: str | None = None,
) -> None:
    level = _LEVELS[kind]
    if not logger.isEnabledFor(level):
        return
    extra = {"tool_name": call.name, "tool_call_id": call.id, "error_kind": kind}
    where = f"tool {call.name!r} (call {call.id!r})"
    if exc is None:
        logger.log(level, "%s %s: %s", where, kind.replace("_", " "), message, extra=extra)
    elif scrub is None:
        logger.log(level, "%s raised %s", where, describe_exception(exc), exc_info=exc, extra=extra)
    else:
        logger.log(
            level,
            "%s raised %s (the tool's input is redacted: argument values removed)\n%s",
            where,
            scrub(describe_exception(exc)),
            scrubbed_traceback(exc, scrub),
            extra=extra,
        )


class Scrubber:
    """Removes a call's argument values from texts: each string (and number) of 3 characters or more.

    The longest values go first, so a value that contains another is removed whole. At most 1,000
    values are collected (a call with more is scrubbed of its first 1,000 in document order).
    """

    __slots__ = ("values",)

    def __init__(self, call: ToolCall) -> None:
        found: set[str] = set()
        arguments: Any = call.arguments
        if isinstance(arguments, str):
            with contextlib.suppress(ValueError):  # malformed JSON: the text itself is the value
                arguments = call.arguments_dict()
        stack: list[Any] = [arguments]
        while stack and len(found) < 1000:
            value = stack.pop()
            if is_mapping(value):
                stack.extend(value.values())
            elif isinstance(value, (list, tuple)):
                stack.extend(cast("Sequence[Any]", value))
            elif isinstance(value, (str, int, float)) and not isinstance(value, bool):
                text = str(value)
                if len(text) >= 3:
                    found.add(text)
        self.values = sorted(found, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for value in self.values:
            if value in text:
                text = text.replace(value, "[redacted]")
        return text


def scrubbed_traceback(exc: BaseException, scrub: Scrubber) -> str:
    """`exc`'s traceback (causes and contexts first, as Python prints them), each message scrubbed."""
    chain: list[BaseException] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chain.append(current)
        current = current.__cause__ or (None if current.__suppress_context__ else current.__context__)
    parts: list[str] = []
    for error in reversed(chain):
        frames = "".join(traceback.format_tb(error.__traceback__))
        kind = type(error)
        parts.append(
            f"Traceback (most recent call last):\n{frames}{kind.__module__}.{kind.__qualname__}: {scrub(str(error))}"
        )
    return "\n\nThe above led to:\n\n".join(parts)
