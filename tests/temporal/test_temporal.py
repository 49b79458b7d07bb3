"""Agents on a real Temporal dev server (127.0.0.1): activities, pauses as updates, crashes, other processes."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from typing import Any

import pytest

from agentkit import Agent, ToolContext, tool
from agentkit.exceptions import AgentSetupError, ResumeError
from agentkit.limits import RunLimits
from agentkit.temporal import ActivityOptions, TemporalAgent

from ..agent_helpers import call, calls, scripted
from ..durable_helpers import ledger_lines, make_tools
from .conftest import ROOT
from .helpers import durable_support

pytestmark = [pytest.mark.e2e, pytest.mark.temporal]


async def test_an_approval_arrives_as_an_update_and_the_result_is_the_run_result(client: Any, ledger: str) -> None:
    durable = durable_support(ledger)
    async with durable.worker(client):
        run = await durable.start(client, "refund")
        state = await run.wait()
        assert state.status == "awaiting_approval" and [p.call_id for p in state.pending] == ["c_refund"]
        assert ledger_lines(ledger) == []  # nothing of the turn ran
        with pytest.raises(ResumeError, match="no decision for the pending call"):
            await run.resume({})
        with pytest.raises(ResumeError, match="no pending call has the id"):
            await run.resume({"c_refund": True, "nope": False})
        await run.resume({"c_refund": True})
        with pytest.raises(ResumeError, match="not waiting for answers"):
            await run.resume({"c_refund": True})  # one answer per pause
        result = await run.result()
    assert result.status == "complete" and result.text.startswith("refund: {")
    assert result.tool_results[0].output.amount == 500  # typed again on the client side
    assert ledger_lines(ledger) == ["note refund asked", "refund DE01 500"]


async def test_a_suspension_a_client_call_and_a_cancellation(client: Any, ledger: str) -> None:
    from agentkit import client_tool

    geo = client_tool(
        "geo",
        input_schema={"type": "object", "properties": {}},
        output_schema={"type": "object", "properties": {"lat": {"type": "number"}}, "required": ["lat"]},
    )
    model, _ = scripted(calls(call("book", {"flight": "LH1"}), call("geo")), "booked and located")
    agent = Agent(id="travel-t", model=model, tools=[*make_tools(ledger), geo])
    durable = TemporalAgent(agent, task_queue="travel-t")
    async with durable.worker(client):
        run = await durable.start(client, "book and locate")
        state = await run.wait()
        assert state.status == "suspended" and {p.kind for p in state.pending} == {"suspension", "client"}
        with pytest.raises(ResumeError, match="does not fit"):
            await run.resume({"c_book": {"row": "x", "letter": "A"}, "c_geo": {"lat": 1.0}})
        await run.resume({"c_book": {"row": 7, "letter": "C"}, "c_geo": {"lat": 1.0}})
        result = await run.result()
        assert result.status == "complete" and result.text == "booked and located"
        assert ledger_lines(ledger) == ["book LH1 7C"]

        @tool
        async def stall(ctx: ToolContext[Any]) -> str:
            """Wait a while."""
            await asyncio.sleep(1)
            return "stalled"

        slow_model, _ = scripted(*[calls(call("stall", id=f"s{i}")) for i in range(50)])
        slow = TemporalAgent(Agent(id="stall-t", model=slow_model, tools=[stall]), task_queue="travel-t")
        cancelled = await slow.start(client, "stall")
        await asyncio.sleep(1.5)
        await cancelled.cancel()
        ended = await cancelled.result()
        assert ended.status == "cancelled" and 1 <= len(ended.steps) < 50
        # the cancelled run's result is a paused one: it can go on, on Temporal or in-process, from its snapshot
        assert ended.snapshot().status == "cancelled" and ended.paused


async def test_a_background_call_is_its_own_activity_and_the_run_waits_for_it(client: Any) -> None:
    @tool(background=True)
    async def research(topic: str) -> str:
        """Research (slow)."""
        await asyncio.sleep(1)
        return f"{topic} is blue"

    model, script = scripted(calls(call("research", {"topic": "sky"})), "started it", "reported")
    durable = TemporalAgent(Agent(id="research-t", model=model, tools=[research]), task_queue="research-t")
    async with durable.worker(client):
        result = await durable.run(client, "research the sky")
    assert result.status == "complete" and result.text == "reported"
    joined = result.messages[-2]
    assert "sky is blue" in joined.parts[1].text  # type: ignore[union-attr]


async def test_another_process_approves_a_paused_run(client: Any, temporal_address: str, ledger: str) -> None:
    durable = durable_support(ledger)
    async with durable.worker(client):
        run = await durable.start(client, "refund", id=f"refund-{os.getpid()}-{time.monotonic_ns()}")
        assert (await run.wait()).status == "awaiting_approval"
        approver = await asyncio.to_thread(  # the worker in this process answers the approver's query meanwhile
            subprocess.run,
            [sys.executable, "-m", "tests.temporal.helpers", "approve", temporal_address, run.id, ledger],
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert approver.returncode == 0, approver.stdout + approver.stderr
        assert "approved ['c_refund']" in approver.stdout
        result = await run.result()
    assert result.status == "complete"
    assert ledger_lines(ledger) == ["note refund asked", "refund DE01 500"]


def test_setup_mistakes_are_named() -> None:
    with pytest.raises(AgentSetupError, match="names no tool"):
        TemporalAgent(Agent(id="x-t", model="test", tools=make_tools("/dev/null")), tools={"refnd": ActivityOptions()})


async def test_a_finished_run_still_answers_and_a_used_up_budget_fails_the_workflow(client: Any) -> None:
    from temporalio.client import WorkflowFailureError

    from agentkit import ModelRetry

    model, _ = scripted("hello")
    durable = TemporalAgent(Agent(id="short-t", model=model), task_queue="short-t")

    @tool
    def flaky(n: int) -> int:
        """Always asks to retry."""
        raise ModelRetry("try again")

    looping, _ = scripted(*[calls(call("flaky", {"n": i}, id=f"f{i}")) for i in range(10)])
    stuck = TemporalAgent(
        Agent(id="stuck-t", model=looping, tools=[flaky], limits=RunLimits(retries=1)), task_queue="short-t"
    )
    async with durable.worker(client):
        run = await durable.start(client, "hi")
        assert (await run.result()).text == "hello"
        assert (await run.wait()).status == "complete"  # after the end: from the workflow's last state
        failing = await stuck.start(client, "loop")
        with pytest.raises(WorkflowFailureError) as info:
            await failing.result()
    assert "RetryLimitExceeded" in repr(info.value.cause) or "retries" in str(info.value.cause)
