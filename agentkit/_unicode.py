r"""Lone surrogates: Python text that no vendor (and no UTF-8 encoder) can carry.

A vendor's JSON may hold a ``"\ud800"`` escape, which Python's ``json`` decodes to a lone surrogate, a code
point UTF-8 cannot encode. Left in a tool call it made pydantic-core raise `TypeError`, and left in a
history it made the next request fail inside the vendor SDK. Agentkit reads JSON as pydantic-core does:
such text is not valid Unicode, so arguments holding one are an ``invalid_arguments`` result, and text on
its way to a vendor carries each one as its escape (``\ud800``, six ASCII characters: inside a JSON string,
the same JSON value).
"""

from __future__ import annotations as _annotations

import re
from typing import Any

from ._jsonish import is_array, is_mapping, is_object

__all__ = ["encodes", "escaped", "escaped_data", "has_surrogate", "surrogate_at"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def has_surrogate(text: str) -> bool:
    """Whether `text` holds a surrogate code point (ASCII text, the common case, is answered at once)."""
    return not text.isascii() and _SURROGATE.search(text) is not None


def escaped(text: str) -> str:
    r"""`text` with each surrogate written as its escape (``\ud800``): text UTF-8 can carry, unchanged otherwise."""
    if not has_surrogate(text):
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def escaped_data(value: Any) -> Any:
    """JSON-ish data with `escaped` keys and strings: the same object when nothing needs it.

    For vendor items kept for replay (`AssistantMessage.provider_details`), which are shallow; data too deep
    to rebuild is returned as it is.
    """
    if isinstance(value, str):
        return escaped(value)
    if encodes(value) or surrogate_at(value) is None:
        return value
    try:
        return _rebuilt(value)
    except RecursionError:
        return value


def _rebuilt(value: Any) -> Any:
    if isinstance(value, str):
        return escaped(value)
    if is_object(value):
        return {escaped(str(k)): _rebuilt(v) for k, v in value.items()}
    if is_array(value):
        return [_rebuilt(v) for v in value]
    return value


def encodes(value: Any) -> bool:
    """Whether JSON-ish data encodes as UTF-8 JSON (pydantic-core's encoder, in C: the quick check before a walk)."""
    from pydantic_core import to_json

    try:
        to_json(value)
    except Exception:  # noqa: BLE001 - a surrogate, a value JSON cannot hold, nesting too deep: walk it
        return False
    return True


def surrogate_at(value: Any) -> list[Any] | None:
    """The path (``["a", 0]``) of the first string or key in `value` holding a surrogate; None if none does.

    Iterative (a path is linked to its parent's, and spelt out only when found), so arguments nested
    thousands of levels deep are walked in linear time, without `RecursionError`.
    """
    stack: list[tuple[Any, _Step | None]] = [(value, None)]
    while stack:
        node, step = stack.pop()
        if isinstance(node, str):
            if has_surrogate(node):
                return _spelt(step)
        elif is_mapping(node):
            entries: list[tuple[Any, Any]] = list(node.items())  # Any: a caller's keys need not be text
            for key, item in reversed(entries):
                here = _Step(key, step)
                if isinstance(key, str) and has_surrogate(key):
                    return _spelt(here)
                stack.append((item, here))
        elif is_array(node) or isinstance(node, tuple):
            items: list[Any] = list(node)  # pyright: ignore[reportUnknownArgumentType]  # a caller's tuple
            stack.extend((item, _Step(index, step)) for index, item in reversed(list(enumerate(items))))
    return None


class _Step:
    __slots__ = ("key", "parent")

    def __init__(self, key: object, parent: _Step | None) -> None:
        self.key = key
        self.parent = parent


def _spelt(step: _Step | None) -> list[Any]:
    keys: list[Any] = []
    while step is not None:
        keys.append(step.key)
        step = step.parent
    return keys[::-1]
