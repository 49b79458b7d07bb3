"""A tool that needs approval: the run stops before calling it, and `resume` continues with the decision.

`requires_approval` is a bool or a function of the validated arguments (here: refunds above 100 need a
human). The pending call's display payload is shaped by the tool's transform; the application sees the
real arguments to decide on. Offline by default (a `FunctionModel` plays the model).
"""

from __future__ import annotations

import asyncio
from typing import Any

from agentkit import ToolCall, ToolTransform, tool
from agentkit.agent import Agent, Approval
from agentkit.messages import AssistantMessage, Message, ToolResultsMessage
from agentkit.testing import FunctionInfo, FunctionModel

REFUNDS: list[tuple[str, int]] = []


def mask(args: dict[str, Any]) -> dict[str, Any]:
    """Show only the last four digits of the account."""
    return {**args, "account": "****" + args["account"][-4:]}


@tool(requires_approval=lambda args: args["amount"] > 100, transform=ToolTransform(approval=mask, input=mask))
def refund(account: str, amount: int) -> str:
    """Refund an amount to a customer's account.

    Args:
        account: The account number.
        amount: The amount, in euros.
    """
    REFUNDS.append((account, amount))
    return f"refunded {amount} EUR"


def model(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
    """Plays the model: asks for two refunds, then reports each result."""
    last = messages[-1]
    if isinstance(last, ToolResultsMessage):
        return "; ".join(f"{r.call_id}: {'FAILED ' if r.is_error else ''}{r.text}" for r in last.results)
    return AssistantMessage(
        tool_calls=[
            ToolCall("small", "refund", {"account": "DE0012345678", "amount": 40}),
            ToolCall("large", "refund", {"account": "DE0087654321", "amount": 900}),
        ]
    )


agent = Agent(id="support", model=FunctionModel(model), tools=[refund])


async def main() -> None:
    """Run until approval is needed, decide, resume."""
    result = await agent.generate("Refund both orders.")
    assert result.status == "awaiting_approval"
    assert REFUNDS == []  # nothing ran: not even the small refund of the same turn
    for pending in result.pending:
        print(f"approval needed: {pending.tool_name} {pending.payload}")  # masked for display

    # a human decides; a denial's reason reaches the model as an error result
    decisions = {p.call_id: Approval(False, "over the limit") for p in result.pending}
    resumed = await agent.resume(result, decisions)
    print(resumed.text)
    assert resumed.status == "complete"
    assert REFUNDS == [("DE0012345678", 40)]
    denied = next(r for r in resumed.tool_results if r.call_id == "large")
    assert denied.error_kind == "denied"


if __name__ == "__main__":
    asyncio.run(main())
