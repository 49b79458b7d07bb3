"""A process that resumes a paused refund and kills itself (SIGKILL) at one point of the effect journal.

``python -m tests.runs.journal_helpers resume|recover SNAPSHOT STORE LEDGER POINT IDEMPOTENT``

POINT is where the process is killed while the approved refund runs: ``before_reserve``, ``after_reserve``,
``inside`` (in the function, before its side effect), ``before_commit`` (after the side effect),
``after_commit``, or ``none``. The refund's side effect is a line ``<effect key> refund <order>`` in the
ledger. IDEMPOTENT (``yes``/``no``) marks the tool. ``recover`` continues the killed resume
(`Agent.recover`) and prints the result as JSON.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from agentkit import Agent, AssistantMessage, ToolCall, ToolContext, ToolResultsMessage, tool
from agentkit.messages import Message
from agentkit.runs import JournalEntry, RunSnapshot, SQLiteRunStore
from agentkit.testing import FunctionInfo, FunctionModel

POINTS = ("before_reserve", "after_reserve", "inside", "before_commit", "after_commit")


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


class CrashingStore(SQLiteRunStore):
    """An SQLite run store whose process is killed just before or after one journal write."""

    def __init__(self, path: str, point: str) -> None:
        super().__init__(path)
        self.point = point

    async def reserve(self, effect_key: str, *, run_id: str, call_id: str, tool: str) -> JournalEntry | None:
        if self.point == "before_reserve":
            _die()
        found = await super().reserve(effect_key, run_id=run_id, call_id=call_id, tool=tool)
        if self.point == "after_reserve":
            _die()
        return found

    async def commit(self, effect_key: str, result: Any) -> None:
        if self.point == "before_commit":
            _die()
        await super().commit(effect_key, result)
        if self.point == "after_commit":
            _die()


def _script(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
    last = messages[-1]
    if isinstance(last, ToolResultsMessage):
        return f"done: {last.results[0].text}"
    return AssistantMessage(tool_calls=[ToolCall("c_refund", "refund", {"order": "o-1"})])


def refund_agent(ledger: str, store: SQLiteRunStore, *, idempotent: bool | None = None, point: str = "none") -> Agent:
    """An agent whose one call is a refund needing approval; the refund logs its effect key to `ledger`."""

    @tool(requires_approval=True, idempotent=idempotent)
    def refund(ctx: ToolContext, order: str) -> str:
        """Refund an order."""
        if point == "inside":
            _die()
        with Path(ledger).open("a") as handle:  # the side effect: a payment service keyed by the effect key
            handle.write(f"{ctx.effect_key} refund {order}\n")
        return f"refunded {order}"

    return Agent(id="journaled", model=FunctionModel(_script), tools=[refund], store=store)


def main(argv: list[str]) -> None:
    command, snapshot_file, store_path, ledger, point, idempotent = argv
    snapshot = RunSnapshot.from_json(Path(snapshot_file).read_text())
    flag = idempotent == "yes" or None
    if command == "resume":
        agent = refund_agent(ledger, CrashingStore(store_path, point), idempotent=flag, point=point)
        result = asyncio.run(agent.resume(snapshot, {"c_refund": True}))
    elif command == "recover":
        agent = refund_agent(ledger, SQLiteRunStore(store_path), idempotent=flag)
        result = asyncio.run(agent.recover(snapshot, {"c_refund": True}))
    else:
        raise SystemExit(f"unknown command {command!r}")
    [call] = result.tool_results
    print(json.dumps({"status": result.status, "text": result.text, "error_kind": call.error_kind}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
