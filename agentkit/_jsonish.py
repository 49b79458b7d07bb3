"""Narrowing helpers for JSON-ish values: decoded JSON, JSON Schema documents and wire payloads.

``isinstance(value, dict)`` on an ``object`` narrows to ``dict[Unknown, Unknown]`` for a strict type
checker; these say what the value is (JSON objects have string keys) and narrow both ways.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from typing_extensions import TypeIs

MAX_DEPTH = 200
"""Arguments nested deeper than this are refused (pydantic-core's JSON parser stops there too)."""


def is_object(value: object) -> TypeIs[dict[str, Any]]:
    """Whether ``value`` is a JSON object (a ``dict``; JSON keys are strings)."""
    return isinstance(value, dict)


def is_array(value: object) -> TypeIs[list[Any]]:
    """Whether ``value`` is a JSON array (a ``list``)."""
    return isinstance(value, list)


def is_mapping(value: object) -> TypeIs[Mapping[str, Any]]:
    """Whether ``value`` is a mapping with string keys (any ``Mapping``, e.g. a caller's payload)."""
    return isinstance(value, Mapping)


def is_sequence(value: object) -> TypeIs[Sequence[Any]]:
    """Whether ``value`` is a sequence (any ``Sequence``; str and bytes are sequences too)."""
    return isinstance(value, Sequence)


def nested_deeper(value: object, levels: int = MAX_DEPTH) -> bool:
    """Whether `value` holds lists and mappings more than `levels` deep (iterative: any depth, no recursion).

    Data that deep is refused as arguments, and whatever reads it recursively (Python's own ``json``,
    ``copy``, a comparison) would raise `RecursionError` a few hundred levels further down.
    """
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, Mapping):
            children: Iterable[object] = cast("Mapping[object, object]", node).values()
        elif isinstance(node, (list, tuple)):
            children = cast("Sequence[object]", node)
        else:
            continue
        if depth >= levels:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False
