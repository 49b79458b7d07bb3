"""Typing tests of typed runs: mypy --strict and pyright (strict) check this file in CI; pytest runs it too.

`Agent[Deps, Output]` is inferred from the constructor, `RunResult[Output].output` is typed, a per-call
``output_type`` changes the result's type, and deps that do not fit the agent's are a type error (a
``# type: ignore`` that stopped being needed fails both checkers, so these stay errors).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

import pytest
from pydantic import BaseModel
from typing_extensions import Unpack, assert_type

from agentkit import Agent, Output, RunResult, ToolContext, tool
from agentkit.agent import AgentStream, ResumeKwargs, RunKwargs
from agentkit.exceptions import AgentSetupError
from agentkit.testing import FunctionInfo, FunctionModel


class Weather(BaseModel):
    city: str
    temperature: int


class Cat(BaseModel):
    meows: int


class Dog(BaseModel):
    barks: int


@dataclass
class Database:
    rows: dict[str, int]


@tool
def lookup(ctx: ToolContext[Database], key: str) -> int:
    """Look a key up."""
    return ctx.deps.rows[key]


def answer(messages: list[Any], info: FunctionInfo) -> str:
    if info.output is None:
        return "plain text"
    properties = info.output.definition.input_schema["properties"]
    if "response" in properties:
        return json.dumps({"response": [1, 2]})
    return json.dumps({"city": "Paris", "temperature": 21})


MODEL = FunctionModel(answer)


def test_an_agent_is_typed_by_its_deps_and_output() -> None:
    plain = Agent(model=MODEL)
    assert_type(plain, Agent[Any, str])
    typed = Agent(model=MODEL, deps=Database({}), output_type=Weather, tools=[lookup])
    assert_type(typed, Agent[Database, Weather])
    declared = Agent(model=MODEL, deps_type=Database, output_type=list[int])
    assert_type(declared, Agent[Database, list[int]])
    union = Agent(model=MODEL, output_type=Output(Weather, mode="tool"))
    assert_type(union, Agent[Any, Weather])


async def test_a_run_result_is_typed_by_the_output() -> None:
    agent = Agent(model=MODEL, deps=Database({"a": 1}), output_type=Weather)
    result = await agent.generate("weather?")
    assert_type(result, RunResult[Weather])
    assert_type(result.output, Weather)
    assert result.output.temperature == 21
    assert_type(result.text, str)
    text = await Agent(model=MODEL).generate("hi")
    assert_type(text.output, str)


async def test_a_per_call_output_type_changes_the_result_type() -> None:
    agent = Agent(model=MODEL, output_type=Weather)
    listed = await agent.generate("numbers?", output_type=list[int])
    assert_type(listed, RunResult[list[int]])
    assert listed.output == [1, 2]
    as_output = await agent.generate("numbers?", output_type=Output(list[int], mode="prompted"))
    assert_type(as_output.output, list[int])
    synced = agent.generate_sync
    assert callable(synced)
    stream = agent.stream("numbers?", output_type=list[int])
    assert_type(stream, AgentStream[list[int]])
    assert (await stream.get_result()).output == [1, 2]
    assert_type(stream.result.output, list[int])


async def test_unions_literals_and_lists_of_models() -> None:
    either = Agent(model=MODEL, output_type=(Cat, Dog))  # the model picks one (checkers: a union, or their base)
    chosen: Agent[Any, Literal["yes", "no"]] = Agent(model=MODEL, output_type=Literal["yes", "no"])
    assert_type(chosen, Agent[Any, Literal["yes", "no"]])
    assert either.output.structured and chosen.output.structured


async def test_deps_that_do_not_fit_are_a_type_error_and_a_run_time_error() -> None:
    agent = Agent(model=MODEL, deps_type=Database, tools=[lookup])
    with pytest.raises(AgentSetupError, match=r"takes ToolContext\[Database\], but the run's deps are int"):
        await agent.generate("x", deps=42)  # type: ignore[call-overload]
    with pytest.raises(AgentSetupError, match=r"takes ToolContext\[Database\]"):
        await agent.generate("x", context=ToolContext(deps="nope"))  # type: ignore[arg-type]
    with pytest.raises(AgentSetupError, match=r"tool 'lookup' .* takes ToolContext\[Database\]"):
        Agent(model=MODEL, deps="a string", tools=[lookup])
    assert_type(await agent.generate("x", deps=Database({})), RunResult[str])


async def test_a_misspelled_keyword_is_a_type_error_and_a_run_time_error() -> None:
    agent = Agent(model=MODEL, output_type=Weather)
    with pytest.raises(
        TypeError, match=r"generate\(\) got an unexpected keyword argument 'max_step' \(did you mean 'max_steps'\?\)"
    ):
        await agent.generate("x", max_step=2)  # type: ignore[call-overload]
    with pytest.raises(
        TypeError, match=r"stream\(\) got an unexpected keyword argument 'tool_choise' \(did you mean 'tool_choice'\?\)"
    ):
        agent.stream("x", tool_choise="auto")  # type: ignore[call-overload]
    with pytest.raises(
        TypeError, match=r"generate_sync\(\) got an unexpected keyword argument 'xyz' \(it takes active_tools, "
    ):
        agent.generate_sync("x", xyz=1)  # type: ignore[call-overload]
    paused = await agent.generate("weather?")
    with pytest.raises(
        TypeError,
        match=r"resume\(\) got an unexpected keyword argument 'max_steps' \(it takes cancel, code_mode, context, ",
    ):
        await agent.resume(paused, max_steps=3)  # type: ignore[call-overload]
    with pytest.raises(
        TypeError, match=r"resume_stream\(\) got an unexpected keyword argument 'dep' \(did you mean 'deps'\?\)"
    ):
        agent.resume_stream(paused, dep=1)  # type: ignore[call-overload]


async def test_the_run_keywords_are_typed_for_wrappers() -> None:
    agent = Agent(model=MODEL, deps=Database({"a": 1}), output_type=Weather)

    async def traced(prompt: str, **options: Unpack[RunKwargs[Database]]) -> RunResult[Weather]:
        return await agent.generate(prompt, **options)

    result = await traced("weather?", max_steps=2, deps=Database({}))
    assert_type(result, RunResult[Weather])
    assert result.output.city == "Paris"
    await traced("weather?", deps=42)  # type: ignore[arg-type]
    resumed: ResumeKwargs[Database] = {"deps": Database({})}
    assert resumed["deps"] == Database({})
