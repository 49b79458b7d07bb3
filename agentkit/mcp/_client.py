"""`MCPServer`: an MCP server's tools as an agentkit `Registry`, over stdio or streamable HTTP."""

from __future__ import annotations as _annotations

import asyncio
import contextlib
import functools
import warnings
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, TextIO, cast

from pydantic_core import to_json

from .._jsonish import is_array, is_mapping, is_object
from ..context import ToolContext
from ..exceptions import AgentkitWarning, ToolDefinitionError, ToolError, ToolSuspended
from ..messages import ContentPart, ImagePart, TextPart
from ..registry import Registry
from ._client_extras import ResourcesAndPrompts, list_all
from ._common import MCPConnectionError, content_to_parts, describe, require_mcp
from ._elicit import ApprovalFromAnnotations, Elicitations, MCPTool, ToolAnnotations
from ._stdio import OVERSIZE, message_cap, stdio_transport
from ._tasks import call_as_task, follow_task, is_task, session_extensions
from ._trust import DriftPolicy, ToolDrift, fingerprint, tool_drift

if TYPE_CHECKING:
    from mcp import ClientSession
    from mcp import types as mcp_types

__all__ = ["DEFAULT_MAX_RESULT_BYTES", "MCPServer", "StructuredOutput"]

_Streams = tuple[Any, Any]
DEFAULT_MAX_RESULT_BYTES = 1 << 20
"""The default `MCPServer` limit on one tool result: 1 MiB (about 250,000 tokens of text)."""
_ABORT_BOUND = 10.0
"""Seconds a failed attempt waits at most for the transport's clean-up (mcp's own bounds are shorter)."""
ProtocolChoice = Literal["auto", "legacy", "2026-07-28"]
"""`MCPServer(protocol=...)`: negotiated (``"auto"``), the ``initialize`` handshake, or 2026-07-28 only."""
_MODERN = ("2026-07-28",)
_MAX_ROUNDS = 10
"""``input_required`` rounds one call may take (the `mcp` client's own default)."""
_TransportFactory = Callable[[], AbstractAsyncContextManager[_Streams]]


class StructuredOutput(dict[str, Any]):
    """An MCP tool's ``structuredContent`` (a dict), also carrying the result's non-text content parts.

    It is the tool's output as the application sees it (``result.output``); `parts` holds the images
    and other non-text blocks the server sent alongside, which the model receives after the JSON.
    """

    parts: list[ContentPart]

    def __init__(self, value: Mapping[str, Any], parts: Sequence[ContentPart] = ()) -> None:
        super().__init__(value)
        self.parts = list(parts)


def _model_output(value: Any) -> list[ContentPart]:
    """`to_model_output` of MCP tools: text stays text, images become `ImagePart`s, data becomes JSON."""
    if isinstance(value, StructuredOutput):
        return [TextPart(to_json(dict(value)).decode()), *value.parts]
    if isinstance(value, str):
        return [TextPart(value)]
    if is_array(value) and value and all(isinstance(v, (TextPart, ImagePart)) for v in value):
        return list(value)
    return [TextPart(to_json(value, fallback=repr).decode())]


class _HttpRefusals:
    """The last HTTP error status the server answered with (the mcp transport reports it without one)."""

    def __init__(self) -> None:
        self.last: tuple[int, str] | None = None

    async def note(self, response: Any) -> None:
        if response.status_code >= 400:
            self.last = (response.status_code, str(response.reason_phrase))

    def describe(self) -> str:
        if self.last is None:
            return ""
        code, reason = self.last
        hint = ": check the bearer token (bearer_token=) or headers" if code in (401, 403) else ""
        return f" (HTTP {code} {reason}{hint})"


class MCPServer(ResourcesAndPrompts):
    """A connection to one MCP server whose tools become a `Registry`.

    Open it with ``async with`` (or hand it to an agent, which does): the server is started (stdio) or
    reached (HTTP), initialized, and its tools listed into `registry`, keyed by their MCP names (plus
    `prefix`). Input and output schemas are kept verbatim; agentkit validates the arguments before
    anything is sent, and a result's ``structuredContent`` against the tool's ``outputSchema``.

    What a call returns, and what the model sees:

    * ``structuredContent`` -> a `StructuredOutput` (a dict); the model gets it as JSON, plus any images;
    * text only -> the text (blocks joined by newlines);
    * images or other blocks -> a list of `TextPart` / `ImagePart`, passed to the model as they are;
    * ``isError: true`` -> an error tool result with the server's text (a `ToolError` inside the tool);
    * a closed connection (the server crashed), a protocol error, or a call running longer than
      `timeout` -> an error tool result; the run goes on.

    Example:
        ```python
        async with MCPServer.stdio("uvx", ["mcp-server-time"]) as server:
            result = await server.registry.call(ToolCall(id="1", name="get_current_time",
                                                         arguments={"timezone": "UTC"}))
        ```

    The server's resources and prompts are listed too (`resources`, `resource_templates`, `prompts`):
    read them with `read_resource`, follow them with `subscribe`, get prompts as messages with
    `get_prompt`, or let the model read resources with ``resource_tool=True``.

    The session lives in a task of its own, so entering and leaving may happen in different tasks
    (as with test fixtures); both must run on the same event loop.
    """

    def __init__(
        self,
        transport: _TransportFactory,
        *,
        name: str,
        timeout: float | None = 60.0,
        connect_timeout: float | None = 30.0,
        prefix: str = "",
        max_result_bytes: int | None = DEFAULT_MAX_RESULT_BYTES,
        requires_approval: ApprovalFromAnnotations = False,
        resource_tool: bool = False,
        pinned: Mapping[str, str] | None = None,
        on_drift: DriftPolicy = "refuse",
        protocol: ProtocolChoice = "auto",
        http_refusals: _HttpRefusals | None = None,
    ) -> None:
        """Wrap a transport; prefer the `stdio` and `http` constructors.

        Args:
            transport: a factory of async context managers yielding ``(read_stream, write_stream)``,
                e.g. ``lambda: mcp.client.stdio.stdio_client(params)``.
            name: how errors name the server until it tells its own name.
            timeout: seconds one tool call may take before it becomes a timeout error (None: no limit).
            connect_timeout: seconds to start, initialize and list tools before giving up, the first
                import of `mcp` included; a server that accepts and never answers is given up on then
                (a stdio server that ignores its closed stdin then takes the mcp SDK's 2 s grace to stop).
            prefix: put before every tool name to make the registry keys (e.g. ``"time_"``).
            max_result_bytes: the largest tool result passed on (its text, data and structured content
                added up, in bytes; None: no limit). A larger one becomes an error result for the model.
            requires_approval: approval for every tool (a bool), or decided per tool from its
                `ToolAnnotations` (e.g. ``lambda a: a.destructive``), returning a bool or a policy.
            resource_tool: add a ``read_resource`` tool (key ``prefix + "read_resource"``) letting the
                model read the server's resources by URI, when it has any.
            pinned: the `fingerprints` the app approved (tool name -> fingerprint); a tool listed
                differently, or not pinned at all, is drift (`drift`), handled by `on_drift`.
            on_drift: ``"refuse"`` (leave such tools out of the registry), ``"report"`` (offer them,
                with a warning), or a callable deciding per `ToolDrift`.
            protocol: ``"auto"`` (the newest both sides speak: 2026-07-28 if the server answers
                ``server/discover``, else the handshake), ``"legacy"`` (the ``initialize`` handshake), or
                ``"2026-07-28"`` (fail unless the server speaks it).
            http_refusals: where the `http` constructor's client notes HTTP errors (for messages).
        """
        if protocol not in ("auto", "legacy", *_MODERN):
            raise ValueError(f"protocol= must be 'auto', 'legacy' or one of {list(_MODERN)}, got {protocol!r}")
        self.protocol = protocol
        self._transport = transport
        self._http_refusals = http_refusals
        self.resource_tool = resource_tool
        self.pinned = dict(pinned) if pinned is not None else None
        self.on_drift: DriftPolicy = on_drift
        self.drift: list[ToolDrift] = []
        """How the listed tools differ from `pinned`, found when the session opened (empty without `pinned`)."""
        self._init_extras()
        if not _is_policy(requires_approval):  # a truthy "no" would mean "needs approval" on every tool
            raise ValueError(
                "MCPServer(requires_approval=...) must be True, False or a function of a tool's ToolAnnotations "
                f"returning one of those (or a function of the call's arguments), got {requires_approval!r}"
            )
        self.requires_approval = requires_approval
        self._elicitations = Elicitations(lambda: self.name)
        self.name = name
        """The server's name: the given one, replaced by the server's own after initialization."""
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.prefix = prefix
        self.max_result_bytes = max_result_bytes
        self._registry: Registry | None = None
        self._session: ClientSession | None = None
        self._runner: asyncio.Task[None] | None = None
        self._users = 0
        self._enter_lock: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None
        self._stop: asyncio.Event | None = None
        self._failure: BaseException | None = None
        self.listed_tools: list[mcp_types.Tool] = []
        """The tools as the server listed them (mcp `Tool` models), in listing order."""
        self.server_info: mcp_types.Implementation | None = None
        """The server's name and version from initialization."""
        self.instructions: str | None = None
        """The server's instructions from initialization, if any."""

    # ---- constructors -----------------------------------------------------------------------------

    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        timeout: float | None = 60.0,
        connect_timeout: float | None = 30.0,
        prefix: str = "",
        name: str | None = None,
        errlog: TextIO | None = None,
        max_result_bytes: int | None = DEFAULT_MAX_RESULT_BYTES,
        requires_approval: ApprovalFromAnnotations = False,
        resource_tool: bool = False,
        pinned: Mapping[str, str] | None = None,
        on_drift: DriftPolicy = "refuse",
        protocol: ProtocolChoice = "auto",
    ) -> MCPServer:
        """An MCP server started as a subprocess, spoken to over its stdin/stdout.

        Args:
            command: the executable, e.g. ``"uvx"`` or ``sys.executable``.
            args: its arguments, e.g. ``["-m", "mcp_server_time"]``.
            env: extra environment variables (merged over mcp's small safe default environment).
            cwd: the working directory of the process.
            timeout: seconds one tool call may take (None: no limit).
            connect_timeout: seconds to start, initialize and list tools.
            prefix: put before every tool name to make the registry keys.
            name: how errors name the server until it tells its own name (default: the command line).
            errlog: where the server's stderr goes (default: this process's stderr).
            max_result_bytes: the largest tool result passed on (default 1 MiB; None: no limit).
            requires_approval: approval for every tool, or per tool from its `ToolAnnotations`.
            resource_tool: add a ``read_resource`` tool for the server's resources.
            pinned: the approved `fingerprints`; drift from them is handled by `on_drift`.
            on_drift: ``"refuse"``, ``"report"`` or a callable (see `MCPServer`).
            protocol: ``"auto"`` (negotiated), ``"legacy"`` or ``"2026-07-28"`` (see `MCPServer`).
        """
        arguments = [str(a) for a in args]

        def transport() -> AbstractAsyncContextManager[_Streams]:
            mcp = require_mcp()
            params = mcp.StdioServerParameters(
                command=command, args=arguments, env=dict(env) if env is not None else None, cwd=cwd
            )
            # A message over the cap is dropped as it arrives, its call failing at once with the size.
            return stdio_transport(params, errlog=errlog, max_message_bytes=message_cap(max_result_bytes))

        label = name or " ".join([command, *arguments])
        return cls(
            transport,
            name=label,
            timeout=timeout,
            connect_timeout=connect_timeout,
            prefix=prefix,
            max_result_bytes=max_result_bytes,
            requires_approval=requires_approval,
            resource_tool=resource_tool,
            pinned=pinned,
            on_drift=on_drift,
            protocol=protocol,
        )

    @classmethod
    def http(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        bearer_token: str | None = None,
        http_client: Any = None,
        timeout: float | None = 60.0,
        connect_timeout: float | None = 30.0,
        prefix: str = "",
        name: str | None = None,
        max_result_bytes: int | None = DEFAULT_MAX_RESULT_BYTES,
        requires_approval: ApprovalFromAnnotations = False,
        resource_tool: bool = False,
        pinned: Mapping[str, str] | None = None,
        on_drift: DriftPolicy = "refuse",
        protocol: ProtocolChoice = "auto",
    ) -> MCPServer:
        """An MCP server reached over streamable HTTP at `url` (e.g. ``http://127.0.0.1:8000/mcp``).

        Args:
            url: the MCP endpoint.
            headers: extra HTTP headers for every request (e.g. an ``Authorization`` header).
            bearer_token: an OAuth bearer token (e.g. the user's own), sent as ``Authorization: Bearer
                ...`` on every request; never shown by `repr` or in errors.
            http_client: a configured ``httpx2.AsyncClient`` to use instead (then `headers` is ignored).
            timeout: seconds one tool call may take (None: no limit).
            connect_timeout: seconds to connect, initialize and list tools.
            prefix: put before every tool name to make the registry keys.
            name: how errors name the server until it tells its own name (default: the URL).
            max_result_bytes: the largest tool result passed on (default 1 MiB; None: no limit).
            requires_approval: approval for every tool, or per tool from its `ToolAnnotations`.
            resource_tool: add a ``read_resource`` tool for the server's resources.
            pinned: the approved `fingerprints`; drift from them is handled by `on_drift`.
            on_drift: ``"refuse"``, ``"report"`` or a callable (see `MCPServer`).
            protocol: ``"auto"`` (negotiated), ``"legacy"`` or ``"2026-07-28"`` (see `MCPServer`).
        """
        extra = dict(headers or {})
        refusals = _HttpRefusals()
        if bearer_token is not None:
            if http_client is not None:
                raise ValueError("bearer_token= and http_client= together: set the Authorization header on your client")
            if not bearer_token.strip() or any(c.isspace() for c in bearer_token):
                raise ValueError("bearer_token= is blank or has whitespace: pass the token itself, without 'Bearer '")
            extra["Authorization"] = f"Bearer {bearer_token}"

        @contextlib.asynccontextmanager
        async def transport() -> AsyncGenerator[_Streams, None]:
            require_mcp()
            from mcp.client.streamable_http import streamable_http_client

            client: Any = http_client  # an httpx2.AsyncClient
            async with contextlib.AsyncExitStack() as stack:
                if client is None:
                    import httpx2

                    # pyright infers Unknown for what httpx2.AsyncClient.__aenter__ returns
                    client = cast(
                        Any,
                        await stack.enter_async_context(
                            httpx2.AsyncClient(
                                headers=extra,
                                timeout=httpx2.Timeout(30.0, read=300.0),
                                event_hooks={"response": [refusals.note]},
                            )
                        ),
                    )
                # One SSE event carries one result, often twice (text and structured content): the
                # transport's own cap follows max_result_bytes so that the limit above is the one that acts.
                streams = await stack.enter_async_context(
                    streamable_http_client(url, http_client=client, max_sse_event_size=message_cap(max_result_bytes))
                )
                yield streams[0], streams[1]

        return cls(
            transport,
            name=name or url,
            http_refusals=refusals,
            timeout=timeout,
            connect_timeout=connect_timeout,
            prefix=prefix,
            max_result_bytes=max_result_bytes,
            requires_approval=requires_approval,
            resource_tool=resource_tool,
            pinned=pinned,
            on_drift=on_drift,
            protocol=protocol,
        )

    # ---- lifetime ---------------------------------------------------------------------------------

    @property
    def registry(self) -> Registry:
        """The server's tools under their MCP names (plus `prefix`); available inside ``async with``."""
        if self._registry is None:
            raise MCPConnectionError(
                f"MCP server {self.name!r} is not connected: use `async with server:` (or pass it to an "
                "agent's mcp_servers=) before reading server.registry"
            )
        return self._registry

    @property
    def connected(self) -> bool:
        """Whether the session is open (entered, initialized, not closed)."""
        return self._session is not None

    def _lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if self._enter_lock is None or self._enter_lock[0] is not loop:
            self._enter_lock = (loop, asyncio.Lock())
        return self._enter_lock[1]

    async def __aenter__(self) -> MCPServer:
        """Open the session; nested or shared entries (several agents) reuse it until the last one leaves."""
        async with self._lock():
            if self._runner is not None and self._users > 0:
                self._users += 1
                return self
            await self._open()
            self._users = 1
        return self

    async def _open(self) -> None:
        loop = asyncio.get_running_loop()
        started = loop.time()  # connect_timeout bounds everything from here, the first import of mcp included
        require_mcp()
        ready: asyncio.Future[None] = loop.create_future()
        self._stop = asyncio.Event()
        self._failure = None
        self._runner = loop.create_task(self._run(ready), name=f"agentkit-mcp:{self.name}")
        try:
            remaining = None if self.connect_timeout is None else max(0.0, started + self.connect_timeout - loop.time())
            await asyncio.wait_for(asyncio.shield(ready), remaining)
        except BaseException as exc:
            await self._abort()
            if ready.done() and not ready.cancelled():
                ready.exception()  # retrieved here, reported below
            if isinstance(exc, asyncio.TimeoutError):
                raise MCPConnectionError(
                    f"MCP server {self.name!r} did not start, initialize and list its tools within "
                    f"{self.connect_timeout:g} s"
                ) from None
            if isinstance(exc, Exception):
                status = self._http_refusals.describe() if self._http_refusals is not None else ""
                raise MCPConnectionError(
                    f"Could not connect to MCP server {self.name!r}: {describe(exc)}{status}"
                ) from exc
            raise

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        async with self._lock():
            self._users = max(0, self._users - 1)
            if self._users == 0:
                await self._shutdown()

    async def aclose(self) -> None:
        """Close the session (and stop a stdio server) now, however many entries are open."""
        async with self._lock():
            self._users = 0
            await self._shutdown()

    async def _shutdown(self) -> None:
        runner, self._runner = self._runner, None
        self._registry = None
        if runner is None:
            return
        if self._stop is not None:
            self._stop.set()
        # stdio shutdown closes stdin, waits up to 2 s, then kills the process tree (mcp's own bounds).
        done, _ = await asyncio.wait({runner}, timeout=10.0)
        if not done:
            runner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await runner
        elif not runner.cancelled():
            runner.exception()  # retrieved: close-time errors of a crashed server are not the caller's

    async def _abort(self) -> None:
        """Stop a session that failed to open: cancelled at once, not asked to stop.

        A graceful stop would wait for a server that does not answer. What remains is the transport's
        own bounded clean-up: nothing over HTTP; for stdio the mcp SDK's shutdown (close stdin, a grace
        of up to 2 s, then terminate the process tree), waited for so that no child outlives the error.
        """
        runner, self._runner = self._runner, None
        self._registry = None
        if runner is None:
            return
        runner.cancel()
        done, _ = await asyncio.wait({runner}, timeout=_ABORT_BOUND)
        if done and not runner.cancelled():
            runner.exception()  # retrieved: the connection error is reported by the caller

    async def _run(self, ready: asyncio.Future[None]) -> None:
        """Own the transport and session from start to close, in one task (anyio scopes need that)."""
        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport())
                session = await stack.enter_async_context(
                    _session_class()(
                        read,
                        write,
                        elicitation_callback=self._elicitations,
                        message_handler=self._on_message,
                        **session_extensions(),
                    )
                )
                await _negotiate(session, self.protocol)
                tools = await _list_tools(session)
                await self._list_extras(session)
                self.server_info = session.server_info
                self.instructions = session.instructions
                if self.server_info is not None and self.server_info.name:
                    self.name = self.server_info.name
                self.listed_tools = tools
                self._registry = self._build_registry(tools)
                self._session = session
                ready.set_result(None)
                assert self._stop is not None
                await self._stop.wait()
        except BaseException as exc:
            if not ready.done():
                if isinstance(exc, asyncio.CancelledError):
                    ready.cancel()
                else:
                    ready.set_exception(exc)
            self._failure = exc
            if not isinstance(exc, Exception):
                raise
        finally:
            self._session = None

    # ---- tools ------------------------------------------------------------------------------------

    @property
    def fingerprints(self) -> dict[str, str]:
        """Each listed tool's fingerprint (name -> ``sha256:...``), to pin.

        Store them when the app approves the server, and pass them back as ``pinned=`` to detect drift.
        """
        return {t.name: fingerprint(t) for t in self.listed_tools}

    def _build_registry(self, tools: Sequence[mcp_types.Tool]) -> Registry:
        registry = Registry()
        refused: set[str] = set()
        if self.pinned is not None:
            self.drift, refused = tool_drift({t.name: t for t in tools}, self.pinned, self.on_drift)
            for drift in self.drift:
                warnings.warn(f"MCP server {self.name!r}: {drift}", AgentkitWarning, stacklevel=2)
        for listed in tools:
            if listed.name in refused:
                continue
            annotations = ToolAnnotations.from_mcp(listed.annotations)
            policy = self.requires_approval
            approval = policy(annotations) if callable(policy) else policy
            if not _is_policy(approval):  # said here, not as "its schema is unusable" below
                raise ValueError(
                    f"MCP server {self.name!r}: the requires_approval function returned {approval!r} for tool "
                    f"{listed.name!r}; return True, False or a function of the call's arguments"
                )
            try:
                item = MCPTool(
                    self._forwarder(listed.name, listed.output_schema is not None, _task_support(listed) == "required"),
                    id=listed.name,
                    description=listed.description or listed.title or "",
                    input_schema=dict(listed.input_schema),
                    output_schema=dict(listed.output_schema) if listed.output_schema is not None else None,
                    timeout=self.timeout,
                    to_model_output=_model_output,
                    requires_approval=approval,
                )
            except ToolDefinitionError as exc:
                warnings.warn(
                    f"MCP server {self.name!r}: tool {listed.name!r} skipped, its schema is unusable: {exc}",
                    AgentkitWarning,
                    stacklevel=2,
                )
                continue
            item.annotations, item.server = annotations, self.name
            registry.add(self.prefix + listed.name, item)
        if self.resource_tool and (self.resources or self.resource_templates):
            registry.add(self.prefix + "read_resource", self._resource_tool())
        return registry

    def _forwarder(self, tool_name: str, has_output_schema: bool, as_task: bool) -> Callable[..., Any]:
        async def forward(ctx: ToolContext[Any], arguments: dict[str, Any]) -> Any:
            slot = self._elicitations.open(ctx.resume_data) if ctx.resumed else self._elicitations.open()
            try:
                result = await self.call_tool(tool_name, arguments, as_task=as_task, on_status=ctx.emit)
            finally:
                self._elicitations.close(slot)
            if slot.asked is not None:  # the server asked the user something: the run pauses (see _elicit)
                raise ToolSuspended(slot.asked, slot.schema)
            limit = self.max_result_bytes
            if limit is not None and (size := result_size(result)) > limit:
                raise ToolError(
                    f"The MCP tool {tool_name!r} returned {size:,} bytes, over the limit of {limit:,} bytes "
                    f"(MCPServer max_result_bytes); the result was not passed on. Ask for less (a narrower "
                    "query, a page, a summary)."
                )
            return self._tool_output(tool_name, result, has_output_schema)

        forward.__name__ = tool_name
        forward.__qualname__ = f"MCPServer({self.name!r}).{tool_name}"
        # No return annotation: the output schema is the server's outputSchema, or none at all.
        del forward.__annotations__["return"]
        return forward

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        as_task: bool = False,
        on_status: Callable[[dict[str, Any]], None] | None = None,
    ) -> mcp_types.CallToolResult:
        """Send one ``tools/call`` as it is (no agentkit validation) and return mcp's `CallToolResult`.

        With `as_task`, the call runs as an MCP task (see `agentkit.mcp._tasks`), each status it reports
        passed to `on_status`; tools listed with ``execution.taskSupport: "required"`` are called so.

        Raises:
            ToolError: the session is closed, the connection dropped (the server crashed), or the server
                answered with a protocol error instead of a result.
        """
        from mcp import MCPError
        from mcp.types import CONNECTION_CLOSED

        session = self._session
        if session is None:
            why = f" ({describe(self._failure)})" if self._failure is not None else ""
            raise ToolError(f"MCP server {self.name!r} is not connected{why}; the tool {name!r} cannot run.")
        try:
            if as_task:
                return await call_as_task(session, name, dict(arguments or {}), server=self.name, on_status=on_status)
            return await self._rounds(session, name, dict(arguments or {}), on_status)
        except MCPError as exc:
            if exc.code == OVERSIZE and self.max_result_bytes is not None:
                raise ToolError(
                    f"The MCP tool {name!r} returned more than {self.max_result_bytes:,} bytes (MCPServer "
                    "max_result_bytes); the result was not read. Ask for less (a narrower query, a page, a summary)."
                ) from None
            if exc.code == CONNECTION_CLOSED:
                raise ToolError(
                    f"MCP server {self.name!r} closed the connection (did it crash, or send a result far over "
                    f"max_result_bytes?); the call to {name!r} did not complete."
                ) from None
            raise ToolError(f"MCP server {self.name!r} rejected the call to {name!r}: {exc.message}") from None

    async def _rounds(
        self,
        session: ClientSession,
        name: str,
        arguments: dict[str, Any],
        on_status: Callable[[dict[str, Any]], None] | None = None,
    ) -> mcp_types.CallToolResult:
        """``tools/call``, answering ``input_required`` rounds and following a task (2026-07-28).

        An elicitation this run must pause on (answered ``cancel`` by `Elicitations`) ends the rounds: the
        server keeps nothing between rounds, so nothing is left to cancel there (a task is cancelled).
        """
        from mcp import types

        responses: dict[str, Any] | None = None
        state: str | None = None
        for round_number in range(_MAX_ROUNDS):
            result: Any = await session.call_tool(
                name,
                arguments,
                input_responses=responses,
                request_state=state,
                allow_input_required=True,
                allow_claimed=True,
            )
            if is_task(result):
                answer = functools.partial(self._answer, session, name)
                return await follow_task(
                    session, result, name=name, server=self.name, on_status=on_status, answer=answer
                )
            if not isinstance(result, types.InputRequiredResult):
                return cast("mcp_types.CallToolResult", result)
            responses = await self._answer(session, name, result.input_requests or {})
            if responses is None:
                text = f"The MCP tool {name!r} is waiting for input."
                return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
            if not responses:  # only state: the server is still working; ask again shortly
                await asyncio.sleep(min(0.05 * 2**round_number, 0.25))
            state = result.request_state
        raise ToolError(
            f"MCP server {self.name!r} asked for input more than {_MAX_ROUNDS} times in one call to {name!r}."
        )

    async def _answer(self, session: ClientSession, name: str, requests: Mapping[str, Any]) -> dict[str, Any] | None:
        """Answers to a server's input requests (elicitations), or None when the run pauses on one."""
        from mcp import types
        from mcp.client.session import ClientRequestContext

        responses: dict[str, Any] = {}
        for key, raw in requests.items():
            request: Any = raw if not is_mapping(raw) else types.ElicitRequest.model_validate(raw, by_name=False)
            meta = request.params.meta if request.params is not None else None
            context = ClientRequestContext(session=session, request_id=key, meta=meta)
            answer = await session.dispatch_input_request(context, request)
            if isinstance(answer, types.ErrorData):
                raise ToolError(f"MCP server {self.name!r} asked for input agentkit cannot give: {answer.message}")
            if isinstance(answer, types.ElicitResult) and answer.action == "cancel":
                return None
            responses[key] = (
                answer.model_dump(by_alias=True, mode="json", exclude_none=True) if is_mapping(raw) else answer
            )
        return responses

    def _tool_output(self, name: str, result: mcp_types.CallToolResult, has_output_schema: bool) -> Any:
        parts = content_to_parts(result.content)
        texts = [p.text for p in parts if isinstance(p, TextPart)]
        if result.is_error:
            message = "\n".join(texts) or f"The MCP tool {name!r} failed without a message."
            raise ToolError(message)
        structured = result.structured_content
        if structured is not None:
            if is_object(structured):
                return StructuredOutput(structured, [p for p in parts if not isinstance(p, TextPart)])
            return structured
        if has_output_schema:
            shown = "\n".join(texts)
            raise ToolError(
                f"MCP server {self.name!r} declared an outputSchema for {name!r} but sent no structuredContent."
                + (f" Its text content was:\n{shown}" if shown else "")
            )
        if all(isinstance(p, TextPart) for p in parts):
            return "\n".join(texts)
        return parts

    @property
    def protocol_version(self) -> str | None:
        """The MCP version agreed for this connection (e.g. ``"2026-07-28"``), None when not connected."""
        return self._session.protocol_version if self._session is not None else None

    def __repr__(self) -> str:
        state = "connected" if self.connected else "closed"
        return f"MCPServer({self.name!r}, {state}, tools={[t.name for t in self.listed_tools]!r})"


@functools.lru_cache(maxsize=1)
def _session_class() -> type[ClientSession]:
    """The `mcp` SDK's `ClientSession`, minus its own check of results against the tool's ``outputSchema``.

    That check runs the server's ``pattern`` keywords with Python's `re` on the event loop: a hostile
    ``^(a+)+$`` stalls every run in the process. agentkit validates ``structuredContent`` itself (the
    tool's output schema, with linear-time patterns or a bounded backtracking engine off the loop).
    """
    from mcp import ClientSession

    class AgentkitClientSession(ClientSession):
        async def validate_tool_result(self, name: str, result: mcp_types.CallToolResult) -> None:
            return None

    return AgentkitClientSession


def _task_support(listed: Any) -> str | None:
    """A listed tool's ``execution.taskSupport`` (mcp 2.x), or None."""
    execution = getattr(listed, "execution", None)
    if is_mapping(execution):
        value = execution.get("taskSupport", execution.get("task_support"))
    else:
        value = getattr(execution, "task_support", None)
    return value if isinstance(value, str) else None


def result_size(result: mcp_types.CallToolResult) -> int:
    """The bytes of what a result passes on: structured content (as JSON) or text (UTF-8), plus data.

    Base64 data and embedded resources count too; text sent beside structured content does not, since
    only the structured content is passed on.
    """
    size = 0 if result.structured_content is None else len(to_json(result.structured_content))
    for block in result.content:
        text = getattr(block, "text", None)
        if isinstance(text, str) and result.structured_content is None:
            size += len(text.encode())
        data = getattr(block, "data", None)
        if isinstance(data, str):
            size += len(data)
        resource = getattr(block, "resource", None)
        for attribute in ("text", "blob"):
            value = getattr(resource, attribute, None)
            if isinstance(value, str):
                size += len(value.encode()) if attribute == "text" else len(value)
    return size


async def _negotiate(session: ClientSession, protocol: str) -> None:
    """Agree on a protocol version for this connection (``server/discover``, else ``initialize``)."""
    if protocol == "legacy":
        await session.initialize()
        return
    from mcp.client._probe import negotiate_auto  # the SDK's own era negotiation (Client(mode="auto") uses it)

    await negotiate_auto(session)
    if protocol != "auto" and session.protocol_version != protocol:
        raise MCPConnectionError(f"the server speaks MCP {session.protocol_version}, not {protocol} (protocol=)")


async def _list_tools(session: ClientSession) -> list[mcp_types.Tool]:
    """Every tool, following pagination cursors."""
    return await list_all(lambda params: session.list_tools(params=params), "tools")


def _is_policy(value: Any) -> bool:
    """A bool or a function (a class is not one: `bool` itself would be read as "never")."""
    return isinstance(value, bool) or (callable(value) and not isinstance(value, type))
