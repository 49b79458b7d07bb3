"""The playground's Starlette app: the page, the chat endpoint (the Vercel UI stream), and the inspectors.

Routes (``/api/*`` and ``/`` need the token when one is set; the static files are public code):

* ``GET /`` the page; ``GET /static/...`` its files (shipped in the wheel, no build step);
* ``GET /api/agent``: the agent, its tools (key, description, schemas, approval) and the vendors;
* ``POST /api/chat``: a ``useChat`` request, answered as a UI message stream (`agentkit.ui.vercel`);
* ``POST /api/payload`` ``{"vendor", "messages"}``: what that vendor would be sent next for the current
  conversation (`agentkit.testing.request_payload`, built offline by the vendor's own client), with the
  arguments and results the page masks masked the same way (the display transforms); without that
  vendor's SDK installed, the tools fragment (`Provider.format_tools`) and a note;
* ``GET /api/compatibility``: the per-vendor compatibility report of the agent's tools, built once in a
  worker thread (started when the page loads, ``GET /api/agent``) and again only when the tools change:
  the tab opens at once and a chat's stream never waits for it.

Requests are refused unless their ``Host`` is one the server was bound to (DNS rebinding: a web page
cannot reach the playground through a hostname of its own), and POSTs must be JSON (no cross-site
form posts). Every request but the static files needs the token (`agentkit dev` makes one and prints
it in the URL it opens, as Jupyter does), so another local user or process cannot drive the agent.
"""

from __future__ import annotations as _annotations

import asyncio
import dataclasses
import json
import secrets
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from .._jsonish import is_array, is_object
from ..messages import AssistantMessage, Message, TextPart, ToolCall, ToolResult, ToolResultsMessage
from ..tools import ToolTransform
from ..ui import MemoryRunStore, RunStore, UIInputError
from ..ui._runs import exact_history, read_json
from ..ui._serialize import display_text
from ..ui._vercel_input import conversation_input
from ..ui.asgi import routes

if TYPE_CHECKING:
    from ..agent import Agent

__all__ = ["STATIC", "create_app"]

STATIC = Path(str(resources.files("agentkit.playground") / "static"))
"""The page's files, shipped inside the package."""

_PLACEHOLDER = "(your next message)"


def _full_error(exc: BaseException) -> str:
    # A local development tool: the developer sees the whole first line (the UI adapters mask by default).
    first = (str(exc).splitlines() or [""])[0]
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def _agent_info(agent: Agent) -> dict[str, Any]:
    from ..providers import provider_names

    model = agent.model if isinstance(agent.model, str) or agent.model is None else agent.resolve_model().name
    tools = [
        {
            "key": key,
            "description": item.description,
            "inputSchema": item.input_schema,
            "outputSchema": item.output_schema,
            "requiresApproval": item.requires_approval is not False,
        }
        for key, item in agent.tools.items()
    ]
    return {
        "id": agent.id,
        "name": agent.name,
        "model": model,
        "instructions": agent.instructions_preview,
        "tools": tools,
        "vendors": provider_names(),
    }


async def _payload(agent: Agent, vendor: str, body: Any, store: RunStore) -> dict[str, Any]:
    from ..providers import get_provider
    from ..testing import request_payload

    messages = body.get("messages") if is_object(body) else None
    # the history the server recorded, as exact as the page may show it: what the page masks stays masked
    history = await exact_history(conversation_input(messages), store) if is_array(messages) else []
    history, masked = _as_shown(agent, history)
    prompt: Any = history or _PLACEHOLDER
    note = (
        f"{masked} tool call(s) or result(s) shown as the page shows them (their display transforms), not as "
        "they are sent"
        if masked
        else None
    )
    try:
        return {"vendor": vendor, "payload": request_payload(agent, prompt, provider=vendor), "note": note}
    except ImportError as exc:
        provider = get_provider(vendor)
        fragment = provider.format_tools(agent.tools)
        note = f"the full request needs the vendor's SDK ({exc}); showing the tools fragment, which needs none"
        return {"vendor": vendor, "payload": fragment, "note": note}


def _as_shown(agent: Agent, history: list[Message]) -> tuple[list[Message], int]:
    """`history` with what the page masks masked alike, failing closed; and how many payloads were masked.

    The arguments of tools with an ``input`` transform, the results of tools with an ``output`` one, and the
    error texts of either, as the page shows them.
    """
    from .._agent.display import display_arguments, error_text, merge_transforms, shape

    def rules(key: str) -> ToolTransform:
        own = agent.tools[key].transform if key in agent.tools else None
        return merge_transforms(own, agent.transform) or ToolTransform()

    masked = 0
    shown: list[Message] = []
    for message in history:
        if isinstance(message, AssistantMessage):
            calls: list[ToolCall] = []
            for call in message.tool_calls:
                transform = rules(call.name).input
                if transform is not None:
                    value, problem = shape(transform, display_arguments(call), "input")
                    arguments = value if problem is None and is_object(value) else {"withheld": problem or value}
                    call, masked = dataclasses.replace(call, arguments=arguments), masked + 1
                calls.append(call)
            message = dataclasses.replace(message, tool_calls=calls)
        elif isinstance(message, ToolResultsMessage):
            results: list[ToolResult] = []
            for result in message.results:
                each = rules(result.name)
                if result.is_error and (each.input is not None or each.output is not None or each.error is not None):
                    text, problem = shape(each.error, error_text(result, each), "error")
                    result, masked = _with_text(result, problem or display_text(text)), masked + 1
                elif not result.is_error and each.output is not None:
                    value, problem = shape(each.output, result.output, "output")
                    result, masked = _with_text(result, problem or display_text(value)), masked + 1
                results.append(result)
            message = ToolResultsMessage(results)
        shown.append(message)
    return shown, masked


def _with_text(result: ToolResult, text: str) -> ToolResult:
    return dataclasses.replace(result, content=(TextPart(text),), output=None)


def _compatibility(agent: Agent) -> list[dict[str, Any]]:
    from ..providers import compatibility

    return [
        {
            "vendor": entry.provider,
            "key": entry.key,
            "wireName": entry.wire_name,
            "strict": entry.strict,
            "rejected": entry.rejected,
            "nameProblem": entry.name_problem,
            "losses": [str(loss) for loss in entry.losses],
        }
        for entry in compatibility(agent.tools)
    ]


class _Report:
    """The compatibility rows of the agent's tools, built off the event loop and kept until the tools change.

    Building them imports every vendor's dialect and builds each tool's payloads: about a second on a
    cold process, seconds on a busy machine, which blocked the event loop (and any streaming chat) on
    every opening of the tab.
    """

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.built_for: tuple[tuple[str, int], ...] | None = None
        self.task: asyncio.Future[bytes] | None = None

    def start(self) -> asyncio.Future[bytes]:
        """The build for the tools as they are now: the one running or done, else a new one."""
        tools = tuple((key, id(item)) for key, item in self.agent.tools.items())
        task = self.task
        failed = task is not None and task.done() and (task.cancelled() or task.exception() is not None)
        if task is None or failed or tools != self.built_for:
            self.built_for = tools
            task = self.task = asyncio.ensure_future(asyncio.to_thread(_report_body, self.agent))
            # a failure is shown when the tab opens; a page that never opens it must not log it as lost
            task.add_done_callback(lambda done: done.cancelled() or done.exception())
        return task

    async def body(self) -> bytes:
        """The report as a JSON response body (serialized in the worker too: 800 rows take milliseconds)."""
        return await asyncio.shield(self.start())  # a client gone mid-build leaves the build to the next one


def _report_body(agent: Agent) -> bytes:
    return json.dumps(_compatibility(agent), ensure_ascii=False, separators=(",", ":")).encode()


class _Guard:
    """Host allow-list (against DNS rebinding) and, when set, the bearer token.

    A plain ASGI middleware, so streamed responses and client disconnects pass straight through.
    """

    def __init__(self, app: ASGIApp, hosts: frozenset[str], token: str | None) -> None:
        self.app = app
        self.hosts = hosts
        self.token = token

    def _authorized(self, request: Request) -> bool:
        if self.token is None:
            return True
        header = request.headers.get("authorization", "")
        given = header[len("Bearer ") :] if header.startswith("Bearer ") else request.query_params.get("token", "")
        return secrets.compare_digest(given.encode(), self.token.encode())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        host = request.headers.get("host", "").lower()
        refusal: Response | None = None
        if self.hosts and host not in self.hosts:
            refusal = JSONResponse({"error": f"unexpected Host header {host!r}"}, status_code=421)
        elif not request.url.path.startswith("/static/") and not self._authorized(request):
            message = "this playground needs its token: open the URL it printed (.../?token=...)"
            refusal = JSONResponse({"error": message}, status_code=401)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)


def create_app(
    agent: Agent,
    *,
    token: str | None = None,
    hosts: Iterable[str] = (),
    store: RunStore | None = None,
) -> Starlette:
    """The playground for `agent`.

    Args:
        agent: the agent to talk to.
        token: when set, every API request (and the page) must carry it (``Authorization: Bearer`` or
            ``?token=``).
        hosts: the ``Host`` header values accepted (``"127.0.0.1:8765"``, ...); empty accepts any.
        store: where paused runs wait (default: in memory).
    """
    chosen = store if store is not None else MemoryRunStore()
    compatibility = _Report(agent)

    async def index(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers={"cache-control": "no-store"})

    async def info(request: Request) -> Response:
        compatibility.start()  # the page has loaded: build the report now, before its tab is opened
        return JSONResponse(_agent_info(agent))

    async def payload(request: Request) -> Response:
        try:
            body = await read_json(request)
            vendor = body.get("vendor") if is_object(body) else None
            if not isinstance(vendor, str):
                raise UIInputError("send {'vendor': name, 'messages': [...]}")
            return JSONResponse(await _payload(agent, vendor, body, chosen))
        except UIInputError as exc:
            return JSONResponse({"error": exc.message}, status_code=exc.status)
        except Exception as exc:  # noqa: BLE001 - shown in the page, one line
            return JSONResponse({"error": _full_error(exc)}, status_code=422)

    async def report(request: Request) -> Response:
        try:
            return Response(await compatibility.body(), media_type="application/json")
        except Exception as exc:  # noqa: BLE001 - shown in the tab, one line
            return JSONResponse({"error": _full_error(exc)}, status_code=422)

    app_routes = [
        Route("/", index),
        Route("/api/agent", info),
        Route("/api/payload", payload, methods=["POST"]),
        Route("/api/compatibility", report),
        *routes(agent, protocol="vercel", path="/api/chat", store=chosen, on_error=_full_error),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    allowed = frozenset(h.lower() for h in hosts)
    return Starlette(routes=app_routes, middleware=[Middleware(_Guard, hosts=allowed, token=token)])
