"""Run control across pauses: what a snapshot keeps (budgets, approval rule, found tools, limits), and how
hooks, budgets and deferred tools meet suspensions and resumes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentkit import Registry, ToolCall, ToolContext, tool
from agentkit.agent import Agent
from agentkit.exceptions import ApprovalError
from agentkit.hooks import Hooks
from agentkit.limits import RunLimits
from agentkit.runs import MemoryRunStore, RunSnapshot

from .agent_helpers import call, calls, scripted

KEY = b"a-snapshot-key-of-sixteen-bytes+"


def fresh(agent_tools: Any, *turns: Any, **options: Any) -> tuple[Agent, Any]:
    model, script = scripted(*turns)
    return Agent(id="ops", model=model, tools=agent_tools, store=MemoryRunStore(key=KEY), **options), script


def through_json(snapshot: RunSnapshot) -> RunSnapshot:
    return RunSnapshot.from_json(snapshot.to_json())


@tool
def lookup(q: str) -> str:
    """Look something up."""
    return f"found {q}"


@tool(requires_approval=True)
def refund(amount: int) -> str:
    """Refund money."""
    return f"refunded {amount}"


async def test_require_approval_survives_a_snapshot() -> None:
    turns = (calls(call("lookup", {"q": "a"})), "done")
    agent, _ = fresh([lookup], *turns)
    paused = await agent.generate("go", require_approval=True)
    assert paused.status == "awaiting_approval"
    snapshot = through_json(paused.snapshot())
    assert snapshot.document["state"]["control"]["require_approval"] is True
    other, _ = fresh([lookup], *turns)
    with pytest.raises(ApprovalError, match="no decision for the pending call"):
        await other.resume(snapshot, {})  # before: the rule was lost and the call ran unapproved
    done = await other.resume(snapshot, {"c_lookup": True})
    assert done.tool_results[0].output == "found a"


async def test_budgets_and_limits_survive_a_snapshot() -> None:
    budgeted = tool(max_calls=1)(lookup.fn)
    turns = (
        calls(call("lookup", {"q": "a"})),
        calls(call("refund", {"amount": 5})),
        calls(call("lookup", {"q": "b"})),
        "done",
    )
    tools = Registry({"lookup": budgeted, "refund": refund})
    agent, _ = fresh(tools, *turns)
    paused = await agent.generate("go", limits=RunLimits(max_tool_calls=5, max_turn_concurrency=2))
    assert paused.status == "awaiting_approval"
    control = json.loads(paused.snapshot().to_json())["state"]["control"]
    assert (control["tool_calls"], control["total_calls"]) == ({"lookup": 1}, 1)
    assert control["limits"] == {"max_tool_calls": 5, "max_concurrency": None, "max_turn_concurrency": 2}
    other, _ = fresh(tools, *turns[2:])
    done = await other.resume(through_json(paused.snapshot()), {"c_refund": True})
    assert [r.error_kind for r in done.tool_results] == [None, None, "budget"]  # lookup's budget was spent before
    assert done._state is not None and done._state.request.limits.max_turn_concurrency == 2


async def test_a_deferred_run_snapshot_keeps_what_it_found_and_resumes_on_a_fresh_agent() -> None:
    @tool(deferred=True, requires_approval=True)
    def delete_file(path: str) -> str:
        """Delete a file from the disk."""
        return f"deleted {path}"

    turns = (calls(call("search_tools", {"query": "delete a file"})), calls(call("delete_file", {"path": "/x"})), "ok")
    agent, _ = fresh([lookup, delete_file], *turns)
    paused = await agent.generate("rm /x")
    assert paused.status == "awaiting_approval"
    snapshot = through_json(paused.snapshot())
    assert snapshot.document["state"]["control"]["found"] == ["delete_file"]
    assert "search_tools" in snapshot.document["tools"]  # the search tool's fingerprint is checked too
    other, script = fresh([lookup, delete_file], *turns[2:])
    done = await other.resume(snapshot, {paused.pending[0].call_id: True})
    assert done.tool_results[-1].output == "deleted /x"
    assert "delete_file" in script.infos[0].tool_keys  # still sent after the resume


async def test_a_snapshot_of_a_run_with_its_own_tools_resumes_with_them_given_again() -> None:
    turns = (calls(call("refund", {"amount": 3})), "done")
    agent, _ = fresh([lookup], *turns)
    paused = await agent.generate("refund", tools=[refund])
    snapshot = through_json(paused.snapshot())
    assert snapshot.document["state"]["control"]["run_keys"] == ["refund"]
    other, _ = fresh([lookup], *turns[1:])
    done = await other.resume(snapshot, {"c_refund": True}, tools=[refund])
    assert done.tool_results[0].output == "refunded 3"


async def test_a_suspending_tool_passes_through_hooks_and_counts_once_against_its_budget() -> None:
    seen: list[tuple[str, bool]] = []

    @tool(max_calls=1)
    def book(ctx: ToolContext[Any], flight: str) -> str:
        """Book a seat."""
        seat = ctx.suspend({"question": f"Which seat on {flight}?"}, schema={"type": "string"})
        return f"booked {seat}"

    def before(ctx: ToolContext[Any], call: ToolCall) -> None:
        seen.append((call.name, ctx.resumed))

    turns = (calls(call("book", {"flight": "LH1"})), "done")
    agent, _ = fresh([book], *turns, hooks=[Hooks(before_tool_call=before)])
    paused = await agent.generate("book")
    assert paused.status == "suspended"
    done = await agent.resume(paused, {"c_book": "12A"})
    assert done.tool_results[0].output == "booked 12A"  # not a budget error: the resumed call was counted once
    assert seen == [("book", False), ("book", True)]
