"""A resume records how far it got in the run store, so a crash is told apart from a finished run (issue 17 §3.2).

Crashes are real: a worker process resuming a run is killed with SIGKILL while its tool runs.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentkit import RunSnapshot
from agentkit.exceptions import AlreadyResumedError
from agentkit.runs import SCHEMA_VERSION, MemoryRunStore, ResumeRecord, SQLiteRunStore

from .crash_helpers import crash_agent

ROOT = Path(__file__).resolve().parents[2]


async def _paused_snapshot(tmp_path: Path, store: SQLiteRunStore) -> Path:
    paused = await crash_agent(str(tmp_path / "ledger.txt"), store).generate("refund please")
    assert paused.status == "awaiting_approval"
    path = tmp_path / "snapshot.json"
    path.write_text(paused.snapshot().to_json())
    return path


def _resume_in_process(tmp_path: Path, snapshot: Path, store: Path, hang: bool) -> subprocess.Popen[str]:
    ledger = str(tmp_path / "ledger.txt")
    command = [sys.executable, "-m", "tests.runs.crash_helpers", "resume", str(snapshot), str(store), ledger]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [*command, "hang" if hang else "finish"], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
    )


def _wait_for_line(path: Path, line: str, process: subprocess.Popen[str], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not (path.exists() and line in path.read_text()):
        assert process.poll() is None, "the worker ended early"
        assert time.monotonic() < deadline, f"no {line!r} in the ledger"
        time.sleep(0.05)


async def test_a_resume_killed_mid_call_is_recorded_as_started_and_never_resumed_again(tmp_path: Path) -> None:
    store_path = tmp_path / "runs.sqlite3"
    snapshot_file = await _paused_snapshot(tmp_path, SQLiteRunStore(store_path))
    snapshot = RunSnapshot.from_json(snapshot_file.read_text())
    worker = _resume_in_process(tmp_path, snapshot_file, store_path, hang=True)
    try:
        _wait_for_line(tmp_path / "ledger.txt", "refund started", worker)
        worker.send_signal(signal.SIGKILL)
        assert worker.wait(timeout=30) == -signal.SIGKILL
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
        assert worker.stdout is not None
        worker.stdout.close()
    store = SQLiteRunStore(store_path)
    record = await store.resume_record(snapshot.pause_id)
    assert record is not None and record.state == "started" and record.run_id == snapshot.run_id
    assert record.next_pause_id is None and record.status is None
    with pytest.raises(AlreadyResumedError, match="recorded no end: it is still running, or its process was lost"):
        await crash_agent(str(tmp_path / "ledger.txt"), store).resume(snapshot, {"c_refund": True})
    assert (tmp_path / "ledger.txt").read_text().splitlines() == ["refund started"]  # at most once


async def test_a_resume_that_finishes_in_another_process_says_so(tmp_path: Path) -> None:
    store_path = tmp_path / "runs.sqlite3"
    snapshot_file = await _paused_snapshot(tmp_path, SQLiteRunStore(store_path))
    snapshot = RunSnapshot.from_json(snapshot_file.read_text())
    worker = _resume_in_process(tmp_path, snapshot_file, store_path, hang=False)
    out, _ = worker.communicate(timeout=120)
    assert worker.returncode == 0 and out.strip() == "complete"
    store = SQLiteRunStore(store_path)
    record = await store.resume_record(snapshot.pause_id)
    assert record is not None and (record.state, record.status) == ("finished", "complete")
    with pytest.raises(AlreadyResumedError, match=r"finished \(complete\)"):
        await crash_agent(str(tmp_path / "ledger.txt"), store).resume(snapshot, {"c_refund": True})


async def test_a_resume_that_pauses_again_names_the_next_pause() -> None:
    from agentkit import Agent, ToolCall, tool
    from agentkit.messages import AssistantMessage, ToolResultsMessage
    from agentkit.testing import FunctionModel

    @tool(requires_approval=True)
    def step(n: int) -> int:
        """One guarded step."""
        return n

    def turn(messages: list[object], info: object) -> AssistantMessage | str:
        done = sum(isinstance(m, ToolResultsMessage) for m in messages)
        return "done" if done == 2 else AssistantMessage(tool_calls=[ToolCall(f"c{done}", "step", {"n": done})])

    store = MemoryRunStore()
    agent = Agent(model=FunctionModel(turn), tools=[step], store=store)
    first = await agent.generate("go")
    second = await agent.resume(first, {"c0": True})
    assert second.status == "awaiting_approval"
    record = await store.resume_record(first.snapshot().pause_id)
    assert record is not None and record.state == "paused" and record.status == "awaiting_approval"
    assert record.next_pause_id == second.snapshot().pause_id
    with pytest.raises(AlreadyResumedError, match="paused again"):
        await agent.resume(first, {"c0": True})


async def test_a_failed_resume_is_recorded_with_the_exception_type_only() -> None:
    from agentkit import Agent, ToolCall, tool
    from agentkit.messages import AssistantMessage
    from agentkit.testing import FunctionModel

    @tool(requires_approval=True)
    def act() -> str:
        """Act."""
        return "ok"

    calls = 0

    def turn(messages: list[object], info: object) -> AssistantMessage:
        nonlocal calls
        calls += 1
        if calls > 1:
            raise RuntimeError("the vendor said sk-secret")
        return AssistantMessage(tool_calls=[ToolCall("c1", "act", {})])

    store = MemoryRunStore()
    agent = Agent(model=FunctionModel(turn), tools=[act], store=store)
    paused = await agent.generate("go")
    with pytest.raises(RuntimeError):
        await agent.resume(paused, {"c1": True})
    record = await store.resume_record(paused.snapshot().pause_id)
    assert record == ResumeRecord(
        record.pause_id, "failed", record.claimed_at, record.updated_at, record.run_id, error="RuntimeError"
    )


def _old_database(path: Path) -> None:
    """A run store as an agentkit before resume records wrote it (schema version 0, one claim)."""
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE agentkit_claims (pause_id TEXT PRIMARY KEY, claimed_at REAL NOT NULL);"
        "CREATE TABLE agentkit_paused (run_id TEXT PRIMARY KEY, pause_id TEXT NOT NULL, snapshot TEXT NOT NULL,"
        " saved_at REAL NOT NULL);"
        "CREATE TABLE agentkit_histories (message_id TEXT PRIMARY KEY, messages TEXT NOT NULL, saved_at REAL NOT NULL);"
        "INSERT INTO agentkit_claims VALUES ('old-pause', 1700000000.0);"
    )
    db.commit()
    db.close()


async def test_an_old_database_is_migrated_and_keeps_its_claims(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    _old_database(path)
    store = SQLiteRunStore(path)
    assert await store.claim("old-pause") is False  # claimed before the upgrade: still single use
    record = await store.resume_record("old-pause")
    assert record is not None and record.state == "unknown" and record.claimed_at == 1700000000.0
    assert await store.claim("new-pause") is True
    await store.record_resume("new-pause", state="finished", status="complete")
    assert (await store.resume_record("new-pause")).state == "finished"  # type: ignore[union-attr]
    store.close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    db.close()
    again = SQLiteRunStore(path)  # opening a migrated database migrates nothing twice
    assert (await again.resume_record("new-pause")).status == "complete"  # type: ignore[union-attr]
    again.close()


async def test_a_database_a_newer_agentkit_migrated_still_works(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite3"
    first = SQLiteRunStore(path)
    assert await first.claim("before") is True
    first.close()
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE agentkit_future (x TEXT)")  # what a later migration adds
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    db.commit()
    db.close()
    store = SQLiteRunStore(path)  # migrations only add: an older agentkit keeps working during an upgrade
    assert await store.claim("p") is True and (await store.resume_record("p")).state == "started"  # type: ignore[union-attr]
    store.close()


async def test_recording_takes_only_the_record_fields(tmp_path: Path) -> None:
    store = SQLiteRunStore(tmp_path / "runs.sqlite3")
    await store.claim("p")
    with pytest.raises(TypeError, match="record_resume"):
        await store.record_resume("p", state="finished", **{"status = 'x'; --": 1})
    store.close()
