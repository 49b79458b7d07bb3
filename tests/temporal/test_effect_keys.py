"""A tool on Temporal reads its call's effect key as `ToolContext.effect_key` (issue 19 §2.1), the same
formula as in process: `agentkit.temporal.effect_key(workflow_id, call_id)`."""

from __future__ import annotations

from typing import Any

import pytest

from agentkit import Agent, AssistantMessage, ToolCall, ToolContext, ToolResultsMessage, tool
from agentkit.messages import Message
from agentkit.runs import effect_key as run_effect_key
from agentkit.temporal import TemporalAgent, effect_key
from agentkit.testing import FunctionInfo, FunctionModel

pytestmark = [pytest.mark.e2e, pytest.mark.temporal]


async def test_a_durable_tool_gets_the_calls_effect_key_in_its_context(client: Any) -> None:
    seen: list[str | None] = []

    @tool
    def ship(ctx: ToolContext, order: str) -> str:
        """Ship an order."""
        seen.append(ctx.effect_key)
        return f"shipped {order}"

    def script(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
        if isinstance(messages[-1], ToolResultsMessage):
            return messages[-1].results[0].text
        return AssistantMessage(tool_calls=[ToolCall("s1", "ship", {"order": "o-1"})])

    agent = Agent(id="keys-t", model=FunctionModel(script), tools=[ship])
    durable = TemporalAgent(agent, task_queue="keys-t")
    async with durable.worker(client):
        run = await durable.start(client, "ship o-1")
        result = await run.result()
    assert result.text == "shipped o-1"
    assert seen == [effect_key(run.id, "s1")] and seen[0] == run_effect_key(run.id, "s1")
