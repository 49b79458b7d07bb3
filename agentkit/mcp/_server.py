"""A `Registry` served as an MCP server (stdio or streamable HTTP), and the ``module:attr`` loader."""

from __future__ import annotations as _annotations

import asyncio
import contextlib
import itertools
import sys
from collections.abc import AsyncGenerator, Generator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from .. import _loader
from .._json_schema import JsonSchema, inline_root_ref
from .._text import clip
from ..context import ToolContext
from ..exceptions import ToolSuspended
from ..messages import ToolCall, ToolResult
from ..registry import Registry
from ..runs._answers import check_answer_async
from ..tools import Tool
from ._common import MCPLoadError, parts_to_content, require_mcp
from ._definitions import Prompt, Resource
from ._http_auth import TOKEN_ENV, http_security, is_loopback, token_from_environment
from ._rounds import STATE_TTL, call_in_rounds, question_of, state_boundary, unaskable
from ._serve_extras import extra_handlers
from ._serve_tasks import TaskBoard, wants_tasks
from ._serve_tasks import install as install_tasks

if TYPE_CHECKING:
    from mcp import types as mcp_types
    from mcp.server.lowlevel import Server

__all__ = [
    "Transport",
    "create_server",
    "load_registry",
    "mcp_output_schema",
    "mcp_tools",
    "serve",
    "serve_async",
    "serve_command",
    "serving_http",
]

Transport = Literal["stdio", "http"]
"""How `serve` speaks MCP: ``"stdio"`` (a client spawns this process) or ``"http"`` (streamable HTTP)."""

_DEFINITION_KEYWORDS = ("$defs", "definitions")


def _is_object_schema(schema: Mapping[str, Any]) -> bool:
    # one rule for every result: an object at the root (a recursive model's bare root `$ref` included)
    return inline_root_ref(dict(schema)).get("type") == "object"


def mcp_output_schema(tool: Tool[..., Any]) -> JsonSchema | None:
    """The ``outputSchema`` MCP peers see for `tool`.

    A result whose schema is an object (``type: object`` at the root) is described as it is. Any
    other result (a number, a list, a union, ``None``) is wrapped as ``{"result": <value>}``, because
    MCP wants an object at the root: the schema becomes ``{"type": "object", "properties": {"result":
    <schema>}, "required": ["result"]}`` (its ``$defs`` moved to the new root so ``$ref`` still
    resolves). A tool without an output schema has none over MCP either.
    """
    schema = tool.output_schema
    if schema is None:
        return None
    if _is_object_schema(schema):
        return inline_root_ref(schema)
    inner = {k: v for k, v in schema.items() if k not in _DEFINITION_KEYWORDS}
    wrapped: JsonSchema = {"type": "object", "properties": {"result": inner}, "required": ["result"]}
    for keyword in _DEFINITION_KEYWORDS:
        if keyword in schema:
            wrapped[keyword] = schema[keyword]
    return wrapped


def mcp_tools(registry: Registry) -> list[mcp_types.Tool]:
    """The registry as MCP tool definitions: name = key, ``inputSchema`` = the tool's input schema."""
    from mcp import types

    return [
        types.Tool(
            name=key,
            description=item.description or None,
            input_schema=item.input_schema,
            output_schema=mcp_output_schema(item),
        )
        for key, item in registry.items()
    ]


def create_server(
    registry: Registry,
    *,
    name: str = "agentkit",
    version: str | None = None,
    instructions: str | None = None,
    deps: Any = None,
    resources: Sequence[Resource] = (),
    prompts: Sequence[Prompt] = (),
    request_state_keys: Sequence[bytes | str] | None = None,
    request_state_ttl: float = STATE_TTL,
) -> Server[Any]:
    """An mcp low-level `Server` answering ``tools/list`` and ``tools/call`` from `registry`.

    Every call goes through `Registry.call`, so bad arguments, exceptions in a tool and timeouts come
    back as ``isError: true`` results with the error message, never as a crashed server. A tool that
    suspends (`ToolContext.suspend`) asks the client with an elicitation (its payload as the message, its
    schema as ``requestedSchema``) and runs again with the answer; a client that cannot answer, or
    declines, gets an error result. On a 2026-07-28 connection the question is an ``input_required``
    result whose request state is sealed, bound to the tool, its arguments and the caller, and expires
    (see `agentkit.mcp._rounds`); on a handshake-era one, an ``elicitation/create`` request. A result has
    text content (what a model would receive) and, when the tool has an output schema,
    ``structuredContent`` (see `mcp_output_schema` for non-object results). An unknown tool name is
    a protocol error (``-32602``), as the MCP specification asks.

    Args:
        registry: the tools; keys are the MCP tool names.
        name: the server's name in the initialization handshake.
        version: the server's version (default: agentkit's).
        instructions: instructions the server gives clients at initialization.
        deps: dependencies for the `ToolContext` of every call (resources and prompts included).
        resources: `Resource`s to serve (`resource` makes them), static and templates.
        prompts: `Prompt`s to serve (`prompt` makes them).
        request_state_keys: secrets (32 bytes or more each) sealing the 2026-07-28 request states; the
            first seals, all open (rotation). Several processes serving one endpoint need the same keys;
            without them a key of this process is used.
        request_state_ttl: seconds a request state stays valid (the client's time to answer).

    Raises:
        ValueError: two resources share a URI or two prompts a name, or a key is shorter than 32 bytes.
    """
    require_mcp()
    from mcp import MCPError, types
    from mcp.server.lowlevel import Server
    from mcp.types.version import MODERN_PROTOCOL_VERSIONS

    from .. import __version__

    definitions = mcp_tools(registry)
    wrapped = {key for key, item in registry.items() if item.output_schema is not None}
    object_output = {key for key in wrapped if _is_object_schema(registry[key].output_schema or {})}
    ids = itertools.count(1)
    board = TaskBoard()

    async def list_tools(ctx: Any, params: mcp_types.PaginatedRequestParams | None) -> mcp_types.ListToolsResult:
        return types.ListToolsResult(tools=definitions)

    async def call_tool(ctx: Any, params: mcp_types.CallToolRequestParams) -> Any:
        if params.name not in registry:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {clip(params.name, 100)}")
        call = ToolCall(id=f"mcp-{next(ids)}", name=params.name, arguments=params.arguments or {})
        # The policy sees the validated arguments with defaults applied, as on every other path.
        if registry[params.name].needs_approval_for(call.arguments, name=params.name):
            # No one can approve over MCP: such calls never run (an MCP client may ask its own user).
            text = f"Tool {params.name!r} needs approval before it runs, which this MCP server cannot ask for."
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
        modern = getattr(ctx, "protocol_version", None) in MODERN_PROTOCOL_VERSIONS
        if modern and registry[params.name].background and wants_tasks(ctx):
            started = board.start(lambda: _call_in_background(registry, call, deps), lambda r: wire(params.name, r))
            if started is not None:
                return started  # a task: the client follows it with tasks/get
        if modern:
            outcome = await call_in_rounds(registry, call, params, deps)
            if not isinstance(outcome, ToolResult):
                return outcome  # input_required: the state is sealed by the boundary on its way out
            result = outcome
        else:
            result = await _call_answering_suspensions(ctx, registry, call, deps)
        return wire(params.name, result)

    def wire(name: str, result: ToolResult) -> Any:
        content = parts_to_content(result.content)
        if result.is_error:
            return types.CallToolResult(content=content, is_error=True)
        structured: Any = None
        if name in wrapped:
            value = registry[name].schema.dump_output_python(result.output)
            structured = value if name in object_output else {"result": value}
        return types.CallToolResult(content=content, structured_content=structured)

    server: Server[Any] = Server(
        name,
        version=version or __version__,
        instructions=instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        **extra_handlers(resources, prompts, deps),
    )
    server.middleware.append(state_boundary(name, request_state_keys, request_state_ttl))
    install_tasks(server, board)
    return server


async def serve_async(
    registry: Registry,
    transport: Transport = "stdio",
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    name: str = "agentkit",
    instructions: str | None = None,
    deps: Any = None,
    resources: Sequence[Resource] = (),
    prompts: Sequence[Prompt] = (),
    auth_token: str | None = None,
    allowed_hosts: Sequence[str] = (),
    allow_unauthenticated: bool = False,
    stateless: bool = False,
    request_state_keys: Sequence[bytes | str] | None = None,
    request_state_ttl: float = STATE_TTL,
) -> None:
    """Serve `registry` over MCP until the client disconnects (stdio) or the task is cancelled (HTTP).

    Over HTTP, Host/Origin checks are on for every bind, and a non-loopback bind needs `auth_token`
    unless `allow_unauthenticated` is set (see `serving_http`).

    Args:
        registry: the tools to serve; keys are the MCP tool names.
        transport: ``"stdio"`` or ``"http"`` (streamable HTTP at ``http://{host}:{port}{path}``).
        host: the HTTP interface to bind; loopback by default.
        port: the HTTP port.
        path: the HTTP endpoint path.
        name: the server's name in the handshake.
        instructions: instructions given to clients at initialization.
        deps: dependencies for the `ToolContext` of every call.
        resources: `Resource`s to serve beside the tools (see `resource`).
        prompts: `Prompt`s to serve beside the tools (see `prompt`).
        auth_token: the bearer token HTTP clients must send (``Authorization: Bearer ...``); None: none.
        allowed_hosts: more ``Host`` names HTTP clients use (the bound host and loopback always work).
        allow_unauthenticated: serve HTTP on a non-loopback interface without a token anyway.
        stateless: serve HTTP without sessions for handshake-era clients too (2026-07-28 requests
            are always sessionless); they then cannot be asked questions (see `serving_http`).
        request_state_keys: secrets sealing 2026-07-28 request states (see `create_server`).
        request_state_ttl: seconds a request state stays valid.
    """
    server = create_server(
        registry,
        name=name,
        instructions=instructions,
        deps=deps,
        resources=resources,
        prompts=prompts,
        request_state_keys=request_state_keys,
        request_state_ttl=request_state_ttl,
    )
    if transport == "stdio":
        from mcp.server.stdio import stdio_server

        # stdio_server points fd 1 at stderr while serving; sys.stdout goes there too, so a tool's
        # print() (buffered, flushed whenever) can never reach the wire.
        from ._stdio_server import answering_bad_lines

        async with stdio_server() as (read, write):
            with contextlib.redirect_stdout(sys.stderr):
                await server.run(answering_bad_lines(read, write), write, server.create_initialization_options())
    elif transport == "http":
        async with serving_http(
            registry,
            host=host,
            port=port,
            path=path,
            server=server,
            auth_token=auth_token,
            allowed_hosts=allowed_hosts,
            allow_unauthenticated=allow_unauthenticated,
            stateless=stateless,
        ):
            await asyncio.Event().wait()  # until cancelled
    else:
        raise ValueError(f"transport must be 'stdio' or 'http', got {transport!r}")


_MAX_QUESTIONS = 5  # a tool that keeps asking gets an error result, not an endless conversation
_ASKS_PER_QUESTION = 3  # answers that do not fit: asked again twice, then the call fails


async def _call_in_background(registry: Registry, call: ToolCall, deps: Any) -> ToolResult:
    """A call run as a task: nobody can be asked a question there, so a suspension fails it."""
    try:
        return await registry.call(call, deps=deps)
    except ToolSuspended:
        return ToolResult.error(call, f"Tool {call.name!r} needs input, which a task cannot ask for.", "tool_error")


async def _call_answering_suspensions(ctx: Any, registry: Registry, call: ToolCall, deps: Any) -> ToolResult:
    """`Registry.call`, with each suspension of the tool asked of the MCP client as an elicitation."""
    context: ToolContext[Any] | None = None
    for _ in range(_MAX_QUESTIONS):
        try:
            return await registry.call(call, deps=deps, context=context)
        except ToolSuspended as signal:
            answer = await _elicit(ctx, registry, call.name, signal)
            if isinstance(answer, str):
                return ToolResult.error(call, answer, "tool_error")
            context = ToolContext(deps=deps, resume_data=answer[0])
    return ToolResult.error(call, f"Tool {call.name!r} asked more than {_MAX_QUESTIONS} questions.", "tool_error")


async def _elicit(ctx: Any, registry: Registry, tool: str, signal: ToolSuspended) -> tuple[Any] | str:
    """The client's answer, checked against the schema asked with (as a 1-tuple), or why there is none.

    An answer that does not fit the schema never reaches the tool: the client is asked again, with the
    problems, and after `_ASKS_PER_QUESTION` unfit answers the call fails with them.
    """
    question, schema = question_of(registry, tool, signal.payload), signal.schema
    refused = unaskable(tool, schema)
    if refused is not None or schema is None:
        return refused or ""
    session = getattr(ctx, "session", None)
    problems: list[str] = []
    for _ in range(_ASKS_PER_QUESTION):
        message = question if not problems else f"{question}\n\nThe last answer did not fit: {'; '.join(problems)}"
        try:
            reply = await session.elicit_form(message, schema, related_request_id=getattr(ctx, "request_id", None))  # type: ignore[union-attr]
        except Exception as exc:  # noqa: BLE001 - no back channel, no elicitation support: the call fails, the server stays
            return f"Tool {tool!r} needs input the MCP client could not be asked for ({type(exc).__name__})."
        if reply.action != "accept":
            return f"Tool {tool!r} needs input, and the user did not give it ({reply.action})."
        content: dict[str, Any] = dict(reply.content) if reply.content is not None else {}
        problems = await check_answer_async(schema, content)
        if not problems:
            return (content,)
    unfit = "; ".join(problems)
    return f"Tool {tool!r} needs input, and {_ASKS_PER_QUESTION} answers did not fit what it asked for: {unfit}"


def _background_server_class() -> Any:
    import uvicorn

    class BackgroundServer(uvicorn.Server):
        """A uvicorn server that leaves signal handling to the host application."""

        @contextlib.contextmanager
        def capture_signals(self) -> Generator[None, None, None]:
            yield

    return BackgroundServer


@contextlib.asynccontextmanager
async def serving_http(
    registry: Registry,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    path: str = "/mcp",
    name: str = "agentkit",
    instructions: str | None = None,
    deps: Any = None,
    resources: Sequence[Resource] = (),
    prompts: Sequence[Prompt] = (),
    server: Server[Any] | None = None,
    auth_token: str | None = None,
    allowed_hosts: Sequence[str] = (),
    allow_unauthenticated: bool = False,
    stateless: bool = False,
    request_state_keys: Sequence[bytes | str] | None = None,
    request_state_ttl: float = STATE_TTL,
) -> AsyncGenerator[str, None]:
    """Serve `registry` over streamable HTTP in the background; yields the endpoint URL.

    ``port=0`` picks a free port. The server stops when the block ends. For tests and for embedding
    in an application that has its own event loop.

    Requests must name the bound host, a loopback name or one of `allowed_hosts` in their ``Host``
    header (and in ``Origin``, when a browser sends one): the `mcp` SDK's DNS-rebinding protection, on
    for every bind. With `auth_token`, every request needs ``Authorization: Bearer <auth_token>`` (HTTP 401
    otherwise). A bind that is not loopback without a token raises `ValueError`, unless
    `allow_unauthenticated` is set.

    2026-07-28 requests are always served sessionless (each POST stands alone). ``stateless=True``
    serves handshake-era clients without sessions too (no ``Mcp-Session-Id``, any worker can answer);
    they then have no back channel, so a tool that suspends fails for them with an error result.

    Example:
        ```python
        async with serving_http(tools) as url:
            async with MCPServer.http(url) as remote:
                ...
        ```
    """
    import uvicorn

    security = http_security(
        host, auth_token=auth_token, allowed_hosts=allowed_hosts, allow_unauthenticated=allow_unauthenticated
    )
    server_class = _background_server_class()
    mcp_server = server or create_server(
        registry,
        name=name,
        instructions=instructions,
        deps=deps,
        resources=resources,
        prompts=prompts,
        request_state_keys=request_state_keys,
        request_state_ttl=request_state_ttl,
    )
    shown = f"[{host}]" if ":" in host else host
    app = mcp_server.streamable_http_app(
        streamable_http_path=path, host=host, stateless_http=stateless, **security.app_kwargs(f"http://{shown}")
    )
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on", timeout_graceful_shutdown=1)
    http = server_class(config)
    task = asyncio.get_running_loop().create_task(http.serve(), name="agentkit-mcp-http")
    try:
        while not http.started:
            if task.done():
                task.result()  # raises what stopped the server (e.g. the port is taken)
                raise OSError(f"the MCP HTTP server on {host}:{port} stopped while starting")
            await asyncio.sleep(0.01)
        bound = port
        for listener in http.servers:
            for sock in listener.sockets:
                bound = sock.getsockname()[1]
                break
        yield f"http://{shown}:{bound}{path}"
    finally:
        http.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(task), 5.0)
        except asyncio.TimeoutError:
            http.force_exit = True
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        except SystemExit:  # uvicorn exits this way when it cannot bind; already reported above
            pass


def serve(
    registry: Registry,
    transport: Transport = "stdio",
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    name: str = "agentkit",
    instructions: str | None = None,
    deps: Any = None,
    resources: Sequence[Resource] = (),
    prompts: Sequence[Prompt] = (),
    auth_token: str | None = None,
    allowed_hosts: Sequence[str] = (),
    allow_unauthenticated: bool = False,
    stateless: bool = False,
    request_state_keys: Sequence[bytes | str] | None = None,
    request_state_ttl: float = STATE_TTL,
) -> None:
    """Serve `registry` as an MCP server, blocking; `serve_async` has the same arguments.

    Example:
        ```python
        if __name__ == "__main__":
            serve(tools)                       # stdio: for a client that spawns this script
            serve(tools, "http", port=8765)    # streamable HTTP at http://127.0.0.1:8765/mcp
        ```
    """
    require_mcp()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(
            serve_async(
                registry,
                transport,
                host=host,
                port=port,
                path=path,
                name=name,
                instructions=instructions,
                deps=deps,
                resources=resources,
                prompts=prompts,
                auth_token=auth_token,
                allowed_hosts=allowed_hosts,
                allow_unauthenticated=allow_unauthenticated,
                stateless=stateless,
                request_state_keys=request_state_keys,
                request_state_ttl=request_state_ttl,
            )
        )


# ---- loading a registry by name ----------------------------------------------------------------------


def load_registry(target: str) -> Registry:
    """Import ``"package.module:attribute"`` (or ``"path/to/file.py:attribute"``) as a `Registry`.

    The attribute may be a `Registry`, a `Tool` or function (served under its id), a dict of key -> tool,
    a list of tools, or an Agent (its tools). It may be dotted (``module:app.tools``). A file's folder is
    put on the import path, so the file can import the modules beside it. The same loader serves every
    ``agentkit`` command.

    Raises:
        MCPLoadError: the target is malformed, the module or attribute does not exist, or the value is
            not something a registry can be made of. The message says which.
    """
    return _loader.load_registry(target)


def serve_command(
    target: str,
    transport: str,
    host: str,
    port: int,
    *,
    auth_token: str | None = None,
    allowed_hosts: Sequence[str] = (),
    allow_unauthenticated: bool = False,
    stateless: bool = False,
) -> None:
    """What ``agentkit mcp serve TARGET`` runs: load the registry named by `target`, serve it (blocking).

    The HTTP bearer token is `auth_token`, else the ``AGENTKIT_MCP_TOKEN`` environment variable.

    Raises:
        MCPLoadError: `target` does not name a registry.
        ValueError: `transport` is not ``"stdio"`` or ``"http"``, or an HTTP bind that is not loopback has
            no token and `allow_unauthenticated` is not set.
    """
    if transport not in ("stdio", "http"):
        raise ValueError(f"--transport must be 'stdio' or 'http', got {transport!r}")
    token = token_from_environment(auth_token) if transport == "http" else None
    if transport == "http":  # refused before anything is imported or bound
        http_security(host, auth_token=token, allowed_hosts=allowed_hosts, allow_unauthenticated=allow_unauthenticated)
    registry = load_registry(target)
    if transport == "http":
        shown = f"[{host}]" if ":" in host else host
        guard = "bearer token required" if token else "no authentication" + ("" if is_loopback(host) else " (allowed)")
        print(
            f"agentkit: serving {len(registry)} tools over MCP at http://{shown}:{port}/mcp ({guard})", file=sys.stderr
        )
    serve(
        registry,
        "http" if transport == "http" else "stdio",
        host=host,
        port=port,
        auth_token=token,
        allowed_hosts=allowed_hosts,
        allow_unauthenticated=allow_unauthenticated,
        stateless=stateless,
    )


def add_serve_arguments(parser: Any) -> None:
    """The options of ``serve`` (shared by ``agentkit mcp serve`` and ``python -m agentkit.mcp serve``)."""
    parser.add_argument("target", help="the registry: 'package.module:attribute' or 'path/to/file.py:attribute'")
    parser.add_argument(
        "--transport", choices=["stdio", "http"], default="stdio", help="stdio (default) or streamable HTTP"
    )
    parser.add_argument("--host", default="127.0.0.1", help="HTTP interface to bind (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="HTTP port (default: 8000); endpoint /mcp")
    parser.add_argument(
        "--auth-token",
        default=None,
        help=f"bearer token HTTP clients must send (default: ${TOKEN_ENV}; prefer the variable: "
        "a command line is visible to other users)",
    )
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="another Host name clients use to reach the server (repeatable); loopback and --host always work",
    )
    parser.add_argument(
        "--allow-unauthenticated",
        action="store_true",
        help="serve HTTP on a non-loopback interface without a token (only on a trusted network)",
    )
    parser.add_argument(
        "--stateless",
        action="store_true",
        help="serve HTTP without sessions for handshake-era clients too (2026-07-28 clients never need one)",
    )


def run_serve(args: Any) -> None:
    """Run `serve_command` with parsed `add_serve_arguments` options."""
    serve_command(
        args.target,
        args.transport,
        args.host,
        args.port,
        auth_token=args.auth_token,
        allowed_hosts=args.allowed_host,
        allow_unauthenticated=args.allow_unauthenticated,
        stateless=args.stateless,
    )


def main(argv: list[str] | None = None) -> int:
    """``python -m agentkit.mcp serve TARGET [--transport stdio|http] [--host H] [--port P] [--auth-token T]``."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m agentkit.mcp", description="agentkit's MCP tools.")
    commands = parser.add_subparsers(dest="command", required=True)
    add_serve_arguments(commands.add_parser("serve", help="serve a registry as an MCP server"))
    args = parser.parse_args(argv)
    try:
        run_serve(args)
    except (MCPLoadError, ValueError, ImportError) as exc:
        print(f"agentkit mcp serve: error: {exc}", file=sys.stderr)
        return 2
    return 0
