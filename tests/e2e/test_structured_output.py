"""Structured output against the real llama-server, through the official ``openai`` client.

llama-server takes OpenAI Chat's ``response_format: {"type": "json_schema", ...}`` and turns the schema
into a grammar, so the answer is JSON of the schema agentkit sent (strict rewrites included). What is
asserted is what agentkit guarantees: the request carried the native field, the answer came back as a
validated instance of the output type, a stream showed partial values before the final one, and the
output tool works on the same server. The model's judgement (which city, which numbers) is not.
"""

from __future__ import annotations

from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from agentkit.agent import Agent, RunContext
from agentkit.events import OutputDeltaEvent, OutputEvent
from agentkit.hooks import Hooks, ModelRequest
from agentkit.limits import RunLimits
from agentkit.models import ModelSettings
from agentkit.output import Output
from tests.e2e._llama import SYSTEM, weather_tools

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

SETTINGS = ModelSettings(temperature=0, max_tokens=120)


class Report(BaseModel):
    """A short weather report."""

    city: str
    temperature: int = Field(ge=-90, le=60)
    unit: Literal["celsius", "fahrenheit"] = "celsius"
    sky: Literal["sunny", "cloudy", "clear", "rainy"]
    """A closed set: free text lets a 0.5B model repeat itself past max_tokens (an unfinished answer)."""


def recorder() -> tuple[Hooks, list[ModelRequest]]:
    """Hooks keeping every request as sent (after the loop asked it for the output)."""
    seen: list[ModelRequest] = []

    def before_request(ctx: RunContext[Any], request: ModelRequest) -> None:
        seen.append(request)

    return Hooks(before_model_request=before_request), seen


async def test_a_native_answer_comes_back_validated(openai_model: Any) -> None:
    hooks, seen = recorder()
    agent = Agent(model=openai_model, output_type=Report, model_settings=SETTINGS, hooks=[hooks])
    result = await agent.generate("Write a weather report for Paris: 21 degrees celsius, sunny.")
    assert result.status == "complete", result.text
    assert isinstance(result.output, Report)
    assert Report.model_validate_json(result.text) == result.output  # the text is the JSON answer
    [request] = seen
    assert request.settings.output is not None and request.settings.output.mode == "native"
    body = openai_model.payload(request.messages, request.tools, request.settings)
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["name"] == "final_result"


async def test_tools_beside_the_output_tool(openai_model: Any) -> None:
    # llama-server turns response_format into a grammar for the whole answer, so beside tools it never
    # lets the model call one (measured: a JSON answer at once, with tool_choice="required"); the output
    # tool is the form that works there (docs/output.md)
    registry, calls = weather_tools()
    hooks, seen = recorder()
    agent = Agent(
        model=openai_model,
        tools=registry,
        instructions=SYSTEM,
        output_type=Output(Report, mode="tool"),
        model_settings=SETTINGS,
        hooks=[hooks],
        limits=RunLimits(max_steps=4),
    )
    result = await agent.generate("What is the weather in Oslo? Report it.")
    assert result.status == "complete", (result.status, result.text)
    assert isinstance(result.output, Report)
    ran = [c for c in result.tool_calls if c.name == "get_weather"]
    assert len(calls) == len(ran)  # every weather call the model made ran, validated
    assert all(r.settings.tool_choice == "required" and "final_result" in r.tools for r in seen)
    assert all(r.settings.output is not None and r.settings.output.mode == "tool" for r in seen)


async def test_a_streamed_answer_shows_partial_values_then_the_output(openai_model: Any) -> None:
    agent = Agent(model=openai_model, output_type=Report, model_settings=SETTINGS)
    partials: list[Any] = []
    finals: list[Any] = []
    stream = agent.stream("Write a weather report for Rome: 25 degrees celsius, clear sky.")
    async for event in stream:
        if isinstance(event, OutputDeltaEvent):
            partials.append(event.partial)
        elif isinstance(event, OutputEvent):
            finals.append(event.output)
    result = stream.result
    assert isinstance(result.output, Report) and finals == [result.output]
    assert len(partials) >= 2 and all(isinstance(p, dict) for p in partials)  # grew as the JSON arrived
    assert set(partials[-1]) <= set(Report.model_fields) and partials[-1].get("city") == result.output.city


async def test_the_output_tool_when_forced(openai_model: Any) -> None:
    agent = Agent(
        model=openai_model,
        output_type=Output(Report, mode="tool"),
        model_settings=SETTINGS,
        limits=RunLimits(max_steps=3),
    )
    result = await agent.generate("Write a weather report for Paris: 21 degrees celsius, sunny.")
    assert result.status == "complete", result.text
    assert isinstance(result.output, Report)
