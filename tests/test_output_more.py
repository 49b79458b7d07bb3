"""Typed runs beyond one model turn: partial tool arguments, snapshots, prepare_step, deps, the CLI, the payload."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from agentkit import Agent, Registry, ToolContext, ToolTransform, tool
from agentkit.agent import RunContext, StepChanges
from agentkit.cli import main
from agentkit.events import ToolCallDeltaEvent
from agentkit.exceptions import AgentSetupError, SnapshotError
from agentkit.hooks import Hooks
from agentkit.models import OutputPlan
from agentkit.output import Output
from agentkit.testing import FunctionInfo, FunctionModel, ToolCallChunk, request_payload
from tests.agent_helpers import call, calls, scripted


class Weather(BaseModel):
    city: str
    temp: int


class Address(BaseModel):
    street: str
    zip: str


@tool
def ship(address: Address, items: list[str], express: bool = False) -> str:
    """Ship items."""
    return "ok"


WEATHER = json.dumps({"city": "Paris", "temp": 21})


# ---- typed partial tool arguments --------------------------------------------------------------------


async def test_tool_call_deltas_carry_the_arguments_so_far_when_a_transform_shows_them() -> None:
    pieces = [
        '{"address": {"street": "1 Rue',
        ' de Rivoli", "zip": "75001"}, "items": ["tea", "cof',
        'fee"], "express": tr',
        "ue}",
    ]

    async def stream(messages: list[Any], info: FunctionInfo) -> Any:
        if len(messages) > 1:
            yield "done"
            return
        yield ToolCallChunk(0, name="ship", call_id="s1")
        for piece in pieces:
            yield ToolCallChunk(0, args=piece)

    seen: list[Any] = []

    def show(value: Any) -> Any:
        seen.append(value)
        return value

    shown = tool(ship.fn, transform=ToolTransform(input_partial=show))
    agent = Agent(model=FunctionModel(stream_fn=stream), tools={"ship": shown})
    events = [e async for e in agent.stream("ship it")]
    partials = [e.partial for e in events if isinstance(e, ToolCallDeltaEvent)]
    assert partials == [
        {"address": {"street": "1 Rue"}},
        {"address": {"street": "1 Rue de Rivoli", "zip": "75001"}, "items": ["tea", "cof"]},
        {"address": {"street": "1 Rue de Rivoli", "zip": "75001"}, "items": ["tea", "coffee"]},
        {"address": {"street": "1 Rue de Rivoli", "zip": "75001"}, "items": ["tea", "coffee"], "express": True},
    ]
    assert all(e.delta is None for e in events if isinstance(e, ToolCallDeltaEvent))  # no input_delta transform
    assert seen == partials


async def test_partial_arguments_are_never_shown_by_default_and_a_failing_transform_withholds_them() -> None:
    async def stream(messages: list[Any], info: FunctionInfo) -> Any:
        if len(messages) > 1:
            yield "done"
            return
        yield ToolCallChunk(0, name="ship", call_id="s1")
        yield ToolCallChunk(0, args='{"items": ["a"], "address": {"street": "x", "zip": "1"}}')

    plain = [e async for e in Agent(model=FunctionModel(stream_fn=stream), tools=[ship]).stream("go")]
    assert not [e for e in plain if isinstance(e, ToolCallDeltaEvent)]

    def broken(value: Any) -> Any:
        raise RuntimeError(f"leaks {value}")

    failing = tool(ship.fn, transform=ToolTransform(input_partial=broken))
    events = [e async for e in Agent(model=FunctionModel(stream_fn=stream), tools={"ship": failing}).stream("go")]
    (delta,) = [e for e in events if isinstance(e, ToolCallDeltaEvent)]
    assert delta.partial is None and delta.transform_error is not None and "RuntimeError" in delta.transform_error
    assert "leaks" not in json.dumps(delta.to_dict())


def test_partial_arguments_keep_only_what_fits_the_schema() -> None:
    assert ship.partial_arguments('{"items": ["a", 2, "b"], "express": "yes", "address": {"zip": 7') == {
        "items": ["a", "b"],
        "address": {},
    }
    assert ship.partial_arguments("") is None
    assert ship.partial_arguments("[1, 2") is None  # not an object: nothing fits


async def test_nothing_partial_reaches_the_function() -> None:
    received: list[Any] = []

    @tool(transform=ToolTransform(input_partial=lambda v: v))
    def record(items: list[int]) -> int:
        """Record."""
        received.append(items)
        return len(items)

    async def stream(messages: list[Any], info: FunctionInfo) -> Any:
        if len(messages) > 1:
            yield "done"
            return
        yield ToolCallChunk(0, name="record", call_id="r1")
        for piece in ['{"items": [1', ", 2", ", 3]}"]:
            yield ToolCallChunk(0, args=piece)

    stream_ = Agent(model=FunctionModel(stream_fn=stream), tools=[record]).stream("go")
    partials = [e.partial for e in [e async for e in stream_] if isinstance(e, ToolCallDeltaEvent)]
    assert partials == [{"items": []}, {"items": [1]}, {"items": [1, 2, 3]}]
    assert received == [[1, 2, 3]]  # the function ran once, with the whole call


# ---- snapshots ------------------------------------------------------------------------------------------


@tool(requires_approval=True)
def book(city: str) -> str:
    """Book a trip."""
    return f"booked {city}"


async def test_a_snapshot_of_a_structured_run_resumes_with_the_agents_output_type() -> None:
    model, _ = scripted(calls(call("book", {"city": "Paris"}, "b1")), WEATHER)
    agent = Agent(model=model, tools=[book], output_type=Weather)
    paused = await agent.generate("go")
    snapshot = paused.snapshot()
    again = Agent(model=scripted(WEATHER)[0], tools=[book], output_type=Weather, id=agent.id)
    resumed = await again.resume(snapshot, {"b1": True})
    assert resumed.output == Weather(city="Paris", temp=21)


async def test_a_snapshot_refuses_an_agent_asking_for_another_output() -> None:
    model, _ = scripted(calls(call("book", {"city": "Paris"}, "b1")))
    agent = Agent(model=model, tools=[book])
    paused = await agent.generate("go", output_type=Weather)  # a per-call output type
    snapshot = paused.snapshot()
    with pytest.raises(SnapshotError, match="another output type than this agent's"):
        await Agent(model=scripted(WEATHER)[0], tools=[book], id=agent.id).resume(snapshot, {"b1": True})


# ---- prepare_step switching models -----------------------------------------------------------------------


class ToolOnly(FunctionModel):
    """A model whose vendor has no native form: the output comes through the output tool."""

    def output_plan(self, definition: Any, mode: Any, *, with_tools: bool) -> OutputPlan:
        return OutputPlan("tool", reason="no native form")


async def test_each_step_asks_for_the_output_in_the_form_its_model_takes() -> None:
    seen: list[FunctionInfo] = []

    def first(messages: list[Any], info: FunctionInfo) -> Any:
        seen.append(info)
        return calls(call("ship", {"address": {"street": "s", "zip": "1"}, "items": ["x"]}))

    def second(messages: list[Any], info: FunctionInfo) -> Any:
        seen.append(info)
        return calls(call("final_result", {"city": "Oslo", "temp": 4}, "f1"))

    other = ToolOnly(second)

    def prepare(ctx: RunContext[Any]) -> StepChanges | None:
        return StepChanges(model=other) if ctx.step == 1 else None

    agent = Agent(model=FunctionModel(first), tools=[ship], output_type=Weather, hooks=[Hooks(prepare_step=prepare)])
    result = await agent.generate("go")
    assert result.output == Weather(city="Oslo", temp=4)
    assert [i.output.mode for i in seen if i.output is not None] == ["native", "tool"]
    assert seen[0].tool_keys == ["ship"] and seen[1].tool_keys == ["ship", "final_result"]


async def test_model_request_hooks_see_the_output_asked_for() -> None:
    from agentkit.hooks import Hooks, ModelRequest

    requests: list[ModelRequest] = []

    def before(ctx: RunContext[Any], request: ModelRequest) -> None:
        requests.append(request)

    model, _ = scripted(WEATHER)
    await Agent(model=model, output_type=Weather, hooks=[Hooks(before_model_request=before)]).generate("go")
    (request,) = requests
    assert request.settings.output is not None and request.settings.output.mode == "native"


# ---- deps against the tools' ToolContext ----------------------------------------------------------------


@dataclass
class Database:
    rows: dict[str, int]


@tool
def lookup(ctx: ToolContext[Database], key: str) -> int:
    """Look up."""
    return ctx.deps.rows[key]


@tool
def anything(ctx: ToolContext[Any], key: str) -> str:
    """Any deps."""
    return key


async def test_deps_are_checked_against_each_tools_context_type() -> None:
    with pytest.raises(AgentSetupError, match=r"tool 'lookup' \(.*lookup\) takes ToolContext\[Database\]"):
        Agent(tools=[lookup], deps=42)
    with pytest.raises(AgentSetupError, match="deps_type=str"):
        Agent(tools=[lookup], deps_type=str)
    model, _ = scripted(calls(call("lookup", {"key": "a"})), "done")
    agent = Agent(model=model, tools=[lookup, anything])
    with pytest.raises(AgentSetupError, match="but the run's deps are int"):
        await agent.generate("go", deps=7)
    result = await agent.generate("go", deps=Database({"a": 3}))
    assert result.tool_results[0].output == 3
    Agent(tools=[anything], deps=42)  # ToolContext[Any]: anything goes


# ---- payloads, CLI ----------------------------------------------------------------------------------


def test_request_payload_shows_the_output_part_per_call() -> None:
    agent = Agent(model="openai:gpt-4.1")
    assert "response_format" not in request_payload(agent, "hi")
    body = request_payload(agent, "hi", output_type=Output(Weather, mode="tool"))
    assert [t["function"]["name"] for t in body["tools"]] == ["final_result"]
    assert body["tool_choice"] == "required"
    prompted = request_payload(agent, "hi", output_type=Output(Literal["a", "b"], mode="prompted"))
    assert "response" in prompted["messages"][0]["content"] and prompted["messages"][0]["role"] == "system"


def test_inspect_and_lint_show_the_output(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(
        ["inspect", "tests.test_output_more:SHIPPING", "-p", "cohere", "--output", "tests.test_output_more:Weather"]
    )
    out, err = capsys.readouterr()
    assert status == 0
    names = [t["function"]["name"] for t in json.loads(out)["tools"]]
    assert names == ["ship", "final_result"]
    assert "output: tool (cohere does not accept response_format together with tools" in err
    status = main(
        ["inspect", "tests.test_output_more:SHIPPING", "-p", "openai", "--output", "tests.test_output_more:Weather"]
    )
    out, err = capsys.readouterr()
    assert json.loads(out)["response_format"]["json_schema"]["name"] == "final_result" and "output: native" in err
    status = main(
        ["lint", "tests.test_output_more:SHIPPING", "-p", "ollama", "--output", "tests.test_output_more:Weather"]
    )
    out, _ = capsys.readouterr()
    assert "ollama / output final_result (tool)" in out


SHIPPING = Registry([ship])
