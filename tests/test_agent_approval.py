"""Approval: a call that needs approval never runs before an approving decision, on any code path."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from agentkit import ToolTransform, tool
from agentkit.agent import Agent, Approval, ApprovalError, PendingApproval, RunResult
from agentkit.events import ApprovalRequestedEvent, FinishEvent, ToolErrorEvent, ToolResultEvent
from agentkit.messages import ToolResultsMessage

from .agent_helpers import call, calls, scripted


class Ledger:
    """Tools that write down every call that actually ran."""

    def __init__(self) -> None:
        self.ran: list[str] = []
        ledger = self

        @tool(requires_approval=True)
        def delete_file(path: str) -> str:
            """Delete a file."""
            ledger.ran.append(f"delete:{path}")
            return f"deleted {path}"

        @tool(requires_approval=lambda args: args["amount"] > 100)
        async def pay(amount: int) -> str:
            """Pay an amount."""
            ledger.ran.append(f"pay:{amount}")
            return f"paid {amount}"

        @tool
        def read_file(path: str) -> str:
            """Read a file."""
            ledger.ran.append(f"read:{path}")
            return "contents"

        def broken_policy(args: dict[str, Any]) -> bool:
            raise RuntimeError("policy bug")

        @tool(requires_approval=broken_policy)
        def launch() -> str:
            """Launch."""
            ledger.ran.append("launch")
            return "launched"

        self.tools = {"delete": delete_file, "pay": pay, "read": read_file, "launch": launch}


MIXED = calls(
    call("read", {"path": "a"}, "r1"),
    call("delete", {"path": "b"}, "d1"),
    call("pay", {"amount": 5}, "p_small"),
    call("pay", {"amount": 500}, "p_big"),
)


async def test_mixed_parallel_calls_stop_the_run_before_any_call_runs() -> None:
    ledger = Ledger()
    model, script = scripted(MIXED, "finished")
    agent = Agent(model=model, tools=ledger.tools)
    result = await agent.generate("go")
    assert result.status == "awaiting_approval"
    assert ledger.ran == []  # not even the calls that need no approval
    assert [p.call_id for p in result.pending] == ["d1", "p_big"]
    assert result.pending[1] == PendingApproval("p_big", "pay", {"amount": 500}, {"amount": 500})
    assert len(script.seen) == 1

    resumed = await agent.resume(result, {"d1": Approval(False, "keep b"), "p_big": True})
    assert resumed.status == "complete" and resumed.text == "finished"
    assert sorted(ledger.ran) == ["pay:5", "pay:500", "read:a"]
    by_id = {r.call_id: r for r in resumed.steps[0].results}
    assert by_id["d1"].error_kind == "denied" and "keep b" in by_id["d1"].text
    # the model received all four results of that turn, in call order, the denial as an error
    sent = script.seen[1][-1]
    assert isinstance(sent, ToolResultsMessage)
    assert [r.call_id for r in sent.results] == ["r1", "d1", "p_small", "p_big"]
    assert [r.is_error for r in sent.results] == [False, True, False, False]


async def test_resume_with_missing_or_unknown_decisions_runs_nothing() -> None:
    ledger = Ledger()
    model, _ = scripted(MIXED, "finished")
    agent = Agent(model=model, tools=ledger.tools)
    result = await agent.generate("go")
    with pytest.raises(ApprovalError, match="no decision for the pending call"):
        await agent.resume(result, {"d1": True})
    with pytest.raises(ApprovalError, match="no pending call has the id"):
        await agent.resume(result, {"d1": True, "p_big": True, "invented": True})
    assert ledger.ran == []
    done = await agent.resume(result, {"d1": True, "p_big": False})
    with pytest.raises(ApprovalError, match="only a paused run can be resumed.*got 'complete'"):
        await agent.resume(done, {})
    assert sorted(ledger.ran) == ["delete:b", "pay:5", "read:a"]


async def test_an_edited_pending_list_cannot_smuggle_a_call_through() -> None:
    ledger = Ledger()
    model, _ = scripted(MIXED, "finished")
    agent = Agent(model=model, tools=ledger.tools)
    result = await agent.generate("go")
    tampered = dataclasses.replace(result, pending=[])  # as if nothing were pending
    with pytest.raises(ApprovalError, match="no decision"):
        await agent.resume(tampered, {})
    assert ledger.ran == []


async def test_a_failing_policy_requires_approval_and_invalid_arguments_never_run() -> None:
    ledger = Ledger()
    model, _ = scripted(calls(call("launch", {}, "l"), call("delete", {"path": 3}, "bad")), "ok")
    agent = Agent(model=model, tools=ledger.tools)
    result = await agent.generate("go")
    assert [p.call_id for p in result.pending] == ["l"]  # the broken policy fails closed
    resumed = await agent.resume(result, {"l": False})
    assert ledger.ran == []
    assert [r.error_kind for r in resumed.steps[0].results] == ["denied", "invalid_arguments"]


async def test_later_turns_ask_again_and_every_turn_is_checked() -> None:
    ledger = Ledger()
    model, _ = scripted(calls(call("delete", {"path": "x"}, "a")), calls(call("delete", {"path": "y"}, "b")), "done")
    agent = Agent(model=model, tools=ledger.tools)
    first = await agent.generate("go")
    second = await agent.resume(first, {"a": True})
    assert second.status == "awaiting_approval" and [p.call_id for p in second.pending] == ["b"]
    assert ledger.ran == ["delete:x"]
    third = await agent.resume(second, {"b": False})
    assert third.status == "complete" and ledger.ran == ["delete:x"]
    assert len(third.steps) == 3 and third.usage.requests == 3


async def test_stream_mode_stops_with_approval_events_and_resumes_as_a_stream() -> None:
    ledger = Ledger()
    model, _ = scripted(MIXED, "finished")
    agent = Agent(model=model, tools=ledger.tools)
    stream = agent.stream("go")
    events = [e async for e in stream]
    assert ledger.ran == []
    assert [e.call_id for e in events if isinstance(e, ApprovalRequestedEvent)] == ["d1", "p_big"]
    assert not any(isinstance(e, (ToolResultEvent, ToolErrorEvent)) for e in events)
    finish = events[-1]
    assert isinstance(finish, FinishEvent) and finish.status == "awaiting_approval"

    resumed = agent.resume_stream(stream.result, {"d1": False, "p_big": True})
    events = [e async for e in resumed]
    errors = [e for e in events if isinstance(e, ToolErrorEvent)]
    assert [(e.call_id, e.error_kind) for e in errors] == [("d1", "denied")]
    assert {e.call_id for e in events if isinstance(e, ToolResultEvent)} == {"r1", "p_small", "p_big"}
    assert resumed.result.text == "finished"
    assert "delete:b" not in ledger.ran


async def test_approval_payloads_are_shaped_and_fail_closed() -> None:
    def hide_path(args: Any) -> Any:
        return {"path": "***"}

    def broken(args: Any) -> Any:
        raise KeyError(args["path"])  # the message would quote the secret

    @tool(requires_approval=True, transform=ToolTransform(approval=hide_path))
    def wipe(path: str) -> str:
        """Wipe."""
        return "wiped"

    @tool(requires_approval=True, transform=ToolTransform(input=broken))
    def shred(path: str) -> str:
        """Shred."""
        return "shredded"

    model, _ = scripted(calls(call("wipe", {"path": "/secret"}, "w"), call("shred", {"path": "/secret2"}, "s")))
    stream = Agent(model=model, tools=[wipe, shred]).stream("go")
    events = [e async for e in stream if isinstance(e, ApprovalRequestedEvent)]
    assert events[0].payload == {"path": "***"} and events[0].transform_error is None
    assert events[1].payload is None and "KeyError" in (events[1].transform_error or "")
    assert "secret2" not in repr(events[1])
    result: RunResult = stream.result
    assert result.pending[0].payload == {"path": "***"}
    assert result.pending[0].arguments == {"path": "/secret"}  # the app still sees what it decides on


async def test_a_tool_that_needs_approval_is_asked_after_runs_whose_tools_never_asked() -> None:
    """Whether any tool can ask is decided once per registry version: a tool added later is asked all the same."""

    @tool
    def look(x: int) -> int:
        """Look."""
        return x

    @tool(requires_approval=True)
    def delete(x: int) -> int:
        """Delete."""
        return x

    model, _ = scripted(calls(call("look", {"x": 1})), "done", calls(call("delete", {"x": 2})), "done")
    agent = Agent(model=model, tools=[look])
    first = await agent.generate("go")
    assert first.status == "complete" and first.steps[0].results[0].output == 1
    agent.tools.add("delete", delete)
    second = await agent.generate("go")
    assert second.status == "awaiting_approval"
    assert [item.tool_name for item in second.pending] == ["delete"]
