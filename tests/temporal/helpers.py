"""Agents for the Temporal tests, and a worker process entry point (``python -m tests.temporal.helpers ...``).

Every tool writes what it does to a ledger file, so "the call ran once" is checked across worker processes.
"""

from __future__ import annotations

import asyncio
import sys
import time
from datetime import timedelta
from typing import Any

from agentkit import Agent, AssistantMessage, ToolCall, ToolResultsMessage, UserMessage, tool
from agentkit.messages import Message
from agentkit.temporal import ActivityOptions, TemporalAgent
from agentkit.testing import FunctionInfo, FunctionModel

from ..durable_helpers import _record, make_tools, refund_script


def shipping_script(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
    """Charge, then ship (slow), then report: three model turns, two tool calls in sequence."""
    last = messages[-1]
    if isinstance(last, UserMessage):
        return AssistantMessage(tool_calls=[ToolCall("c_charge", "charge", {"order": "o-1", "amount": 30})])
    assert isinstance(last, ToolResultsMessage)
    if last.results[0].name == "charge":
        return AssistantMessage(tool_calls=[ToolCall("c_ship", "ship", {"order": "o-1"})])
    return f"done: {last.results[0].text}"


def shipping_agent(ledger: str, slow: float) -> Agent:
    @tool
    def charge(order: str, amount: int) -> str:
        """Charge the customer for an order."""
        _record(ledger, f"charge {order} {amount}")
        return f"charged {amount}"

    @tool(timeout=slow + 2)
    def ship(order: str) -> str:
        """Ship an order (slow)."""
        _record(ledger, f"ship started {order}")
        time.sleep(slow)
        _record(ledger, f"ship done {order}")
        return f"shipped {order}"

    return Agent(id="shipping", model=FunctionModel(shipping_script), tools=[charge, ship])


def durable_shipping(ledger: str, slow: float) -> TemporalAgent:
    # an attempt of `ship` may take slow + 2 s: a killed worker's attempt is retried on another worker after that
    attempt = ActivityOptions(start_to_close_timeout=timedelta(seconds=slow + 2))
    return TemporalAgent(shipping_agent(ledger, slow), task_queue="shipping", tools={"ship": attempt})


def durable_support(ledger: str) -> TemporalAgent:
    agent = Agent(id="support-t", model=FunctionModel(refund_script), tools=make_tools(ledger))
    return TemporalAgent(agent, task_queue="support-t", tools={"refund": ActivityOptions()})


async def _serve(address: str, which: str, ledger: str, slow: float) -> None:
    from temporalio.client import Client

    durable = durable_shipping(ledger, slow) if which == "shipping" else durable_support(ledger)
    client = await Client.connect(address)
    # a short sticky timeout: when this worker is killed, its workflow tasks move to the next worker quickly
    async with durable.worker(client, sticky_queue_schedule_to_start_timeout=timedelta(seconds=1)):
        print("worker ready", flush=True)
        await asyncio.Event().wait()


async def _approve(address: str, workflow_id: str, ledger: str) -> None:
    from temporalio.client import Client

    run = durable_support(ledger).get_run(await Client.connect(address), workflow_id)
    pending = await run.pending()
    await run.resume({p.call_id: True for p in pending})
    print("approved", [p.call_id for p in pending], flush=True)


def main(argv: list[str]) -> Any:
    command, address, *rest = argv
    if command == "worker":
        which, ledger, slow = rest
        return asyncio.run(_serve(address, which, ledger, float(slow)))
    if command == "approve":
        workflow_id, ledger = rest
        return asyncio.run(_approve(address, workflow_id, ledger))
    raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
