"""Step 6 for a tool with ``cache=`` (`agentkit.cache`): its result from the cache, or run once and kept.

The key is the tool's `ToolCache` key of the call's validated arguments, remembered per argument text (the
same text always validates to the same key, so a hit skips validation); arguments that do not validate
run uncached: the registry answers them with its invalid-arguments error). Identical calls running at once
share the first one's outcome (single flight); a successful result is kept, an error never. The outcome
(``"hit"`` or ``"miss"``) is noted for the call's `ToolResultEvent` and set on its ``execute_tool`` span.
On a durable engine (Temporal), which replays a run's code, only run-scoped caches without a TTL apply:
anything else (a clock, another run's entries) could answer a replay differently from the first time.
"""

from __future__ import annotations as _annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Hashable
from typing import TYPE_CHECKING, Any, Literal

from ..exceptions import ToolInputError
from ..messages import ToolCall, ToolResult
from ._repeats import memo

if TYPE_CHECKING:
    from ..tools import Tool
    from .config import RunConfig
    from .state import RunState

__all__ = ["through_cache"]


async def through_cache(
    config: RunConfig,
    state: RunState,
    item: Tool[..., Any],
    call: ToolCall,
    run: Callable[[], Awaitable[ToolResult]],
) -> ToolResult:
    """`call`'s result: its cached one (a hit), a concurrent identical call's, or `run`'s (a miss)."""
    cache = item.cache
    assert cache is not None
    if item.requires_approval is not False:  # approval set on the tool after it was made: decide every call
        return await run()
    if config.engine.durable and (cache.scope != "run" or cache.ttl is not None):
        # a durable engine replays the run: only what the run itself kept (no clock, no other run) replays the same
        return await run()
    raw = call.arguments
    known = cache._keys  # pyright: ignore[reportPrivateUsage]  # argument text -> its key (validation is deterministic)
    key: Hashable | None = known.get(raw) if isinstance(raw, str) else None
    try:
        if key is None:
            key = cache._key(item.approval_arguments(raw, name=call.name))  # pyright: ignore[reportPrivateUsage]
            hash(key)
            if isinstance(raw, str):
                if len(known) >= cache.max_entries:
                    del known[next(iter(known))]
                known[raw] = key
    except ToolInputError:
        return await run()  # never runs: the registry answers it with the invalid-arguments error
    except Exception as exc:  # noqa: BLE001 - the developer's key function: the call fails, never runs unkeyed
        return ToolResult.error(
            call,
            f"The cache key of {call.name!r} could not be made ({type(exc).__name__}); the call did not run.",
            "cache_key",
            type(exc).__name__,
        )
    remembered = memo(state)
    entries = cache._entries(remembered, config.options.session_id)  # pyright: ignore[reportPrivateUsage]
    found = cache._get(entries, key)  # pyright: ignore[reportPrivateUsage]
    if found is not None:
        return _answered(config, remembered.outcomes, call, found, "hit")
    flights = cache._flights  # pyright: ignore[reportPrivateUsage]
    flight = (id(entries), key)
    loop = asyncio.get_running_loop()
    leader = flights.get(flight)
    if leader is not None and leader.get_loop() is loop:
        shared = await asyncio.shield(leader)
        if shared is not None:
            return _answered(config, remembered.outcomes, call, shared, "hit")
        # the first call paused or was cancelled: this one runs on its own
    outcome: asyncio.Future[ToolResult | None] = loop.create_future()
    flights[flight] = outcome  # None: "run it yourself" (no exception left unretrieved)
    result: ToolResult | None = None
    try:
        result = await run()
        if not result.is_error:
            cache._put(entries, key, result)  # pyright: ignore[reportPrivateUsage]
    finally:
        if flights.get(flight) is outcome:
            del flights[flight]
        outcome.set_result(result)
    assert result is not None  # `run` returned (else its exception went on, above)
    return _answered(config, remembered.outcomes, call, result, "miss")


def _answered(
    config: RunConfig,
    outcomes: dict[str, Literal["hit", "miss"]],
    call: ToolCall,
    result: ToolResult,
    how: Literal["hit", "miss"],
) -> ToolResult:
    """`result` as the answer to `call`, its outcome noted for the event and the span."""
    if config.emit is not None:
        outcomes[call.id] = how
    if config.tracing is not None:
        from opentelemetry import trace

        trace.get_current_span().set_attribute("agentkit.tool.cache", how)
    if result.call_id == call.id:
        return result
    return dataclasses.replace(result, call_id=call.id, name=call.name)
