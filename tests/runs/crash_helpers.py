"""A process that resumes a paused run from an SQLite store: ``python -m tests.runs.crash_helpers``.

``resume SNAPSHOT_FILE STORE LEDGER HANG``: resumes the snapshot with the refund approved. The refund writes
``refund started`` to the ledger, then hangs when HANG is ``hang`` (the test kills the process there), else
finishes. Prints the result's status.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

from agentkit import Agent, AssistantMessage, ToolCall, ToolResultsMessage, tool
from agentkit.messages import Message
from agentkit.runs import RunSnapshot, RunStore, SQLiteRunStore
from agentkit.testing import FunctionInfo, FunctionModel


def _script(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
    last = messages[-1]
    if isinstance(last, ToolResultsMessage):
        return f"done: {last.results[0].text}"
    return AssistantMessage(tool_calls=[ToolCall("c_refund", "refund", {"amount": 500})])


def crash_agent(ledger: str, store: RunStore, hang: bool = False) -> Agent:
    @tool(requires_approval=True)
    def refund(amount: int) -> str:
        """Refund an amount."""
        with Path(ledger).open("a") as handle:
            handle.write("refund started\n")
        if hang:
            time.sleep(600)  # the test kills the process here
        return f"refunded {amount}"

    return Agent(id="crashy", model=FunctionModel(_script), tools=[refund], store=store)


def main(argv: list[str]) -> Any:
    command, snapshot_file, store_path, ledger, hang = argv
    if command != "resume":
        raise SystemExit(f"unknown command {command!r}")
    agent = crash_agent(ledger, SQLiteRunStore(store_path), hang == "hang")
    snapshot = RunSnapshot.from_json(Path(snapshot_file).read_text())
    result = asyncio.run(agent.resume(snapshot, {"c_refund": True}))
    print(result.status, flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
