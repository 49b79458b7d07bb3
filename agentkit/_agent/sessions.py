"""The MCP sessions an agent holds open while it runs, shared by concurrent runs and ``async with agent``."""

from __future__ import annotations as _annotations

import asyncio
import contextlib
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from ..registry import Registry
from ..tools import Tool

__all__ = ["MCPServerLike", "MCPSessions"]


class MCPServerLike(Protocol):
    """What `Agent(mcp_servers=[...])` accepts: an async context manager exposing its tools as `registry`."""

    @property
    def registry(self) -> Mapping[str, Tool[..., Any]]:
        """The server's tools under their keys (read after entering)."""
        ...

    async def __aenter__(self) -> Any: ...

    async def __aexit__(self, *exc: Any) -> Any: ...


class MCPSessions:
    """Opens the servers on the first `enter`, closes them on the last `leave` (a reference count).

    While open, `registry` is the agent's own tools plus every server's; closed, the agent's own.
    """

    def __init__(self, base: Registry, servers: Sequence[MCPServerLike]) -> None:
        self.base = base
        self.servers = list(servers)
        self.registry = base
        self._entered = 0
        self._stack: contextlib.AsyncExitStack | None = None
        self._lock_of_loop: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None

    def _lock(self) -> asyncio.Lock:
        # One lock per event loop: an agent may serve several `asyncio.run`s (e.g. `generate_sync`).
        loop = asyncio.get_running_loop()
        if self._lock_of_loop is None or self._lock_of_loop[0] is not loop:
            self._lock_of_loop = (loop, asyncio.Lock())
        return self._lock_of_loop[1]

    async def enter(self) -> None:
        """Open the sessions unless they are open already (concurrent runs share them)."""
        async with self._lock():  # concurrent runs must not open the sessions twice
            if self._entered == 0 and self.servers:
                stack = contextlib.AsyncExitStack()
                try:
                    base = self.base
                    registry = Registry(
                        dict(base.items()), mask_error_details=base.mask_error_details, transform=base.transform
                    )
                    for server in self.servers:
                        await stack.enter_async_context(server)
                        for key, item in server.registry.items():
                            registry.add(key, item)
                except BaseException:
                    await stack.aclose()
                    raise
                self._stack = stack
                self.registry = registry
            self._entered += 1

    async def leave(self) -> None:
        """Close the sessions when the last user leaves."""
        async with self._lock():
            self._entered -= 1
            if self._entered == 0 and self._stack is not None:
                stack, self._stack = self._stack, None
                self.registry = self.base
                await stack.aclose()
