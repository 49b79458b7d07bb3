"""Agent runs in a browser: JSON events, the Vercel AI SDK UI message stream, AG-UI, and an ASGI app.

* `event_to_dict` / `event_to_json`: any `Agent.stream` event as JSON (payloads dumped, never repr'd).
* `agentkit.ui.vercel`: the UI message stream ``useChat`` reads (no extra dependency).
* `agentkit.ui.agui`: AG-UI events as validated ``ag_ui.core`` models (``pip install 'agentkit-tools[ui]'``).
* `agentkit.ui.asgi`: a Starlette app or routes serving either protocol (``pip install 'agentkit-tools[ui]'``).
* `RunInput`, `RunStore`, `MemoryRunStore`: what a UI sends back, and where paused runs wait for it;
  `start_stream` / `UIRun`: the run answering it, taking a paused run only once it streams.
"""

from __future__ import annotations as _annotations

from ._runs import (
    MAX_BODY_BYTES,
    ClientToolResult,
    MemoryRunStore,
    RunInput,
    RunStore,
    UIInputError,
    UIRun,
    start_stream,
)
from ._serialize import event_to_dict, event_to_json, jsonable

__all__ = [
    "MAX_BODY_BYTES",
    "ClientToolResult",
    "MemoryRunStore",
    "RunInput",
    "RunStore",
    "UIInputError",
    "UIRun",
    "event_to_dict",
    "event_to_json",
    "jsonable",
    "start_stream",
]
