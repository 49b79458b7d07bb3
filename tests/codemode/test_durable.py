"""Code mode on Temporal today: the code tool is one activity, and its program's calls run inside it."""

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


@pytest.mark.e2e
@pytest.mark.temporal
async def test_a_program_runs_as_one_activity_on_temporal() -> None:
    from temporalio.client import Client

    from agentkit.messages import AssistantMessage, ToolCall, ToolResultsMessage
    from agentkit.temporal import DevServer, TemporalAgent
    from agentkit.testing import FunctionModel

    def turn(messages: Any, info: Any) -> Any:
        if isinstance(messages[-1], ToolResultsMessage):
            return messages[-1].results[0].text
        return AssistantMessage(tool_calls=[ToolCall("p1", "run_python", {"code": "await double(await double(5))"})])

    agent = Agent(id="codemode-temporal", model=FunctionModel(turn), tools=[double], code_mode=CodeMode())
    durable = TemporalAgent(agent, task_queue="codemode-temporal")
    with DevServer() as server:
        client = await Client.connect(server.address)
        async with durable.worker(client):
            result = await durable.run(client, "go")
    assert result.status == "complete" and result.text == "Result: 20"
    assert [c.name for c in result.tool_calls] == ["run_python"]  # the program's calls ran inside its activity
