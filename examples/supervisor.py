"""A supervisor agent with a subagent (`agent-writer`) and a workflow (`workflow-research`) as its tools.

The supervisor streams; the writer's own events arrive inside it as `SubagentEvent`s carrying the generated
tool name and the writer's id. Offline by default (`FunctionModel`s play the models).
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from agentkit import ToolCall
from agentkit.agent import Agent
from agentkit.events import SubagentEvent, TextDeltaEvent, ToolCallEvent, ToolResultEvent
from agentkit.messages import AssistantMessage, Message, ToolResultsMessage, UserMessage
from agentkit.testing import FunctionInfo, FunctionModel
from agentkit.workflows import Workflow


class Sources(BaseModel):
    """What a search found."""

    topic: str
    urls: list[str]


async def search(topic: str, limit: int = 3) -> Sources:
    """Research a topic: search, rank the sources, and report the best ones.

    Args:
        topic: What to research.
        limit: How many sources to consider.
    """
    return Sources(topic=topic, urls=[f"https://example.org/{topic}/{i}" for i in range(limit)])


def rank(sources: Sources) -> list[str]:
    """Best sources first."""
    return sorted(sources.urls, reverse=True)


def report(urls: list[str]) -> str:
    """One line on what was found."""
    return f"{len(urls)} sources, best: {urls[0]}"


research = Workflow.start(search, id="research").then(rank).then(report)


def writer_model(messages: list[Message], info: FunctionInfo) -> str:
    """Plays the writer's model: one note on the prompt."""
    prompt = next(m for m in messages if isinstance(m, UserMessage)).content
    return f"A short note on {prompt}: the tide turns twice a day."


def supervisor_model(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
    """Plays the supervisor's model: research and write in parallel, then summarise."""
    last = messages[-1]
    if isinstance(last, ToolResultsMessage):
        return "Summary:\n" + "\n".join(f"- {r.name}: {r.text}" for r in last.results)
    assert info.tool_keys == ["agent-writer", "workflow-research"]
    return AssistantMessage(
        tool_calls=[
            ToolCall("c1", "workflow-research", {"topic": "tides", "limit": 2}),
            ToolCall("c2", "agent-writer", {"prompt": "tides"}),
        ]
    )


writer = Agent(
    id="writer-v1",
    name="Writer",
    description="Writes a short, friendly note on a topic.",
    instructions="Write one short paragraph.",
    model=FunctionModel(writer_model),
)
supervisor = Agent(
    id="supervisor",
    instructions="Research first, then have the writer write.",
    model=FunctionModel(supervisor_model),
    agents={"writer": writer},
    workflows={"research": research},
)


async def main() -> None:
    """Run the workflow alone, then the supervisor as a stream."""
    # the workflow on its own, typed: search's arguments in, report's result out
    print("workflow alone:", await research.run("tides", limit=2))

    stream = supervisor.stream("Tell me about tides.")
    async for event in stream:
        if isinstance(event, SubagentEvent):
            inner = event.event
            text = f" {inner.text!r}" if isinstance(inner, TextDeltaEvent) else ""
            print(f"  [{event.tool_name} / {event.agent_id}] {inner.kind}{text}")
        elif isinstance(event, ToolCallEvent):
            print(f"call {event.tool_name}({event.input})")
        elif isinstance(event, ToolResultEvent):
            print(f"result {event.tool_name}: {event.output!r}")
        elif isinstance(event, TextDeltaEvent):
            print(event.text)
    result = stream.result
    assert result.status == "complete"
    assert {r.name for r in result.tool_results} == {"agent-writer", "workflow-research"}


if __name__ == "__main__":
    asyncio.run(main())
