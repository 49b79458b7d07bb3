"""What a worker does before it polls, MCP servers on Temporal, and following a run's events from outside."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from datetime import timedelta
from typing import Any

import pytest

from agentkit import Agent, AssistantMessage, ToolCall, ToolContext, ToolResultsMessage, tool
from agentkit.events import FinishEvent, ToolProgressEvent
from agentkit.messages import Message
from agentkit.temporal import ActivityOptions, TemporalAgent
from agentkit.testing import FunctionInfo, FunctionModel

from .conftest import ROOT

pytestmark = [pytest.mark.e2e, pytest.mark.temporal]

COLD_START = textwrap.dedent(
    """
    import asyncio, os, sys, threading
    import pydantic.type_adapter as type_adapter
    built = []  # (thread, type) of every TypeAdapter built
    original = type_adapter.TypeAdapter.__init__
    def counting(self, *args, **kwargs):
        built.append((threading.current_thread().name, args[0] if args else kwargs.get("type")))
        original(self, *args, **kwargs)
    type_adapter.TypeAdapter.__init__ = counting

    from temporalio.client import Client
    from agentkit import Agent
    from agentkit.temporal import TemporalAgent
    from tests.temporal.helpers import durable_support

    async def main():
        durable = durable_support(sys.argv[2])
        client = await Client.connect(sys.argv[1])
        worker = durable.worker(client)
        before = len(built)
        async with worker:
            run = await durable.start(client, "refund")
            assert (await run.wait()).status == "awaiting_approval"
            await run.resume({"c_refund": True})
            await run.result()
        in_workflow = [kind for thread, kind in built[before:] if thread.startswith("temporal_workflow_")]
        print("built before polling:", before, "built in workflow activations:", len(in_workflow), in_workflow)

    asyncio.run(main())
    sys.stdout.flush()
    os._exit(0)  # the Temporal runtime's threads can crash a normal interpreter shutdown
    """
)


def test_the_codec_adapters_are_built_before_the_worker_polls(temporal_address: str, ledger: str) -> None:
    # a fresh process: nothing built yet. A run's workflow activations must find the codec's adapters built,
    # since building them inside one on a loaded machine can outlast Temporal's deadlock detector
    done = subprocess.run(
        [sys.executable, "-c", COLD_START, temporal_address, ledger],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    counts = done.stdout.splitlines()[0]
    assert "built in workflow activations: 0 []" in counts, done.stdout
    assert int(counts.split(":")[1].split()[0]) >= 4  # messages, results, pending items, usage


async def test_an_mcp_servers_tools_are_listed_approved_and_called_as_activities(client: Any) -> None:
    from agentkit.mcp import MCPServer
    from tests.mcp.fixtures.helpers import FIXTURE_SERVER_ARGS

    server = MCPServer.stdio(
        sys.executable, FIXTURE_SERVER_ARGS, cwd=str(ROOT), prefix="fx_",
        requires_approval=lambda hints: not hints.read_only,
    )  # fmt: skip

    def script(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
        if isinstance(messages[-1], ToolResultsMessage):
            return f"2 + 3 = {messages[-1].results[0].text}"
        assert "fx_add" in info.tool_keys and "fx_get-weather" in info.tool_keys  # the server's tools were sent
        return AssistantMessage(tool_calls=[ToolCall("a1", "fx_add", {"a": 2, "b": 3})])

    agent = Agent(id="mcp-t", model=FunctionModel(script), mcp_servers=[server])
    durable = TemporalAgent(agent, task_queue="mcp-t")
    async with durable.worker(client):
        run = await durable.start(client, "add")
        state = await run.wait()  # the server's approval rule holds in the workflow too
        assert state.status == "awaiting_approval" and [p.tool_name for p in state.pending] == ["fx_add"]
        await run.resume({"a1": True})
        result = await run.result()
    assert result.text == '2 + 3 = {"result":5}'  # the server's structured content, as in-process
    assert result.tool_results[0].output == {"result": 5}
    assert not server.connected  # the worker closed its session when it stopped


async def test_a_caller_follows_a_runs_events_and_its_tools_progress(client: Any) -> None:
    @tool
    async def crunch(ctx: ToolContext[Any], rounds: int) -> str:
        """Crunch numbers, reporting progress."""
        for n in range(rounds):
            ctx.emit({"round": n + 1, "of": rounds})
            await asyncio.sleep(1)
        return f"crunched {rounds}"

    def script(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
        if isinstance(messages[-1], ToolResultsMessage):
            return messages[-1].results[0].text
        return AssistantMessage("Crunching.", [ToolCall("k1", "crunch", {"rounds": 4})])

    agent = Agent(id="events-t", model=FunctionModel(script), tools=[crunch])
    local = [event.kind async for event in agent.stream("crunch") if not isinstance(event, ToolProgressEvent)]
    beat = ActivityOptions(heartbeat_timeout=timedelta(seconds=1))  # progress rides the heartbeats
    durable = TemporalAgent(agent, task_queue="events-t", tools={"crunch": beat})
    async with durable.worker(client):
        run = await durable.start(client, "crunch")
        events = [event async for event in run.events(poll=0.2)]
        assert (await run.result()).text == "crunched 4"
    progress = [e for e in events if isinstance(e, ToolProgressEvent)]
    assert progress and all(e.call_id == "k1" and e.tool_name == "crunch" for e in progress)
    assert [e.data["round"] for e in progress] == sorted({e.data["round"] for e in progress})  # in order, once each
    assert [e.kind for e in events if not isinstance(e, ToolProgressEvent)] == local  # the same events as in-process
    assert isinstance(events[-1], FinishEvent) and events[-1].status == "complete"
