"""Property: pausing anywhere, as JSON, resuming in another process, changes nothing about the run.

For any script of turns (plain calls, calls needing approval, calls that suspend), and any choice of
which process resumes each pause (this one, or a worker process that rebuilds the agent from scratch), the
final history equals the uninterrupted run's on the same `FunctionModel` script; no call runs twice; every
tool call has exactly one result.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from agentkit.runs import MemoryRunStore, SQLiteRunStore
from agentkit.runs._codec import encode_messages

from .durable_helpers import ledger_lines
from .property_helpers import Script, make_agent, resume_in_worker, resume_once

SETTINGS = settings(max_examples=20, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
SCRIPTS = st.lists(st.lists(st.sampled_from(["plain", "gated", "ask"]), min_size=1, max_size=3), min_size=1, max_size=4)


@pytest.fixture(scope="module")
def worker() -> Iterator[ProcessPoolExecutor]:
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        yield pool


@given(script=SCRIPTS, where=st.lists(st.booleans(), min_size=1, max_size=12))
@SETTINGS
def test_pausing_anywhere_and_resuming_elsewhere_gives_the_uninterrupted_history(
    worker: ProcessPoolExecutor, tmp_path_factory: pytest.TempPathFactory, script: Script, where: list[bool]
) -> None:
    folder = tmp_path_factory.mktemp("pauses")
    straight_ledger, ledger, store_path = (str(folder / name) for name in ("straight.txt", "paused.txt", "runs.db"))
    straight = make_agent(script, straight_ledger, interrupted=False, store=MemoryRunStore())
    expected = encode_messages(asyncio.run(straight.generate("go")).messages, straight.tools)

    agent = make_agent(script, ledger, interrupted=True, store=SQLiteRunStore(store_path))
    first = asyncio.run(agent.generate("go"))
    state: tuple[str, str] = (
        ("paused", first.snapshot().to_json())
        if first.paused
        else ("done", json.dumps(encode_messages(first.messages, agent.tools)))
    )
    pauses = 0
    while state[0] == "paused":
        if where[pauses % len(where)]:
            event("a pause resumed in the worker process")
            state = worker.submit(resume_in_worker, script, ledger, store_path, state[1]).result(timeout=60)
        else:
            state = resume_once(agent, state[1])
        pauses += 1
    history: list[Any] = json.loads(state[1])
    assert history == expected
    # a turn pauses once for its approvals (before anything runs), then once for its suspensions
    assert pauses == sum(("gated" in turn) + ("ask" in turn) for turn in script)
    ran = ledger_lines(ledger)
    calls = [c["id"] for m in history if m["role"] == "assistant" for c in m.get("tool_calls", [])]
    assert sorted(ran) == sorted(calls) and len(set(ran)) == len(ran)  # every call ran, none twice
    answered = [r["call_id"] for m in history if m["role"] == "tool" for r in m["results"]]
    assert sorted(answered) == sorted(calls)  # one result per call
