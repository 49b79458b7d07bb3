"""Typing tests of run control: mypy --strict and pyright (strict) check this file in CI; pytest runs it too."""

from __future__ import annotations

import dataclasses
from typing import Any

from typing_extensions import assert_type

from agentkit import (
    Agent,
    ConcurrencyLimit,
    Hooks,
    Registry,
    RunContext,
    RunHooks,
    RunLimits,
    StepChanges,
    ToolCall,
    ToolContext,
    ToolResult,
    tool,
)
from agentkit.hooks import Answer, Deny, ModelRequest, ReplaceArguments, ToolCallDecision
from agentkit.search import SearchHit, ToolIndex, ToolSearch

per_account = ConcurrencyLimit(1, key=lambda args: str(args["account"]))


@tool(max_calls=3, max_concurrency=2, limits=[per_account], deferred=True)
def pay(account: str, amount: int) -> str:
    """Pay."""
    return f"{amount} from {account}"


def instructions(ctx: RunContext[str]) -> str:
    return f"The user is {ctx.deps}; step {ctx.step}."


async def plan(ctx: RunContext[Any]) -> StepChanges | None:
    if ctx.step == 0:
        return {"active_tools": ["pay"], "tool_choice": "required"}
    return None


class Guard(RunHooks[str]):
    def before_tool_call(self, ctx: ToolContext[str], call: ToolCall) -> ToolCallDecision | None:
        if ctx.deps == "read-only":
            return Deny("read-only session")
        if call.name == "pay":
            return ReplaceArguments({**call.arguments_dict(), "account": ctx.deps})
        return None

    async def after_tool_call(self, ctx: ToolContext[str], call: ToolCall, result: ToolResult) -> Answer | None:
        return Answer(result.output) if not result.is_error else None

    def before_model_request(self, ctx: RunContext[str], request: ModelRequest) -> ModelRequest:
        return dataclasses.replace(request, settings=dataclasses.replace(request.settings, temperature=0.0))


def test_run_control_options_type_check() -> None:
    agent = Agent(
        model="test",
        tools=[pay],
        instructions=["Be brief.", instructions],
        hooks=[Guard(), Hooks(prepare_step=plan, before_tool_call=lambda ctx, call: None)],
        limits=RunLimits(max_tool_calls=10, max_turn_concurrency=4),
        tool_search=ToolSearch(max_results=3),
    )
    assert_type(agent.limits, RunLimits)
    hits = ToolIndex(Registry([pay])).search("pay an account")
    assert_type(hits, list[SearchHit])
    assert [h.key for h in hits] == ["pay"]
