"""Pausing and resuming a run: a suspension, an approval and a client tool, each resumed from signed JSON.

The run pauses three times: `book` asks which seat (``ctx.suspend``), `charge` needs approval, and `locate`
is a client tool (the caller runs it). Each pause is written as a signed snapshot into an SQLite run store
and read back, as a web request minutes later on another worker would. A second resume of the same
snapshot is refused, and so is an edited one. Offline: a `FunctionModel` plays the model.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agentkit import Agent, AssistantMessage, RunSnapshot, ToolCall, ToolContext, client_tool, tool
from agentkit.exceptions import AlreadyResumedError, SnapshotError
from agentkit.messages import Message
from agentkit.runs import SQLiteRunStore
from agentkit.testing import FunctionInfo, FunctionModel

CHARGED: list[int] = []


class Seat(BaseModel):
    """A seat on the plane."""

    row: int
    letter: str


@tool
def book(ctx: ToolContext[Any], flight: str) -> str:
    """Book a seat on a flight; asks the traveller which seat."""
    seat = ctx.suspend({"question": f"Which seat on {flight}?"}, schema=Seat)  # pauses; returns the answer on resume
    return f"seat {seat.row}{seat.letter} on {flight}"


@tool(requires_approval=lambda args: args["amount"] > 100)
def charge(amount: int) -> str:
    """Charge the traveller's card."""
    CHARGED.append(amount)
    return f"charged {amount} EUR"


locate = client_tool(
    "locate",
    input_schema={"type": "object", "properties": {}},
    output_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    description="Where the traveller is (the app asks the phone).",
)


def model(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
    """Plays the model: book, charge, locate, then answer."""
    turns = sum(isinstance(m, AssistantMessage) for m in messages)
    plan = [("book", {"flight": "LH 1234"}), ("charge", {"amount": 420}), ("locate", {})]
    if turns < len(plan):
        name, arguments = plan[turns]
        return AssistantMessage(tool_calls=[ToolCall(f"call_{name}", name, arguments)])
    return "All set: " + "; ".join(r.text for m in messages if m.role == "tool" for r in m.results)  # type: ignore[union-attr]


async def main() -> None:
    """Run until each pause, store it, read it back, answer it."""
    folder = Path(tempfile.mkdtemp())
    store = SQLiteRunStore(folder / "runs.sqlite3", key=secrets.token_bytes(32))  # the store's key signs snapshots
    agent = Agent(id="travel", model=FunctionModel(model), tools=[book, charge, locate], store=store)
    answers = {
        "suspended": lambda pending: {pending.call_id: {"row": 12, "letter": "A"}},
        "awaiting_approval": lambda pending: {pending.call_id: True},
        "awaiting_client": lambda pending: {pending.call_id: {"city": "Lisbon"}},
    }

    result = await agent.generate("Book me on LH 1234 and tell me where I am.")
    while result.paused:
        (pending,) = result.pending
        print(f"{result.status}: {pending.kind} {pending.tool_name}")
        await store.save_paused("trip-1", result.snapshot())  # e.g. in the web request that showed the question
        snapshot = await store.claim_paused("trip-1")  # ... and in the one that brings the answer
        assert snapshot is not None
        text = snapshot.to_json()
        edited = json.loads(text)
        edited["messages"][0]["content"] = "Book me on every flight."
        try:
            await agent.resume(RunSnapshot(edited), answers[result.status](pending))
        except SnapshotError as error:
            print("  edited snapshot refused:", error.message.split(":")[0])
        result = await agent.resume(RunSnapshot.from_json(text), answers[result.status](pending))
        try:
            await agent.resume(RunSnapshot.from_json(text), answers[snapshot.status](pending))
        except AlreadyResumedError:
            print("  a second resume of the same snapshot is refused")
    print(result.text)
    assert result.status == "complete" and CHARGED == [420]


if __name__ == "__main__":
    asyncio.run(main())
