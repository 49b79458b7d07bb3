"""Fuzzers for MCP messages (issue 17 §6), both ways; shared by the tests and the benchmark.

* **What a server sends our client** (`client_case`): `MCPServer` talks to a scripted server over an
  in-memory transport whose every line goes through the stdio transport's own parser (so a line that is
  no JSON-RPC message arrives as the SDK surfaces it). The server's ``initialize`` answer, tool list and
  call results are valid ones with values replaced (odd types, lone surrogates, huge numbers, catastrophic
  regex patterns, ``$ref`` loops, nesting thousands deep), keys dropped, or garbage; before a call's
  result it may send notifications (``tools/list_changed``, progress, log messages, a cancellation) and
  requests (``elicitation/create`` with an odd schema, sampling, roots, ping, answers to unknown ids).
  Documented: connecting raises `MCPConnectionError`; each call of each listed tool gives a `ToolResult`,
  or `ToolSuspended` (an elicitation pauses the run). Anything else, or a case still running after
  ``HANG`` seconds, is a finding.
* **What a client sends our server** (`server_case`): JSON-RPC bodies POSTed to `serving_http` (a tool
  with a schema, stateless): valid requests (``initialize``, ``tools/list``, ``tools/call``, ``ping`` ...)
  with odd params, ids and versions, batches, other JSON, garbage bytes, deep nesting. Documented: a 2xx
  answer (a JSON-RPC result or error) or a 4xx; the server then still answers a ``ping``. A 5xx, an
  exception or a dead server is a finding. The same bodies go to a **stateful** HTTP server inside one
  session (`stateful_case`: a ping in that session must still be answered), and, as lines, to the
  **stdio** server of ``python -m agentkit.mcp serve`` (`StdioServer`, `stdio_case`): the process must
  live on, write nothing but JSON-RPC to stdout, and answer a ``ping`` after each line.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import os
import random
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx

from agentkit import Registry, ToolCall, tool
from agentkit._text import json_text
from agentkit.exceptions import ToolSuspended
from agentkit.mcp import MCPConnectionError, MCPServer, serving_http
from agentkit.mcp._stdio import _Reader  # pyright: ignore[reportPrivateUsage]  # the real line parser

from .. import fuzzing
from ..fuzzing import Findings

__all__ = [
    "HANG",
    "Findings",
    "StdioServer",
    "client_case",
    "server_case",
    "serving",
    "session",
    "stateful_case",
    "stdio_case",
]

HANG = 20.0
"""Seconds a case may take before it counts as hung."""

ODD: list[Any] = [
    None, True, False, 0, -1, 1.5, 2**64, 10**40, float("nan"), "", "x", "\ud800", "a\x00b", "x" * 20_000,
    "(a+)+$", "^(a|aa)+$", "#", "#/definitions/x", "object", "string", [], {}, [1, "a"], {"a": 1},
    {"type": "object"}, {"$ref": "#"}, {"type": "string", "pattern": "(a+)+$"}, "text", "image", "resource",
]  # fmt: skip


def odd(rng: random.Random, depth: int = 0) -> Any:
    """A value of any JSON type (and NaN), chosen among those that broke something once."""
    roll = rng.random()
    if depth > 3 or roll < 0.6:
        return copy.deepcopy(rng.choice(ODD))
    if roll < 0.8:
        keys = ["type", "text", "name", "properties", "required", "items", "$ref", "pattern", "data", "uri"]
        return {rng.choice(keys): odd(rng, depth + 1) for _ in range(rng.randint(0, 3))}
    if roll < 0.95:
        return [odd(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    value: Any = "x"
    for _ in range(rng.choice([300, 3_000])):
        value = [value] if rng.random() < 0.5 else {"type": value}
    return value


def mutate(rng: random.Random, document: Any, changes: int = 3) -> Any:
    """`document` with up to `changes` values replaced by odd ones, deleted, or odd keys added."""
    return fuzzing.mutate(rng, document, odd, ["_meta", "extra", "\ud800", "type"], changes)


# ---- what a server sends our client ---------------------------------------------------------------------

TOOLS: list[dict[str, Any]] = [
    {
        "name": "echo",
        "description": "Echo the text.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    },
    {
        "name": "add",
        "title": "Add",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer", "maximum": 10}},
            "required": ["a", "b"],
        },
        "outputSchema": {"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]},
        "annotations": {"readOnlyHint": True, "destructiveHint": False},
    },
]
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
RESULTS: list[dict[str, Any]] = [
    {"content": [{"type": "text", "text": "hi"}]},
    {"content": [{"type": "text", "text": "{}"}], "structuredContent": {"sum": 3}},
    {"content": [{"type": "image", "data": PNG, "mimeType": "image/png"}]},
    {"content": [{"type": "text", "text": "boom"}], "isError": True},
    {"content": [{"type": "resource", "resource": {"uri": "file:///x", "text": "t", "mimeType": "text/plain"}}]},
    {"content": [{"type": "resource_link", "uri": "file:///x", "name": "x"}]},
    {"content": [{"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}]},
]
EXTRAS: list[dict[str, Any]] = [
    {"method": "notifications/tools/list_changed"},
    {"method": "notifications/message", "params": {"level": "info", "data": "working"}},
    {"method": "notifications/progress", "params": {"progressToken": 1, "progress": 0.5, "total": 1}},
    {"method": "notifications/cancelled", "params": {"requestId": 2, "reason": "no"}},
    {"id": "s1", "method": "ping"},
    {"id": "s2", "method": "roots/list"},
    {"id": "s3", "method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}},
    {
        "id": "s4",
        "method": "elicitation/create",
        "params": {
            "message": "Which seat?",
            "requestedSchema": {"type": "object", "properties": {"row": {"type": "integer"}}, "required": ["row"]},
        },
    },
    {"id": 999, "result": {}},
]


class ScriptedServer:
    """Answers an MCP client from a seeded script; every line it writes goes through the stdio parser."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.reader = _Reader(None)
        self.tools = mutate(rng, TOOLS, 2) if rng.random() < 0.4 else copy.deepcopy(TOOLS)

    def line(self, message: Any, method: str) -> bytes:
        """The message as the server writes it: JSON (non-ASCII escaped), sometimes cut or replaced.

        Lines are broken only while calling (a broken handshake only times out, which costs seconds).
        """
        roll = self.rng.random() if method == "tools/call" else 1.0
        if roll < 0.04:
            return bytes(self.rng.randrange(256) for _ in range(self.rng.randint(1, 40))).replace(b"\n", b" ")
        text = json_text({"jsonrpc": "2.0", **message}, compact=True).encode()
        return text[: self.rng.randint(1, len(text))] if roll < 0.08 else text

    def answer(self, request: Any) -> list[Any]:
        """The messages that answer one client request (extras first for a tool call)."""
        rng, method, params = self.rng, request.method, request.params or {}
        if method == "initialize":
            result: Any = {
                "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {"listChanged": True}, "logging": {}},
                "serverInfo": {"name": "fuzz", "version": "1"},
                "instructions": "Be nice.",
            }
            if rng.random() < 0.1:
                result = mutate(rng, result, 2)
        elif method == "tools/list":
            result = {"tools": self.tools}
        elif method == "tools/call":
            extras = [copy.deepcopy(rng.choice(EXTRAS)) for _ in range(rng.randint(0, 2))]
            extras = [mutate(rng, extra, 1) if rng.random() < 0.5 else extra for extra in extras]
            result = rng.choice(RESULTS)
            return [*extras, {"id": request.id, "result": mutate(rng, result) if rng.random() < 0.7 else result}]
        elif method in ("resources/list", "resources/templates/list", "prompts/list"):
            key = {"resources/list": "resources", "prompts/list": "prompts"}.get(method, "resourceTemplates")
            result = {key: []}
        elif method == "ping":
            result = {}
        else:
            return [{"id": request.id, "error": {"code": -32601, "message": f"no {method}"}}]
        return [{"id": request.id, "result": result}]

    @contextlib.asynccontextmanager
    async def transport(self) -> AsyncIterator[tuple[Any, Any]]:
        """The ``(read_stream, write_stream)`` pair `MCPServer` takes from a transport factory."""
        import anyio
        from mcp import types

        to_client, read_stream = anyio.create_memory_object_stream[Any](100)
        write_stream, from_client = anyio.create_memory_object_stream[Any](100)

        async def serve() -> None:
            async for session_message in from_client:
                message = session_message.message
                if not isinstance(message, types.JSONRPCRequest):
                    continue  # notifications and the client's answers to our requests
                for reply in self.answer(message):
                    parsed = self.reader.parse(self.line(reply, message.method))
                    await to_client.send(parsed)

        async with anyio.create_task_group() as group:
            group.start_soon(serve)
            try:
                yield read_stream, write_stream
            finally:
                group.cancel_scope.cancel()
                for stream in (to_client, read_stream, write_stream, from_client):
                    await stream.aclose()


VALID: dict[str, Any] = {"echo": {"text": "hi"}, "add": {"a": 1, "b": 2}}
ARGUMENTS: list[Any] = [{}, {"text": "hi"}, {"a": 1, "b": 2}, {"a": "1", "b": 99}, {"text": "\ud800"}]


async def client_case(rng: random.Random, findings: Findings) -> None:
    """Connect `MCPServer` to a scripted server and call each tool it lists (at most three)."""
    findings.cases += 1
    scripted = ScriptedServer(rng)
    server = MCPServer(scripted.transport, name="fuzz", timeout=1, connect_timeout=2, protocol="legacy")
    try:
        await asyncio.wait_for(_connect_and_call(rng, server, findings), HANG)
    except asyncio.TimeoutError:
        findings.found("client", f"still running after {HANG:g} s")
    except Exception as error:  # a finding
        findings.found("client", error)


async def _connect_and_call(rng: random.Random, server: MCPServer, findings: Findings) -> None:
    try:
        await server.__aenter__()
    except MCPConnectionError:
        findings.outcomes["MCPConnectionError"] += 1
        return
    try:
        keys = list(server.registry)[:3]
        if not keys:
            findings.outcomes["no tools"] += 1
        for key in keys:
            roll = rng.random()
            arguments = VALID.get(key, {}) if roll < 0.7 else rng.choice(ARGUMENTS) if roll < 0.9 else odd(rng)
            try:
                result = await server.registry.call(ToolCall(id="c1", name=key, arguments=arguments))
            except ToolSuspended:
                findings.outcomes["suspended (elicitation)"] += 1
                continue
            if result.error_kind == "exception":  # no code of ours or the app's runs: our forwarder broke
                findings.found(f"call to {key!r}", result.text)
            else:
                findings.outcomes[result.error_kind or "ok"] += 1
    finally:
        await server.aclose()


# ---- what a client sends our server ---------------------------------------------------------------------


@tool
def book(flight: str, seats: int = 1) -> str:
    """Book seats on a flight."""
    if seats > 9:
        raise ValueError("too many seats")
    return f"booked {seats} on {flight}"


REQUESTS: list[dict[str, Any]] = [
    {
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "fuzz", "version": "1"},
        },
    },
    {"method": "tools/list", "params": {}},
    {"method": "tools/list", "params": {"cursor": "x"}},
    {"method": "tools/call", "params": {"name": "book", "arguments": {"flight": "LH 1", "seats": 2}}},
    {
        "method": "tools/call",
        "params": {"name": "book", "arguments": {"flight": "LH 1"}, "_meta": {"progressToken": 1}},
    },
    {"method": "resources/list", "params": {}},
    {"method": "resources/read", "params": {"uri": "file:///x"}},
    {"method": "prompts/list", "params": {}},
    {"method": "prompts/get", "params": {"name": "p", "arguments": {"a": "b"}}},
    {"method": "completion/complete", "params": {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {}}},
    {"method": "logging/setLevel", "params": {"level": "debug"}},
    {"method": "ping"},
    {"method": "notifications/initialized"},
    {"method": "notifications/cancelled", "params": {"requestId": 1}},
    {"method": "unknown/method", "params": {}},
]
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
SERVED = Registry([book])
"""What the fuzzed stdio server serves (``python -m agentkit.mcp serve tests.mcp.mcp_fuzz:SERVED``)."""
ROOT = Path(__file__).resolve().parents[2]
HANDSHAKE: list[dict[str, Any]] = [
    {"jsonrpc": "2.0", "id": "hello", **REQUESTS[0]},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]


def request_body(rng: random.Random) -> bytes:
    """A JSON-RPC body: a valid request with odd params, id or version; a batch; other JSON; garbage."""
    roll = rng.random()
    message: Any = {"jsonrpc": "2.0", "id": rng.choice([1, "a", 0]), **copy.deepcopy(rng.choice(REQUESTS))}
    if roll < 0.75:
        return json_text(mutate(rng, message) if rng.random() < 0.85 else message).encode()
    if roll < 0.85:
        return json_text([mutate(rng, message) for _ in range(rng.randint(0, 3))]).encode()
    if roll < 0.95:
        return json_text(odd(rng)).encode()
    return bytes(rng.randrange(256) for _ in range(rng.randint(0, 64)))


@contextlib.asynccontextmanager
async def serving() -> AsyncIterator[str]:
    """The server under fuzz: `book` served over streamable HTTP, stateless, on 127.0.0.1."""
    async with serving_http(Registry([book]), stateless=True) as url:
        yield url


async def server_case(rng: random.Random, findings: Findings, url: str, http: httpx.AsyncClient) -> None:
    """POST one fuzzed body; then a ping must still be answered."""
    findings.cases += 1
    body = request_body(rng)
    try:
        answer = await asyncio.wait_for(http.post(url, content=body, headers=HEADERS), HANG)
        if answer.status_code >= 500 or not (200 <= answer.status_code < 500):
            findings.found("server", f"HTTP {answer.status_code} for {body[:200]!r}: {answer.text[:200]}")
            return
        findings.outcomes[f"HTTP {answer.status_code}{_rpc_kind(answer)}"] += 1
        ping = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "ping"}).encode()
        after = await asyncio.wait_for(http.post(url, content=ping, headers=HEADERS), HANG)
        if after.status_code != 200:
            findings.found("server", f"a ping after {body[:200]!r} got HTTP {after.status_code}")
    except asyncio.TimeoutError:
        findings.found("server", f"no answer within {HANG:g} s to {body[:200]!r}")
    except Exception as error:  # a finding
        findings.found("server", error)


def _rpc_kind(answer: httpx.Response) -> str:
    """`` result`` / `` error`` for a JSON-RPC answer (in JSON or an event stream), else nothing."""
    text = answer.text
    if "event:" in text or text.startswith("data:"):
        text = "\n".join(line[5:] for line in text.splitlines() if line.startswith("data:"))
    try:
        data = json.loads(text) if text.strip() else None
    except ValueError:
        return " (not JSON)"
    if isinstance(data, dict):
        return " error" if "error" in data else " result" if "result" in data else ""
    return " batch" if isinstance(data, list) else ""


# ---- the stateful HTTP server: bodies inside one session ------------------------------------------------


@contextlib.asynccontextmanager
async def session(http: httpx.AsyncClient) -> AsyncIterator[tuple[str, dict[str, str]]]:
    """A stateful `serving_http` server and one initialized session on it: its URL and headers."""
    async with serving_http(Registry([book])) as url:
        hello = await http.post(url, content=json_text(HANDSHAKE[0]).encode(), headers=HEADERS)
        headers = {**HEADERS, "mcp-session-id": hello.headers["mcp-session-id"]}
        await http.post(url, content=json_text(HANDSHAKE[1]).encode(), headers=headers)
        yield url, headers


async def stateful_case(
    rng: random.Random, findings: Findings, url: str, headers: dict[str, str], http: httpx.AsyncClient
) -> None:
    """POST one fuzzed body in the session; then a ping in the same session must still be answered."""
    findings.cases += 1
    body = request_body(rng)
    try:
        answer = await asyncio.wait_for(http.post(url, content=body, headers=headers), HANG)
        if not 200 <= answer.status_code < 500:
            findings.found("server", f"HTTP {answer.status_code} for {body[:200]!r}: {answer.text[:200]}")
            return
        findings.outcomes[f"HTTP {answer.status_code}{_rpc_kind(answer)}"] += 1
        ping = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "ping"}).encode()
        after = await asyncio.wait_for(http.post(url, content=ping, headers=headers), HANG)
        if after.status_code != 200 or _rpc_kind(after) != " result":
            findings.found("server", f"the session's ping after {body[:200]!r} got HTTP {after.status_code}")
    except asyncio.TimeoutError:
        findings.found("server", f"no answer within {HANG:g} s to {body[:200]!r}")
    except Exception as error:  # a finding
        findings.found("server", error)


# ---- the stdio server: lines on its stdin ---------------------------------------------------------------


class StdioServer:
    """``python -m agentkit.mcp serve tests.mcp.mcp_fuzz:SERVED`` (stdio) in a child process, initialized."""

    def __init__(self) -> None:
        self.process: asyncio.subprocess.Process | None = None
        self.probes = 0

    async def __aenter__(self) -> StdioServer:
        self.process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "agentkit.mcp", "serve", "tests.mcp.mcp_fuzz:SERVED",
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            limit=2**24,
        )  # fmt: skip
        for message in HANDSHAKE:
            await self.send(json_text(message).encode())
        await asyncio.wait_for(self.ping(), HANG)  # the handshake's answer read: each ping sees only its case's
        return self

    async def __aexit__(self, *exc: object) -> None:
        process = self.process
        if process is not None and process.returncode is None:
            process.kill()
            await process.wait()

    async def send(self, line: bytes) -> None:
        assert self.process is not None and self.process.stdin is not None
        self.process.stdin.write(line.replace(b"\n", b" ") + b"\n")
        await self.process.stdin.drain()

    async def ping(self) -> list[Any]:
        """Send a ping; the messages written up to its answer (a line that is not JSON raises ValueError)."""
        assert self.process is not None and self.process.stdout is not None
        self.probes += 1
        probe = f"probe-{self.probes}"
        await self.send(json.dumps({"jsonrpc": "2.0", "id": probe, "method": "ping"}).encode())
        seen: list[Any] = []
        while True:
            line = await self.process.stdout.readline()
            if not line:
                raise ConnectionError(f"the server closed its stdout (exit status {await self.process.wait()})")
            message = json.loads(line)
            seen.append(message)
            if isinstance(message, dict) and message.get("id") == probe:
                return seen


async def stdio_case(rng: random.Random, findings: Findings, server: StdioServer) -> None:
    """Write one fuzzed line; the server must answer a ping after it, with JSON-RPC only on its stdout."""
    findings.cases += 1
    body = request_body(rng)
    try:
        await server.send(body)
        seen = await asyncio.wait_for(server.ping(), HANG)
        kinds = {"error" if "error" in m else "result" if "result" in m else "other" for m in seen[:-1]}
        findings.outcomes[f"stdio {'+'.join(sorted(kinds)) or 'nothing'}"] += 1
    except asyncio.TimeoutError:
        findings.found("stdio server", f"no ping answer within {HANG:g} s after {body[:200]!r}")
    except Exception as error:  # a finding: a dead server, or a line on stdout that is not JSON
        findings.found("stdio server", f"{error!r} after {body[:200]!r}")
