"""Serve an agent to a browser UI over HTTP: a Starlette app, or routes to mount in yours.

```python
from agentkit.ui.asgi import app

api = app(agent, protocol="vercel")      # POST / -> UI message stream (useChat's default transport)
api = app(agent, protocol="ag-ui")       # POST / -> AG-UI events (an AG-UI HttpAgent's url)
# uvicorn module:api --host 127.0.0.1
```

Needs the ``ui`` extra (``pip install 'agentkit-tools[ui]'``: Starlette, and ``ag-ui-protocol`` for AG-UI).

Each request is a JSON POST (``Content-Type: application/json`` is required: a browser cannot send that
cross-site without a CORS preflight, which this app never grants, so another site cannot start runs).
Paused runs wait in the `RunStore` (in memory by default: one process). Authentication, CORS and rate
limits are the host application's: mount the routes behind its middleware.
"""

from __future__ import annotations as _annotations

from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, Literal

try:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import BaseRoute, Route
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("agentkit.ui.asgi needs Starlette: pip install 'agentkit-tools[ui]'") from exc

from ._runs import MemoryRunStore, RunStore, UIInputError, read_json
from ._serialize import ErrorText
from .vercel import UI_MESSAGE_STREAM_HEADERS, open_ui_message_stream

if TYPE_CHECKING:
    from ..agent import Agent

__all__ = ["Protocol", "app", "routes"]

Protocol = Literal["vercel", "ag-ui"]
"""The wire protocols served: ``"vercel"`` (AI SDK UI message stream) and ``"ag-ui"``."""


def _problem(exc: UIInputError) -> Response:
    return JSONResponse({"error": exc.message}, status_code=exc.status)


def _vercel_endpoint(
    agent: Agent[Any, Any], store: RunStore, on_error: ErrorText | None, run_options: dict[str, Any]
) -> Callable[[Request], Any]:
    async def endpoint(request: Request) -> Response:
        try:
            body = await read_json(request)
            chunks = await open_ui_message_stream(agent, body, store=store, on_error=on_error, **run_options)
        except UIInputError as exc:
            return _problem(exc)
        return StreamingResponse(chunks, headers=dict(UI_MESSAGE_STREAM_HEADERS))

    return endpoint


def _agui_endpoint(
    agent: Agent[Any, Any], store: RunStore, on_error: ErrorText | None, run_options: dict[str, Any]
) -> Callable[[Request], Any]:
    from .agui import SSE_HEADERS, open_agui_stream

    async def endpoint(request: Request) -> Response:
        try:
            body = await read_json(request)
        except UIInputError as exc:
            return _problem(exc)
        events: AsyncIterator[str] = open_agui_stream(agent, body, store=store, on_error=on_error, **run_options)
        return StreamingResponse(events, headers=dict(SSE_HEADERS))

    return endpoint


def routes(
    agent: Agent[Any, Any],
    *,
    protocol: Protocol = "vercel",
    path: str = "/",
    store: RunStore | None = None,
    on_error: ErrorText | None = None,
    **run_options: Any,
) -> list[BaseRoute]:
    """The POST route serving `agent` over `protocol` at `path`, to mount in a Starlette (or FastAPI) app.

    Args:
        agent: the agent to run.
        protocol: ``"vercel"`` or ``"ag-ui"``.
        path: where the endpoint answers.
        store: where paused runs and histories wait (default: a new `MemoryRunStore`).
        on_error: the text a UI is shown for an exception that ends a run (default: its type only, since
            messages can carry secrets); the exception is logged in full either way.
        run_options: passed to `Agent.stream` for new turns (``deps=``, ``max_steps=``, ...); a resume takes
            only ``deps`` and ``context`` (the paused run keeps its own turn options).
    """
    chosen = store if store is not None else MemoryRunStore()
    if protocol == "vercel":
        endpoint = _vercel_endpoint(agent, chosen, on_error, run_options)
    elif protocol == "ag-ui":
        endpoint = _agui_endpoint(agent, chosen, on_error, run_options)
    else:
        raise ValueError(f"protocol must be 'vercel' or 'ag-ui', got {protocol!r}")
    return [Route(path, endpoint, methods=["POST"])]


def app(
    agent: Agent[Any, Any],
    *,
    protocol: Protocol = "vercel",
    path: str = "/",
    store: RunStore | None = None,
    on_error: ErrorText | None = None,
    **run_options: Any,
) -> Starlette:
    """A Starlette app serving `agent` over `protocol` at `path` (see `routes` for the arguments)."""
    return Starlette(routes=routes(agent, protocol=protocol, path=path, store=store, on_error=on_error, **run_options))
