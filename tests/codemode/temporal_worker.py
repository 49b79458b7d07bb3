"""A code-mode agent on Temporal, and its worker process (``python -m tests.codemode.temporal_worker ...``).

Its tools write what they do to a ledger file, so "the call ran once" is checked across worker processes.
"""

from __future__ import annotations

import asyncio
import sys
import time
from datetime import timedelta
from typing import Any

from agentkit import Agent, AssistantMessage, ToolCall, ToolResultsMessage, tool
from agentkit.codemode import CodeMode
from agentkit.temporal import ActivityOptions, TemporalAgent
from agentkit.testing import FunctionModel

from ..durable_helpers import _record

PROGRAM = "a = await step(1)\nb = await slow(a)\n[a, b, await step(b)]"


def durable_program(ledger: str) -> TemporalAgent:
    """A program: a quick call, a slow one (a worker is killed during it), a quick one."""

    @tool
    def step(n: int) -> int:
        """n plus one."""
        _record(ledger, f"step {n}")
        return n + 1

    @tool
    def slow(n: int) -> int:
        """n times ten, slowly."""
        _record(ledger, f"slow started {n}")
        time.sleep(2)
        _record(ledger, f"slow done {n}")
        return n * 10

    def turn(messages: Any, info: Any) -> Any:
        if isinstance(messages[-1], ToolResultsMessage):
            return messages[-1].results[0].text
        return AssistantMessage(tool_calls=[ToolCall("p1", "run_python", {"code": PROGRAM})])

    agent = Agent(id="codemode-crash", model=FunctionModel(turn), tools=[step, slow], code_mode=CodeMode())
    beat = ActivityOptions(heartbeat_timeout=timedelta(seconds=1))
    return TemporalAgent(agent, task_queue="codemode-crash", tools={"slow": beat})


async def _serve(address: str, ledger: str) -> None:
    from temporalio.client import Client

    client = await Client.connect(address)
    # a short sticky timeout: when this worker is killed, its workflow tasks move to the next worker quickly
    async with durable_program(ledger).worker(client, sticky_queue_schedule_to_start_timeout=timedelta(seconds=1)):
        print("worker ready", flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(_serve(sys.argv[1], sys.argv[2]))
