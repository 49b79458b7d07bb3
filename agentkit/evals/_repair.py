r"""Argument repair: known slips of small models, fixed only where the schema says what was meant.

Four slips, each fixed only when the result then passes the tool's validation (and the arguments as
sent did not), and always reported (`Repair.fixes`), never silently:

* **trailing commas** (``{"a": 1,}``): removed before ``}`` and ``]``, outside strings;
* **single quotes** (``{'a': 'b', 'c': True}``): read as a Python literal (``ast.literal_eval``, no
  code runs), when the text is not JSON;
* **a JSON string where an object or array was expected** (``{"filter": "{\\"a\\": 1}"}``, or the whole
  arguments encoded twice): decoded where the schema asks for an object or array;
* **a number as a string** (``{"count": "5"}``): converted where the schema asks for an integer (the
  text is a whole number) or a number.
"""

from __future__ import annotations as _annotations

import ast
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._jsonish import is_array, is_object
from ..exceptions import ToolInputError
from ..tools import Tool

__all__ = ["Repair", "repair_arguments"]


@dataclass(frozen=True)
class Repair:
    """Repaired arguments, and each fix made, in words (e.g. ``"removed a trailing comma"``)."""

    arguments: dict[str, Any]
    fixes: tuple[str, ...]


_TRAILING = re.compile(r'("(?:[^"\\]|\\.)*")|,(\s*[}\]])')
_INTEGER = re.compile(r"\s*[-+]?\d+\s*")
_NUMBER = re.compile(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*")


def _valid(tool: Tool[..., Any], arguments: Any) -> bool:
    try:
        tool.schema.validate_arguments(tool.id, arguments)
    except (ToolInputError, ValueError, TypeError):
        return False
    return True


def _parse(text: str, fixes: list[str]) -> Any:
    """The arguments text decoded, with the syntax slips fixed (and listed in `fixes`); None if hopeless."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    stripped = _TRAILING.sub(lambda m: m.group(1) or m.group(2), text)
    if stripped != text:
        try:
            value = json.loads(stripped)
        except ValueError:
            pass
        else:
            fixes.append("removed a trailing comma")
            return value
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    if not is_object(value):
        return None
    fixes.append("read single-quoted (Python) syntax as JSON")
    return value


def _types(schema: Any) -> set[str]:
    kind = schema.get("type") if is_object(schema) else None
    if isinstance(kind, str):
        return {kind}
    return {k for k in kind if isinstance(k, str)} if is_array(kind) else set()


def _shape(value: Any, schema: Any, path: str, fixes: list[str]) -> Any:
    """`value` with strings converted where `schema` asks for an object, array or number (listed in `fixes`)."""
    if not is_object(schema):
        return value
    wanted = _types(schema)
    if isinstance(value, str) and "string" not in wanted:
        if wanted & {"object", "array"}:
            try:
                decoded = json.loads(value)
            except ValueError:
                decoded = None
            if (is_object(decoded) and "object" in wanted) or (is_array(decoded) and "array" in wanted):
                fixes.append(
                    f"decoded the JSON string at {path or '/'} into an {'object' if is_object(decoded) else 'array'}"
                )
                value = decoded
        elif "integer" in wanted and _INTEGER.fullmatch(value):
            fixes.append(f"read the string {value!r} at {path} as an integer")
            return int(value)
        elif "number" in wanted and _NUMBER.fullmatch(value):
            fixes.append(f"read the string {value!r} at {path} as a number")
            number = float(value)
            return int(number) if number.is_integer() and "." not in value and "e" not in value.lower() else number
    if is_object(value):
        properties = schema.get("properties")
        if is_object(properties):
            return {k: _shape(v, properties.get(k), f"{path}/{k}", fixes) for k, v in value.items()}
    if is_array(value) and is_object(schema.get("items")):
        return [_shape(v, schema["items"], f"{path}/{i}", fixes) for i, v in enumerate(value)]
    return value


def repair_arguments(arguments: str | Mapping[str, Any], tool: Tool[..., Any]) -> Repair | None:
    """The repaired arguments of a call to `tool`, or None when they need none or no known slip explains them.

    A repair is returned only when the arguments as sent fail the tool's validation and the repaired
    ones pass it: a repair never changes a call the tool would have accepted, nor makes a call the tool
    would refuse.
    """
    if _valid(tool, arguments):
        return None
    fixes: list[str] = []
    value: Any = dict(arguments) if isinstance(arguments, Mapping) else _parse(arguments, fixes)
    if isinstance(value, str) and "object" in _types(tool.input_schema) | {"object"}:
        try:
            twice = json.loads(value)  # the whole arguments encoded twice
        except ValueError:
            twice = None
        if is_object(twice):
            fixes.append("decoded arguments that were encoded as a JSON string")
            value = twice
    if not is_object(value):
        return None
    value = _shape(value, tool.input_schema, "", fixes)
    if not fixes or not _valid(tool, value):
        return None
    return Repair(dict(value), tuple(fixes))
