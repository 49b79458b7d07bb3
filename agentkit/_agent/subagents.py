"""An agent as another agent's tool: its events and its usage travel up to the parent run.

The subagent's tool reports to the parent through `ToolContext.emit`, with two private messages the
parent's loop recognises: `Forwarded` (one of the subagent's stream events) and `SubagentUsage` (what
the subagent's run consumed, added to the parent's usage).
"""

from __future__ import annotations as _annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..context import ToolContext
from ..events import AgentEvent
from ..exceptions import ToolError
from ..messages import Usage
from ..tools import Tool

if TYPE_CHECKING:
    from ..agent import Agent

__all__ = ["Forwarded", "ProgressSink", "SubagentUsage", "subagent_tool"]


@dataclass(frozen=True)
class SubagentUsage:
    """A subagent run's usage, reported to the parent run through `ToolContext.emit`."""

    usage: Usage


@dataclass(frozen=True)
class ProgressSink:
    """`ToolContext.on_progress` for a call made by a run; `streaming` tells subagents to stream too."""

    deliver: Callable[[Any], None]
    streaming: bool

    def __call__(self, value: Any) -> None:
        self.deliver(value)


@dataclass(frozen=True)
class Forwarded:
    """A subagent's event on its way up through `ToolContext.emit`."""

    agent_id: str
    event: AgentEvent


def subagent_tool(sub: Agent) -> Tool[..., Any]:
    """`sub` as a tool taking ``{"prompt": str}`` and returning its final text (see `Agent.as_tool`)."""

    async def run_subagent(ctx: ToolContext[Any], prompt: str) -> str:  # noqa: D417 - ctx is injected
        """Delegate a task to another agent and get its answer.

        Args:
            prompt: The complete task for the agent, with every detail it needs.
        """
        if isinstance(ctx.on_progress, ProgressSink) and ctx.on_progress.streaming:
            stream = sub.stream(prompt, deps=ctx.deps)
            async for event in stream:
                ctx.emit(Forwarded(sub.id, event))
            result = stream.result
        else:
            result = await sub.generate(prompt, deps=ctx.deps)
        ctx.emit(SubagentUsage(result.usage))
        if result.status == "awaiting_approval":
            names = ", ".join(repr(p.tool_name) for p in result.pending)
            raise ToolError(f"Agent {sub.id!r} stopped: its call(s) to {names} need approval, not available here.")
        return result.text

    description = sub.description or sub.instructions or f"Ask the agent {sub.name!r} to do a task."
    return Tool(run_subagent, id=sub.id, description=description)
