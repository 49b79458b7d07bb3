"""Narrowing helpers for JSON-ish values: decoded JSON, JSON Schema documents and wire payloads.

``isinstance(value, dict)`` on an ``object`` narrows to ``dict[Unknown, Unknown]`` for a strict type
checker; these say what the value is (JSON objects have string keys) and narrow both ways.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from typing_extensions import TypeIs


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
