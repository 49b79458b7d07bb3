"""An agent as another agent's tool: its events and its usage travel up to the parent run.

The subagent's tool reports to the parent through `ToolContext.emit`, with the two private messages of
`agentkit._agent._progress` the parent's run recognises: `Forwarded` (one of the subagent's stream
events) and `SubagentUsage` (what the subagent's run consumed, added to the parent's usage).
"""

from __future__ import annotations as _annotations

from typing import Any

from ..context import ToolContext
from ..exceptions import AgentkitError, ModelAPIError, ToolError
from ..tools import Tool
from ._options import RunOptions
from ._progress import Forwarded, ProgressSink, SubagentUsage
from ._setup import start
from .results import RunResult
from .runs import AgentRuns, spec_of
from .stream import AgentStream, Emit

__all__ = ["subagent_tool"]


def subagent_tool(sub: AgentRuns[Any, Any]) -> Tool[..., Any]:
    """`sub` as a tool taking ``{"prompt": str}`` and returning its final text (see `Agent.as_tool`)."""

    async def run_subagent(ctx: ToolContext[Any], prompt: str) -> str:  # noqa: D417 - ctx is injected
        """Delegate a task to another agent and get its answer.

        Args:
            prompt: The complete task for the agent, with every detail it needs.
        """
        sink = ctx.on_progress
        options = RunOptions(deps=ctx.deps, cancel=ctx.cancelled)  # the parent's cancel stops it
        try:
            if isinstance(sink, ProgressSink) and sink.streaming:
                # the subagent streams too, beneath the supervisor's transform policy
                spec = spec_of(sub)

                async def run(emit: Emit) -> RunResult[Any]:
                    return await start(spec, prompt, options, emit, inherited=sink.policy)

                stream: AgentStream[Any] = AgentStream(run)
                async for event in stream:
                    ctx.emit(Forwarded(spec.id, event))
                result = stream.result
            else:
                result = await start(spec_of(sub), prompt, options, None)
        except ModelAPIError as exc:
            # The vendor's body may quote a key or a prompt: the supervisor's model gets what failed only.
            raise ToolError(f"Agent {spec_of(sub).id!r} failed: {exc.summary}.") from exc
        except AgentkitError:
            raise  # agentkit's own messages (a retry budget, a missing API key's variable) are safe to pass on
        except Exception as exc:
            # Not mapped by agentkit (e.g. an SDK's own exception): its text may be the vendor's, so only the type.
            raise ToolError(f"Agent {spec_of(sub).id!r} failed: {type(exc).__name__}.") from exc
        ctx.emit(SubagentUsage(result.usage, tuple(result.responses)))
        if result.status == "awaiting_approval":
            names = ", ".join(repr(p.tool_name) for p in result.pending)
            raise ToolError(
                f"Agent {result.agent_id!r} stopped: its call(s) to {names} need approval, not available here."
            )
        if result.status in ("suspended", "awaiting_client"):
            names = ", ".join(repr(p.tool_name) for p in result.pending)
            raise ToolError(
                f"Agent {result.agent_id!r} stopped: its call(s) to {names} wait for input, not available here."
            )
        if result.status == "cancelled":
            raise ToolError(f"Agent {result.agent_id!r} was cancelled.")
        return result.text

    spec = spec_of(sub)
    # dynamic instructions are not a description: only instructions that are plain text stand in for one
    static = spec.instruction_parts.static
    description = spec.description or static or f"Ask the agent {spec.name!r} to do a task."
    item = Tool(run_subagent, id=spec.id, description=description)
    item._nests_runs = True  # type: ignore[attr-defined]  # its calls take run slots, the call itself none
    return item
