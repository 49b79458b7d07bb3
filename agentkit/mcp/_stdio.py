"""The stdio transport of `MCPServer.stdio`: the `mcp` SDK's, except that a message has a size limit.

The SDK's reader joins a line's chunks with ``buffer + chunk`` (quadratic) and parses whatever arrives:
a 40 MiB result took 56 s, the event loop mostly blocked, before `max_result_bytes` refused it. Here
the reader scans bytes linearly, and a line past the limit stops being kept: the rest is read and
dropped up to its newline, and the request it answers gets a JSON-RPC error at once (`OVERSIZE`), so
the call fails with the size and the session goes on. Spawning and stopping the server (process group,
the spec's close-stdin-then-kill sequence) are the SDK's own helpers.
"""

from __future__ import annotations as _annotations

import contextlib
import re
import sys
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from mcp.client.stdio import StdioServerParameters

__all__ = ["OVERSIZE", "message_cap", "stdio_transport"]

OVERSIZE = -32099
"""The JSON-RPC error code the transport answers a request with when its response is over the limit."""

_EDGE = 4096  # bytes of an oversize message's start and end kept to find the request id in
_INT_OR_STRING = r'(-?\d+|"(?:[^"\\]|\\.){0,200}")'
_LEADING_ID = re.compile(rb'^\s*\{(?:\s*"jsonrpc"\s*:\s*"2\.0"\s*,)?\s*"id"\s*:\s*' + _INT_OR_STRING.encode())
_TRAILING_ID = re.compile(
    rb',\s*"id"\s*:\s*' + _INT_OR_STRING.encode() + rb'\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$'
)


def message_cap(max_result_bytes: int | None) -> int | None:
    """The largest message a transport reads for a result limit: text and structured content, plus room."""
    return None if max_result_bytes is None else 2 * max_result_bytes + (64 << 10)


@dataclass
class _Oversize:
    head: bytes
    tail: bytes
    size: int

    def add(self, data: bytes) -> None:
        self.size += len(data)
        self.tail = (self.tail + data[-_EDGE:])[-_EDGE:]

    def request_id(self, in_flight: set[Any]) -> Any:
        """The id of the request this message answers: read from its start or end, else the only one in flight."""
        import json

        for pattern, text in ((_LEADING_ID, self.head), (_TRAILING_ID, self.tail)):
            found = pattern.search(text)
            if found is not None:
                with contextlib.suppress(ValueError):
                    value = json.loads(found.group(1))
                    if value in in_flight:
                        return value
        return next(iter(in_flight)) if len(in_flight) == 1 else None


class _Reader:
    """Turns the server's stdout into messages, dropping any line longer than `limit` as it arrives."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.in_flight: set[Any] = set()
        """Ids of the requests sent and not answered yet (the writer adds, the reader removes)."""

    def parse(self, line: bytes) -> Any:
        from mcp import types
        from mcp.shared.message import SessionMessage

        try:
            message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        except ValueError as exc:
            return exc  # the session surfaces parse errors as values
        if isinstance(message, (types.JSONRPCResponse, types.JSONRPCError)):
            self.in_flight.discard(message.id)
        return SessionMessage(message)

    def refuse(self, over: _Oversize) -> Any:
        """A JSON-RPC error answering the request an oversize message was for (None: no one to tell)."""
        from mcp import types
        from mcp.shared.message import SessionMessage

        request_id = over.request_id(self.in_flight)
        if request_id is None:
            return None
        self.in_flight.discard(request_id)
        error = types.ErrorData(
            code=OVERSIZE,
            message=f"the response was over {self.limit:,} bytes (at least {over.size:,}); agentkit did not read it",
            data={"bytes": over.size, "limit": self.limit},
        )
        return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error))

    async def messages(self, stdout: Any) -> AsyncGenerator[Any, None]:
        """Each message as its line completes: parsed, an oversize refusal, or None (unattributable)."""
        buffer = bytearray()
        over: _Oversize | None = None
        async for chunk in stdout:
            start = 0
            while start <= len(chunk):
                newline = chunk.find(b"\n", start)
                piece = chunk[start:] if newline < 0 else chunk[start:newline]
                if over is not None:
                    over.add(piece)
                else:
                    buffer += piece
                    if self.limit is not None and len(buffer) > self.limit:
                        over = _Oversize(bytes(buffer[:_EDGE]), bytes(buffer[-_EDGE:]), len(buffer))
                        buffer = bytearray()
                if newline < 0:
                    break
                if over is not None:
                    yield self.refuse(over)
                    over = None
                elif buffer.strip():
                    yield self.parse(bytes(buffer))
                buffer = bytearray()
                start = newline + 1


@contextlib.asynccontextmanager
async def stdio_transport(
    server: StdioServerParameters, *, errlog: TextIO | None = None, max_message_bytes: int | None = None
) -> AsyncGenerator[tuple[Any, Any], None]:
    """Spawn the server and yield the session's ``(read_stream, write_stream)``, as the SDK's `stdio_client`.

    Args:
        server: the command, arguments, environment and working directory.
        errlog: where the server's stderr goes (default: this process's stderr).
        max_message_bytes: the longest line read whole; a longer one is dropped as it arrives and its
            request answered with an `OVERSIZE` error (None: no limit).
    """
    import anyio
    import anyio.lowlevel
    from mcp import types
    from mcp.client import stdio as sdk

    command = await sdk._get_executable_command(server.command)  # pyright: ignore[reportPrivateUsage]
    process = await sdk._create_platform_compatible_process(  # pyright: ignore[reportPrivateUsage]
        command=command,
        args=server.args,
        env=sdk.get_default_environment() | (server.env or {}),
        errlog=errlog if errlog is not None else sys.stderr,
        cwd=server.cwd,
    )
    read_writer, read_stream = anyio.create_memory_object_stream[Any](0)
    write_stream, write_reader = anyio.create_memory_object_stream[Any](0)
    reader = _Reader(max_message_bytes)
    writer_done = anyio.Event()

    async def stdout_reader() -> None:
        try:
            async with read_writer:
                try:
                    async for item in reader.messages(process.stdout):
                        if item is None:  # an oversize message nobody can be told about: end the session
                            return
                        await read_writer.send(item)
                finally:
                    await sdk._drain_stdout(process)  # pyright: ignore[reportPrivateUsage]
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError):
            pass  # shutdown closed the pipe or the session under the read

    async def stdin_writer() -> None:
        assert process.stdin is not None
        try:
            async with write_reader:
                async for session_message in write_reader:
                    message = session_message.message
                    if isinstance(message, types.JSONRPCRequest):
                        reader.in_flight.add(message.id)
                    data = message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await process.stdin.send(data.encode(server.encoding, server.encoding_error_handler))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_writer.aclose()
        finally:
            writer_done.set()

    async def shutdown() -> None:
        read_stream.close()
        write_stream.close()
        with anyio.move_on_after(0.5):
            await writer_done.wait()
        await sdk._stop_server_process(process)  # pyright: ignore[reportPrivateUsage]
        await sdk._aclose_all(read_stream, write_stream, read_writer, write_reader)  # pyright: ignore[reportPrivateUsage]
        await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as group:
        group.start_soon(stdout_reader)
        group.start_soon(stdin_writer)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):  # the server process must be stopped whatever happens
                await shutdown()
            group.cancel_scope.cancel()
