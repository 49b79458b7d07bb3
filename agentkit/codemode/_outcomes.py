"""A nested call's `ToolResult` as the program sees it: a value, or an exception it can catch.

The exception is a builtin one (the sandbox knows no others), chosen by the result's error kind; its
message is the text the model would have read for the same call, JSON paths of invalid arguments included.
"""

from __future__ import annotations as _annotations

import json
from typing import Any

from pydantic_core import to_jsonable_python

from ..messages import ToolResult
from ..tools import Tool
from ._program import Raised, Returned

__all__ = ["EXCEPTIONS", "outcome_of", "program_value"]

EXCEPTIONS: dict[str, str] = {
    "invalid_arguments": "ValueError",
    "denied": "PermissionError",
    "unknown_tool": "LookupError",
    "timeout": "TimeoutError",
}
"""Error kind -> the exception raised in the program (any other kind: ``RuntimeError``)."""


def program_value(item: Tool[..., Any] | None, result: ToolResult) -> Any:
    """What the program receives from a successful call: the tool's output as JSON data.

    A tool with ``to_model_output`` gives the program what the model would read (its text, parsed when it
    is JSON): whatever that function keeps from the model stays out of the program too.
    """
    if item is not None and item.to_model_output is not None:
        text = result.text
        try:
            return json.loads(text)
        except ValueError:
            return text
    try:
        return to_jsonable_python(result.output, fallback=repr)
    except Exception:  # noqa: BLE001 - a value pydantic cannot serialise reaches the program as its text
        return result.text


def outcome_of(item: Tool[..., Any] | None, result: ToolResult) -> Returned | Raised:
    """The program's view of `result`."""
    if result.is_error:
        kind = result.error_kind or "tool_error"
        return Raised(EXCEPTIONS.get(kind, "RuntimeError"), result.text)
    return Returned(program_value(item, result))
