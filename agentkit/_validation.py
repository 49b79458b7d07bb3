"""Validating a model's arguments with pydantic, exactly as the JSON Schema the model was shown says.

Pydantic's strict mode and JSON Schema disagree in one place a model hits often: ``1.0`` is an
``integer`` for JSON Schema (a number with no fractional part) but not for strict pydantic. When
validation fails only there, the integral floats at the failing paths are read as integers and the
value is validated again, so ``{"n": 1.0}`` passes for ``n: int`` while the fast path (one call into
pydantic-core) stays as it is. Where validation still differs from the schema is listed in
docs/schemas.md ("Where validation differs from the schema").
"""

from __future__ import annotations as _annotations

import functools
import json
from collections.abc import Callable, Mapping
from typing import Any

from ._error_paths import details_from_pydantic, json_path
from ._jsonish import MAX_DEPTH, is_array, is_object
from ._text import clip
from ._unicode import has_surrogate, surrogate_at
from .exceptions import ErrorDetail, ToolInputError

__all__ = [
    "MAX_DEPTH",
    "check_json_object",
    "json_of",
    "looks_like_object",
    "parse_json",
    "surrogate_error",
    "validate_json_strict",
]

SURROGATE_MESSAGE = (
    "Not valid Unicode: holds a lone surrogate (an unpaired UTF-16 code unit, such as the escape \\ud800). "
    "Send the character itself, or both halves of its surrogate pair"
)

_INTEGER_KINDS = frozenset({"int_type", "int_from_float", "literal_error", "enum"})


@functools.lru_cache(maxsize=1)
def validation_error_type() -> type[Exception]:
    """Pydantic's ValidationError, imported on first need (an ``except`` evaluates this only on error)."""
    from pydantic_core import ValidationError

    return ValidationError


@functools.lru_cache(maxsize=1)
def pydantic_to_json() -> Callable[..., bytes]:
    from pydantic_core import to_json

    return to_json


@functools.lru_cache(maxsize=1)
def _pydantic_from_json() -> Callable[..., Any]:
    # looked up once: an import statement per parse cost more than the parse of a small object
    from pydantic_core import from_json

    return from_json


def json_of(tool_name: str, args: Mapping[str, Any]) -> bytes:
    """Python arguments as JSON, or a `ToolInputError` for values JSON cannot hold."""
    try:
        return pydantic_to_json()(args)
    except Exception as exc:  # noqa: BLE001 - PydanticSerializationError, RecursionError: the caller's bad value
        unicode = surrogate_error(tool_name, args, parsed=True)
        if unicode is not None:
            raise unicode from None
        message = f"Arguments cannot be turned into JSON: {clip(str(exc), 300)}"
        raise ToolInputError(tool_name, [ErrorDetail("$", message, args, "json_type")]) from None


def parse_json(text: str | bytes | bytearray) -> Any:
    """JSON text -> Python, never `RecursionError` (pydantic-core's parser, which bounds nesting).

    Raises:
        ValueError: not JSON, or nested more than `MAX_DEPTH` levels.
    """
    try:
        return _pydantic_from_json()(text)
    except TypeError:  # pydantic-core reads only text it can encode as UTF-8
        raise ValueError("not valid Unicode text (it holds a lone surrogate)") from None


def _may_hold_surrogate(data: Any) -> bool:
    if isinstance(data, str):
        return not data.isascii() or "\\u" in data
    return isinstance(data, (bytes, bytearray)) and b"\\u" in data


def surrogate_error(tool_name: str, data: Any, *, parsed: bool = False) -> ToolInputError | None:
    r"""The error for arguments refused because of a lone surrogate, naming where it is; None if there is none.

    `data` is JSON text (a surrogate itself, or its ``\ud800`` escape, which pydantic-core refuses too), or
    with `parsed` the arguments as Python data. Called once validation has failed, never on the fast path.
    """
    value: Any = data
    if not parsed:
        if not _may_hold_surrogate(data):
            return None
        try:
            value = json.loads(data)  # Python's reader keeps lone surrogates: this says where one is
        except (ValueError, RecursionError):
            value = data  # not JSON: the text itself
    path = surrogate_at(value)
    if path is None:
        return None
    found: Any = value
    for part in path:
        found = found[part]
    shown = found if isinstance(found, str) and has_surrogate(found) else path[-1]  # shown by repr: escaped
    return ToolInputError(tool_name, [ErrorDetail(json_path(path), SURROGATE_MESSAGE, shown, "unicode_surrogate")])


def looks_like_object(text: str | bytes | bytearray) -> bool:
    """Whether JSON text starts like an object (so that a JSON array is not taken as positional arguments)."""
    stripped = text.lstrip()
    return stripped[:1] in ("{", b"{")


def check_json_object(tool_name: str, text: str | bytes | bytearray) -> None:
    """Raise a `ToolInputError` for JSON text that is not an object (or not JSON at all)."""
    try:
        value = parse_json(text)
    except ValueError as exc:
        invalid = ToolInputError(tool_name, [ErrorDetail("$", f"Invalid JSON: {exc}", text, "json_invalid")])
        raise surrogate_error(tool_name, text) or invalid from None
    raise ToolInputError(tool_name, [ErrorDetail("$", "Arguments must be a JSON object", value, "object_type")])


def _replace(root: Any, path: list[Any], value: Any) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    if is_object(root) and head in root:
        return {**root, head: _replace(root[head], rest, value)}
    if is_array(root) and isinstance(head, int) and 0 <= head < len(root):
        return [*root[:head], _replace(root[head], rest, value), *root[head + 1 :]]
    return root


def _integral_floats_as_ints(exc: Any, root: Any) -> Any:
    """`root` with the integral floats pydantic refused as integers made ints; `None` if there are none."""
    from ._error_paths import real_path

    changed = False
    for err in exc.errors(include_url=False):
        given = err.get("input")
        if err.get("type") in _INTEGER_KINDS and isinstance(given, float) and given.is_integer():
            path = real_path(tuple(err.get("loc", ())), root, str(err.get("type")))
            root = _replace(root, path, int(given))
            changed = True
    return root if changed else None


def validate_json_strict(tool_name: str, validate_json: Callable[..., Any], data: str | bytes | bytearray) -> Any:
    """``validate_json(data, strict=True)``, integral floats accepted as integers, errors as `ToolInputError`."""
    try:
        return validate_json(data, strict=True)
    except validation_error_type() as exc:
        error: Any = exc
    try:
        root = parse_json(data)
    except ValueError:
        raise surrogate_error(tool_name, data) or ToolInputError(tool_name, details_from_pydantic(error)) from None
    fixed = _integral_floats_as_ints(error, root)
    if fixed is not None:
        try:
            return validate_json(pydantic_to_json()(fixed), strict=True)
        except validation_error_type() as again:
            error, root = again, fixed
    raise ToolInputError(tool_name, details_from_pydantic(error, root)) from None
