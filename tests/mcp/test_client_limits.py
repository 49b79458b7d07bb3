"""The MCP client's bounds: connect_timeout covers the whole attempt, results have a size limit, and tools
that can only run as MCP tasks are not offered (issue 8 §4.8, §1.6)."""

from __future__ import annotations

import asyncio
import re
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agentkit import Registry, ToolCall, tool
from agentkit.exceptions import AgentkitWarning
from agentkit.mcp import MCPConnectionError, MCPServer, serving_http


@pytest.fixture
async def silent_port() -> AsyncIterator[int]:
    """A TCP server on 127.0.0.1 that accepts connections and never answers."""
    held: list[asyncio.StreamWriter] = []

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)  # kept open, never written to

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    yield server.sockets[0].getsockname()[1]
    for writer in held:
        writer.close()
    server.close()
    await server.wait_closed()


async def _connect_seconds(server: MCPServer) -> float:
    started = time.monotonic()
    with pytest.raises(MCPConnectionError, match="within 1 s"):
        async with server:
            pass
    return time.monotonic() - started


async def test_connect_timeout_bounds_a_server_that_accepts_and_never_answers(silent_port: int) -> None:
    """Regression: connect_timeout=2 gave up after 13 s (a graceful shutdown waited 10 s for the silent server)."""
    seconds = await _connect_seconds(MCPServer.http(f"http://127.0.0.1:{silent_port}/mcp", connect_timeout=1))
    assert seconds < 3.5  # the timeout plus a generous margin for a loaded machine, not 10+ s of shutdown


async def test_connect_timeout_bounds_a_stdio_server_that_never_answers() -> None:
    server = MCPServer.stdio(sys.executable, ["-c", "import time; time.sleep(60)"], connect_timeout=1)
    # 1 s, then the mcp SDK's shutdown of a child that ignores its closed stdin (2 s grace, then SIGTERM)
    assert await _connect_seconds(server) < 5.0


# ---- result size -------------------------------------------------------------------------------------


@tool
def dump(size: int) -> str:
    """Return `size` characters."""
    return "x" * size


@pytest.fixture
async def dump_url() -> AsyncIterator[str]:
    async with serving_http(Registry([dump])) as url:
        yield url


async def test_an_oversize_result_becomes_an_error_result(dump_url: str) -> None:
    """Regression: MCP results had no size limit: whatever a server sent went to the model whole."""
    async with MCPServer.http(dump_url, max_result_bytes=1000) as server:
        small = await server.registry.call(ToolCall(id="1", name="dump", arguments={"size": 900}))
        big = await server.registry.call(ToolCall(id="2", name="dump", arguments={"size": 20_000}))
    # 900 characters sent twice (text and structured content) count once: only one of them is passed on
    assert not small.is_error, small.text
    assert big.is_error and big.error_kind == "tool_error"
    assert re.search(r"returned 20,0\d\d bytes, over the limit of 1,000 bytes", big.text), big.text
    assert "x" * 100 not in big.text


async def test_the_default_limit_is_one_mebibyte_and_none_lifts_it(dump_url: str) -> None:
    assert MCPServer.http(dump_url).max_result_bytes == 1 << 20
    async with MCPServer.http(dump_url, max_result_bytes=None) as unlimited:
        lifted = await unlimited.registry.call(ToolCall(id="1", name="dump", arguments={"size": 50_000}))
    assert not lifted.is_error and len(lifted.output["result"]) == 50_000


# ---- tools that require MCP tasks ----------------------------------------------------------------------------


def _task_server() -> Any:
    from mcp import types
    from mcp.server.lowlevel import Server

    schema = {"type": "object", "properties": {}}

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name="slow_job", input_schema=schema, execution=types.ToolExecution(task_support="required")
                ),
                types.Tool(name="either", input_schema=schema, execution=types.ToolExecution(task_support="optional")),
                types.Tool(name="plain", input_schema=schema),
            ]
        )

    async def call_tool(ctx: Any, params: Any) -> Any:
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"ran {params.name}")])

    return Server("tasks", on_list_tools=list_tools, on_call_tool=call_tool)


async def test_a_tool_that_requires_task_execution_is_not_offered() -> None:
    """Regression: such a tool was offered to models and failed on every call."""
    async with serving_http(Registry(), server=_task_server()) as url:
        with pytest.warns(AgentkitWarning, match=r"'slow_job' skipped: it requires task-augmented execution"):
            async with MCPServer.http(url) as server:
                assert list(server.registry) == ["either", "plain"]
                result = await server.registry.call(ToolCall(id="1", name="either", arguments={}))
                assert result.text == "ran either"
                assert [t.name for t in server.listed_tools] == ["slow_job", "either", "plain"]


async def test_a_result_over_the_transports_old_cap_gets_the_limit_error_not_a_dropped_connection(
    dump_url: str,
) -> None:
    """The mcp SDK drops HTTP events over 1 MiB as a closed connection; the cap now follows the limit."""
    async with MCPServer.http(dump_url, max_result_bytes=2 << 20) as server:
        result = await server.registry.call(ToolCall(id="1", name="dump", arguments={"size": 1_500_000}))
        assert not result.is_error, result.text  # 1.5 MB sent twice in one event: over the SDK's default 1 MiB
        follow_up = await server.registry.call(ToolCall(id="2", name="dump", arguments={"size": 10}))
        assert not follow_up.is_error
