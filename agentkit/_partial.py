"""JSON that is still arriving, as the part of it that already fits a schema (for displays, never for tools).

A streamed tool call's arguments, or a structured answer, arrive as growing JSON text. `PartialValidator`
reads the text so far (pydantic-core's ``from_json(..., allow_partial="trailing-strings")``: an unfinished
string is kept as far as it goes, an unfinished literal is left out, and so is a number at the very end,
which may still grow: ``2`` is not shown on the way to ``21``) and checks it against the
schema with what cannot hold yet relaxed: ``required`` and the ``min*`` counts are dropped (the rest may
still come) and ``oneOf`` reads as ``anyOf`` (half an object can fit several members). A value that breaks
the schema anyway (a wrong type, an unfinished string outside an ``enum``) is left out, so what remains is
JSON data every field of which is valid where it stands. Patterns are matched in linear time, and a
backtracking one gets a few milliseconds: this runs on the event loop, per stream event.
"""

from __future__ import annotations as _annotations

import functools
from collections.abc import Mapping
from typing import Any

from ._json_schema import JsonSchema
from ._jsonish import is_array, is_object

__all__ = ["PartialValidator", "partial_schema"]

# Keywords that a value still arriving cannot meet yet (or that only a whole value can decide).
_RELAXED = frozenset(
    {"required", "minItems", "minLength", "minProperties", "minContains", "dependentRequired", "dependentSchemas"}
)
_CONDITIONAL = frozenset({"if", "then", "else", "not"})
_MAX_ROUNDS = 16
_PATTERN_SECONDS = 0.005


def partial_schema(schema: Any) -> Any:
    """`schema` with the keywords a value still arriving cannot meet yet removed (see the module docs)."""
    if is_array(schema):
        return [partial_schema(s) for s in schema]
    if not is_object(schema):
        return schema
    out: JsonSchema = {}
    for key, value in schema.items():
        if key in _RELAXED or key in _CONDITIONAL:
            continue
        if key in ("properties", "$defs", "definitions", "patternProperties") and is_object(value):
            out[key] = {name: partial_schema(sub) for name, sub in value.items()}
        elif key in ("enum", "const", "default", "examples"):
            out[key] = value
        elif key == "oneOf":
            out["anyOf"] = partial_schema(value)
        else:
            out[key] = partial_schema(value)
    return out


@functools.lru_cache(maxsize=1)
def _from_json() -> Any:
    from pydantic_core import from_json

    return from_json


class PartialValidator:
    """Reads growing JSON text against a schema: `__call__` gives the valid part so far (or None).

    Built once per schema; every call is independent (give it the whole text so far, not a delta).
    """

    def __init__(self, schema: Mapping[str, Any]) -> None:
        from referencing import Registry
        from referencing.jsonschema import DRAFT202012

        from ._raw_schema import linear_validator_class

        relaxed = partial_schema(dict(schema))
        resource = DRAFT202012.create_resource(relaxed)
        empty: Registry[Any] = Registry()
        registry: Any = empty.with_resource("", resource).crawl()
        self._validator: Any = linear_validator_class()(relaxed, registry=registry)

    def __call__(self, text: str | bytes) -> Any:
        """The part of `text` (JSON, maybe unfinished) that fits the schema so far; None when nothing does yet."""
        # the timeout signal stays private to agentkit (every public error class lives in exceptions.py)
        from ._raw_schema import _PatternTimeout, pattern_budget  # pyright: ignore[reportPrivateUsage]

        if isinstance(text, (bytes, bytearray)):
            text = bytes(text).decode(errors="replace")
        text = _without_trailing_number(text)
        if not text.strip():
            return None
        try:
            data = _from_json()(text, allow_partial="trailing-strings")
        except ValueError:
            return None  # not JSON (yet): e.g. a model writing prose before its answer
        try:
            with pattern_budget(_PATTERN_SECONDS):
                for _ in range(_MAX_ROUNDS):
                    # deepest first, and later list items before earlier ones: a removal never moves a path
                    # still to be removed
                    paths = sorted(
                        (tuple(error.absolute_path) for error in self._validator.iter_errors(data)),
                        key=_removal_order,
                        reverse=True,
                    )
                    if not paths:
                        return data
                    if not paths[-1]:
                        return None  # the value itself does not fit (e.g. a list where an object belongs)
                    for path in dict.fromkeys(paths):
                        _remove(data, path)
        except (_PatternTimeout, RecursionError):
            return None
        return None


_NUMBER_END = frozenset("0123456789.eE+-")


def _without_trailing_number(text: str) -> str:
    """`text` without a number it ends in (outside a string): the number may not be finished yet."""
    end = len(text.rstrip())
    if not end or text[end - 1] not in _NUMBER_END:
        return text
    start = end
    while start and text[start - 1] in _NUMBER_END:
        start -= 1
    if _inside_string(text, start):
        return text
    return text[:start]


def _inside_string(text: str, at: int) -> bool:
    """Whether position `at` of JSON text is inside a string (quotes counted, escapes skipped)."""
    inside = False
    escaped = False
    for char in text[:at]:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = inside
        elif char == '"':
            inside = not inside
    return inside


def _removal_order(path: tuple[Any, ...]) -> tuple[int, int]:
    return len(path), path[-1] if path and isinstance(path[-1], int) else -1


def _remove(data: Any, path: tuple[Any, ...]) -> None:
    """Delete the member at `path` (a key or an index), if it is still there."""
    node = data
    for part in path[:-1]:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return
    last = path[-1]
    if is_object(node):
        node.pop(last, None)
    elif is_array(node) and isinstance(last, int) and 0 <= last < len(node):
        del node[last]
