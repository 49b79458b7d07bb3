"""Exactly-once side effects across crashes (issue 19 §2.3): a resume killed with SIGKILL at each journal point.

Each test pauses a refund for approval, resumes it in a worker process that kills itself (SIGKILL, no
cooperation: its store or its tool calls ``os.kill``) at one point, then continues the lost resume with
`Agent.recover` in a second process. The refund's side effect is a ledger line carrying its effect key.
The table in docs/side-effects.md is these tests.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentkit import ToolError
from agentkit.agent import PendingSuspension, RunResult
from agentkit.exceptions import ResumeError
from agentkit.runs import RunSnapshot, SQLiteRunStore, effect_key
from agentkit.runs._journal import UNKNOWN_ANSWER

from .journal_helpers import refund_agent

ROOT = Path(__file__).resolve().parents[2]


class Crash:
    """A paused refund in an SQLite store, resumed by killed and recovering worker processes."""

    def __init__(self, tmp_path: Path) -> None:
        self.store = tmp_path / "runs.sqlite3"
        self.ledger = tmp_path / "ledger.txt"
        self.snapshot = tmp_path / "snapshot.json"
        self.run_id = ""

    async def pause(self) -> None:
        with SQLiteRunStore(self.store) as store:
            paused = await refund_agent(str(self.ledger), store).generate("refund o-1")
        assert paused.status == "awaiting_approval"
        snapshot = paused.snapshot()
        self.run_id = snapshot.run_id
        self.snapshot.write_text(snapshot.to_json())

    def worker(self, command: str, point: str, idempotent: bool) -> subprocess.CompletedProcess[str]:
        args = [str(self.snapshot), str(self.store), str(self.ledger), point, "yes" if idempotent else "no"]
        return subprocess.run(
            [sys.executable, "-m", "tests.runs.journal_helpers", command, *args],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            timeout=120,
        )

    def effects(self) -> list[str]:
        return self.ledger.read_text().splitlines() if self.ledger.exists() else []

    async def crash_then_recover(self, point: str, *, idempotent: bool = False) -> tuple[list[str], dict[str, Any]]:
        """The ledger right after the crash, and what the recovery returned."""
        await self.pause()
        killed = self.worker("resume", point, idempotent)
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        after_crash = self.effects()
        recovered = self.worker("recover", "none", idempotent)
        assert recovered.returncode == 0, recovered.stderr
        return after_crash, json.loads(recovered.stdout)

    @property
    def line(self) -> str:
        """The refund's ledger line: its effect key, the same in every process."""
        return f"{effect_key(self.run_id, 'c_refund')} refund o-1"


@pytest.fixture
def crash(tmp_path: Path) -> Crash:
    return Crash(tmp_path)


async def test_killed_before_the_reserve_the_recovered_run_makes_the_call(crash: Crash) -> None:
    after_crash, result = await crash.crash_then_recover("before_reserve")
    assert after_crash == []
    assert result == {"status": "complete", "text": "done: refunded o-1", "error_kind": None}
    assert crash.effects() == [crash.line]  # exactly once


async def test_killed_after_the_reserve_the_outcome_is_unknown_and_nothing_runs_twice(crash: Crash) -> None:
    after_crash, result = await crash.crash_then_recover("after_reserve")
    assert after_crash == []
    assert result["error_kind"] == "outcome_unknown" and result["status"] == "complete"
    assert "may or may not have taken effect" in result["text"]
    assert effect_key(crash.run_id, "c_refund") in result["text"]
    assert crash.effects() == []  # not run again: at most once, and the model is told it does not know


async def test_killed_inside_the_function_the_outcome_is_unknown(crash: Crash) -> None:
    after_crash, result = await crash.crash_then_recover("inside")
    assert after_crash == [] and crash.effects() == []
    assert result["error_kind"] == "outcome_unknown"


async def test_killed_after_the_side_effect_before_the_commit_it_is_not_repeated(crash: Crash) -> None:
    after_crash, result = await crash.crash_then_recover("before_commit")
    assert after_crash == [crash.line]
    assert result["error_kind"] == "outcome_unknown"
    assert crash.effects() == [crash.line]  # the refund happened once; the model hears the outcome is unknown


async def test_killed_after_the_commit_the_recorded_result_is_used(crash: Crash) -> None:
    after_crash, result = await crash.crash_then_recover("after_commit")
    assert after_crash == [crash.line]
    assert result == {"status": "complete", "text": "done: refunded o-1", "error_kind": None}
    assert crash.effects() == [crash.line]  # never run again


@pytest.mark.parametrize("point", ["after_reserve", "inside", "before_commit"])
async def test_an_idempotent_tool_runs_again_under_the_same_effect_key(crash: Crash, point: str) -> None:
    after_crash, result = await crash.crash_then_recover(point, idempotent=True)
    assert result == {"status": "complete", "text": "done: refunded o-1", "error_kind": None}
    # the same key both times: the payment service deduplicates the second request
    assert crash.effects() == [*after_crash, crash.line]
    assert set(crash.effects()) == {crash.line}


async def test_an_idempotent_tools_committed_call_is_not_run_again(crash: Crash) -> None:
    after_crash, result = await crash.crash_then_recover("after_commit", idempotent=True)
    assert after_crash == [crash.line] and crash.effects() == [crash.line]
    assert result["text"] == "done: refunded o-1"


# ---- on_unknown="pause": a person decides what an unknown outcome was -----------------------------------


async def _crash_then_pause(crash: Crash, point: str, *, idempotent: bool = False) -> RunResult[Any]:
    """Kill a resume at `point`, then recover it in this process with ``on_unknown="pause"``."""
    await crash.pause()
    killed = crash.worker("resume", point, idempotent)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    snapshot = RunSnapshot.from_json(crash.snapshot.read_text())
    with SQLiteRunStore(crash.store) as store:
        agent = refund_agent(str(crash.ledger), store, idempotent=idempotent or None)
        return await agent.recover(snapshot, {"c_refund": True}, on_unknown="pause")


async def _answer(crash: Crash, paused: RunResult[Any], answer: Any) -> RunResult[Any]:
    """Resume the unknown-outcome pause from its snapshot (as another process would), with `answer`."""
    snapshot = RunSnapshot.from_json(paused.snapshot().to_json())
    with SQLiteRunStore(crash.store) as store:
        return await refund_agent(str(crash.ledger), store).resume(snapshot, {"c_refund": answer})


async def test_an_unknown_outcome_can_pause_for_a_person_who_says_it_ran(crash: Crash) -> None:
    paused = await _crash_then_pause(crash, "before_commit")
    assert paused.status == "suspended" and crash.effects() == [crash.line]  # nothing ran in the recovery
    [pending] = paused.pending
    assert isinstance(pending, PendingSuspension) and pending.tool_name == "refund"
    key = effect_key(crash.run_id, "c_refund")
    assert pending.request["outcome"] == "unknown" and pending.request["effect_key"] == key
    assert pending.schema == UNKNOWN_ANSWER

    done = await _answer(crash, paused, {"output": "refunded o-1 (found in the ledger)"})
    assert done.status == "complete" and done.text == "done: refunded o-1 (found in the ledger)"
    assert crash.effects() == [crash.line]  # the person's answer stands for the call: never run again
    with SQLiteRunStore(crash.store) as store:
        entry = await store.reserve(key, run_id=crash.run_id, call_id="c_refund", tool="refund")
    assert entry is not None and entry.state == "committed"  # a later recovery uses the answer, too


async def test_an_unknown_outcome_a_person_retries_runs_once_under_the_same_key(crash: Crash) -> None:
    paused = await _crash_then_pause(crash, "after_reserve")
    assert paused.status == "suspended" and crash.effects() == []
    done = await _answer(crash, paused, {"retry": True})
    assert done.status == "complete" and done.text == "done: refunded o-1"
    assert crash.effects() == [crash.line]  # once, keyed as the lost attempt was


async def test_an_unknown_outcome_a_person_fails_never_runs(crash: Crash) -> None:
    paused = await _crash_then_pause(crash, "inside")
    done = await _answer(crash, paused, ToolError("checked the ledger: no refund was made"))
    [result] = done.tool_results
    assert result.error_kind == "tool_error" and "no refund was made" in result.text
    assert crash.effects() == []


@pytest.mark.parametrize(
    "answer", [{"retry": 1}, {"retry": False}, {"retry": True, "output": "x"}, {"output": 5}, "yes", {}, None]
)
async def test_a_wrong_answer_to_an_unknown_outcome_runs_nothing_and_keeps_the_pause(crash: Crash, answer: Any) -> None:
    paused = await _crash_then_pause(crash, "after_reserve")
    with pytest.raises(ResumeError, match="outcome is unknown|does not fit"):
        await _answer(crash, paused, answer)
    assert crash.effects() == []
    done = await _answer(crash, paused, {"retry": True})  # the pause was not spent
    assert done.status == "complete" and crash.effects() == [crash.line]


async def test_an_idempotent_tool_never_pauses_for_its_unknown_outcome(crash: Crash) -> None:
    result = await _crash_then_pause(crash, "after_reserve", idempotent=True)
    assert result.status == "complete" and crash.effects() == [crash.line]


async def test_recover_refuses_an_unknown_on_unknown_policy(crash: Crash) -> None:
    await crash.pause()
    snapshot = RunSnapshot.from_json(crash.snapshot.read_text())
    with SQLiteRunStore(crash.store) as store:
        agent = refund_agent(str(crash.ledger), store)
        with pytest.raises(ValueError, match='"error" or "pause"'):
            await agent.recover(snapshot, {"c_refund": True}, on_unknown="ask")  # type: ignore[arg-type]
    assert crash.effects() == []
