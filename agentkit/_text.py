"""Bounded text helpers for messages that quote what a model sent.

A model's input can be huge (a 10 MB tool name) or deeply nested (5,000 levels of lists): quoting it
whole in an error message would send it straight back, and `repr` of a deep value raises
`RecursionError`. Everything quoted in a message goes through these.
"""

from __future__ import annotations as _annotations

import difflib
import functools
import json
import reprlib
from collections.abc import Iterable, Sequence
from typing import Any, cast

from ._jsonish import is_object

__all__ = ["clip", "closest", "json_text", "shorten", "type_name"]

MAX_NAME_FOR_SUGGESTIONS = 256
"""Names longer than this get no "did you mean" (difflib is quadratic; no real name is that long)."""
MAX_CANDIDATES = 2_000


class _Repr(reprlib.Repr):
    def __init__(self, limit: int) -> None:
        super().__init__()
        self.maxlevel = 4
        self.maxdict = self.maxlist = self.maxtuple = self.maxset = self.maxfrozenset = 8
        self.maxstring = max(limit - 10, 20)
        self.maxlong = 40
        self.maxother = max(limit // 2, 20)

    def repr_str(self, x: str, level: int) -> str:
        if len(x) <= self.maxstring:
            return repr(x)
        half = self.maxstring // 2
        return repr(x[:half]) + f"...<{len(x) - 2 * half} more characters>..." + repr(x[-half:])


def shorten(value: Any, limit: int = 200) -> str:
    """`repr(value)`, at most about `limit` characters, and safe for values of any depth."""
    try:
        text = _Repr(limit).repr(value)
    except Exception:  # noqa: BLE001 - a __repr__ that raises: say what it is instead
        text = f"<{type(value).__name__} object>"
    return clip(text, limit)


def type_name(value: Any) -> str:
    """What `value` is, by its type only (``an object of type Creds``); a number, bool or None as itself.

    For errors about a value the application passed in the wrong place: deps, settings or a store may
    hold credentials (text included), and their repr would put those in a traceback, a log or a model's
    context. A number cannot, and says more as itself.
    """
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)
    return f"an object of type {type(value).__qualname__}"


def clip(text: str, limit: int = 200) -> str:
    """`text`, cut in the middle to at most about `limit` characters."""
    if len(text) <= limit:
        return text
    half = max(limit // 2 - 10, 1)
    return f"{text[:half]}...<{len(text) - 2 * half} more characters>...{text[-half:]}"


def closest(name: Any, candidates: Iterable[str], n: int = 3, cutoff: float = 0.5) -> list[str]:
    """The candidates most like `name`, best first (for "did you mean" hints).

    Bounded: a name that is not a string, or longer than `MAX_NAME_FOR_SUGGESTIONS`, gets no
    suggestions, and only the first `MAX_CANDIDATES` candidates (each capped in length) are compared.
    """
    if not isinstance(name, str) or not name or len(name) > MAX_NAME_FOR_SUGGESTIONS:
        return []
    pool: list[str] = []
    for candidate in candidates:
        # candidates may come from a model or a caller without a checker: anything, checked
        if isinstance(candidate, str) and len(candidate) <= MAX_NAME_FOR_SUGGESTIONS:  # pyright: ignore[reportUnnecessaryIsInstance]
            pool.append(candidate)
            if len(pool) >= MAX_CANDIDATES:
                break
    return difflib.get_close_matches(name, pool, n=n, cutoff=cutoff)


def json_text(value: Any, *, sort_keys: bool = False, ensure_ascii: bool = True, compact: bool = False) -> str:
    """`json.dumps(value)` that also encodes values nested deeper than Python recurses (iteratively).

    A model may send arguments thousands of levels deep; they are data to be refused by validation,
    and whatever writes them back (a hash, a stream delta, the next request) must not raise
    `RecursionError`. Leaves that are not JSON become their ``str``.
    """
    separators = (",", ":") if compact else (", ", ": ")
    try:
        return json.dumps(value, sort_keys=sort_keys, ensure_ascii=ensure_ascii, separators=separators, default=str)
    except RecursionError:
        return _dumps_iteratively(value, sort_keys, ensure_ascii, separators)


def _dumps_iteratively(value: Any, sort_keys: bool, ensure_ascii: bool, separators: tuple[str, str]) -> str:
    item_sep, key_sep = separators
    out: list[str] = []
    stack: list[Any] = [value]
    leaf = functools.partial(json.dumps, ensure_ascii=ensure_ascii, default=str)
    while stack:
        node = stack.pop()
        if isinstance(node, _Literal):
            out.append(node.text)
        elif is_object(node):
            items = sorted(node.items(), key=lambda kv: str(kv[0])) if sort_keys else list(node.items())
            stack.append(_Literal("}"))
            for index in range(len(items) - 1, -1, -1):
                key, item = items[index]
                stack.append(item)
                stack.append(_Literal(("" if index == 0 else item_sep) + leaf(str(key)) + key_sep))
            out.append("{")
        elif isinstance(node, (list, tuple)):
            node = cast("Sequence[Any]", node)
            stack.append(_Literal("]"))
            for index in range(len(node) - 1, -1, -1):
                stack.append(node[index])
                if index:
                    stack.append(_Literal(item_sep))
            out.append("[")
        else:
            out.append(leaf(node))
    return "".join(out)


class _Literal:
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text
