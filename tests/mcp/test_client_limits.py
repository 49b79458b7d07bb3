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


async def test_a_tool_that_requires_task_execution_is_offered_and_a_plain_answer_taken() -> None:
    """It was left out with a warning (no task support); it is now called as a task. A server that answers
    the task request with a plain result is taken at its word (the real task flow: test_everything.py)."""
    async with (
        serving_http(Registry(), server=_task_server()) as url,
        MCPServer.http(url, protocol="legacy") as server,  # execution.taskSupport is 2025-11-25's
    ):
        assert list(server.registry) == ["slow_job", "either", "plain"]
        result = await server.registry.call(ToolCall(id="1", name="slow_job", arguments={}))
        assert result.text == "ran slow_job"


async def test_a_result_over_the_transports_old_cap_gets_the_limit_error_not_a_dropped_connection(
    dump_url: str,
) -> None:
    """The mcp SDK drops HTTP events over 1 MiB as a closed connection; the cap now follows the limit."""
    async with MCPServer.http(dump_url, max_result_bytes=2 << 20) as server:
        result = await server.registry.call(ToolCall(id="1", name="dump", arguments={"size": 1_500_000}))
        assert not result.is_error, result.text  # 1.5 MB sent twice in one event: over the SDK's default 1 MiB
        follow_up = await server.registry.call(ToolCall(id="2", name="dump", arguments={"size": 10}))
        assert not follow_up.is_error


# ---- an oversize result over stdio is not read whole ------------------------------------------------


async def test_an_oversize_stdio_result_is_dropped_as_it_arrives_and_the_session_goes_on() -> None:
    """Regression (issue 17 §4.10): a 40 MiB result over stdio was read whole (56 s, the event loop mostly
    blocked, the line copied again for every 64 KiB chunk) before max_result_bytes refused it."""
    import tracemalloc

    from .fixtures.helpers import ROOT

    server = MCPServer.stdio(sys.executable, ["-m", "tests.mcp.fixtures.big_server"], cwd=str(ROOT), timeout=100)
    async with server:
        tracemalloc.start()
        try:
            big = await server.registry.call(ToolCall(id="1", name="blob", arguments={"mib": 40}))
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        after = await server.registry.call(ToolCall(id="2", name="ping", arguments={}))
    assert big.is_error and big.error_kind == "tool_error"
    assert "returned more than 1,048,576 bytes (MCPServer max_result_bytes); the result was not read" in big.text
    assert peak < 16 << 20, f"{peak:,} bytes held at the peak: the message was kept, not dropped"  # 80 MiB arrived
    assert not after.is_error and after.output == {"result": "pong"}


@pytest.mark.parametrize(
    ("head", "tail", "in_flight", "expected"),
    [
        (b'{"jsonrpc":"2.0","id":7,"result":{"content":[', b'xx"}]}}', {3, 7}, 7),  # the Python SDK's order
        (b'{"result":{"content":[{"id":3,"text":"', b'xx"}]},"jsonrpc":"2.0","id":"a-7"}', {3, "a-7"}, "a-7"),  # TS
        (b'{"result":{"content":[{"id":3,"text":"', b'xx"}]}}', {5}, 5),  # no id seen: the only request in flight
        (b'{"result":{"content":[{"id":3,"text":"', b'xx"}]}}', {3, 5}, None),  # cannot tell: the session ends
    ],
)
def test_the_request_an_oversize_message_answers(head: bytes, tail: bytes, in_flight: set[Any], expected: Any) -> None:
    from agentkit.mcp._stdio import _Oversize

    assert _Oversize(head, tail, 10 << 20).request_id(in_flight) == expected


# ---- a server's schema patterns never run on the event loop with Python's re ------------------------


def _hostile_server(pattern: str, value: str) -> Any:
    from mcp import types
    from mcp.server.lowlevel import Server

    output = {"type": "object", "properties": {"code": {"type": "string", "pattern": pattern}}, "required": ["code"]}

    async def list_tools(ctx: Any, params: Any) -> Any:
        schema = {"type": "object", "properties": {}}
        return types.ListToolsResult(tools=[types.Tool(name="code", input_schema=schema, output_schema=output)])

    async def call_tool(ctx: Any, params: Any) -> Any:
        text = types.TextContent(type="text", text=value)
        return types.CallToolResult(content=[text], structured_content={"code": value})

    return Server("hostile", on_list_tools=list_tools, on_call_tool=call_tool)


@pytest.mark.parametrize("pattern", ["^(a+)+$", "^(?=(a+)+$)a"])  # linear engine; look-ahead: the regex module
async def test_a_servers_output_pattern_is_matched_by_the_bounded_engine(pattern: str) -> None:
    """Regression (issue 17 §4.2, MCP part): the mcp client matched a server's outputSchema patterns with
    Python's re on the event loop (2^n steps for n letters); its check answered first, as a tool_error."""
    hostile = _hostile_server(pattern, "a" * 24 + "!")
    async with serving_http(Registry(), server=hostile) as url, MCPServer.http(url) as server:
        result = await server.registry.call(ToolCall(id="1", name="code", arguments={}))
    assert result.is_error and result.error_kind == "invalid_output", result.text
    assert f"$.code: {'a' * 24 + '!'!r} does not match {pattern!r}" in result.text
