"""`on_step_finish` and `on_finish`: per-call callbacks on every entry point (issue 18, "Done when")."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from agentkit import Output, tool
from agentkit.agent import Agent, RunResult, Step
from agentkit.exceptions import AgentSetupError

from .agent_helpers import call, calls, scripted


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool(requires_approval=True)
def delete(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


class Weather(BaseModel):
    """Weather in a city."""

    city: str
    temp: int


class Seen:
    """What the callbacks saw, in order; `asynchronous` makes both callbacks async functions."""

    def __init__(self, asynchronous: bool = False) -> None:
        self.events: list[str] = []
        self.steps: list[Step] = []
        self.results: list[RunResult[Any]] = []
        self.asynchronous = asynchronous

    def options(self) -> dict[str, Any]:
        if self.asynchronous:

            async def step_async(step: Step) -> None:
                await asyncio.sleep(0)
                self.step(step)

            async def finish_async(result: RunResult[Any]) -> None:
                await asyncio.sleep(0)
                self.finish(result)

            return {"on_step_finish": step_async, "on_finish": finish_async}
        return {"on_step_finish": self.step, "on_finish": self.finish}

    def step(self, step: Step) -> None:
        self.steps.append(step)
        self.events.append(f"step {step.index}: {len(step.tool_calls)} calls, {len(step.results)} results")

    def finish(self, result: RunResult[Any]) -> None:
        self.results.append(result)
        self.events.append(f"finish {result.status}")


@pytest.mark.parametrize("asynchronous", [False, True])
async def test_generate_reports_each_step_then_the_result(asynchronous: bool) -> None:
    model, _ = scripted(calls(call("add", {"a": 2, "b": 3})), "The sum is 5.")
    agent = Agent(model=model, tools=[add])
    seen = Seen(asynchronous)
    result = await agent.generate("2 + 3?", **seen.options())
    assert seen.events == ["step 0: 1 calls, 1 results", "step 1: 0 calls, 0 results", "finish complete"]
    assert seen.steps == result.steps  # the recorded steps, with their results
    assert seen.steps[0].results[0].output == 5
    assert seen.results == [result]


def test_generate_sync_reports_too() -> None:
    model, _ = scripted(calls(call("add", {"a": 1, "b": 1})), "2")
    seen = Seen(asynchronous=True)
    result = Agent(model=model, tools=[add]).generate_sync("1 + 1?", **seen.options())
    assert seen.events == ["step 0: 1 calls, 1 results", "step 1: 0 calls, 0 results", "finish complete"]
    assert seen.results == [result]


async def test_a_stream_reports_before_its_result_is_read() -> None:
    model, _ = scripted(calls(call("add", {"a": 2, "b": 3})), "5")
    seen = Seen()
    stream = Agent(model=model, tools=[add]).stream("2 + 3?", **seen.options())
    async for _ in stream:
        pass
    assert seen.events == ["step 0: 1 calls, 1 results", "step 1: 0 calls, 0 results", "finish complete"]
    assert seen.results == [stream.result]


async def test_a_pause_finishes_the_call_and_its_step_is_reported_when_resumed() -> None:
    model, _ = scripted(calls(call("delete", {"path": "a.txt"})), "Deleted.")
    agent = Agent(model=model, tools=[delete])
    seen = Seen()
    paused = await agent.generate("delete a.txt", **seen.options())
    assert paused.status == "awaiting_approval"
    assert seen.events == ["finish awaiting_approval"]  # the paused step has no results yet
    resumed = Seen(asynchronous=True)
    result = await agent.resume(paused, {paused.pending[0].call_id: True}, **resumed.options())
    assert result.status == "complete"
    assert resumed.events == ["step 0: 1 calls, 1 results", "step 1: 0 calls, 0 results", "finish complete"]
    assert resumed.steps[0].results[0].output == "deleted a.txt"


async def test_resume_stream_reports_too() -> None:
    model, _ = scripted(calls(call("delete", {"path": "b.txt"})), "Deleted.")
    agent = Agent(model=model, tools=[delete])
    paused = await agent.generate("delete b.txt")
    seen = Seen()
    stream = agent.resume_stream(paused, {paused.pending[0].call_id: True}, **seen.options())
    async for _ in stream:
        pass
    assert seen.events == ["step 0: 1 calls, 1 results", "step 1: 0 calls, 0 results", "finish complete"]
    assert seen.results == [stream.result]


async def test_a_retried_typed_answer_is_a_step_of_its_own() -> None:
    model, _ = scripted("I think it is warm.", '{"city": "Paris", "temp": 21}')
    seen = Seen()
    result = await Agent(model=model).generate("weather?", output_type=Output(Weather, mode="tool"), **seen.options())
    assert result.output.temp == 21
    assert [s.index for s in seen.steps] == [0, 1]
    assert seen.events[-1] == "finish complete"


async def test_a_failing_callback_reaches_the_caller() -> None:
    model, _ = scripted("hi")

    def broken(step: Step) -> None:
        raise RuntimeError("the callback failed")

    with pytest.raises(RuntimeError, match="the callback failed"):
        await Agent(model=model).generate("hello", on_step_finish=broken)


@pytest.mark.parametrize("name", ["on_step_finish", "on_finish"])
async def test_a_callback_that_is_not_a_function_is_refused_before_the_run(name: str) -> None:
    model, script = scripted("hi")
    options: dict[str, Any] = {name: "print"}  # what a caller without a type checker may pass
    with pytest.raises(AgentSetupError, match=f"{name}=.*takes a function"):
        await Agent(model=model).generate("hello", **options)
    assert script.seen == []  # nothing ran
