"""Code mode: the model writes one program that calls three tools; the second needs approval.

The program runs in the pydantic-monty sandbox (never in this interpreter). Its first call runs, its
second waits for a person: the whole run pauses, the program's state goes into the signed snapshot, and
a resume from that JSON (in this process here; any process works) continues the program where it
stopped. The first call is not made again. Offline: a `FunctionModel` plays the model.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

from agentkit import ToolCall, ToolTransform, tool
from agentkit.agent import Agent
from agentkit.codemode import CodeLimits, CodeMode
from agentkit.messages import AssistantMessage, Message, ToolResultsMessage
from agentkit.runs import MemoryRunStore, RunSnapshot
from agentkit.testing import FunctionInfo, FunctionModel

RAN: list[str] = []


@tool
def find_order(order_id: str) -> dict[str, Any]:
    """Look an order up.

    Args:
        order_id: The order's id, e.g. "A-17".
    """
    RAN.append("find_order")
    return {"id": order_id, "total": 84.0, "email": "ada@example.com"}


@tool(requires_approval=True, transform=ToolTransform(input=lambda args: {**args, "email": "***"}))
def refund(order_id: str, amount: float, email: str) -> str:
    """Refund an order (a person approves each refund)."""
    RAN.append("refund")
    return f"refunded {amount:.2f} on {order_id}"


@tool
def send_mail(to: str, text: str) -> str:
    """Mail a customer."""
    RAN.append("send_mail")
    return f"mailed {to}"


PROGRAM = """
order = await find_order("A-17")
try:
    status = await refund(order["id"], order["total"], order["email"])
except PermissionError:
    status = "refund declined"
await send_mail(order["email"], status)
status
"""


def model(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
    """Plays the model: one program, then the program's result as the answer."""
    last = messages[-1]
    if isinstance(last, ToolResultsMessage):
        return last.results[0].text
    return AssistantMessage(tool_calls=[ToolCall("prog", "run_python", {"code": PROGRAM})])


agent = Agent(
    id="shop",
    model=FunctionModel(model),
    tools=[find_order, refund, send_mail],
    code_mode=CodeMode(limits=CodeLimits(timeout=2.0)),
    store=MemoryRunStore(key=secrets.token_bytes(32)),
)


async def main() -> None:
    """Pause inside the program, resume it from JSON, and check each tool ran once."""
    paused = await agent.generate("Refund order A-17 and tell the customer.")
    assert paused.status == "awaiting_approval" and RAN == ["find_order"]
    [pending] = paused.pending
    print(f"approval needed: {pending.tool_name} {pending.payload} (call {pending.call_id})")
    text = paused.snapshot().to_json()  # store it anywhere; the program's state is inside, signed

    done = await agent.resume(RunSnapshot.from_json(text), {pending.call_id: True})
    print(done.text)
    assert done.status == "complete"
    assert RAN == ["find_order", "refund", "send_mail"]  # each tool once: nothing ran twice


if __name__ == "__main__":
    asyncio.run(main())
