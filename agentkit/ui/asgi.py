"""Serve an agent to a browser UI over HTTP: a Starlette app, or routes to mount in yours.

```python
from agentkit.ui.asgi import app

api = app(agent, protocol="vercel")      # POST / -> UI message stream (useChat's default transport)
api = app(agent, protocol="ag-ui")       # POST / -> AG-UI events (an AG-UI HttpAgent's url)
# uvicorn module:api --host 127.0.0.1
```

Needs the ``ui`` extra (``pip install 'agentkit-tools[ui]'``: Starlette, and ``ag-ui-protocol`` for AG-UI).

Each request is a JSON POST (``Content-Type: application/json`` is required: a browser cannot send that
cross-site without a CORS preflight, which this app never grants, so another site cannot start runs) of
at most ``max_body_bytes`` (413 beyond); a body that is not one the protocol takes is a 400. The ``Host``
header is checked (421 otherwise): by default, a request that reached a loopback address must name a
loopback host, so a web page cannot reach a local app through a host name of its own (DNS rebinding);
``allowed_hosts=`` lists the names a public deployment answers to. Paused runs wait in the `RunStore` (in
memory by default: one process), each under an unguessable id only the client that started the run gets.
Authentication, CORS and rate limits are the host application's: mount the routes behind its middleware,
and bind runs to users as the UI guide says ("Who may answer a pause").
"""

from __future__ import annotations as _annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

try:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response, StreamingResponse
    from starlette.routing import BaseRoute, Route
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("agentkit.ui.asgi needs Starlette: pip install 'agentkit-tools[ui]'") from exc

from .._net import is_loopback
from ._runs import MAX_BODY_BYTES, MemoryRunStore, RunStore, UIInputError, read_json
from ._serialize import ErrorText
from .vercel import UI_MESSAGE_STREAM_HEADERS, open_ui_message_stream

if TYPE_CHECKING:
    from ..agent import Agent

__all__ = ["LOOPBACK_HOSTS", "Protocol", "app", "check_host", "routes"]

Protocol = Literal["vercel", "ag-ui"]
"""The wire protocols served: ``"vercel"`` (AI SDK UI message stream) and ``"ag-ui"``."""


LOOPBACK_HOSTS: frozenset[str] = frozenset({"localhost", "127.0.0.1", "::1"})
"""The host names a request that reached a loopback address may carry by default (any port)."""


def _host_name(header: str) -> str:
    """``"Example.com:8000"`` -> ``"example.com"``; ``"[::1]:80"`` -> ``"::1"``."""
    host = header.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _allowed(name: str, patterns: Sequence[str]) -> bool:
    for pattern in patterns:
        pattern = pattern.lower()
        if pattern == "*" or name == pattern or (pattern.startswith("*.") and name.endswith(pattern[1:])):
            return True
    return False


def check_host(request: Request, allowed_hosts: Sequence[str] | None) -> None:
    """Refuse a request whose ``Host`` header names a host it should not come through (DNS rebinding).

    `allowed_hosts`: host names (``"example.com"``, ``"*.example.com"``; ports are ignored), ``["*"]`` for
    any; ``None`` (the default): a request that reached a loopback address must name a loopback host
    (`LOOPBACK_HOSTS`), other requests may name any (list your names to check those too).

    Raises:
        UIInputError: 421, naming the host.
    """
    name = _host_name(request.headers.get("host", ""))
    if allowed_hosts is not None:
        ok = _allowed(name, allowed_hosts)
    else:
        server = request.scope.get("server")
        bound = str(server[0]) if server else ""
        ok = not is_loopback(bound) or name in LOOPBACK_HOSTS
    if not ok:
        raise UIInputError(
            f"unexpected Host header {name!r}: this server answers other host names (allowed_hosts=)", 421
        )


def _problem(exc: UIInputError) -> Response:
    # ASCII JSON: a message may quote a lone surrogate ("\ud800") from the body, which UTF-8 cannot carry
    text = json.dumps({"error": exc.message}, ensure_ascii=True)
    return Response(text, status_code=exc.status, media_type="application/json")


Opener = Callable[[Any], Awaitable[AsyncIterator[str]]]
"""Starts the answer to a parsed body (raising `UIInputError` for one that cannot be answered)."""


def _endpoint(
    opener: Opener, headers: dict[str, str], max_body_bytes: int, allowed_hosts: Sequence[str] | None
) -> Callable[[Request], Any]:
    async def endpoint(request: Request) -> Response:
        try:
            check_host(request, allowed_hosts)
            body = await read_json(request, max_body_bytes)
            chunks = await opener(body)
        except UIInputError as exc:
            return _problem(exc)
        return StreamingResponse(chunks, headers=headers)

    return endpoint


def _opener(
    protocol: Protocol, agent: Agent[Any, Any], store: RunStore, on_error: ErrorText | None, run_options: dict[str, Any]
) -> tuple[Opener, dict[str, str]]:
    if protocol == "vercel":

        async def vercel(body: Any) -> AsyncIterator[str]:
            return await open_ui_message_stream(agent, body, store=store, on_error=on_error, **run_options)

        return vercel, dict(UI_MESSAGE_STREAM_HEADERS)
    if protocol == "ag-ui":
        from .agui import SSE_HEADERS, open_agui_stream

        async def agui(body: Any) -> AsyncIterator[str]:
            return open_agui_stream(agent, body, store=store, on_error=on_error, **run_options)  # errors in-stream

        return agui, dict(SSE_HEADERS)
    raise ValueError(f"protocol must be 'vercel' or 'ag-ui', got {protocol!r}")


def routes(
    agent: Agent[Any, Any],
    *,
    protocol: Protocol = "vercel",
    path: str = "/",
    store: RunStore | None = None,
    on_error: ErrorText | None = None,
    max_body_bytes: int = MAX_BODY_BYTES,
    allowed_hosts: Sequence[str] | None = None,
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
        max_body_bytes: the largest request body read (413 beyond).
        allowed_hosts: the ``Host`` names requests may carry (see `check_host`; default: loopback names for a
            loopback bind, else any).
        run_options: passed to `Agent.stream` for new turns (``deps=``, ``max_steps=``, ...); a resume takes
            only ``deps`` and ``context`` (the paused run keeps its own turn options).
    """
    if isinstance(allowed_hosts, str):
        raise TypeError(f"allowed_hosts= is a list of host names, got the string {allowed_hosts!r}")
    chosen = store if store is not None else MemoryRunStore()
    opener, headers = _opener(protocol, agent, chosen, on_error, run_options)
    return [Route(path, _endpoint(opener, headers, max_body_bytes, allowed_hosts), methods=["POST"])]


def app(
    agent: Agent[Any, Any],
    *,
    protocol: Protocol = "vercel",
    path: str = "/",
    store: RunStore | None = None,
    on_error: ErrorText | None = None,
    max_body_bytes: int = MAX_BODY_BYTES,
    allowed_hosts: Sequence[str] | None = None,
    **run_options: Any,
) -> Starlette:
    """A Starlette app serving `agent` over `protocol` at `path` (see `routes` for the arguments)."""
    served = routes(
        agent,
        protocol=protocol,
        path=path,
        store=store,
        on_error=on_error,
        max_body_bytes=max_body_bytes,
        allowed_hosts=allowed_hosts,
        **run_options,
    )
    return Starlette(routes=served)
