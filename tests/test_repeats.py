"""Loop detection (`RepeatPolicy` in `RunLimits`, `agentkit.repeats`; issue 19 §3.2) through FunctionModel runs."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from agentkit import Agent, tool
from agentkit.events import AgentEvent, RepeatEvent, ToolErrorEvent
from agentkit.exceptions import AgentSetupError
from agentkit.limits import RunLimits
from agentkit.messages import AssistantMessage, Message, ToolCall
from agentkit.repeats import DEFAULT_REPEATS, RepeatPolicy
from agentkit.runs import MemoryRunStore
from agentkit.testing import FunctionInfo, FunctionModel

from .agent_helpers import call, calls


def looping(*turns: list[ToolCall], times: int = 6) -> FunctionModel:
    """A model that plays `turns` in a cycle for `times` turns (fresh call ids each time), then answers."""
    cycle = itertools.cycle(turns)
    played = itertools.count()

    def reply(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
        n = next(played)
        if n >= times:
            return "gave up"
        return calls(*(ToolCall(f"{c.id}_{n}", c.name, c.arguments) for c in next(cycle)))

    return FunctionModel(reply)


def oslo_agent(lookup: Any, turns: int, policy: RepeatPolicy) -> Agent[Any, Any]:
    """An agent asking the weather in Oslo `turns` times, under the agent-level `policy`."""
    model = looping([call("lookup", {"city": "Oslo"})], times=turns)
    return Agent(model=model, tools=[lookup], store=MemoryRunStore(), limits=RunLimits(repeats=policy))


def lookup_tool() -> tuple[Any, list[str]]:
    ran: list[str] = []

    @tool
    def lookup(city: str) -> str:
        """Look a city up."""
        ran.append(city)
        return f"{city}: 12 degrees"

    return lookup, ran


async def events_of(agent: Agent[Any, Any], **options: Any) -> tuple[list[AgentEvent], Any]:
    stream = agent.stream("go", **options)
    events = [event async for event in stream]
    return events, stream.result


def repeats(events: list[AgentEvent]) -> list[tuple[str, int, str, str]]:
    return [(e.tool_name, e.count, e.scope, e.action) for e in events if isinstance(e, RepeatEvent)]


# ---- the default: on, errors, N=3 rounds / N=4 calls --------------------------------------------------------


async def test_by_default_the_third_identical_turn_is_answered_with_an_error_not_run() -> None:
    lookup, ran = lookup_tool()
    agent = Agent(model=looping([call("lookup", {"city": "Oslo"})], times=3), tools=[lookup], store=MemoryRunStore())
    events, result = await events_of(agent)
    assert ran == ["Oslo", "Oslo"]
    [refused] = result.steps[2].results
    assert refused.is_error and refused.error_kind == "repeated" and "3rd time" in refused.text
    assert repeats(events) == [("lookup", 3, "round", "error")]
    assert [e.error_kind for e in events if isinstance(e, ToolErrorEvent)] == ["repeated"]
    assert result.status == "complete"  # the model got the message and answered


async def test_interleaved_repeats_trip_on_the_fourth_identical_call() -> None:
    lookup, ran = lookup_tool()
    model = looping([call("lookup", {"city": "Oslo"})], [call("lookup", {"city": "Rome"})], times=8)
    agent = Agent(model=model, tools=[lookup], store=MemoryRunStore())
    events, result = await events_of(agent)
    assert ran == ["Oslo", "Rome"] * 3  # the 4th of each was refused
    assert repeats(events) == [("lookup", 4, "call", "error"), ("lookup", 4, "call", "error")]
    assert [s.results[0].error_kind for s in result.steps[6:8]] == ["repeated", "repeated"]


async def test_a_refused_repeat_stays_refused() -> None:
    lookup, ran = lookup_tool()
    agent = Agent(model=looping([call("lookup", {"city": "Oslo"})], times=5), tools=[lookup], store=MemoryRunStore())
    _, result = await events_of(agent)
    assert ran == ["Oslo", "Oslo"]
    assert [s.results[0].error_kind for s in result.steps[2:5]] == ["repeated"] * 3


# ---- what never trips it ------------------------------------------------------------------------------------


async def test_different_arguments_never_trip_it() -> None:
    lookup, ran = lookup_tool()
    cities = [[call("lookup", {"city": f"city{i}"})] for i in range(10)]
    agent = Agent(
        model=looping(*cities, times=10), tools=[lookup], store=MemoryRunStore(), limits=RunLimits(max_steps=20)
    )
    events, _ = await events_of(agent)
    assert len(ran) == 10 and repeats(events) == []


async def test_a_changing_answer_never_trips_it() -> None:
    polls = itertools.count()

    @tool
    def status(job: str) -> str:
        """A job's progress."""
        return f"{job}: {next(polls) * 10}% done"

    agent = Agent(model=looping([call("status", {"job": "j1"})], times=6), tools=[status], store=MemoryRunStore())
    events, _ = await events_of(agent)
    assert next(polls) == 6 and repeats(events) == []


async def test_key_order_and_json_text_are_the_same_call() -> None:
    ran: list[str] = []

    @tool
    def pair(a: int, b: int) -> str:
        """A pair."""
        ran.append(f"{a}{b}")
        return "ok"

    model = looping([call("pair", {"a": 1, "b": 2})], [call("pair", '{"b": 2, "a": 1}')], times=3)
    agent = Agent(model=model, tools=[pair], store=MemoryRunStore())
    _, result = await events_of(agent)
    assert ran == ["12", "12"] and result.steps[2].results[0].error_kind == "repeated"


async def test_off_turns_it_off() -> None:
    lookup, ran = lookup_tool()
    agent = Agent(model=looping([call("lookup", {"city": "Oslo"})], times=6), tools=[lookup], store=MemoryRunStore())
    events, _ = await events_of(agent, limits=RunLimits(repeats=RepeatPolicy(on="off")))
    assert len(ran) == 6 and repeats(events) == []


# ---- the other policies, per agent and per run --------------------------------------------------------------


async def test_warn_lets_the_call_run_and_reports_it() -> None:
    lookup, ran = lookup_tool()
    agent = oslo_agent(lookup, 4, RepeatPolicy(on="warn"))  # the agent's policy
    events, result = await events_of(agent)
    assert len(ran) == 4 and not any(r.is_error for s in result.steps for r in s.results)
    assert repeats(events) == [
        ("lookup", 3, "round", "warn"),
        ("lookup", 4, "round", "warn"),
        ("lookup", 4, "call", "warn"),
    ]


async def test_a_run_s_policy_wins_over_the_agent_s() -> None:
    lookup, ran = lookup_tool()
    agent = oslo_agent(lookup, 4, RepeatPolicy(on="warn"))
    await events_of(agent, limits=RunLimits(repeats=RepeatPolicy(calls=2, rounds=None)))
    assert ran == ["Oslo"]  # the second call was the repeat: refused


async def test_approve_pauses_the_repeating_call_for_a_human() -> None:
    lookup, ran = lookup_tool()
    agent = oslo_agent(lookup, 4, RepeatPolicy(on="approve"))
    result = await agent.generate("go")
    assert result.status == "awaiting_approval" and ran == ["Oslo", "Oslo"]
    [pending] = result.pending
    assert pending.tool_name == "lookup"
    approved = await agent.resume(result, {pending.call_id: True})
    assert approved.status == "awaiting_approval" and ran == ["Oslo"] * 3  # ran; the next repeat asks again
    [again] = approved.pending
    denied = await agent.resume(approved, {again.call_id: False})
    assert denied.status == "complete" and ran == ["Oslo"] * 3
    assert denied.steps[3].results[0].error_kind == "denied"


# ---- the policy itself --------------------------------------------------------------------------------------


def test_the_default_policy() -> None:
    assert RepeatPolicy(calls=4, rounds=3, on="error") == DEFAULT_REPEATS and DEFAULT_REPEATS.active
    assert not RepeatPolicy(on="off").active and not RepeatPolicy(calls=None, rounds=None).active


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: RepeatPolicy(calls=1), r"RepeatPolicy\(calls=...\) is a whole number, at least 2"),
        (lambda: RepeatPolicy(rounds=True), r"RepeatPolicy\(rounds=...\)"),
        (lambda: RepeatPolicy(on="stop"), r"RepeatPolicy\(on=...\) is one of warn, error, approve, off"),  # type: ignore[arg-type]
        (lambda: RunLimits(repeats=3), r"RunLimits\(repeats=...\) takes RepeatPolicy"),  # type: ignore[arg-type]
    ],
)
def test_bad_policies_are_refused_by_name(make: Any, message: str) -> None:
    with pytest.raises(AgentSetupError, match=message):
        make()


async def test_arguments_too_deep_to_read_are_answered_not_a_crash() -> None:
    """Regression: loop detection read a second call's 5,000-deep JSON text with json.loads (RecursionError).

    Vendors' parsers hand arguments that deep to the run as text (`checked_call`), as here.
    """
    lookup, ran = lookup_tool()
    deep = '{"city": ' + "[" * 5000 + "]" * 5000 + "}"
    agent = Agent(model=looping([ToolCall("c", "lookup", deep)], times=5), tools=[lookup], store=MemoryRunStore())
    events, result = await events_of(agent)
    errors = [e for e in events if isinstance(e, ToolErrorEvent)]
    assert ran == [] and len(errors) == 5 and result.status == "complete"
