"""Results that are content for the model (an `ImagePart`, text, or a list of parts), not data.

A tool annotated ``-> ImagePart`` (or ``TextPart``, ``ContentPart``, ``list[ContentPart]``,
``ImagePart | str``, ``list[str | ImagePart]``, ...) returns what the model should *see*: its parts
are sent as they are (the image as an image), it has no output schema (there is no JSON to
describe; over MCP its parts are the result's content blocks), and its result is checked to be
such parts. An unannotated tool that returns parts is treated the same way.
"""

from __future__ import annotations as _annotations

import functools
import types
from collections.abc import Sequence
from typing import Annotated, Any, Union, cast, get_args, get_origin

from .messages import ContentPart, ImagePart, TextPart

__all__ = ["as_parts", "is_content", "is_content_annotation"]

_PARTS = (TextPart, ImagePart)
_SEQUENCES = (list, tuple, Sequence)


def _leaves(tp: Any) -> list[Any] | None:
    """The member types of a (nested) union, list or tuple annotation; None for anything else."""
    if get_origin(tp) is Annotated:
        return _leaves(get_args(tp)[0])
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        found: list[Any] = []
        for member in get_args(tp):
            inner = _leaves(member)
            if inner is None:
                return None
            found.extend(inner)
        return found
    if origin in _SEQUENCES or (isinstance(origin, type) and origin in (list, tuple)):
        args = [a for a in get_args(tp) if a is not Ellipsis]
        found = []
        for arg in args:
            inner = _leaves(arg)
            if inner is None:
                return None
            found.extend(inner)
        return found
    return [tp]


def is_content_annotation(tp: Any) -> bool:
    """Whether a return annotation says "parts for the model": parts (and text beside them) only."""
    try:
        return _is_content_annotation_cached(tp)
    except TypeError:  # unhashable metadata inside Annotated
        return _is_content_annotation(tp)


@functools.lru_cache(maxsize=1024)
def _is_content_annotation_cached(tp: Any) -> bool:
    return _is_content_annotation(tp)


def _is_content_annotation(tp: Any) -> bool:
    leaves = _leaves(tp)
    if not leaves:
        return False
    return any(leaf in _PARTS for leaf in leaves) and all(leaf in (*_PARTS, str) for leaf in leaves)


def is_content(value: Any) -> bool:
    """Whether `value` is a part, or a list/tuple of parts and strings with at least one part."""
    if isinstance(value, _PARTS):
        return True
    if isinstance(value, (list, tuple)) and value:
        items = cast("Sequence[Any]", value)
        return all(isinstance(v, (*_PARTS, str)) for v in items) and any(isinstance(v, _PARTS) for v in items)
    return False


def as_parts(value: Any) -> list[ContentPart]:
    """`value` as the parts a model receives: parts kept, text as `TextPart`, anything else as JSON text."""
    if isinstance(value, _PARTS):
        return [value]
    if isinstance(value, str):
        return [TextPart(value)]
    if (
        isinstance(value, Sequence)
        and not isinstance(value, (bytes, bytearray))
        and all(isinstance(v, (*_PARTS, str)) for v in cast("Sequence[object]", value))
    ):
        return [TextPart(v) if isinstance(v, str) else v for v in cast("Sequence[ContentPart | str]", value)]
    from pydantic_core import to_json

    return [TextPart(to_json(value, fallback=repr).decode())]
