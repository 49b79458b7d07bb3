"""A weather agent: one tool, one agent, a streamed and a plain run.

Runs offline by default: a `FunctionModel` plays the model (calls the tool, then answers from its result).
Set AGENTKIT_EXAMPLE_MODEL (e.g. "openai:gpt-4o-mini", with OPENAI_API_KEY) to run it on a real model.
"""

from __future__ import annotations

import asyncio
import os
from typing import Literal

from pydantic import BaseModel

from agentkit import ToolCall, tool
from agentkit.agent import Agent
from agentkit.events import TextDeltaEvent, ToolCallEvent, ToolResultEvent
from agentkit.messages import AssistantMessage, Message, ToolResultsMessage, UserMessage
from agentkit.models import Model
from agentkit.testing import FunctionInfo, FunctionModel


class Weather(BaseModel):
    """The weather in a city."""

    city: str
    temperature: float
    unit: Literal["c", "f"]
    sky: str


@tool
def get_weather(city: str, unit: Literal["c", "f"] = "c") -> Weather:
    """Fetch the current weather for a city.

    Args:
        city: City name, e.g. "Paris".
        unit: Temperature unit.
    """
    celsius = 8.0 + len(city) % 10  # a stand-in for a weather service
    return Weather(city=city, temperature=celsius if unit == "c" else celsius * 9 / 5 + 32, unit=unit, sky="cloudy")


def offline_model(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
    """Plays a model: asks for the weather of the city in the question, then answers from the result."""
    last = messages[-1]
    if isinstance(last, ToolResultsMessage):
        weather = last.results[0]
        return f"Here is the weather: {weather.text}"
    question = last.content if isinstance(last, UserMessage) and isinstance(last.content, str) else ""
    city = question.rstrip("?").split()[-1]
    return AssistantMessage(tool_calls=[ToolCall("call_1", "weather", {"city": city})])


def make_agent(model: str | Model) -> Agent:
    """The weather agent on `model`."""
    return Agent(
        id="weather",
        instructions="Answer weather questions with the weather tool. Be brief.",
        model=model,
        tools={"weather": get_weather},
    )


async def main() -> None:
    """A plain run, a streamed run, and a follow-up on the same history."""
    agent = make_agent(os.environ.get("AGENTKIT_EXAMPLE_MODEL") or FunctionModel(offline_model))

    result = await agent.generate("What is the weather in Paris?")
    print(result.text)
    print("steps:", len(result.steps), "| requests:", result.usage.requests, "| status:", result.status)
    weather = result.tool_results[0].output  # the application gets the typed value...
    assert isinstance(weather, Weather) and weather.city == "Paris"
    assert result.tool_results[0].content  # ...the model got its JSON text

    print("-- streamed --")
    async for event in agent.stream("What is the weather in Oslo?"):
        if isinstance(event, ToolCallEvent):
            print(f"calling {event.tool_name} with {event.input}")
        elif isinstance(event, ToolResultEvent):
            print(f"{event.tool_name} returned {event.output!r}")
        elif isinstance(event, TextDeltaEvent):
            print(event.text)

    # the history is neutral: continue the conversation (on any vendor)
    follow_up = await agent.generate([*result.messages, UserMessage("And in Rome?")])
    print(follow_up.text)
    assert "Rome" in follow_up.text


if __name__ == "__main__":
    asyncio.run(main())
