"""A vendor response that breaks the vendor's own shape is a `ModelAPIError`, never a raw exception.

Every reading of a response goes through `guarded`: each provider's ``parse_response`` and
``parse_tool_calls``, and each stream decoder's ``feed`` / ``decode`` / ``flush`` / ``response`` /
``tool_calls`` (`Provider` and `StreamAccumulator` wrap them in their subclasses, so a third-party
provider gets the same guarantee). A field of the wrong type (a call that is not an object, content that
is not a list, a tool name that is a number...) makes the vendor code raise a `TypeError`,
`AttributeError`, `KeyError` ... somewhere; the guard turns it into one `ModelAPIError` naming the
vendor and what was wrong.

What can be read is read: a call whose arguments are not an object still reaches the registry (as JSON
text, which validation answers with an error result the model can act on), and token counts that are
not integers read as 0, since a turn's text and calls are worth more than its accounting.
"""

from __future__ import annotations as _annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import fields, is_dataclass, replace
from typing import Any, TypeVar

from .._jsonish import is_array, nested_deeper
from .._text import json_text, shorten
from .._unicode import encodes, escaped, escaped_data, has_surrogate, surrogate_at
from ..exceptions import AgentkitError, ModelAPIError
from ..messages import AssistantMessage, ModelResponse, ToolCall, Usage
from ._messages import token_count

__all__ = ["MALFORMED", "check_shape", "checked_call", "checked_events", "checked_response", "guarded"]

MALFORMED = (TypeError, ValueError, LookupError, AttributeError, ArithmeticError, RecursionError)
"""What reading data of an unexpected shape raises in plain Python."""

_F = TypeVar("_F", bound=Callable[..., Any])


def guarded(method: _F, vendor: Callable[[Any], str]) -> _F:
    """`method` with `MALFORMED` exceptions raised as `ModelAPIError` (``vendor(self)`` names the model).

    `ModelResponse` results are checked with `checked_response`. Applied once: a guarded method is
    returned as it is.
    """
    if getattr(method, "_guarded", False):
        return method

    @functools.wraps(method)
    def reading(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            out: Any = method(self, *args, **kwargs)
            if isinstance(out, ModelResponse):
                return checked_response(out, vendor(self))
            return checked_events(out, vendor(self)) if is_array(out) else out
        except AgentkitError:
            raise
        except MALFORMED as error:
            why = f"the response does not have the shape the API documents ({type(error).__name__}: {error})"
            raise ModelAPIError(vendor(self), shorten(why, 500)) from error

    reading._guarded = True  # type: ignore[attr-defined]
    return reading  # type: ignore[return-value]


def checked_call(call: ToolCall, vendor: str) -> ToolCall:
    """`call` with a usable id, name and arguments; arguments that are no object or text become JSON text.

    Raises:
        ModelAPIError: the id or the name is not a string (the call cannot be answered or found).
    """
    fields: tuple[tuple[str, Any], ...] = (("name", call.name), ("id", call.id))  # Any: as the vendor sent them
    for field, value in fields:
        if not isinstance(value, str):  # pyright: ignore[reportUnnecessaryIsInstance]  # as the vendor sent them
            raise ModelAPIError(vendor, f"a tool call whose {field} is not a string: {shorten(value)}")
    arguments: Any = call.arguments
    details = call.provider_details  # Cohere's tool_plan, Gemini's thought signature: replayed too
    plain = not has_surrogate(call.name) and not has_surrogate(call.id) and (details is None or encodes(details))
    if isinstance(arguments, str):
        if plain and not has_surrogate(arguments):
            return call
    elif isinstance(arguments, Mapping):
        if plain and (encodes(arguments) or (surrogate_at(arguments) is None and not nested_deeper(call.arguments))):
            return call
        # as JSON text, each lone surrogate escaped: validation refuses it (pydantic-core does), and the
        # next request can replay it (UTF-8 cannot carry a lone surrogate itself); nesting deeper than
        # validation reads is refused too, and text is what nothing downstream recurses into
        arguments = json_text(arguments, compact=True, ensure_ascii=False)
    else:  # JSON text that is no object: validation answers it with an error result the model can act on
        arguments = "" if arguments is None else json_text(arguments, compact=True)
    return ToolCall(
        id=escaped(call.id),
        name=escaped(call.name),
        arguments=escaped(arguments),
        provider_details=escaped_data(call.provider_details),
    )


_EVENT_TEXT = ("text", "delta", "arguments_so_far", "arguments_delta", "tool_name", "call_id", "name", "id")
"""The text fields of stream events (`TextDelta` ... `ToolCallDelta`): escaped as `checked_response` escapes."""


def checked_events(events: list[Any], vendor: str) -> list[Any]:
    """Stream events, deltas or calls with each lone surrogate in their text escaped, as a whole turn has it."""
    for index, event in enumerate(events):
        if isinstance(event, ToolCall):
            events[index] = checked_call(event, vendor)
            continue
        changes = {
            name: escaped(text)
            for name in _EVENT_TEXT
            if isinstance(text := getattr(event, name, None), str) and has_surrogate(text)
        }
        if changes and is_dataclass(event) and not isinstance(event, type):
            events[index] = replace(event, **changes)
    return events


def checked_response(response: ModelResponse, vendor: str) -> ModelResponse:
    """`response` with every field of the type `ModelResponse` promises (fixed in place where it can be).

    Raises:
        ModelAPIError: the text or the calls are not what a turn holds.
    """
    message = response.message
    if not isinstance(message, AssistantMessage) or not isinstance(message.text, str):  # pyright: ignore[reportUnnecessaryIsInstance]  # as decoded from the vendor
        raise ModelAPIError(vendor, f"a response whose text is not a string: {shorten(message)}")
    message.tool_calls = [checked_call(call, vendor) for call in message.tool_calls]
    # text UTF-8 cannot carry (a vendor's "\ud800" escape) would fail the next request: escaped (`agentkit._unicode`)
    message.text = escaped(message.text)
    message.provider_details = escaped_data(message.provider_details)
    usage: Any = response.usage
    counts = {f.name: getattr(usage, f.name, 0) for f in fields(Usage)}
    if not isinstance(usage, Usage) or not all(type(n) is int and n >= 0 for n in counts.values()):
        response.usage = Usage(**{name: token_count(n) for name, n in counts.items()})
    for name in _TEXT_FIELDS:  # ids and names: text or nothing
        if not isinstance(getattr(response, name), (str, type(None))):
            setattr(response, name, None)
    return response


_TEXT_FIELDS = ("finish_reason", "model_name", "response_id", "request_id", "provider_name", "provider_url")


def _found(data: Any, path: tuple[str | int, ...]) -> bool:
    node = data
    for step in path:
        if isinstance(step, int):
            if not isinstance(node, list) or len(node) <= step:  # pyright: ignore[reportUnknownArgumentType]
                return False
            node = node[step]  # pyright: ignore[reportUnknownVariableType]
        else:
            if not isinstance(node, Mapping) or step not in node:
                return False
            node = node[step]  # pyright: ignore[reportUnknownVariableType]
    return isinstance(node, (Mapping, list))


def _spelt(path: tuple[str | int, ...]) -> str:
    return "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in path).lstrip(".")


def check_shape(data: Any, shape: tuple[tuple[str | int, ...], ...], vendor: str) -> None:
    """Raise `ModelAPIError` for a whole response that has none of the paths in `shape`.

    A vendor puts every answer's content at one of them (`Provider.response_shape`); a response without
    any (an HTTP 200 whose JSON is something else: a proxy's error object, an empty object) is not an
    empty answer, and reading it as one would end the run with nothing, as a truncated stream would.
    """
    if not shape or any(_found(data, path) for path in shape):
        return
    keys = sorted(str(k) for k in data) if isinstance(data, Mapping) else []  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
    got = f"its fields are {shorten(keys, 200)}" if keys else f"it is {shorten(data, 200)}"
    wanted = " or ".join(_spelt(path) for path in shape)
    raise ModelAPIError(vendor, f"the response has no {wanted}, which every answer has ({got}): not an answer")
