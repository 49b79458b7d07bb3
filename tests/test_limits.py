"""Call budgets (per tool, per run) and concurrency limits (per turn, per run, per tool, per resource).

Concurrency is measured with counters, never with timing: every tool yields to the event loop a few
times while it "runs", so without a limit all calls of a turn are inside their tools at once.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest

from agentkit import Registry, Tool, tool
from agentkit.agent import Agent
from agentkit.exceptions import AgentSetupError, ToolDefinitionError
from agentkit.limits import ConcurrencyLimit, RunLimits
from agentkit.messages import Message, ToolResultsMessage
from agentkit.testing import FunctionInfo, FunctionModel

from .agent_helpers import call, calls, scripted


class Gauge:
    """Counts calls inside their tools: now, at the peak, per resource."""

    def __init__(self) -> None:
        self.now: Counter[str] = Counter()
        self.peak: Counter[str] = Counter()
        self.log: list[str] = []

    async def inside(self, *labels: str) -> None:
        for label in ("all", *labels):
            self.now[label] += 1
            self.peak[label] = max(self.peak[label], self.now[label])
        self.log.append(f"start {labels[-1] if labels else ''}")
        for _ in range(5):
            await asyncio.sleep(0)  # let every other ready call start meanwhile
        self.log.append(f"end {labels[-1] if labels else ''}")
        for label in ("all", *labels):
            self.now[label] -= 1


def work_tool(gauge: Gauge, name: str = "work", **options: Any) -> Tool[..., Any]:
    async def work(n: int) -> int:
        await gauge.inside(name, f"{name}:{n}")
        return n

    return tool(id=name, description="Do some work.", **options)(work)


def fan_out(name: str, count: int, then: str = "done") -> tuple[Any, ...]:
    return (calls(*(call(name, {"n": i}, f"{name}{i}") for i in range(count))), then)


# ---- budgets --------------------------------------------------------------------------------------


async def test_a_tool_budget_lets_the_first_calls_through_then_hides_the_tool() -> None:
    gauge = Gauge()
    model, script = scripted(*fan_out("work", 3)[:1], calls(call("work", {"n": 9}, "late")), "done")
    agent = Agent(model=model, tools=[work_tool(gauge, max_calls=2), work_tool(gauge, "other")])
    result = await agent.generate("go")
    first, second = result.steps[0].results, result.steps[1].results
    assert [r.output for r in first[:2]] == [0, 1]
    assert first[2].error_kind == "budget" and "at most 2 time(s) per run" in first[2].text
    assert second[0].error_kind == "budget"  # called anyway while hidden: the same error, nothing runs
    assert gauge.peak["work"] == 2
    assert [i.tool_keys for i in script.infos] == [["work", "other"], ["other"], ["other"]]


async def test_a_budget_of_zero_never_shows_the_tool_and_invalid_calls_do_not_count() -> None:
    gauge = Gauge()
    turns = (calls(call("work", {"n": "x"}), call("work", {"n": 1})), calls(call("work", {"n": 2})), "done")
    model, script = scripted(*turns)
    agent = Agent(model=model, tools=[work_tool(gauge, max_calls=1), work_tool(gauge, "never", max_calls=0)])
    result = await agent.generate("go")
    assert [r.error_kind for r in result.tool_results] == ["invalid_arguments", None, "budget"]
    assert script.infos[0].tool_keys == ["work"]


async def test_the_run_budget_counts_every_tool_then_hides_them_all() -> None:
    gauge = Gauge()
    model, script = scripted(*fan_out("work", 2)[:1], *fan_out("other", 2)[:1], "done")
    agent = Agent(model=model, tools=[work_tool(gauge), work_tool(gauge, "other")], limits=RunLimits(max_tool_calls=3))
    result = await agent.generate("go", tool_choice="required")
    assert [r.error_kind for r in result.tool_results] == [None, None, None, "budget"]
    assert "This run's tool-call budget is spent (3 calls" in result.tool_results[-1].text
    assert [i.tool_keys for i in script.infos][2] == []
    assert script.infos[2].settings.tool_choice == "auto"  # the first step's "required" is over


async def test_run_limits_go_over_the_agents_field_by_field_and_budgets_survive_a_resume() -> None:
    gauge = Gauge()

    @tool(requires_approval=True)
    def gate() -> str:
        """Needs a yes."""
        return "open"

    turns = (calls(call("work", {"n": 1}), call("gate", {})), calls(call("work", {"n": 2})), "done")
    model, _ = scripted(*turns)
    agent = Agent(model=model, tools=[work_tool(gauge), gate], limits=RunLimits(max_tool_calls=2, max_concurrency=4))
    paused = await agent.generate("go", limits=RunLimits(max_turn_concurrency=1))
    assert paused._state is not None
    assert paused._state.request.limits == RunLimits(max_tool_calls=2, max_concurrency=4, max_turn_concurrency=1)
    done = await agent.resume(paused, {"c_gate": True})
    assert [r.error_kind for r in done.tool_results] == [None, None, "budget"]  # 2 counted before the resume


def test_limits_must_be_whole_numbers() -> None:
    with pytest.raises(AgentSetupError, match=r"RunLimits: max_concurrency must be a whole number of at least 1"):
        RunLimits(max_concurrency=0)
    with pytest.raises(AgentSetupError, match=r"max_tool_calls must be a whole number of at least 0"):
        RunLimits(max_tool_calls=-1)
    with pytest.raises(ToolDefinitionError, match=r"max_calls= must be a whole number"):
        tool(max_calls=True)(lambda: 1)
    with pytest.raises(ToolDefinitionError, match=r"limits= takes ConcurrencyLimit objects"):
        tool(limits=[2])(lambda: 1)  # type: ignore[list-item]
    with pytest.raises(AgentSetupError, match=r"Agent\(limits=...\) takes RunLimits"):
        Agent(limits={"max_tool_calls": 1})  # type: ignore[arg-type]


# ---- concurrency ----------------------------------------------------------------------------------


async def test_without_limits_a_turn_runs_all_its_calls_at_once() -> None:
    gauge = Gauge()
    model, _ = scripted(*fan_out("work", 6))
    result = await Agent(model=model, tools=[work_tool(gauge)]).generate("go")
    assert gauge.peak["all"] == 6 and [r.output for r in result.tool_results] == list(range(6))


async def test_a_turn_cap_bounds_concurrent_calls_and_keeps_call_order() -> None:
    gauge = Gauge()
    model, _ = scripted(*fan_out("work", 7))
    agent = Agent(model=model, tools=[work_tool(gauge)], limits=RunLimits(max_turn_concurrency=2))
    result = await agent.generate("go")
    assert gauge.peak["all"] == 2
    assert [(r.call_id, r.output) for r in result.tool_results] == [(f"work{i}", i) for i in range(7)]


async def test_a_tool_limit_holds_across_concurrent_runs() -> None:
    gauge = Gauge()
    shared = work_tool(gauge, max_concurrency=1)
    agents = [Agent(model=scripted(*fan_out("work", 3))[0], tools=[shared]) for _ in range(2)]
    results = await asyncio.gather(*(a.generate("go") for a in agents))
    assert gauge.peak["work"] == 1
    assert all([r.output for r in result.tool_results] == [0, 1, 2] for result in results)


async def test_a_sequential_tool_runs_alone_between_the_calls_before_and_after_it() -> None:
    gauge = Gauge()
    tools = [work_tool(gauge, "fast"), work_tool(gauge, "save", sequential=True)]
    turn = calls(
        call("fast", {"n": 0}, "a"),
        call("fast", {"n": 1}, "b"),
        call("save", {"n": 2}, "s"),
        call("fast", {"n": 3}, "c"),
        call("fast", {"n": 4}, "d"),
    )
    model, _ = scripted(turn, "done")
    result = await Agent(model=model, tools=tools).generate("go")
    assert gauge.log == [
        "start fast:0",
        "start fast:1",
        "end fast:0",
        "end fast:1",
        "start save:2",
        "end save:2",
        "start fast:3",
        "start fast:4",
        "end fast:3",
        "end fast:4",
    ]
    assert [r.output for r in result.tool_results] == [0, 1, 2, 3, 4]


async def test_a_limit_keyed_by_resource_serialises_calls_on_one_account_across_tools() -> None:
    gauge = Gauge()
    per_account = ConcurrencyLimit(1, key=lambda args: args["account"], name="per-account")

    def account_tool(name: str) -> Tool[..., Any]:
        async def act(account: str, n: int = 0) -> str:
            await gauge.inside(f"account:{account}")
            return f"{name} {account}"

        return tool(id=name, description=f"{name} an account.", limits=[per_account])(act)

    accounts = ["A", "A", "B", "B", "A", "C"]
    turn = calls(*(call("pay" if i % 2 else "read", {"account": a}, f"c{i}") for i, a in enumerate(accounts)))
    model, _ = scripted(turn, "done")
    result = await Agent(model=model, tools=[account_tool("read"), account_tool("pay")]).generate("go")
    assert (gauge.peak["account:A"], gauge.peak["account:B"], gauge.peak["account:C"]) == (1, 1, 1)
    assert gauge.peak["all"] == 3  # different accounts still run side by side
    assert [r.output for r in result.tool_results] == [
        "read A", "pay A", "read B", "pay B", "read A", "pay C",
    ]  # fmt: skip
    assert per_account.holders("A") == 0 and not per_account._slots.get(asyncio.get_running_loop())  # no leak


async def test_a_failing_resource_key_fails_that_call_only() -> None:
    gauge = Gauge()
    limit = ConcurrencyLimit(1, key=lambda args: args["missing"])
    model, _ = scripted(*fan_out("work", 1))
    result = await Agent(model=model, tools=[work_tool(gauge, limits=[limit])]).generate("go")
    [failed] = result.tool_results
    assert (failed.error_kind, failed.exception_type) == ("limit_error", "KeyError")
    assert gauge.log == []


def helper_agent(leaf: Tool[..., Any], count: int, first: int = 0, **options: Any) -> Agent:
    """A subagent ``helper`` that calls `leaf` `count` times in one turn, then answers "helped"."""

    def helper_turn(messages: list[Message], info: FunctionInfo) -> Any:
        if isinstance(messages[-1], ToolResultsMessage):
            return "helped"
        return calls(*(call("work", {"n": first + i}, f"h{i}") for i in range(count)))

    return Agent(id="helper", model=FunctionModel(helper_turn), tools=[leaf], description="Helps.", **options)


async def test_a_run_cap_covers_the_calls_of_its_subagents_without_deadlock() -> None:
    gauge = Gauge()
    leaf = work_tool(gauge)
    helper = helper_agent(leaf, 3, first=10)
    turn = calls(call("agent-helper", {"prompt": "help"}, "sub"), *(call("work", {"n": i}, f"w{i}") for i in range(3)))
    model, _ = scripted(turn, "done")
    agent = Agent(model=model, tools=[leaf], agents={"helper": helper}, limits=RunLimits(max_concurrency=2))
    result = await agent.generate("go")
    assert result.text == "done" and result.tool_results[0].output == "helped"
    assert gauge.peak["all"] == 2  # the parent's and the subagent's calls together
    assert sum(1 for line in gauge.log if line.startswith("start")) == 6


async def test_limits_apply_to_streams_too() -> None:
    gauge = Gauge()
    model, _ = scripted(*fan_out("work", 4))
    agent = Agent(model=model, tools=Registry({"work": work_tool(gauge)}))
    stream = agent.stream("go", limits=RunLimits(max_turn_concurrency=1))
    result = await stream.get_result()
    assert gauge.peak["all"] == 1 and [r.output for r in result.tool_results] == [0, 1, 2, 3]


async def test_a_supervisors_budget_bounds_the_tool_calls_of_its_subagents() -> None:
    """Issue 17 §4.6: `max_tool_calls` is run-wide; subagents (and their subagents) draw from it."""
    gauge = Gauge()
    leaf = work_tool(gauge)
    helper = helper_agent(leaf, 50)
    turn = calls(call("agent-helper", {"prompt": "a"}, "s1"), call("agent-helper", {"prompt": "b"}, "s2"))
    model, _ = scripted(turn, "done")
    agent = Agent(model=model, agents={"helper": helper}, limits=RunLimits(max_tool_calls=5))
    result = await agent.generate("go")
    assert result.text == "done" and result._state is not None
    started = sum(1 for line in gauge.log if line.startswith("start"))
    assert started == 3  # 5 calls in the whole run: the 2 subagent calls and 3 of theirs
    assert result._state.total_calls == 5
    # a subagent with its own smaller budget keeps it, under the supervisor's
    gauge.log.clear()
    small = helper_agent(leaf, 50, limits=RunLimits(max_tool_calls=1))
    model, _ = scripted(turn, "done")
    agent = Agent(model=model, agents={"helper": small}, limits=RunLimits(max_tool_calls=50))
    await agent.generate("go")
    assert sum(1 for line in gauge.log if line.startswith("start")) == 2  # one each
