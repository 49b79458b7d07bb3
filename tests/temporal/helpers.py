"""Agents for the Temporal tests, and a worker process entry point (``python -m tests.temporal.helpers ...``).

Every tool writes what it does to a ledger file, so "the call ran once" is checked across worker processes.
"""

from __future__ import annotations

import asyncio
import sys
import time
from datetime import timedelta
from typing import Any

from temporalio.common import RetryPolicy

from agentkit import Agent, AssistantMessage, RunLimits, ToolCall, ToolResultsMessage, UserMessage, tool
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

    @tool
    def ship(order: str) -> str:
        """Ship an order (slow)."""
        _record(ledger, f"ship started {order}")
        time.sleep(slow)
        _record(ledger, f"ship done {order}")
        return f"shipped {order}"

    return Agent(id="shipping", model=FunctionModel(shipping_script), tools=[charge, ship])


def durable_shipping(ledger: str, slow: float, *, once: bool = False) -> TemporalAgent:
    """The shipping agent with the default options; `once`: `ship` gets one attempt (a refund-like tool)."""
    options = {"ship": ActivityOptions(retry_policy=RetryPolicy(maximum_attempts=1))} if once else None
    return TemporalAgent(shipping_agent(ledger, slow), task_queue="shipping", tools=options)


def durable_support(ledger: str) -> TemporalAgent:
    agent = Agent(id="support-t", model=FunctionModel(refund_script), tools=make_tools(ledger))
    return TemporalAgent(agent, task_queue="support-t", tools={"refund": ActivityOptions()})


PAGES = 12


def pages_script(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
    """Read `PAGES` pages, one per turn; each turn checks it was sent the whole conversation so far."""
    turns = sum(isinstance(m, AssistantMessage) for m in messages)
    assert len(messages) == 1 + 2 * turns, f"turn {turns} was sent {len(messages)} messages"
    read = [r.text for m in messages if isinstance(m, ToolResultsMessage) for r in m.results]
    assert read == [f"page {n}: " + "x" * 3000 for n in range(turns)], "a page is missing or out of order"
    if turns == PAGES:
        return f"read {turns} pages"
    return AssistantMessage(f"Reading page {turns}.", [ToolCall(f"p{turns}", "read_page", {"page": turns})])


def durable_pages(limits: Any = None) -> TemporalAgent:
    @tool
    def read_page(page: int) -> str:
        """Read one page."""
        return f"page {page}: " + "x" * 3000

    agent = Agent(
        id="pages-t", model=FunctionModel(pages_script), tools=[read_page], limits=RunLimits(max_steps=PAGES + 2)
    )
    return TemporalAgent(agent, task_queue="pages-t", limits=limits)


async def _serve(address: str, which: str, ledger: str, slow: float) -> None:
    from temporalio.client import Client

    from agentkit.temporal import TemporalLimits

    options: dict[str, Any] = {}
    if which == "shipping":
        durable = durable_shipping(ledger, slow)
    elif which == "shipping-once":
        durable = durable_shipping(ledger, slow, once=True)
    elif which == "pages-activities":  # activities only: the workflow runs in another process
        durable = durable_pages(TemporalLimits(payload=8 * 1024))  # pages of the history query hold ~1 message
        options["workflows"] = []
    else:
        durable = durable_support(ledger)
    client = await Client.connect(address)
    # a short sticky timeout: when this worker is killed, its workflow tasks move to the next worker quickly
    async with durable.worker(client, sticky_queue_schedule_to_start_timeout=timedelta(seconds=1), **options):
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
