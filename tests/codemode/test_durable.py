"""Code mode on Temporal: the program runs in segments (activities), and each nested call is an activity."""

from __future__ import annotations

from typing import Any

import pytest

from agentkit import Agent, tool
from agentkit.codemode import CodeMode
from agentkit.runs._codec import decode_results


@tool
def double(n: int) -> int:
    """Twice n."""
    return 2 * n


@tool(requires_approval=True)
def wire(amount: int) -> str:
    """Needs a person."""
    return "wired"


async def test_the_call_tool_activity_runs_a_program() -> None:
    from temporalio.testing import ActivityEnvironment

    from agentkit.temporal import TemporalAgent
    from agentkit.temporal._activities import call_tool

    agent = Agent(id="codemode-activity", model="test", tools=[double, wire], code_mode=CodeMode())
    TemporalAgent(agent)
    code = "try:\n    w = await wire(5)\nexcept PermissionError as e:\n    w = 'no'\n[await double(21), w]"
    request = {"agent": agent.id, "call": {"id": "p1", "name": "run_python", "arguments": {"code": code}}}
    out = await ActivityEnvironment().run(call_tool, request)  # an activity's context: it heartbeats
    [result] = decode_results([out["result"]], "result")
    assert not result.is_error, result.text
    assert result.output == {"result": [42, "no"], "printed": ""}  # no person to ask inside an activity


async def test_the_model_request_activity_sends_the_code_tool_in_place_of_the_tools() -> None:
    from agentkit.codemode._run import durable_tools

    agent = Agent(id="codemode-sent", model="test", tools=[double, wire], code_mode=CodeMode(tools=["wire"]))
    sent, runnable = durable_tools(agent)
    assert list(sent) == ["double", "run_python"]
    assert list(runnable) == ["double", "wire", "run_python"]
    plain = Agent(id="codemode-none", model="test", tools=[double])
    assert durable_tools(plain) == (plain.tools, plain.tools)


def _scheduled(history: Any) -> list[str]:
    """The activities a workflow history scheduled: the type, and for a tool call the tool's name."""
    import json

    names = []
    for event in history.events:
        if not event.HasField("activity_task_scheduled_event_attributes"):
            continue
        attributes = event.activity_task_scheduled_event_attributes
        kind = attributes.activity_type.name
        request = json.loads(attributes.input.payloads[0].data)
        names.append(f"{kind}:{request['call']['name']}" if kind == "agentkit.call_tool" else kind)
    return names


@pytest.mark.e2e
@pytest.mark.temporal
async def test_on_temporal_each_nested_call_is_an_activity_and_an_approval_pauses_the_program() -> None:
    from temporalio.client import Client

    from agentkit.messages import AssistantMessage, ToolCall, ToolResultsMessage
    from agentkit.temporal import DevServer, TemporalAgent
    from agentkit.testing import FunctionModel

    made: list[str] = []

    @tool
    def step(n: int) -> int:
        """n plus one."""
        made.append(f"step {n}")
        return n + 1

    @tool(requires_approval=True)
    def pay(amount: int) -> str:
        """Needs a person."""
        made.append(f"pay {amount}")
        return f"paid {amount}"

    code = (
        "import asyncio\n"
        "a, b = await asyncio.gather(step(1), step(10))\n"
        "try:\n    p = await pay(a + b)\nexcept PermissionError:\n    p = 'refused'\n"
        "print('after pay')\n"
        "[a, b, p, await step(b)]"
    )

    def turn(messages: Any, info: Any) -> Any:
        if isinstance(messages[-1], ToolResultsMessage):
            return messages[-1].results[0].text
        return AssistantMessage(tool_calls=[ToolCall("p1", "run_python", {"code": code})])

    agent = Agent(id="codemode-temporal", model=FunctionModel(turn), tools=[step, pay], code_mode=CodeMode())
    durable = TemporalAgent(agent, task_queue="codemode-temporal")
    with DevServer() as server:
        client = await Client.connect(server.address)
        async with durable.worker(client):
            run = await durable.start(client, "go")
            state = await run.wait()
            assert state.status == "awaiting_approval", (state, (await run.result()).text)
            assert [(p.call_id, p.tool_name) for p in state.pending] == [("p1/3", "pay")]
            assert made == ["step 1", "step 10"]  # the calls before the pause ran, once each
            await run.resume({"p1/3": True})
            result = await run.result()
            history = await client.get_workflow_handle(run.id).fetch_history()
    assert result.status == "complete", result.status
    assert result.text == 'Result: [2, 11, "paid 13", 12]\nPrinted:\nafter pay\n', result.text
    assert made == ["step 1", "step 10", "pay 13", "step 11"]  # nothing ran twice across the pause
    # the program runs in segments, and every call it makes is an activity of its own, like a direct call
    assert _scheduled(history) == [
        "agentkit.model_request",
        "agentkit.run_program",  # to the gather: two calls waiting
        "agentkit.call_tool:step",
        "agentkit.call_tool:step",
        "agentkit.run_program",  # to pay: it needs approval, so the run pauses with the program's state
        "agentkit.call_tool:pay",  # approved: the resume makes the call
        "agentkit.run_program",
        "agentkit.call_tool:step",
        "agentkit.run_program",  # to the end
        "agentkit.model_request",
    ]
    assert [c.name for c in result.tool_calls] == ["run_python"]  # the model made one call
    await _replay(history)  # a worker taking the run over replays it: the program's segments are deterministic


async def _replay(history: Any) -> None:
    from temporalio.worker import Replayer
    from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

    from agentkit.temporal._worker import _PASSTHROUGH
    from agentkit.temporal._workflow import AgentRunWorkflow

    restrictions = SandboxRestrictions.default.with_passthrough_modules(*_PASSTHROUGH)
    replayer = Replayer(
        workflows=[AgentRunWorkflow], workflow_runner=SandboxedWorkflowRunner(restrictions=restrictions)
    )
    await replayer.replay_workflow(history)  # raises on a nondeterministic replay


@pytest.mark.e2e
@pytest.mark.temporal
async def test_on_temporal_a_denied_nested_call_is_raised_in_the_program() -> None:
    from temporalio.client import Client

    from agentkit.messages import AssistantMessage, ToolCall, ToolResultsMessage
    from agentkit.temporal import DevServer, TemporalAgent
    from agentkit.testing import FunctionModel

    code = "try:\n    w = await wire(5)\nexcept PermissionError as e:\n    w = 'no: ' + str(e)[:20]\n"
    code += "[await double(2), w]"

    def turn(messages: Any, info: Any) -> Any:
        if isinstance(messages[-1], ToolResultsMessage):
            return messages[-1].results[0].text
        return AssistantMessage(tool_calls=[ToolCall("p1", "run_python", {"code": code})])

    agent = Agent(id="codemode-temporal-deny", model=FunctionModel(turn), tools=[double, wire], code_mode=CodeMode())
    durable = TemporalAgent(agent, task_queue="codemode-temporal-deny")
    with DevServer() as server:
        client = await Client.connect(server.address)
        async with durable.worker(client):
            run = await durable.start(client, "go")
            assert (await run.wait()).status == "awaiting_approval"
            await run.resume({"p1/1": False})
            result = await run.result()
    assert result.status == "complete" and result.text.startswith('Result: [4, "no: '), result.text


@pytest.mark.e2e
@pytest.mark.temporal
async def test_on_temporal_a_program_survives_a_worker_killed_during_its_nested_call(tmp_path: Any) -> None:
    import asyncio
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    from temporalio.client import Client

    from agentkit.temporal import DevServer

    from ..durable_helpers import ledger_lines
    from .temporal_worker import durable_program

    root = Path(__file__).resolve().parents[2]
    ledger = str(tmp_path / "ledger.txt")
    workers: list[subprocess.Popen[str]] = []

    def start_worker(address: str) -> None:
        env = {**os.environ, "PYTHONPATH": str(root)}
        command = [sys.executable, "-m", "tests.codemode.temporal_worker", address, ledger]
        process = subprocess.Popen(
            command, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        workers.append(process)
        assert process.stdout is not None
        line = process.stdout.readline()
        assert "worker ready" in line, line + process.stdout.read()

    def wait_for_line(line: str) -> None:
        deadline = time.monotonic() + 60
        while line not in ledger_lines(ledger):
            assert time.monotonic() < deadline, f"timed out waiting for {line!r}"
            time.sleep(0.05)

    try:
        with DevServer() as server:
            client = await Client.connect(server.address)
            start_worker(server.address)
            run = await durable_program(ledger).start(client, "go")
            await asyncio.to_thread(wait_for_line, "slow started 2")  # the program is in its second call
            workers[0].send_signal(signal.SIGKILL)
            workers[0].wait(10)
            assert ledger_lines(ledger) == ["slow started 2", "step 1"]
            start_worker(server.address)  # another worker takes the run over
            result = await asyncio.wait_for(run.result(), 120)
    finally:
        for process in workers:
            if process.poll() is None:
                process.kill()
                process.wait(10)
            assert process.stdout is not None
            process.stdout.close()
    assert result.status == "complete" and result.text == "Result: [2, 20, 21]", result.text
    lines = ledger_lines(ledger)
    assert lines.count("step 1") == 1  # the call before the crash: its result is in the history, not made again
    assert lines.count("slow started 2") == 2 and lines.count("slow done 2") == 1  # the cut call ran again
    assert lines.count("step 20") == 1
