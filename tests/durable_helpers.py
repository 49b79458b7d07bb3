"""Agents and worker-process entry points for the durable-run tests (importable by spawned processes).

Side effects are counted through a ledger file (one line per call that really ran), never through timing
or shared memory, so "the pending call ran once" is checked across processes.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agentkit import Agent, AssistantMessage, ToolCall, ToolContext, ToolResultsMessage, tool
from agentkit.messages import Message
from agentkit.runs import RunSnapshot, RunStore, SQLiteRunStore
from agentkit.testing import FunctionInfo, FunctionModel


class Receipt(BaseModel):
    account: str
    amount: int
    at: dt.datetime


class Seat(BaseModel):
    row: int
    letter: str


def ledger_lines(path: str | Path) -> list[str]:
    """The calls that ran, sorted (concurrent calls of one turn finish in any order)."""
    file = Path(path)
    return sorted(file.read_text().splitlines()) if file.exists() else []


def _record(ledger: str, line: str) -> None:
    with open(ledger, "a", encoding="utf-8") as handle:  # O_APPEND: whole lines, even across processes
        handle.write(line + "\n")


def make_tools(ledger: str) -> list[Any]:
    @tool(requires_approval=lambda args: args["amount"] > 100)
    def refund(account: str, amount: int) -> Receipt:
        """Refund an amount to an account."""
        _record(ledger, f"refund {account} {amount}")
        return Receipt(account=account, amount=amount, at=dt.datetime(2026, 1, 2, 3, 4, 5))

    @tool
    def book(ctx: ToolContext[Any], flight: str) -> str:
        """Book a seat on a flight (asks which seat)."""
        seat = ctx.suspend({"question": f"Which seat on {flight}?"}, schema=Seat)
        _record(ledger, f"book {flight} {seat.row}{seat.letter}")
        return f"booked {flight} seat {seat.row}{seat.letter}"

    @tool
    def note(text: str) -> str:
        """Write a note."""
        _record(ledger, f"note {text}")
        return f"noted {text}"

    return [refund, book, note]


def refund_script(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
    """Asks for a large refund (needs approval) and a note in one turn, then reports."""
    last = messages[-1]
    if isinstance(last, ToolResultsMessage):
        return "; ".join(f"{r.name}: {r.text}" for r in last.results)
    return AssistantMessage(
        tool_calls=[
            ToolCall("c_refund", "refund", {"account": "DE01", "amount": 500}),
            ToolCall("c_note", "note", {"text": "refund asked"}),
        ]
    )


def make_agent(ledger: str, store: RunStore | None = None, key: Any = None) -> Agent:
    if key is not None:  # the store's key signs the agent's snapshots
        from agentkit.runs import MemoryRunStore

        store = store if store is not None else MemoryRunStore()
        store.key = key  # type: ignore[attr-defined]
    return Agent(id="support", model=FunctionModel(refund_script), tools=make_tools(ledger), store=store)


# ---- worker processes ------------------------------------------------------------------------------


def resume_worker(snapshot_json: str, store: Any, ledger: str, start: Any, key: Any = None) -> str:
    """Resume the snapshot once all workers are ready; report how it went (``ok`` or the error's class).

    `store` is an SQLite path, or a manager's proxy of a shared `SyncMemoryStore`.
    """
    run_store = SQLiteRunStore(store) if isinstance(store, str) else _ProxyStore(store)
    agent = make_agent(ledger, run_store, key)
    snapshot = RunSnapshot.from_json(snapshot_json)
    start.wait()
    try:
        result = asyncio.run(agent.resume(snapshot, {"c_refund": True}))
    except Exception as exc:  # the test reads the class name
        return f"{type(exc).__name__}: {exc}"
    return f"ok {result.status}"


class _ProxyStore:
    """A `RunStore` whose claims go to one `MemoryRunStore` in a manager process (shared by the workers)."""

    def __init__(self, proxy: Any) -> None:
        self.proxy = proxy
        self.key = None

    async def claim(self, pause_id: str) -> bool:
        return bool(await asyncio.to_thread(self.proxy.claim, pause_id))

    async def save_paused(self, run_id: str, snapshot: RunSnapshot) -> None:
        raise NotImplementedError

    async def paused(self, run_id: str) -> RunSnapshot | None:
        raise NotImplementedError

    async def claim_paused(self, run_id: str) -> RunSnapshot | None:
        raise NotImplementedError

    async def save_history(self, message_id: str, messages: list[Message]) -> None:
        raise NotImplementedError

    async def history(self, message_id: str) -> list[Message] | None:
        raise NotImplementedError


class SyncMemoryStore:
    """A `MemoryRunStore` behind plain methods, for a multiprocessing manager to serve (one thread per client)."""

    def __init__(self) -> None:
        from agentkit.runs import MemoryRunStore

        self.store = MemoryRunStore()

    def claim(self, pause_id: str) -> bool:
        return asyncio.run(self.store.claim(pause_id))
