"""Hooks and budgets against the real llama-server, through the official ``openai`` and ``anthropic`` clients.

A small model judges poorly, so what is asserted is what agentkit guarantees whatever the model does: a
hook's decision is what ran (or did not), a budget lets exactly so many calls through and the server
accepts every request after it (the tool hidden), every call gets one result, and nothing crashes.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentkit import ToolContext, ToolResult
from agentkit.agent import Agent, RunContext
from agentkit.hooks import Answer, Deny, Hooks, ModelRequest, ReplaceArguments
from agentkit.limits import RunLimits
from agentkit.messages import SystemMessage, ToolCall
from agentkit.models import ModelSettings
from tests.e2e._llama import SYSTEM, weather_tools

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

SETTINGS = ModelSettings(temperature=0, max_tokens=200)


def weather_agent(model: Any, registry: Any, *, steps: int, **options: Any) -> Agent:
    """An agent over the weather tools, at temperature 0, with `steps` model turns."""
    return Agent(
        model=model,
        tools=registry,
        instructions=SYSTEM,
        model_settings=SETTINGS,
        limits=RunLimits(max_steps=steps),
        **options,
    )


def check_protocol(result: Any) -> None:
    """One result per call, in call order, and a run that ended normally."""
    assert result.status in ("complete", "max_steps"), result.status
    assert [r.call_id for r in result.tool_results] == [c.id for c in result.tool_calls]


async def check_hooks_replace_arguments_rewrite_results_and_change_requests(model: Any) -> None:
    registry, calls = weather_tools()
    seen: list[tuple[str | None, str]] = []
    requests: list[int] = []

    def before_call(ctx: ToolContext[Any], call: ToolCall) -> ReplaceArguments:
        seen.append((ctx.tool_name, call.name))
        return ReplaceArguments({**call.arguments_dict(), "city": "Oslo", "days": 2})

    def after_call(ctx: ToolContext[Any], call: ToolCall, result: ToolResult) -> Answer:
        return Answer({"city": "Oslo", "forecast": [{"day": 1, "temperature": -3, "unit": "celsius"}]})

    def before_request(ctx: RunContext[Any], model_request: ModelRequest) -> None:
        requests.append(ctx.step)
        model_request.messages.insert(1, SystemMessage("Always answer in one short sentence."))

    hooks = Hooks(before_tool_call=before_call, after_tool_call=after_call, before_model_request=before_request)
    agent = weather_agent(model, registry, steps=2, hooks=[hooks])
    result = await agent.generate("What is the weather in Paris?", tool_choice="required")
    check_protocol(result)
    assert result.tool_calls and all(c["city"] == "Oslo" and c["days"] == 2 for c in calls)  # the hook's arguments ran
    assert len(calls) == len(result.tool_calls)
    assert all(r.output["forecast"][0]["temperature"] == -3 for r in result.tool_results)  # the hook's result
    assert seen == [("get_weather", "get_weather")] * len(result.tool_calls)  # keys, never tool ids
    assert requests == list(range(len(result.steps)))


async def check_a_denying_hook_keeps_the_tool_from_running_and_the_run_goes_on(model: Any) -> None:
    registry, calls = weather_tools()
    hooks = Hooks(before_tool_call=lambda ctx, call: Deny("the weather service is closed today"))
    agent = weather_agent(model, registry, steps=2, hooks=[hooks])
    result = await agent.generate("What is the weather in Oslo?", tool_choice="required")
    check_protocol(result)
    assert calls == [] and result.tool_results
    assert all(r.error_kind == "denied" and "closed today" in r.text for r in result.tool_results)


async def check_a_tool_budget_lets_one_call_through_and_the_server_takes_the_hidden_tool(model: Any) -> None:
    registry, calls = weather_tools()
    registry["get_weather"].max_calls = 1
    agent = weather_agent(model, registry, steps=3)
    result = await agent.generate("What is the weather in Oslo?", tool_choice="required")
    check_protocol(result)
    assert len(calls) == 1  # exactly one call ran, however often the model asked
    ran = [r for r in result.tool_results if r.error_kind is None]
    assert len(ran) == 1 and all(r.error_kind == "budget" for r in result.tool_results if r is not ran[0])
    assert result.usage.requests == len(result.steps) >= 2  # the requests after the budget went through


async def check_the_run_budget_ends_tool_use_and_the_model_answers(model: Any) -> None:
    registry, calls = weather_tools()
    agent = weather_agent(model, registry, steps=3)
    result = await agent.generate(
        "What is the weather in Oslo?", tool_choice="required", limits=RunLimits(max_tool_calls=1)
    )
    check_protocol(result)
    assert len(calls) == 1
    assert result.steps[-1].tool_calls == [] or all(r.error_kind == "budget" for r in result.steps[-1].results)


# ---- each check through both vendors' official clients -------------------------------------------


async def test_hooks_replace_arguments_rewrite_results_and_change_requests_openai(openai_model: Any) -> None:
    await check_hooks_replace_arguments_rewrite_results_and_change_requests(openai_model)


async def test_hooks_replace_arguments_rewrite_results_and_change_requests_anthropic(anthropic_model: Any) -> None:
    await check_hooks_replace_arguments_rewrite_results_and_change_requests(anthropic_model)


async def test_a_denying_hook_keeps_the_tool_from_running_and_the_run_goes_on_openai(openai_model: Any) -> None:
    await check_a_denying_hook_keeps_the_tool_from_running_and_the_run_goes_on(openai_model)


async def test_a_denying_hook_keeps_the_tool_from_running_and_the_run_goes_on_anthropic(anthropic_model: Any) -> None:
    await check_a_denying_hook_keeps_the_tool_from_running_and_the_run_goes_on(anthropic_model)


async def test_the_run_budget_ends_tool_use_and_the_model_answers_openai(openai_model: Any) -> None:
    await check_the_run_budget_ends_tool_use_and_the_model_answers(openai_model)


async def test_the_run_budget_ends_tool_use_and_the_model_answers_anthropic(anthropic_model: Any) -> None:
    await check_the_run_budget_ends_tool_use_and_the_model_answers(anthropic_model)


async def test_a_tool_budget_lets_one_call_through_openai(openai_model: Any) -> None:
    await check_a_tool_budget_lets_one_call_through_and_the_server_takes_the_hidden_tool(openai_model)


async def test_a_tool_budget_lets_one_call_through_anthropic(anthropic_model: Any) -> None:
    await check_a_tool_budget_lets_one_call_through_and_the_server_takes_the_hidden_tool(anthropic_model)
