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
from ..exceptions import AgentkitError, ModelAPIError, ToolError
from ..messages import ModelResponse, Usage
from ..tools import Tool, ToolTransform

if TYPE_CHECKING:
    from ..agent import Agent

__all__ = ["Forwarded", "ProgressSink", "SubagentUsage", "subagent_tool"]


@dataclass(frozen=True)
class SubagentUsage:
    """A subagent run's usage and model responses, reported to the parent run through `ToolContext.emit`."""

    usage: Usage
    responses: tuple[ModelResponse, ...] = ()


@dataclass(frozen=True)
class ProgressSink:
    """`ToolContext.on_progress` for a call made by a run.

    `streaming` tells a subagent to stream too; `policy` is the run's transform policy, which the
    subagent's run applies beneath its own so the parent's redaction covers the forwarded events.
    """

    deliver: Callable[[Any], None]
    streaming: bool
    policy: ToolTransform | None = None

    def __call__(self, value: Any) -> None:
        self.deliver(value)


@dataclass(frozen=True)
class Forwarded:
    """A subagent's event on its way up through `ToolContext.emit`."""

    agent_id: str
    event: AgentEvent


def subagent_tool(sub: Agent[Any, Any]) -> Tool[..., Any]:
    """`sub` as a tool taking ``{"prompt": str}`` and returning its final text (see `Agent.as_tool`)."""

    async def run_subagent(ctx: ToolContext[Any], prompt: str) -> str:  # noqa: D417 - ctx is injected
        """Delegate a task to another agent and get its answer.

        Args:
            prompt: The complete task for the agent, with every detail it needs.
        """
        sink = ctx.on_progress
        try:
            if isinstance(sink, ProgressSink) and sink.streaming:
                # the subagent tool is the agent's own code: it streams through the agent's private entry point
                stream = sub._stream_for_parent(  # pyright: ignore[reportPrivateUsage]
                    prompt, deps=ctx.deps, policy=sink.policy, cancel=ctx.cancelled
                )
                async for event in stream:
                    ctx.emit(Forwarded(sub.id, event))
                result = stream.result
            else:
                result = await sub.generate(prompt, deps=ctx.deps, cancel=ctx.cancelled)  # the parent's cancel stops it
        except ModelAPIError as exc:
            # The vendor's body may quote a key or a prompt: the supervisor's model gets what failed only.
            raise ToolError(f"Agent {sub.id!r} failed: {exc.summary}.") from exc
        except AgentkitError:
            raise  # agentkit's own messages (a retry budget, a missing API key's variable) are safe to pass on
        except Exception as exc:
            # Not mapped by agentkit (e.g. an SDK's own exception): its text may be the vendor's, so only the type.
            raise ToolError(f"Agent {sub.id!r} failed: {type(exc).__name__}.") from exc
        ctx.emit(SubagentUsage(result.usage, tuple(result.responses)))
        if result.status == "awaiting_approval":
            names = ", ".join(repr(p.tool_name) for p in result.pending)
            raise ToolError(f"Agent {sub.id!r} stopped: its call(s) to {names} need approval, not available here.")
        if result.status in ("suspended", "awaiting_client"):
            names = ", ".join(repr(p.tool_name) for p in result.pending)
            raise ToolError(f"Agent {sub.id!r} stopped: its call(s) to {names} wait for input, not available here.")
        if result.status == "cancelled":
            raise ToolError(f"Agent {sub.id!r} was cancelled.")
        return result.text

    # dynamic instructions are not a description: only instructions that are plain text stand in for one
    static = sub._instructions.static  # pyright: ignore[reportPrivateUsage]
    description = sub.description or static or f"Ask the agent {sub.name!r} to do a task."
    item = Tool(run_subagent, id=sub.id, description=description)
    item._nests_runs = True  # type: ignore[attr-defined]  # its calls take run slots, the call itself none
    return item
