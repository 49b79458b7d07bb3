"""Tool-result caching: `ToolCache`, the ``cache=`` option of `@tool` for tools the user marks pure.

A cached tool's successful results are kept under a key made of its canonical arguments (validated, defaults
applied, key order ignored), for a time (`ttl`) and in a scope: one run (its resumed legs included), one
session (the runs given the same ``session_id=``), or the whole process. Concurrent identical calls run once
(single flight). Errors are never kept. A hit or a miss shows in `ToolResultEvent.cache` and in the call's
``execute_tool`` span (``agentkit.tool.cache``). A tool that requires approval cannot be cached: each call
must be decided, so `@tool` refuses the pair at definition time.

```python
from agentkit import tool
from agentkit.cache import ToolCache

@tool(cache=ToolCache(ttl=300, scope="process"))
def exchange_rate(base: str, quote: str) -> float:
    '''The exchange rate from base to quote.'''
    return 1.1

exchange_rate.cache.invalidate({"base": "EUR", "quote": "USD"})  # one entry, in every scope
exchange_rate.cache.clear()  # all of them
```
"""

from __future__ import annotations as _annotations

import asyncio
import json
import time
import weakref
from collections.abc import Callable, Hashable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from .exceptions import ToolDefinitionError

if TYPE_CHECKING:
    from .messages import ToolResult
    from .tools import Tool

__all__ = ["CacheScope", "ToolCache"]

CacheScope = Literal["run", "session", "process"]
"""Where a `ToolCache` keeps results: one run (with its resumed legs), the runs of one ``session_id=`` (a run
without one: its own run), or the whole process."""

_SCOPES = ("run", "session", "process")


class ToolCache:
    """How a pure tool's results are cached (pass it as ``@tool(cache=ToolCache(...))``); see the module.

    Args:
        ttl: seconds an entry is used (None: until invalidated, or the scope ends).
        scope: ``"run"`` (default), ``"session"`` or ``"process"``; see `CacheScope`.
        key: a function of the validated arguments (a dict of name -> value, as an approval policy sees
            them) returning a hashable key; default: the arguments as canonical JSON (sorted keys). Calls
            with equal keys share an entry (``key=lambda a: a["city"].lower()`` folds case).
        clock: the time source (seconds, monotonic); tests inject one to expire entries without sleeping.
        max_entries: entries kept per scope; the oldest goes first when a new one would pass it.
    """

    def __init__(
        self,
        ttl: float | None = None,
        *,
        scope: CacheScope = "run",
        key: Callable[[dict[str, Any]], Hashable] | None = None,
        clock: Callable[[], float] = time.monotonic,
        max_entries: int = 1024,
    ) -> None:
        # run-time checks: callers without a type checker pass anything
        if ttl is not None and (isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or ttl <= 0):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ToolDefinitionError("ToolCache", [f"ttl= must be a positive number of seconds or None, got {ttl!r}"])
        if scope not in _SCOPES:
            raise ToolDefinitionError("ToolCache", [f"scope= is one of {', '.join(_SCOPES)}; got {scope!r}"])
        if key is not None and not callable(key):
            raise ToolDefinitionError("ToolCache", [f"key= must be a function of the arguments, got {key!r}"])
        if isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 1:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ToolDefinitionError("ToolCache", [f"max_entries= is a whole number, at least 1: {max_entries!r}"])
        self.ttl = ttl
        self.scope: CacheScope = scope
        self.key = key
        self.clock = clock
        self.max_entries = max_entries
        self._tool: Tool[..., Any] | None = None
        # scope id -> key -> (expiry or None, result); a run's entries live as long as its state's memo
        self._shared: dict[Hashable, dict[Hashable, tuple[float | None, ToolResult]]] = {}
        self._runs: weakref.WeakKeyDictionary[Any, dict[Hashable, tuple[float | None, ToolResult]]] = (
            weakref.WeakKeyDictionary()
        )
        self._keys: dict[str, Hashable] = {}
        """A call's argument text -> its entry key (see `agentkit._agent._cache`); cleared with the entries."""
        # (scope id, key) -> the leader's pending outcome, for single flight
        self._flights: dict[tuple[Any, Hashable], asyncio.Future[ToolResult | None]] = {}

    def __repr__(self) -> str:
        return f"ToolCache(ttl={self.ttl!r}, scope={self.scope!r})"

    def _bind(self, tool: Tool[..., Any]) -> None:
        """Attach to `tool` (once: a cache keyed by arguments serves one function)."""
        if self._tool is not None and self._tool is not tool:
            raise ToolDefinitionError(
                tool.schema.qualname,
                [f"this ToolCache already serves the tool {self._tool.id!r}; give each tool its own ToolCache(...)"],
            )
        self._tool = tool

    def key_of(self, arguments: Mapping[str, Any] | str | bytes) -> Hashable:
        """The entry key of a call with these raw arguments (validated, defaults applied, then keyed).

        Raises:
            ToolInputError: the arguments do not fit the tool's input schema.
        """
        tool = self._tool
        if tool is None:
            raise ToolDefinitionError("ToolCache", ["this ToolCache serves no tool yet: pass it as @tool(cache=...)"])
        return self._key(tool.approval_arguments(arguments))

    def _key(self, shaped: dict[str, Any]) -> Hashable:
        if self.key is not None:
            return self.key(shaped)
        from pydantic_core import to_jsonable_python

        return json.dumps(to_jsonable_python(shaped, fallback=repr), sort_keys=True, separators=(",", ":"))

    def invalidate(self, arguments: Mapping[str, Any] | str | bytes) -> int:
        """Drop the entry of a call with these arguments, in every scope and run; the number dropped."""
        key = self.key_of(arguments)
        dropped = 0
        for entries in (*self._shared.values(), *self._runs.values()):
            if entries.pop(key, None) is not None:
                dropped += 1
        return dropped

    def clear(self) -> int:
        """Drop every entry, in every scope and run; the number dropped."""
        dropped = sum(len(entries) for entries in (*self._shared.values(), *self._runs.values()))
        self._shared.clear()
        self._keys.clear()
        for entries in self._runs.values():
            entries.clear()
        return dropped

    def _entries(self, run: Any, session: Hashable | None) -> dict[Hashable, tuple[float | None, ToolResult]]:
        """The entries the scope gives a call of `run` (its memo) in `session`."""
        if self.scope == "process":
            scope_id: Hashable = ("process",)
        elif self.scope == "session" and session is not None:
            scope_id = ("session", session)
        else:  # a run's own (a session scope without a session id too)
            entries = self._runs.get(run)
            if entries is None:
                entries = self._runs[run] = {}
            return entries
        entries = self._shared.get(scope_id)
        if entries is None:
            entries = self._shared[scope_id] = {}
        return entries

    def _get(self, entries: dict[Hashable, tuple[float | None, ToolResult]], key: Hashable) -> ToolResult | None:
        found = entries.get(key)
        if found is None:
            return None
        expires, result = found
        if expires is not None and self.clock() >= expires:
            del entries[key]
            return None
        return result

    def _put(self, entries: dict[Hashable, tuple[float | None, ToolResult]], key: Hashable, result: ToolResult) -> None:
        if key not in entries and len(entries) >= self.max_entries:
            del entries[next(iter(entries))]  # insertion order: the oldest
        entries[key] = (None if self.ttl is None else self.clock() + self.ttl, result)
