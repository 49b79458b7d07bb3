"""`Registry`: tools under keys. The key is the name the model sees, in every payload and every result."""

from __future__ import annotations as _annotations

import asyncio
from collections.abc import Callable, ItemsView, Iterable, Iterator, Mapping, Sequence
from typing import Any, cast, overload

from typing_extensions import ParamSpec, TypeVar, Unpack

from . import _tool_errors as failures
from ._choice import require_keys
from ._jsonish import is_mapping
from ._text import closest, shorten
from ._tool_results import result_now, result_of
from .context import ToolContext
from .definitions import ToolDefinition
from .exceptions import (
    ModelRetry,
    RegistryError,
    ToolDeadlineError,
    ToolError,
    ToolInputError,
    UnknownToolError,
)
from .messages import ToolCall, ToolResult
from .tools import Tool, ToolOptions, ToolTransform

__all__ = ["Registry"]

P = ParamSpec("P")
R = TypeVar("R")


def _as_tool(value: Any, where: str) -> Tool[..., Any]:
    if isinstance(value, Tool):
        return cast("Tool[..., Any]", value)
    if callable(value):
        return Tool(value)
    raise RegistryError(f"{where}: expected a tool or a function, got {value!r}")


class Registry(Mapping[str, Tool[..., Any]]):
    """Tools under keys; the key is the name a model sees and calls.

    Build it from a dict (``{key: tool_or_function}``), a list (key = the tool's `id`), or fill it with
    `add` and `@registry.tool`. Plain functions are made into tools on the way in.

    Example:
        ```python
        tools = Registry({"weather": get_weather, "search-docs": search})
        result = await tools.call(ToolCall(id="1", name="weather", arguments='{"city": "Paris"}'))
        ```
    """

    def __init__(
        self,
        tools: Mapping[str, Any] | Iterable[Any] | None = None,
        *,
        mask_error_details: bool | None = None,
        transform: ToolTransform | None = None,
    ) -> None:
        self._tools: dict[str, Tool[..., Any]] = {}
        self.version = 0
        """Bumped on every change (a tool added, or a held tool's description or strict changed)."""
        self.mask_error_details = mask_error_details
        """Tell the model a generic text instead of a failing tool's exception (None: as the caller says);
        a tool's own setting wins. An agent's runs apply their registry's. See the errors guide."""
        if transform is not None and not isinstance(transform, ToolTransform):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise RegistryError(f"Registry(transform=...) takes a ToolTransform(...), got {type(transform).__name__}")
        self.transform = transform
        """A `ToolTransform` policy for every tool's display payloads (events, transcripts, traces) in an
        agent's runs; a tool's own transform wins field by field."""
        self._definitions: tuple[int, tuple[ToolDefinition, ...]] | None = None
        self._asks: tuple[int, bool] | None = None
        if tools is None:
            return
        if is_mapping(tools):
            for key, value in tools.items():
                self.add(key, value)
        # run-time checks of the arguments: callers without a type checker pass anything
        elif isinstance(tools, (str, bytes)) or not isinstance(tools, Iterable):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise RegistryError(f"Registry() takes a dict of key -> tool or a list of tools, got {tools!r}")
        else:
            for value in tools:
                item = _as_tool(value, "Registry([...])")
                self.add(item.id, item)

    # ---- filling ---------------------------------------------------------------------------------

    def add(self, key: str, tool: Tool[..., Any] | Callable[..., Any]) -> Tool[..., Any]:
        """Register `tool` (or a function, wrapped with `tool`) under `key`; returns the tool.

        Raises:
            RegistryError: the key is empty or already taken (both tools are named).
        """
        if not isinstance(key, str) or not key:  # pyright: ignore[reportUnnecessaryIsInstance]  # untyped callers
            raise RegistryError(f"A registry key must be a non-empty string, got {key!r}")
        item = _as_tool(tool, f"Registry key {key!r}")
        existing = self._tools.get(key)
        if existing is not None:
            raise RegistryError(
                f"Duplicate key {key!r}: already holds {existing.schema.qualname}, cannot also hold "
                f"{item.schema.qualname}. Register one of them under another key, e.g. "
                f"Registry({{{key!r}: ..., {key + '_2'!r}: ...}})"
            )
        self._tools[key] = item
        item._held_by(self)  # pyright: ignore[reportPrivateUsage]  # the registry tells its tool who holds it
        self._changed()
        return item

    def _changed(self) -> None:
        self.version += 1

    @overload
    def tool(self, fn: Callable[P, R], /) -> Tool[P, R]: ...
    @overload
    def tool(
        self, /, *, key: str | None = None, **options: Unpack[ToolOptions]
    ) -> Callable[[Callable[P, R]], Tool[P, R]]: ...
    def tool(self, fn: Any = None, /, *, key: str | None = None, **options: Unpack[ToolOptions]) -> Any:
        """Decorator: make the function a `Tool` (same options as `tool`) and register it.

        The key is `key`, else the tool's id. Returns the `Tool`, exactly as `@tool` would.
        """

        def register(func: Any) -> Tool[..., Any]:
            item = cast("Tool[..., Any]", func) if isinstance(func, Tool) else Tool(func, **options)
            self.add(key if key is not None else item.id, item)
            return item

        return register(fn) if fn is not None else register

    # ---- mapping ---------------------------------------------------------------------------------

    def __getitem__(self, key: str) -> Tool[..., Any]:
        try:
            return self._tools[key]
        except KeyError:
            raise UnknownToolError(key, list(self._tools), closest(key, self._tools)) from None

    def require(self, *keys: str) -> None:
        """Check that a tool is registered under each of `keys`.

        Raises:
            UnknownToolError: for the first key no tool has, with the closest keys suggested.
        """
        require_keys(self._tools, keys)

    @overload
    def get(self, key: str, /) -> Tool[..., Any] | None: ...
    @overload
    def get(self, key: str, default: Tool[..., Any] | R, /) -> Tool[..., Any] | R: ...
    def get(self, key: str, default: Any = None, /) -> Any:
        """The tool under `key`, else `default` (one dict lookup: the loop asks for every call)."""
        return self._tools.get(key, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self._tools)

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, key: object) -> bool:
        return key in self._tools

    def __repr__(self) -> str:
        return f"Registry({list(self._tools)!r})"

    def items(self) -> ItemsView[str, Tool[..., Any]]:
        """(key, tool) pairs in registration order (the dict's own view: no lookup per key)."""
        return self._tools.items()

    def copy(self) -> Registry:
        """A new registry holding the same tools under the same keys (adding to it leaves this one as it is)."""
        copy = Registry(mask_error_details=self.mask_error_details, transform=self.transform)
        copy._tools = dict(self._tools)
        for item in copy._tools.values():
            item._held_by(copy)  # pyright: ignore[reportPrivateUsage]  # so a changed description or strict invalidates the copy's definitions too
        return copy

    def select(self, keys: Iterable[str]) -> Registry:
        """A registry holding only `keys` (same tools, same keys, in the order given).

        Raises:
            UnknownToolError: for a key not in this registry, with the closest keys suggested.
        """
        subset = Registry(mask_error_details=self.mask_error_details, transform=self.transform)
        for key in keys:
            item = subset._tools[key] = self[key]
            item._held_by(subset)  # pyright: ignore[reportPrivateUsage]
        return subset

    def definitions(self) -> tuple[ToolDefinition, ...]:
        """Every tool as models see it, in key order: what providers and test models receive.

        The same tuple (of the same definitions) is returned while the registry is unchanged, so the
        vendor layer can cache by it.
        """
        cached = self._definitions
        if cached is not None and cached[0] == self.version:
            return cached[1]
        found = tuple(item.definition(key) for key, item in self._tools.items())
        self._definitions = (self.version, found)
        return found

    def asks_approval(self) -> bool:
        """Whether any tool here may need approval (its `requires_approval` is not False).

        Decided once while the registry is unchanged: an agent run asks it before every turn with calls,
        and skips the per-call decisions when no tool can ask.
        """
        cached = self._asks
        if cached is not None and cached[0] == self.version:
            return cached[1]
        asks = any(item.requires_approval is not False for item in self._tools.values())
        self._asks = (self.version, asks)
        return asks

    # ---- calling ---------------------------------------------------------------------------------

    async def call(
        self,
        call: ToolCall,
        *,
        deps: Any = None,
        context: ToolContext[Any] | None = None,
        mask_error_details: bool | None = None,
        redact_input: bool | None = None,
    ) -> ToolResult:
        """Run one tool call and return its result. Never raises for the model's mistakes.

        An unknown name, malformed JSON, invalid arguments, an exception in the tool, a timeout, or a
        result that breaks the output schema each become a `ToolResult` with ``is_error=True`` and a
        message the model can act on (and a log record on the ``agentkit.tools`` logger). `ModelRetry`
        and `ToolError` pass the tool's own message on; an exception is told as its type and message,
        unless its details are masked.

        Args:
            call: the call; `call.name` is the registry key.
            deps: dependencies for the `ToolContext` built for this call.
            context: a context to copy for this call (its deps, agent, cancellation, progress sink).
            mask_error_details: tell the model a generic text instead of an exception's type and message,
                unless the tool or this registry says otherwise (they win). An agent run passes its own
                setting; default: not masked.
            redact_input: the call's input is hidden from displays (beyond the tool's own ``input``
                transform, which counts too): no error text or log record quotes the arguments. An agent
                run passes whether its transform policy redacts inputs; default: not.
        """
        given: tuple[Any, Any] = (call.name, call.id)  # Any: untyped callers pass anything
        if not isinstance(given[0], str) or not isinstance(given[1], str):
            return self._malformed(call)
        item = self._tools.get(call.name)
        if item is None:
            hint = closest(call.name, self._tools)  # bounded: a 10 MB name gets no fuzzy search
            suggestion = f" Did you mean {' or '.join(repr(h) for h in hint)}?" if hint else ""
            available = ", ".join(self._tools) or "none"
            text = f"Unknown tool {shorten(call.name, 100)}.{suggestion} Available tools: {available}."
            return failures.unknown_tool(call, text)
        schema, transform = item.schema, item.transform
        redacted = bool(redact_input) or (transform is not None and transform.input is not None)
        try:
            if schema.needs_thread:  # a backtracking pattern: off the event loop, within the tool's timeout
                kwargs = await item.avalidate_arguments(call.arguments, name=call.name)
            else:
                kwargs = schema.validate_arguments(call.name, call.arguments)
        except ToolInputError as exc:
            return failures.invalid_arguments(call, exc, redacted=redacted)
        ctx: ToolContext[Any] | None = None
        if schema.context_params:
            base = context if context is not None else ToolContext(deps=deps)
            ctx = base.for_call(call.id, call.name)
        try:
            value = await item.run(kwargs, ctx, name=call.name)
        except ModelRetry as exc:
            return failures.signal(call, "retry", exc.message, redacted=redacted)
        except ToolError as exc:
            return failures.signal(call, "tool_error", exc.message, redacted=redacted)
        except ToolDeadlineError as exc:  # agentkit's deadline; a TimeoutError of the tool's own is an exception
            return failures.signal(call, "timeout", str(exc), redacted=False)
        except Exception as exc:  # noqa: BLE001 - a failing tool is data for the model, never a crash
            return failures.failure(
                call, "exception", exc, mask=self._masks(item, mask_error_details), redacted=redacted
            )
        mask = self._masks(item, mask_error_details)
        if schema.needs_thread:
            return await result_of(item, call, value, mask=mask, redacted=redacted)
        return result_now(item, call, value, mask, redacted)  # no await: nothing here can suspend

    def _malformed(self, call: ToolCall) -> ToolResult:
        """The error result of a call whose name or id is not a string (a caller without a type checker)."""
        given: tuple[Any, Any] = (call.name, call.id)
        name, call_id = (value if isinstance(value, str) else shorten(value, 100) for value in given)
        what = "name" if not isinstance(given[0], str) else "id"
        text = (
            f"A tool call's {what} must be a string, got {shorten(given[what == 'id'], 100)}. "
            f"Available tools: {', '.join(self._tools) or 'none'}."
        )
        return failures.unknown_tool(ToolCall(id=call_id, name=name, arguments={}), text)

    def _masks(self, item: Tool[..., Any], default: bool | None) -> bool:
        """Whether `item`'s exceptions are masked: its own setting, else this registry's, else `default`."""
        setting = item.mask_error_details
        if setting is None:
            setting = self.mask_error_details
            if setting is None:
                return bool(default)
        return setting

    async def call_many(
        self, calls: Sequence[ToolCall], *, deps: Any = None, context: ToolContext[Any] | None = None
    ) -> list[ToolResult]:
        """Run calls concurrently; one result per call, in call order, whatever fails or times out."""
        if len(calls) == 1:
            return [await self.call(calls[0], deps=deps, context=context)]
        return list(await asyncio.gather(*(self.call(c, deps=deps, context=context) for c in calls)))
