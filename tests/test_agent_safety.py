"""Approval and redaction holes found in review: workflows, MCP serving, double resume, error texts."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import Field

from agentkit import Approval, ApprovalError, Registry, ToolTransform, Workflow, tool
from agentkit.agent import Agent
from agentkit.events import ToolErrorEvent
from agentkit.hooks import Hooks
from agentkit.testing import TestModel

from .agent_helpers import call, calls, scripted


def test_a_workflow_with_a_step_needing_approval_needs_approval() -> None:
    ran: list[int] = []

    @tool(requires_approval=True)
    def wire_money(amount: int) -> int:
        ran.append(amount)
        return amount

    def receipt(amount: int) -> str:
        return f"sent {amount}"

    agent = Agent(name="a", model=TestModel(), workflows={"pay": Workflow("pay", [wire_money, receipt])})
    assert agent.tools["workflow-pay"].requires_approval is True
    result = agent.generate_sync("go")
    assert result.status == "awaiting_approval" and ran == []


async def test_a_paused_result_resumes_once() -> None:
    runs: list[str] = []

    @tool(requires_approval=True)
    def launch(target: str) -> str:
        runs.append(target)
        return "launched"

    model, _ = scripted(calls(call("launch", {"target": "moon"}, "c1")), "denied, ok", "done")
    agent = Agent(name="a", model=model, tools=[launch])
    paused = await agent.generate("go")
    assert paused.status == "awaiting_approval"
    finished = await agent.resume(paused, {"c1": Approval(False, "no")})
    assert finished.status == "complete" and runs == []
    with pytest.raises(ApprovalError, match="already resumed"):
        await agent.resume(paused, {"c1": True})  # a second resume would overturn the denial
    assert runs == []


async def test_validation_errors_do_not_leak_redacted_input() -> None:
    @tool(transform=ToolTransform(input=lambda args: dict.fromkeys(args, "***")))
    def login(user: str, password: Annotated[str, Field(min_length=12)]) -> str:
        return "ok"

    model, _ = scripted(calls(call("login", {"user": "ann", "password": "hunter2"}, "c1")), "sorry")
    agent = Agent(name="a", model=model, tools=[login])
    stream = agent.stream("log in")
    errors = [event async for event in stream if isinstance(event, ToolErrorEvent)]
    assert len(errors) == 1 and "hunter2" not in str(errors[0].error) and "withheld" in str(errors[0].error)
    [entry] = agent.transcript(stream.result)
    assert "hunter2" not in repr(entry)
    # the model gets what is wrong and where, so it can fix the call, but not the redacted value (issue 13)
    told = stream.result.tool_results[0].text
    assert "hunter2" not in told and "$.password: String should have at least 12 characters" in told


def test_test_model_ids_are_the_same_for_the_same_run() -> None:
    @tool
    def echo(text: str) -> str:
        return text

    agent = Agent(name="a", model=TestModel(seed=3), tools=[echo])
    first, second = agent.generate_sync("hi"), agent.generate_sync("hi")
    assert first.messages == second.messages


async def test_the_mcp_server_never_runs_a_tool_needing_approval() -> None:
    pytest.importorskip("mcp")
    from agentkit.mcp import serving_http

    ran: list[int] = []

    @tool(requires_approval=lambda args: args["amount"] > 100)
    def pay(amount: int) -> str:
        ran.append(amount)
        return f"paid {amount}"

    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with (
        serving_http(Registry([pay])) as url,
        streamable_http_client(url) as (read, write, *_),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        small: Any = await session.call_tool("pay", {"amount": 5})
        big: Any = await session.call_tool("pay", {"amount": 1000})
    assert not small.is_error and ran == [5]
    assert big.is_error and "needs approval" in big.content[0].text


# ---- errors never quote a value that may hold secrets (issue 17 §4.9) -------------------------------


class Creds:
    """A deps object holding a secret: its repr shows it, as a dataclass's would."""

    def __init__(self) -> None:
        self.api_token = "sk-live-123"

    def __repr__(self) -> str:
        return f"Creds(api_token={self.api_token!r})"


async def test_errors_about_a_wrong_value_name_its_type_not_its_contents() -> None:
    from agentkit import ToolContext
    from agentkit.exceptions import AgentSetupError, HookError, ModelSetupError

    @tool
    def lookup(ctx: ToolContext[int], key: str) -> str:
        """Look up."""
        return key

    secret = Creds()
    failures: list[BaseException] = []
    for make in (
        lambda: Agent(tools=[lookup], deps=secret),
        lambda: Agent(model_settings=secret),  # type: ignore[arg-type]
        lambda: Agent(store=secret),  # type: ignore[arg-type]
        lambda: Agent(model=secret),  # type: ignore[arg-type]
        lambda: Agent(instructions=secret),  # type: ignore[arg-type]
        lambda: Agent(instructions=[secret]),  # type: ignore[list-item]
    ):
        with pytest.raises((AgentSetupError, ModelSetupError)) as caught:
            make()
        failures.append(caught.value)
    model, _ = scripted(calls(call("lookup", {"key": "a"})), "done")
    agent = Agent(model=model, tools=[lookup])
    for options in ({"deps": secret}, {"model_settings": secret}, {"cancel": secret}, {"mcp_servers": secret}):
        with pytest.raises(AgentSetupError) as caught:
            await agent.generate("go", **options)
        failures.append(caught.value)
    with pytest.raises(TypeError) as history:
        await agent.generate([secret])  # type: ignore[list-item]
    failures.append(history.value)
    with pytest.raises(AgentSetupError) as changes:
        await Agent(model=model, hooks=[Hooks(prepare_step=lambda ctx: secret)]).generate("go")
    failures.append(changes.value)
    with pytest.raises(AgentSetupError) as instructions:
        await Agent(model=model, instructions=lambda ctx: secret).generate("go")
    failures.append(instructions.value)
    with pytest.raises(HookError) as hook:
        await Agent(model=model, hooks=[Hooks(before_model_request=lambda ctx, request: secret)]).generate("go")
    failures.append(hook.value)
    for failure in failures:
        assert "sk-live-123" not in str(failure) and "Creds" in str(failure), failure


async def test_a_hooks_wrong_answer_reaches_the_model_by_its_type_only() -> None:

    secret = Creds()
    for hooks in (
        Hooks(before_tool_call=lambda ctx, call: secret),
        Hooks(after_tool_call=lambda ctx, call, result: secret),
    ):

        @tool
        def lookup(key: str) -> str:
            """Look up."""
            return key

        model, script = scripted(calls(call("lookup", {"key": "a"})), "done")
        await Agent(model=model, tools=[lookup], hooks=[hooks]).generate("go")
        (told,) = script.seen[-1][-1].results  # type: ignore[union-attr]
        assert told.error_kind == "hook_error" and "sk-live-123" not in told.text and "Creds" in told.text
