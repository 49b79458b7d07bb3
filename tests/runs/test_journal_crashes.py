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

from agentkit.runs import SQLiteRunStore, effect_key

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
