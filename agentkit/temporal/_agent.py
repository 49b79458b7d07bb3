"""`TemporalAgent`: an agent whose runs are Temporal workflows, and `TemporalRun`, the handle of one run.

The process table `DURABLE` maps agent ids to their `TemporalAgent`, so the workflow and the activities
(which Temporal knows by name only) find the agent, its tools and its activity options. The table lives in
a module the workflow sandbox passes through, so the sandboxed workflow sees the same objects.
"""

from __future__ import annotations as _annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from temporalio.common import RetryPolicy

from .._jsonish import is_mapping
from .._text import closest
from ..agent import Agent, Approval, Prompt, _as_messages  # pyright: ignore[reportPrivateUsage]  # agentkit's own
from ..exceptions import AgentSetupError, ResumeError, ToolError
from ..runs._answers import check_approval
from ..runs._codec import decode_pending, encode_messages

if TYPE_CHECKING:
    from temporalio.client import Client, WorkflowHandle
    from temporalio.worker import Worker

    from .._agent.results import PendingItem, RunResult

__all__ = ["DURABLE", "WORKFLOW", "ActivityOptions", "TemporalAgent", "TemporalRun", "lookup", "worker"]

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


@dataclass(frozen=True)
class ActivityOptions:
    """How Temporal runs one kind of activity: its timeout and retry policy.

    `start_to_close_timeout` bounds one attempt (a worker that dies mid-call is noticed when it passes, or
    when `heartbeat_timeout` passes without a heartbeat, if set); `retry_policy` says how often and how
    soon an attempt that failed or timed out is tried again (``None``: Temporal's default, retry forever).
    """

    start_to_close_timeout: timedelta | None = None
    retry_policy: RetryPolicy | None = None
    heartbeat_timeout: timedelta | None = None


_DEFAULT_TOOL = ActivityOptions(timedelta(minutes=5), RetryPolicy(maximum_attempts=3))
_DEFAULT_MODEL = ActivityOptions(
    timedelta(minutes=2), RetryPolicy(maximum_attempts=5, non_retryable_error_types=["ModelSetupError"])
)
_TOOL_TIMEOUT_MARGIN = timedelta(seconds=10)  # a tool's own timeout becomes a result: the attempt must outlast it


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
        agent: the agent (its model and tools run in the worker's activities; MCP servers are not
            supported on Temporal yet).
        task_queue: the queue its workers poll (default ``"agentkit-<agent id>"``).
        model: options of the model-request activity (default: 2 minutes per attempt, 5 attempts; a
            `ModelSetupError` is not retried).
        tools: options per tool key, over the defaults (5 minutes per attempt, or the tool's own
            `timeout` plus 10 s; 3 attempts).
        deps: the dependencies tools get in the activities (default: the agent's ``deps``).

    Workflows and activities find the agent by its id in this process: the last `TemporalAgent` made for
    an id is the one this process's workers run (give each agent its own id).
    """

    agent: Agent
    """The agent that runs."""

    def __init__(
        self,
        agent: Agent[Any, Any],
        *,
        task_queue: str | None = None,
        model: ActivityOptions | None = None,
        tools: Mapping[str, ActivityOptions] | None = None,
        deps: Any = None,
    ) -> None:
        if agent.mcp_servers:
            raise AgentSetupError(
                f"agent {agent.id!r} has MCP servers: they are not supported on Temporal yet (the workflow could not "
                "list their tools without I/O); give the agent plain tools"
            )
        unknown = sorted(set(tools or {}) - set(agent.tools))
        if unknown:
            hints = {k: closest(k, agent.tools) for k in unknown}
            raise AgentSetupError(f"tools= names no tool of agent {agent.id!r}: {hints} (key -> closest keys)")
        self.agent = agent
        self.task_queue = task_queue or f"agentkit-{agent.id}"
        self.model_options = model or _DEFAULT_MODEL
        self.tool_options = dict(tools or {})
        self.deps = deps if deps is not None else agent.deps
        self.model_name = agent.model if isinstance(agent.model, str) else getattr(agent.model, "name", "model")
        DURABLE[agent.id] = self

    def __repr__(self) -> str:
        return f"TemporalAgent({self.agent.id!r}, task_queue={self.task_queue!r})"

    def options_for(self, key: str) -> ActivityOptions:
        """The activity options of a call to the tool under `key`."""
        chosen = self.tool_options.get(key)
        item = self.agent.tools.get(key)
        timeout = _DEFAULT_TOOL.start_to_close_timeout
        if item is not None and item.timeout is not None:
            timeout = timedelta(seconds=item.timeout) + _TOOL_TIMEOUT_MARGIN
        if chosen is None:
            return ActivityOptions(timeout, _DEFAULT_TOOL.retry_policy)
        return ActivityOptions(
            chosen.start_to_close_timeout or timeout,
            chosen.retry_policy if chosen.retry_policy is not None else _DEFAULT_TOOL.retry_policy,
            chosen.heartbeat_timeout,
        )

    # ---- workers -----------------------------------------------------------------------------------

    def worker(self, client: Client, **options: Any) -> Worker:
        """A Temporal `Worker` running this agent's workflow and activities (``async with`` it)."""
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
        """Start a run as a workflow (id: `id`, default ``"<agent id>-<random>"``) and return its handle."""
        request = {
            "agent": self.agent.id,
            "messages": encode_messages(_as_messages(prompt), self.agent.tools),
            "max_steps": max_steps,
            "tool_choice": tool_choice,
            "active_tools": list(active_tools) if active_tools is not None else None,
        }
        handle = await client.start_workflow(
            WORKFLOW, request, id=id or f"{self.agent.id}-{uuid.uuid4().hex}", task_queue=self.task_queue
        )
        return TemporalRun(self, handle)

    async def run(self, client: Client, prompt: Prompt, **options: Any) -> RunResult[Any]:
        """`start`, then the workflow's result (a run that pauses waits for `TemporalRun.resume`)."""
        return await (await self.start(client, prompt, **options)).result()

    def get_run(self, client: Client, workflow_id: str) -> TemporalRun:
        """The handle of a run started earlier (by any process), from its workflow id."""
        return TemporalRun(self, client.get_workflow_handle(workflow_id))


@dataclass(frozen=True)
class RunState:
    """What a Temporal run is doing: ``"running"``, a paused status, or how it ended; and what it waits for."""

    status: str
    pending: list[PendingItem] = field(default_factory=lambda: [])


class TemporalRun:
    """A run on Temporal: look at it, answer its pauses, cancel it, get its `RunResult`."""

    def __init__(self, durable: TemporalAgent, handle: WorkflowHandle[Any, Any]) -> None:
        self.durable = durable
        self.handle = handle

    @property
    def id(self) -> str:
        """The workflow id."""
        return self.handle.id

    def __repr__(self) -> str:
        return f"TemporalRun({self.id!r})"

    async def state(self) -> RunState:
        """What the run does now (a query: answered from the workflow's memory, no waiting)."""
        data = await self.handle.query("state")
        return RunState(data["status"], decode_pending(data["pending"]))

    async def pending(self) -> list[PendingItem]:
        """What the paused run waits for (empty while it runs or once it ended)."""
        return (await self.state()).pending

    async def wait(self) -> RunState:
        """Wait until the run pauses (for approval, data or a client) or ends; its state then."""
        from temporalio.service import RPCError

        try:
            # temporalio leaves an overload of execute_update (one we do not call) partly untyped
            data = await self.handle.execute_update("wait")  # pyright: ignore[reportUnknownMemberType]
        except RPCError:  # the workflow has ended: an update cannot reach it, a query still can
            return await self.state()
        return RunState(data["status"], decode_pending(data["pending"]))

    async def resume(self, answers: Mapping[str, Any]) -> None:
        """Answer the paused run (as `Agent.resume` takes answers); the run goes on in the workers.

        Raises:
            ResumeError: the run is not paused, or the answers do not fit (the workflow refused them:
                nothing is recorded, the pause stays open).
        """
        from temporalio.client import WorkflowUpdateFailedError

        state = await self.state()
        kinds = {p.call_id: p.kind for p in state.pending}
        payload = _encode_answers(answers, kinds)
        try:
            await self.handle.execute_update("resume", payload)  # pyright: ignore[reportUnknownMemberType]
        except WorkflowUpdateFailedError as exc:
            cause = exc.cause
            raise ResumeError(getattr(cause, "message", None) or str(cause or exc)) from None

    async def cancel(self) -> None:
        """Cancel the run at its next safe point (status ``"cancelled"``; a pending model request is abandoned)."""
        await self.handle.signal("cancel")

    async def result(self) -> RunResult[Any]:
        """Wait for the workflow to end; its `RunResult` (outputs re-validated against the agent's tools)."""
        from ..runs._snapshot import result_from_document

        return result_from_document(await self.handle.result(), self.durable.agent.tools)


def _encode_answers(answers: Mapping[str, Any], kinds: Mapping[str, str]) -> dict[str, Any]:
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


_PASSTHROUGH = (
    "agentkit",
    "jsonschema",
    "jsonschema_specifications",
    "referencing",
    "rpds",
    "attrs",
    "attr",
    "docstring_parser",
)


def worker(client: Client, agents: Sequence[TemporalAgent], *, task_queue: str, **options: Any) -> Worker:
    """A Temporal `Worker` for several agents on one task queue (each agent's `start` must use that queue).

    The workflow runs in Temporal's sandbox with ``agentkit`` passed through (the agents, their tools and
    their policies are the objects of this process); `options` go to `temporalio.worker.Worker`.
    """
    from temporalio.worker import Worker
    from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

    from ._activities import call_tool, model_request
    from ._workflow import AgentRunWorkflow

    for durable in agents:
        DURABLE[durable.agent.id] = durable
    # agentkit imports these lazily (schemas of explicit JSON Schema tools, suspensions): load them now, outside
    # the sandbox, and pass them through with agentkit itself
    import docstring_parser  # noqa: F401  # pyright: ignore[reportUnusedImport]
    import jsonschema  # noqa: F401  # pyright: ignore[reportUnusedImport]

    restrictions = SandboxRestrictions.default.with_passthrough_modules(*_PASSTHROUGH)
    options.setdefault("workflow_runner", SandboxedWorkflowRunner(restrictions=restrictions))
    return Worker(
        client,
        task_queue=task_queue,
        workflows=[AgentRunWorkflow],
        activities=[model_request, call_tool],
        **options,
    )
