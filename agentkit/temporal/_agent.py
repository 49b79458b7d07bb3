"""`TemporalAgent`: an agent whose runs are Temporal workflows, and `TemporalRun`, the handle of one run.

The process table `DURABLE` maps agent ids to their `TemporalAgent`, so the workflow and the activities
(which Temporal knows by name only) find the agent, its tools and its activity options. The table lives in
a module the workflow sandbox passes through, so the sandboxed workflow sees the same objects.
"""

from __future__ import annotations as _annotations

import asyncio
import copy
import dataclasses
import uuid
from collections.abc import Iterable, Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from .._agent._setup import as_messages
from .._exit import settle_at_exit
from .._jsonish import is_mapping
from .._text import closest
from ..agent import Agent, Approval, Prompt
from ..exceptions import AgentSetupError, ResumeError, ToolError
from ..runs._answers import check_approval
from ..runs._codec import encode_messages
from ._options import (
    DEFAULT_MODEL,
    DEFAULT_TOOL,
    ActivityOptions,
    TemporalLimitError,
    TemporalLimits,
    size_of,
    too_large,
)

if TYPE_CHECKING:
    from temporalio.client import Client
    from temporalio.worker import Worker

    from .._agent.results import RunResult
    from ._run import TemporalRun

__all__ = ["DURABLE", "WORKFLOW", "TemporalAgent", "lookup"]

WORKFLOW = "agentkit.AgentRun"
"""The workflow type every agent runs as (its input names the agent)."""

DURABLE: dict[str, TemporalAgent] = {}
"""The agents this process knows, by id: what workflows and activities run."""


def lookup(agent_id: str) -> TemporalAgent:
    """The `TemporalAgent` registered for `agent_id` in this process."""
    durable = DURABLE.get(agent_id)
    if durable is None:
        raise AgentSetupError(
            f"no TemporalAgent for agent {agent_id!r} in this worker process (it knows {sorted(DURABLE)}): create "
            "TemporalAgent(agent) before starting the worker"
        )
    return durable


class TemporalAgent:
    """`agent` run as a Temporal workflow: each model request and each tool call is an activity.

    ```python
    durable = TemporalAgent(agent, tools={"charge": ActivityOptions(retry_policy=RetryPolicy(maximum_attempts=1))})
    async with durable.worker(client):                 # or run the worker in its own process
        run = await durable.start(client, "Refund order 42", id="refund-42")
        if (await run.wait()).status == "awaiting_approval":
            await run.resume({call.call_id: True for call in await run.pending()})
        result = await run.result()                     # the RunResult
    ```

    Args:
        agent: the agent (its model, tools and MCP servers are used in the worker's activities).
        task_queue: the queue its workers poll (default ``"agentkit-<agent id>"``).
        model: options of the model-request activity (default: 2 minutes per attempt, a heartbeat
            every 10 s, 5 attempts; a `ModelSetupError` is not retried).
        tools: options per tool key, over the defaults (5 minutes per attempt, or the tool's own
            `timeout` plus 10 s; a heartbeat every 10 s; 3 attempts; an unknown outcome becomes an
            error result). Keys of MCP servers' tools are checked when a run lists them.
        deps: the dependencies tools get in the activities (default: the agent's ``deps``).
        limits: the Temporal server's size limits (default: Temporal's own defaults).

    Workflows and activities find the agent by its id in this process: the last `TemporalAgent` made for
    an id is the one this process's workers run (give each agent its own id).
    """

    agent: Agent
    """The agent that runs (its model, tools and MCP servers are used in the activities)."""

    def __init__(
        self,
        agent: Agent[Any, Any],
        *,
        task_queue: str | None = None,
        model: ActivityOptions | None = None,
        tools: Mapping[str, ActivityOptions] | None = None,
        deps: Any = None,
        limits: TemporalLimits | None = None,
    ) -> None:
        unknown = sorted(set(tools or {}) - set(agent.tools))
        if unknown and not agent.mcp_servers:
            hints = {k: closest(k, agent.tools) for k in unknown}
            raise AgentSetupError(f"tools= names no tool of agent {agent.id!r}: {hints} (key -> closest keys)")
        self.agent = agent
        self.task_queue = task_queue or f"agentkit-{agent.id}"
        self.model_options = _with_defaults(model, DEFAULT_MODEL)
        self.tool_options = dict(tools or {})
        self.deps = deps if deps is not None else agent.deps
        self.limits = limits or TemporalLimits()
        self.model_name = agent.model if isinstance(agent.model, str) else getattr(agent.model, "name", "model")
        self.workflow_agent = _without_servers(agent) if agent.mcp_servers else agent
        """The agent as the workflow runs it: without MCP servers (their tools come from an activity)."""
        self._mcp_open: tuple[asyncio.AbstractEventLoop, asyncio.Lock, list[bool]] | None = None
        DURABLE[agent.id] = self

    def __repr__(self) -> str:
        return f"TemporalAgent({self.agent.id!r}, task_queue={self.task_queue!r})"

    def options_for(self, key: str) -> ActivityOptions:
        """The activity options of a call to the tool under `key` (the defaults under those given)."""
        item = self.agent.tools.get(key)
        default = DEFAULT_TOOL
        if item is not None and item.timeout is not None:
            default = dataclasses.replace(default, start_to_close_timeout=timedelta(seconds=item.timeout) + _MARGIN)
        return _with_defaults(self.tool_options.get(key), default)

    # ---- MCP servers, in the worker -----------------------------------------------------------------

    async def open_mcp(self) -> None:
        """Open the agent's MCP sessions in this worker (once per event loop; `close_mcp` closes them)."""
        if not self.agent.mcp_servers:
            return
        loop = asyncio.get_running_loop()
        if self._mcp_open is None or self._mcp_open[0] is not loop:
            self._mcp_open = (loop, asyncio.Lock(), [False])
        _, lock, opened = self._mcp_open
        async with lock:
            if not opened[0]:
                await self.agent.__aenter__()
                opened[0] = True

    async def close_mcp(self) -> None:
        """Close the MCP sessions `open_mcp` opened (the worker does, when it stops)."""
        state, self._mcp_open = self._mcp_open, None
        if state is not None and state[2][0]:
            await self.agent.__aexit__(None, None, None)

    async def mcp_definitions(self) -> list[dict[str, Any]]:
        """The MCP servers' tools as JSON definitions, for the workflow's stand-ins (see `mcp_tools`)."""
        await self.open_mcp()
        from ._mcp import definitions

        return definitions(self.agent)

    # ---- workers -----------------------------------------------------------------------------------

    def worker(self, client: Client, **options: Any) -> Worker:
        """A Temporal `Worker` running this agent's workflow and activities (``async with`` it)."""
        from ._worker import worker

        settle_at_exit()  # Temporal's core threads call back into Python: let them out before finalization
        return worker(client, [self], task_queue=self.task_queue, **options)

    # ---- runs ----------------------------------------------------------------------------------------

    async def start(
        self,
        client: Client,
        prompt: Prompt,
        *,
        id: str | None = None,  # noqa: A002 - Temporal's name for the workflow id
        max_steps: int | None = None,
        tool_choice: str | None = None,
        active_tools: Iterable[str] | None = None,
    ) -> TemporalRun:
        """Start a run as a workflow (id: `id`, default ``"<agent id>-<random>"``) and return its handle.

        Raises:
            TemporalLimitError: the prompt is over the payload limit (Temporal would never accept it).
        """
        from ._run import TemporalRun

        settle_at_exit()  # Temporal's core threads call back into Python: let them out before finalization
        request = {
            "agent": self.agent.id,
            "messages": encode_messages(as_messages(prompt), self.agent.tools),
            "max_steps": max_steps,
            "tool_choice": tool_choice,
            "active_tools": list(active_tools) if active_tools is not None else None,
        }
        self.check_size("the run's prompt", request, "send large documents by reference (a URL, a file id)")
        handle = await client.start_workflow(
            WORKFLOW, request, id=id or f"{self.agent.id}-{uuid.uuid4().hex}", task_queue=self.task_queue
        )
        return TemporalRun(self, handle)

    async def run(self, client: Client, prompt: Prompt, **options: Any) -> RunResult[Any]:
        """`start`, then the workflow's result (a run that pauses waits for `TemporalRun.resume`)."""
        return await (await self.start(client, prompt, **options)).result()

    def get_run(self, client: Client, workflow_id: str) -> TemporalRun:
        """The handle of a run started earlier (by any process), from its workflow id."""
        from ._run import TemporalRun

        settle_at_exit()  # Temporal's core threads call back into Python: let them out before finalization
        return TemporalRun(self, client.get_workflow_handle(workflow_id))

    def check_size(self, what: str, data: Any, fix: str) -> None:
        """Raise `TemporalLimitError` when `data` is over the payload limit."""
        size = size_of(data)
        if size > self.limits.payload:
            raise TemporalLimitError(too_large(what, size, self.limits.payload, fix))


_MARGIN = timedelta(seconds=10)  # a tool's own timeout becomes a result: the attempt must outlast it


def _with_defaults(chosen: ActivityOptions | None, default: ActivityOptions) -> ActivityOptions:
    if chosen is None:
        return default
    return ActivityOptions(
        chosen.start_to_close_timeout or default.start_to_close_timeout,
        chosen.retry_policy if chosen.retry_policy is not None else default.retry_policy,
        chosen.heartbeat_timeout if chosen.heartbeat_timeout is not None else default.heartbeat_timeout,
        chosen.on_unknown,
    )


def _without_servers(agent: Agent[Any, Any]) -> Agent[Any, Any]:
    """A shallow copy of `agent` without MCP servers: what the workflow runs (it may not open connections)."""
    from .._agent.sessions import MCPSessions

    twin = copy.copy(agent)
    twin.mcp_servers = []
    twin._sessions = MCPSessions(agent._sessions.base, [])  # pyright: ignore[reportPrivateUsage]  # agentkit's own
    return twin


def _encode_answers(answers: Mapping[str, Any], kinds: Mapping[str, str]) -> dict[str, Any]:  # pyright: ignore[reportUnusedFunction]  # TemporalRun's
    out: dict[str, dict[str, Any]] = {"approvals": {}, "data": {}, "errors": {}}
    for call_id, answer in answers.items():
        kind = kinds.get(call_id)
        if kind == "approval":
            decision = check_approval(call_id, answer)  # a real decision, or ApprovalError before anything is sent
            out["approvals"][call_id] = {"approved": decision.approved, "reason": decision.reason}
        elif isinstance(answer, ToolError):
            out["errors"][call_id] = answer.message
        else:
            out["data"][call_id] = answer
    return out


def decode_answers(payload: Mapping[str, Any]) -> dict[str, Any]:
    """`Agent.resume` answers from what `TemporalRun.resume` sent (or a raw update: `ResumeError` if malformed)."""
    parts = [payload.get(k, {}) if is_mapping(payload) else None for k in ("data", "errors", "approvals")]
    if not all(is_mapping(part) for part in parts):
        raise ResumeError('a resume update is {"data": {...}, "errors": {...}, "approvals": {...}}, keyed by call id')
    answers: dict[str, Any] = dict(payload.get("data", {}))
    for call_id, message in dict(payload.get("errors", {})).items():
        answers[call_id] = ToolError(str(message))
    for call_id, decision in dict(payload.get("approvals", {})).items():
        # anything but {"approved": bool, "reason": str | None} stays as sent, for check_approval to refuse
        fits = is_mapping(decision) and isinstance(decision.get("approved"), bool)
        fits = fits and isinstance(decision.get("reason"), (str, type(None)))
        answers[call_id] = Approval(decision["approved"], decision.get("reason")) if fits else decision
    return answers
