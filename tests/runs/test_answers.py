"""What a paused run accepts as an answer: only real yes/no decisions, and data checked with bounded regexes.

Issue 17 §1.1 (truthy decisions ran guarded tools), §1.2 (an edited unsigned snapshot ran a guarded call
unapproved), §4.2 (answers checked with Python `re` on the event loop), §4.9 (what `ApprovalError` lists).
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from agentkit import Agent, RunSnapshot, ToolContext, ToolError, tool
from agentkit._text import shorten
from agentkit.agent import Approval
from agentkit.exceptions import ApprovalError, ResumeError, SnapshotError
from agentkit.runs import MemoryRunStore
from agentkit.runs._answers import check_answer, check_answer_async, check_approval

from ..agent_helpers import call, calls, scripted
from ..durable_helpers import Seat, ledger_lines, make_agent

TRUTHY_NOT_YES: list[Any] = [
    "false",
    "no",
    {"approved": False},
    ToolError("no"),
    1,
    0,
    None,
    [],
    Approval("false"),  # type: ignore[arg-type]  # an untyped caller's mistake
    Approval(1),  # type: ignore[arg-type]
    Approval(True, reason=5),  # type: ignore[arg-type]
]


@pytest.mark.parametrize("given", TRUTHY_NOT_YES, ids=repr)
def test_only_a_real_bool_or_approval_is_a_decision(given: Any) -> None:
    with pytest.raises(ApprovalError) as info:
        check_approval("c7", given)
    message = str(info.value)
    assert "'c7'" in message and "nothing ran" in message
    shown = given.approved if isinstance(given, Approval) and not isinstance(given.approved, bool) else given
    shown = given.reason if isinstance(given, Approval) and isinstance(given.approved, bool) else shown
    assert shorten(shown, 60) in message  # what was given


def test_real_decisions_pass_as_approvals() -> None:
    assert check_approval("c", True) == Approval(True)
    assert check_approval("c", False) == Approval(False)
    assert check_approval("c", Approval(False, "why")) == Approval(False, "why")


@pytest.mark.parametrize("given", TRUTHY_NOT_YES, ids=repr)
async def test_resume_refuses_anything_but_a_decision_and_stays_resumable(tmp_path: Path, given: Any) -> None:
    ledger = str(tmp_path / "ledger.txt")
    agent = make_agent(ledger, store=MemoryRunStore())
    paused = await agent.generate("refund")
    snapshot = RunSnapshot.from_json(paused.snapshot().to_json())
    for target in (paused, snapshot):
        with pytest.raises(ApprovalError, match="'c_refund'"):
            await agent.resume(target, {"c_refund": given})
    assert ledger_lines(ledger) == []  # nothing ran: not the guarded call, not the turn's other call
    done = await agent.resume(snapshot, {"c_refund": False})  # the pause was not used up
    assert done.status == "complete" and ledger_lines(ledger) == ["note refund asked"]


async def test_an_approval_error_lists_only_the_calls_that_need_approval() -> None:
    @tool(requires_approval=True)
    def delete(path: str) -> str:
        """Delete a file."""
        return "deleted"

    @tool
    def read(path: str) -> str:
        """Read a file."""
        return "text"

    model, _ = scripted(calls(call("read", {"path": "a"}, "r1"), call("delete", {"path": "b"}, "d1")), "ok")
    agent = Agent(model=model, tools=[read, delete], store=MemoryRunStore())
    paused = await agent.generate("go")
    with pytest.raises(ApprovalError) as info:
        await agent.resume(paused, {"d1": True, "invented": True})
    message = str(info.value)
    assert "pending: ['d1']" in message and "r1" not in message


# ---- §1.2: approval is decided from the history, whatever the stored status and pending list say ----


def _edited(snapshot: RunSnapshot, status: str, pending: list[dict[str, Any]]) -> RunSnapshot:
    document = json.loads(snapshot.to_json())
    document["status"] = status
    document["pending"] = pending
    return RunSnapshot(document)


def _suspension(call_id: str, tool_name: str, arguments: Any) -> dict[str, Any]:
    return {
        "kind": "suspension",
        "call_id": call_id,
        "tool_name": tool_name,
        "arguments": arguments,
        "request": {"question": "?"},
        "payload": {"question": "?"},
        "schema": None,
        "transform_error": None,
    }


async def test_an_unsigned_snapshot_edited_to_suspended_cannot_run_the_guarded_call(tmp_path: Path) -> None:
    ledger = str(tmp_path / "ledger.txt")
    agent = make_agent(ledger, store=MemoryRunStore())
    snapshot = (await agent.generate("refund")).snapshot()  # unsigned: the default
    arguments = {"account": "DE01", "amount": 500}
    forged = _edited(snapshot, "suspended", [_suspension("c_refund", "refund", arguments)])
    with pytest.raises(SnapshotError, match="'refund', which takes no ToolContext"):
        await agent.resume(forged, {"c_refund": {"anything": 1}})
    as_client = dict(_suspension("c_refund", "refund", arguments), kind="client", output_schema=None)
    del as_client["request"], as_client["schema"]
    forged = _edited(snapshot, "awaiting_client", [as_client])
    with pytest.raises(SnapshotError, match="is not a client tool"):
        await agent.resume(forged, {"c_refund": {"account": "DE01", "amount": 500, "at": "2026-01-01T00:00:00"}})
    emptied = _edited(snapshot, "suspended", [])  # nothing listed: the guarded call is still undecided
    with pytest.raises(ApprovalError, match="no decision for the pending call"):
        await agent.resume(emptied, {})
    assert ledger_lines(ledger) == []
    done = await agent.resume(snapshot, {"c_refund": True})  # the real pause is still there
    assert done.status == "complete"


def _guarded_booking_agent(ledger: str) -> Agent:
    @tool(requires_approval=True)
    def book(ctx: ToolContext[Any], flight: str) -> str:
        """Book a seat (needs approval, then asks which seat)."""
        seat = ctx.suspend({"question": f"Which seat on {flight}?"}, schema=Seat)
        with Path(ledger).open("a") as handle:
            handle.write(f"book {flight} {seat.row}{seat.letter}\n")
        return "booked"

    model, _ = scripted(calls(call("book", {"flight": "LH1"}, "c_book")), "done")
    return Agent(id="booking", model=model, tools=[book], store=MemoryRunStore())


async def test_a_call_that_can_suspend_runs_again_only_if_this_run_approved_it(tmp_path: Path) -> None:
    ledger = str(tmp_path / "ledger.txt")
    agent = _guarded_booking_agent(ledger)
    paused = await agent.generate("book")
    assert paused.status == "awaiting_approval"
    forged = _edited(paused.snapshot(), "suspended", [_suspension("c_book", "book", {"flight": "LH1"})])
    with pytest.raises(ApprovalError, match=r"\['c_book'\] need approval and were never approved"):
        await agent.resume(forged, {"c_book": {"row": 1, "letter": "A"}})
    assert ledger_lines(ledger) == []
    # the real way: approved, it suspends; the approval travels in the snapshot and the data resumes it
    asked = await agent.resume(paused, {"c_book": True})
    assert asked.status == "suspended"
    text = asked.snapshot().to_json()
    assert json.loads(text)["state"]["control"]["approved"] == ["c_book"]
    done = await agent.resume(RunSnapshot.from_json(text), {"c_book": {"row": 3, "letter": "C"}})
    assert done.status == "complete" and ledger_lines(ledger) == ["book LH1 3C"]


# ---- §4.2: a schema from outside is matched by the bounded engine, off the event loop ----------------

EVIL = {"type": "object", "properties": {"code": {"type": "string", "pattern": "^(a+)+$"}}}
BACKTRACKING = {"type": "object", "properties": {"code": {"type": "string", "pattern": "^(?=(a+)+$)a*$"}}}


def test_a_catastrophic_pattern_is_matched_in_linear_time() -> None:
    answer = {"code": "a" * 40 + "!"}  # Python's `re` takes hours on this
    started = time.perf_counter()
    problems = check_answer(EVIL, answer)
    assert problems and "does not match" in problems[0]
    assert time.perf_counter() - started < 5  # a bound on a hang, not a speed figure


async def test_a_backtracking_pattern_runs_off_the_event_loop() -> None:
    from agentkit._raw_schema import pattern_budget

    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    beat = asyncio.create_task(ticker())
    try:
        with pattern_budget(0.5):
            problems = await check_answer_async(BACKTRACKING, {"code": "a" * 5000 + "!"})
    finally:
        beat.cancel()
    assert problems  # either no match or the budget ran out: never a stall
    assert ticks > 5  # the loop kept running while the pattern was matched


def test_an_unusable_schema_is_a_problem_not_a_crash() -> None:
    assert check_answer({"type": 5}, {}) != []
    assert check_answer({"$ref": "#/$defs/missing"}, {}) != []
    assert check_answer(None, object()) == []


async def test_resume_checks_suspension_data_with_the_bounded_engine(tmp_path: Path) -> None:
    @tool
    def ask(ctx: ToolContext[Any]) -> str:
        """Ask for a code (the schema could be an MCP server's)."""
        return str(ctx.suspend({"question": "code?"}, schema=EVIL))

    model, _ = scripted(calls(call("ask", {}, "c1")), "done")
    agent = Agent(model=model, tools=[ask], store=MemoryRunStore())
    paused = await agent.generate("go")
    with pytest.raises(ResumeError, match="does not match"):
        await agent.resume(paused, {"c1": {"code": "a" * 40 + "!"}})
    done = await agent.resume(paused, {"c1": {"code": "aaa"}})
    assert done.status == "complete"
