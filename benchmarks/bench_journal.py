"""Effect journal cost per tool call: the journal's reserve + commit against the same SQLite writes by hand.

    python benchmarks/bench_journal.py            # full run
    python benchmarks/bench_journal.py --quick    # fewer calls

What a journaled call adds (`agentkit._agent._effects.journaled`): a reservation (one conditional
``INSERT``) before the tool runs and a commit (the result encoded to JSON, one ``UPDATE``) after, each on a
worker thread so the event loop never waits on the disk. The floor does the same two statements on its own
connection to a file with the same pragmas (WAL, synchronous=NORMAL), also on worker threads, with a result
dict built and dumped by hand. Target: at most 1.5x the floor. A second figure runs whole agent calls of
an idempotent tool (journaled) against the same tool unjournaled, both on an SQLite store. Timing never
fails the script; the journal's contents are checked.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import tempfile
import time
from pathlib import Path

from agentkit import Agent, AssistantMessage, ToolCall, ToolResultsMessage, tool
from agentkit.messages import Message, TextPart, ToolResult
from agentkit.runs import SQLiteRunStore, effect_key
from agentkit.runs._codec import encode_results
from agentkit.testing import FunctionInfo, FunctionModel

TARGET = 1.5


@tool(idempotent=True)
def charge(order: str) -> str:
    """Charge an order."""
    return f"charged {order}"


async def journal_writes(store: SQLiteRunStore, n: int, run_id: str = "bench-run") -> float:
    """Seconds per call for reserve + commit of an encoded result, as the pipeline does them."""
    tools = {"charge": charge}
    start = time.perf_counter()
    for i in range(n):
        key = effect_key(run_id, f"c{i}")
        found = await store.reserve(key, run_id=run_id, call_id=f"c{i}", tool="charge")
        assert found is None
        result = ToolResult(f"c{i}", "charge", [TextPart("charged o-1")], output="charged o-1")
        await store.commit(key, encode_results([result], tools)[0])
    return (time.perf_counter() - start) / n


async def by_hand(path: Path, n: int) -> float:
    """Seconds per call for the same INSERT and UPDATE on a plain connection, on worker threads."""
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute(
        "CREATE TABLE effects (effect_key TEXT PRIMARY KEY, run_id TEXT, call_id TEXT, tool TEXT, state TEXT NOT NULL, "
        "result TEXT, reserved_at REAL NOT NULL, committed_at REAL)"
    )
    start = time.perf_counter()
    for i in range(n):
        key = effect_key("bench-run", f"c{i}")
        await asyncio.to_thread(
            db.execute,
            "INSERT INTO effects (effect_key, run_id, call_id, tool, state, reserved_at) VALUES (?, ?, ?, ?, "
            "'reserved', ?) ON CONFLICT (effect_key) DO NOTHING",
            (key, "bench-run", f"c{i}", "charge", time.time()),
        )
        text = json.dumps({"call_id": f"c{i}", "name": "charge", "content": [{"kind": "text", "text": "charged o-1"}]})
        await asyncio.to_thread(
            db.execute,
            "UPDATE effects SET state = 'committed', result = ?, committed_at = ? WHERE effect_key = ?",
            (text, time.time(), key),
        )
    elapsed = (time.perf_counter() - start) / n
    db.close()
    return elapsed


def calls_script(n: int) -> FunctionModel:
    def script(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
        if isinstance(messages[-1], ToolResultsMessage):
            return "done"
        return AssistantMessage(tool_calls=[ToolCall(f"c{i}", "charge", {"order": f"o-{i}"}) for i in range(n)])

    return FunctionModel(script)


async def agent_calls(store: SQLiteRunStore, journaled: bool, n: int, rounds: int) -> float:
    """Seconds per tool call of a run making `n` parallel calls (journaled or not), best of `rounds`."""
    tool_ = charge if journaled else tool(charge.fn, id="charge")
    assert tool_.journaled is journaled
    agent = Agent(model=calls_script(n), tools=[tool_], store=store)
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        result = await agent.generate("charge them")
        best = min(best, time.perf_counter() - start)
        assert result.text == "done" and len(result.tool_results) == n
    return best / n


async def main(quick: bool) -> None:
    n = 200 if quick else 2000
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        with SQLiteRunStore(base / "journal.sqlite3") as store:
            await journal_writes(store, 20, "warm-up")  # warm: the connection, the schema, the codec's adapters
            ours = await journal_writes(store, n)
            entry = await store.effect(effect_key("bench-run", f"c{n - 1}"))
            assert entry is not None and entry.state == "committed" and entry.result["name"] == "charge"
        floor = await by_hand(base / "hand.sqlite3", n)
        print(
            f"journal reserve + commit: {ours * 1e6:.0f} us per call; by hand: {floor * 1e6:.0f} us "
            f"-> {ours / floor:.2f}x the floor (target <= {TARGET}x)"
        )
        calls, rounds = (20, 3) if quick else (50, 10)
        with SQLiteRunStore(base / "agent.sqlite3") as store:
            plain = await agent_calls(store, False, calls, rounds)
            journaled = await agent_calls(store, True, calls, rounds)
        print(
            f"agent call, journaled: {journaled * 1e6:.0f} us; not journaled: {plain * 1e6:.0f} us "
            f"(+{(journaled - plain) * 1e6:.0f} us per call, {journaled / plain:.2f}x)"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    asyncio.run(main(parser.parse_args().quick))
