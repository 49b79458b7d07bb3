"""A scripted agent for the pause/resume property test, and the worker process that resumes its snapshots.

The script is a list of turns, each a list of call kinds: ``plain`` (runs), ``gated`` (needs approval),
``ask`` (suspends for an integer). The uninterrupted twin of the agent approves nothing and suspends for
nothing: ``ask`` computes the answer itself (``n * 10``), the very answer the paused runs are given, so
both must end with the same history.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from agentkit import Agent, AssistantMessage, ToolCall, ToolContext, tool
from agentkit.limits import RunLimits
from agentkit.messages import Message
from agentkit.runs import RunSnapshot, SQLiteRunStore
from agentkit.runs._codec import encode_messages
from agentkit.testing import FunctionInfo, FunctionModel

from .durable_helpers import _record

Script = list[list[str]]


def answer_for(kind: str, n: int) -> Any:
    return True if kind == "gated" else n * 10


def make_agent(script: Script, ledger: str, *, interrupted: bool, store: Any = None) -> Agent:
    @tool
    def plain(ctx: ToolContext[Any], n: int) -> str:
        """Run at once."""
        _record(ledger, f"{ctx.call_id}")
        return f"plain {n}"

    @tool(requires_approval=interrupted)
    def gated(ctx: ToolContext[Any], n: int) -> str:
        """Needs approval (in the interrupted agent)."""
        _record(ledger, f"{ctx.call_id}")
        return f"gated {n}"

    @tool
    def ask(ctx: ToolContext[Any], n: int) -> str:
        """Asks for an integer (the interrupted agent suspends for it)."""
        data = ctx.suspend({"n": n}, schema={"type": "integer"}) if interrupted else n * 10
        _record(ledger, f"{ctx.call_id}")
        return f"ask {n}={data}"

    def turn(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
        index = sum(isinstance(m, AssistantMessage) for m in messages)
        if index >= len(script):
            return f"done after {index} turns"
        return AssistantMessage(
            tool_calls=[ToolCall(f"t{index}_{i}", kind, {"n": index * 10 + i}) for i, kind in enumerate(script[index])]
        )

    return Agent(
        id="prop", model=FunctionModel(turn), tools=[plain, gated, ask], store=store, limits=RunLimits(max_steps=20)
    )


def answers(snapshot: RunSnapshot) -> dict[str, Any]:
    """The answer to every pending call: approve, or the integer an ``ask`` wants."""
    return {p.call_id: answer_for(p.tool_name, int(p.arguments["n"])) for p in snapshot.pending}


def resume_once(agent: Agent, text: str) -> tuple[str, str]:
    """Resume a snapshot once: ``("paused", snapshot JSON)`` or ``("done", history JSON)``."""
    snapshot = RunSnapshot.from_json(text)
    result = asyncio.run(agent.resume(snapshot, answers(snapshot)))
    if result.paused:
        return "paused", result.snapshot().to_json()
    return "done", json.dumps(encode_messages(result.messages, agent.tools))


def resume_in_worker(script: Script, ledger: str, store_path: str, text: str) -> tuple[str, str]:
    """`resume_once` in a worker process, with the agent built there from the script."""
    agent = make_agent(script, ledger, interrupted=True, store=SQLiteRunStore(store_path))
    return resume_once(agent, text)
