"""agentkit's MCP client and server against FastMCP 4 (issue 22 §6), on the 2026-07-28 protocol: FastMCP's
server (tools, resources, prompts, and a background tool served as a task by `fastmcp-tasks`, the SEP-2663
tasks extension) for agentkit's client, and FastMCP's client for agentkit's server (a suspended tool's
question as input_required). Real HTTP on 127.0.0.1; FastMCP comes with the `fastmcp` test extra."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import uvicorn
from fastmcp import Client, FastMCP
from fastmcp_tasks import TasksExtension

from agentkit import Registry, ToolCall, ToolContext, UserMessage, tool
from agentkit.mcp import MCPServer, serving_http

from .fixtures.helpers import free_port
from .fixtures.library import PROMPTS, RESOURCES
from .test_rounds import choose_seat, echo

CANCELLED: list[int] = []


def _fastmcp_app() -> FastMCP:
    app = FastMCP("fastmcp-peer")
    app.add_extension(TasksExtension(url="memory://"))

    @app.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @app.tool(task=True)
    async def crunch(n: int, seconds: float = 0.3) -> int:
        """Double a number, slowly (a background task)."""
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            CANCELLED.append(n)
            raise
        return n * 2

    @app.resource("notes://{name}")
    def note(name: str) -> str:
        """A note."""
        return f"note {name}"

    @app.prompt
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello {name}"

    return app


@pytest.fixture
async def fastmcp_url() -> AsyncIterator[str]:
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(_fastmcp_app().http_app(), host="127.0.0.1", port=port, log_level="warning"))
    running = asyncio.get_running_loop().create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.02)
    yield f"http://127.0.0.1:{port}/mcp"
    server.should_exit = True
    await running


async def test_agentkit_uses_a_fastmcp_server_on_the_current_protocol(fastmcp_url: str) -> None:
    async with MCPServer.http(fastmcp_url) as server:
        assert server.protocol_version == "2026-07-28"
        assert set(server.registry) == {"add", "crunch"}
        added = await server.registry.call(ToolCall(id="1", name="add", arguments={"a": 2, "b": 3}))
        assert added.output == {"result": 5}
        (template,) = server.resource_templates
        (contents,) = await server.read_resource(template.expand(name="x"))
        assert contents.text == "note x"
        assert await server.get_prompt("greet", {"name": "Ada"}) == [UserMessage("Hello Ada")]


async def test_a_fastmcp_background_tool_runs_as_a_task(fastmcp_url: str) -> None:
    statuses: list[Any] = []
    async with MCPServer.http(fastmcp_url) as server:
        result = await server.registry.call(
            ToolCall(id="1", name="crunch", arguments={"n": 21}), context=ToolContext(on_progress=statuses.append)
        )
    assert not result.is_error and result.output == {"result": 42}, result.text
    assert statuses[0]["status"] == "working" and statuses[-1]["status"] == "completed"
    assert len({s["task"] for s in statuses}) == 1


async def test_a_task_past_its_timeout_is_cancelled_on_the_server(fastmcp_url: str) -> None:
    CANCELLED.clear()
    async with MCPServer.http(fastmcp_url, timeout=1) as server:
        result = await server.registry.call(ToolCall(id="1", name="crunch", arguments={"n": 7, "seconds": 30}))
        assert result.is_error and result.error_kind == "timeout"
        for _ in range(100):  # tasks/cancel was sent; the worker stops the task soon after
            if CANCELLED:
                break
            await asyncio.sleep(0.05)
    assert CANCELLED == [7]


async def test_fastmcps_client_uses_agentkits_server() -> None:
    async def answer(message: str, response_type: Any, params: Any, context: Any) -> dict[str, Any]:
        return {"row": 4, "letter": "D"}

    served = Registry([choose_seat, echo])
    async with (
        serving_http(served, resources=RESOURCES, prompts=PROMPTS) as url,
        Client(url, elicitation_handler=answer) as client,
    ):
        assert {t.name for t in await client.list_tools()} == {"choose_seat", "echo"}
        assert [str(r.uri) for r in await client.list_resources()] == [
            "docs://readme",
            "images://pixel",
            "data://raw",
        ]
        seat = await client.call_tool("choose_seat", {"flight": "LH1"})  # input_required, answered by FastMCP
        assert seat.structured_content == {"result": "LH1: 4D"}
        (book,) = await client.read_resource("books://4")
        assert book.text == '{"id":4,"title":"Book 4"}'  # type: ignore[union-attr]
        prompt = await client.get_prompt("review", {"code": "x"})
        assert prompt.messages[0].content.text == "Review this python code:\nx"  # type: ignore[union-attr]


# ---- agentkit serving background tools as tasks ----------------------------------------------------------

STOPPED: list[int] = []


@tool(background=True)
async def crunch_here(n: int, seconds: float = 0.3) -> int:
    """Double a number, slowly (served as a task)."""
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        STOPPED.append(n)
        raise
    return n * 2


async def test_a_background_tool_is_served_as_a_task_to_clients_that_opt_in() -> None:
    from fastmcp_tasks import call_tool_task

    async with serving_http(Registry([crunch_here])) as url:
        async with Client(url) as client:  # FastMCP's client, with fastmcp-tasks: opts in
            handle = await call_tool_task(client, "crunch_here", {"n": 5})
            assert len(handle.task_id) >= 40  # unguessable
            assert (await handle.status()).status in ("working", "completed")
            assert (await client.call_tool("crunch_here", {"n": 6})).structured_content == {"result": 12}
        statuses: list[Any] = []
        async with MCPServer.http(url) as ours:
            result = await ours.registry.call(
                ToolCall(id="1", name="crunch_here", arguments={"n": 21}),
                context=ToolContext(on_progress=statuses.append),
            )
        assert result.output == {"result": 42} and statuses[-1]["status"] == "completed"
        async with MCPServer.http(url, protocol="legacy") as legacy:  # no tasks before 2026-07-28: a plain result
            assert (await legacy.call_tool("crunch_here", {"n": 1})).structured_content == {"result": 2}


async def test_a_served_task_is_stopped_by_tasks_cancel() -> None:
    STOPPED.clear()
    async with serving_http(Registry([crunch_here])) as url, MCPServer.http(url, timeout=1) as client:
        result = await client.registry.call(ToolCall(id="1", name="crunch_here", arguments={"n": 9, "seconds": 30}))
        assert result.error_kind == "timeout"
        for _ in range(100):
            if STOPPED:
                break
            await asyncio.sleep(0.05)
    assert STOPPED == [9]
