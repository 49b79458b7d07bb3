"""Agents with a typed answer, for the UI tests (node, AG-UI, browser): one per output mode.

A scripted model looks the weather up, then answers a `Trip`: as JSON text (``native``) or as a call of
the output tool (``tool``). A prompt asking it to "keep going" calls the tool every turn instead, so the
run ends at `max_steps` without an answer (the playground must say so); one saying "break" fails.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel

from agentkit import Agent, AssistantMessage, ModelResponse, ToolCall, ToolResultsMessage, Usage, UserMessage, tool
from agentkit.limits import RunLimits
from agentkit.messages import Message
from agentkit.output import Output
from agentkit.testing import FunctionInfo, FunctionModel


class Trip(BaseModel):
    destination: str
    days: int
    packing: list[str]


TRIP = {"destination": "Lisbon", "days": 3, "packing": ["sunscreen", "sandals"]}
MAX_STEPS = 3


@tool
def weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: The city.
    """
    return f"sunny in {city}"


def script(messages: list[Message], info: FunctionInfo) -> ModelResponse:
    asked = " ".join(str(m.content) for m in messages if isinstance(m, UserMessage))
    if "break" in asked:
        raise RuntimeError("the model is down")
    if "keep going" in asked or not isinstance(messages[-1], ToolResultsMessage):
        turn = AssistantMessage("", [ToolCall(f"call_{len(messages)}", "weather", {"city": "Lisbon"})])
    elif info.output is not None and info.output.mode == "tool":
        turn = AssistantMessage("", [ToolCall("call_answer", info.output.definition.key, dict(TRIP))])
    else:
        turn = AssistantMessage(json.dumps(TRIP))
    return ModelResponse(turn, Usage(20, 10, 1), "tool_calls" if turn.tool_calls else "stop", "scripted-trips")


def _agent(mode: Literal["native", "tool"]) -> Agent[None, Trip]:
    return Agent(
        id=f"trips-{mode}",
        name=f"Trip planner ({mode} output)",
        model=FunctionModel(script, name="scripted-trips"),
        tools=[weather],
        output_type=Output(Trip, mode=mode),
        limits=RunLimits(max_steps=MAX_STEPS),
    )


native_agent = _agent("native")
tool_agent = _agent("tool")
