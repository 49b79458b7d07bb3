"""Stream events as JSON: `event_to_dict` / `event_to_json`, and `jsonable` for one display value.

Payloads are dumped as JSON data through pydantic-core (pydantic models, dataclasses, datetimes, UUIDs,
sets, bytes as URL-safe base64, NaN as null, ...), never as reprs. The events already carry
display-shaped payloads (`ToolTransform`); this module adds nothing and removes nothing but one rule,
fail-closed like the transforms: a value that cannot be dumped becomes ``None`` and ``serialize_error``
names the field and the exception type, never the value or the exception's message (either could quote
what was hidden).
"""

from __future__ import annotations as _annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

from pydantic_core import to_jsonable_python

from ..events import AgentEvent, SubagentEvent

__all__ = ["ErrorText", "display_text", "event_to_dict", "event_to_json", "jsonable", "masked_error_text", "shown"]

ErrorText = Callable[[BaseException], str]
"""What a UI is told about an exception that ended a run."""

# Event fields that hold tool or display payloads: everything else is a str, int, None or a Usage.
_PAYLOAD_FIELDS = frozenset({"input", "delta", "partial", "output", "error", "payload", "data"})


class _UnserializableError(Exception):
    """A value pydantic-core cannot dump as JSON; `reason` is safe to show."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _dump(value: Any) -> Any:
    try:
        # serialize_unknown=False: an unknown type raises instead of becoming str(value), which could leak.
        data = to_jsonable_python(value, bytes_mode="base64", inf_nan_mode="null")
    except Exception as exc:  # noqa: BLE001 - whatever broke, the value must not reach the display
        raise _UnserializableError(type(exc).__name__) from None
    return data


def jsonable(value: Any) -> tuple[Any, str | None]:
    """`value` as JSON-ready data, or ``(None, reason)`` when it cannot be dumped (the reason is safe to show)."""
    try:
        return _dump(value), None
    except _UnserializableError as exc:
        return None, f"value could not be serialized to JSON ({exc.reason}); payload withheld"


def event_to_dict(event: AgentEvent) -> dict[str, Any]:
    """One `Agent.stream` event as a JSON-ready dict: its fields by name, ``kind`` included.

    `SubagentEvent.event` is converted recursively. `Usage` becomes a dict of its counts. A payload
    that cannot be dumped is ``None`` and the dict gets ``serialize_error`` (only then), e.g.
    ``"output could not be serialized to JSON (PydanticSerializationError); payload withheld"``.
    """
    candidate: Any = event
    if not dataclasses.is_dataclass(candidate) or isinstance(candidate, type):
        raise TypeError(f"event_to_dict() takes an agentkit stream event, got {type(event).__name__}")
    out: dict[str, Any] = {}
    problems: list[str] = []
    for spec in dataclasses.fields(event):
        value = getattr(event, spec.name)
        if spec.name == "event" and isinstance(event, SubagentEvent):
            out["event"] = event_to_dict(value)
        elif spec.name in ("caller", "cache") and value is None:
            continue  # only calls made inside a program (code mode) have a caller, cached tools' a cache
        elif spec.name in _PAYLOAD_FIELDS or spec.name == "usage":
            try:
                out[spec.name] = _dump(value)
            except _UnserializableError as exc:
                out[spec.name] = None
                problems.append(f"{spec.name} could not be serialized to JSON ({exc.reason}); payload withheld")
        else:
            out[spec.name] = value
    if problems:
        out["serialize_error"] = "; ".join(problems)
    return out


def event_to_json(event: AgentEvent) -> str:
    """`event_to_dict` as compact JSON text (UTF-8 characters kept; never ``NaN`` or ``Infinity``)."""
    return json.dumps(event_to_dict(event), ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def display_text(value: Any, withheld: str | None = None) -> str:
    """A display value as text for protocol fields that must be strings (error texts, AG-UI contents).

    Strings pass as they are; anything else is dumped as JSON. ``None`` with `withheld` set (a transform
    or serialization failure) gives `withheld`, which names the failure only.
    """
    if isinstance(value, str):
        return value
    if value is None and withheld is not None:
        return withheld
    data, problem = jsonable(value)
    if problem is not None:
        return problem
    return json.dumps(data, ensure_ascii=False, allow_nan=False)


def shown(value: Any, transform_error: str | None) -> tuple[Any, str | None]:
    """An event's display value as JSON data, with why it is withheld (its transform failed, or it cannot be dumped)."""
    if transform_error is not None:
        return None, transform_error
    return jsonable(value)


def masked_error_text(exc: BaseException) -> str:
    """The default text for a failed run: the exception's type only (its message could carry secrets)."""
    return f"The agent run failed ({type(exc).__name__})."
