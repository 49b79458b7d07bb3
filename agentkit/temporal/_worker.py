"""The worker: agentkit's workflow and activities on a task queue, with everything built before it polls.

The workflow runs in Temporal's sandbox with ``agentkit`` passed through, so the agents, their tools and
their policies are this process's own objects. What agentkit would otherwise build lazily on a run's
first workflow activation (the codec's pydantic adapters, the schema libraries' imports) is built here,
once, before the worker polls: built inside an activation on a loaded machine, it can outlast Temporal's
deadlock detector (2 s) and strand the runs of a fresh worker for minutes.
"""

from __future__ import annotations as _annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from temporalio.worker import Worker

from ._agent import DURABLE, TemporalAgent

if TYPE_CHECKING:
    from temporalio.client import Client

__all__ = ["AgentWorker", "warm_up", "worker"]

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


class AgentWorker(Worker):
    """A Temporal `Worker` that closes its agents' MCP sessions when it stops."""

    def __init__(self, client: Client, agents: Sequence[TemporalAgent], **options: Any) -> None:
        super().__init__(client, **options)  # pyright: ignore[reportUnknownMemberType]  # temporalio's activity type
        self.agents = list(agents)

    async def run(self) -> None:
        """Run until shut down (see `temporalio.worker.Worker.run`), then close the MCP sessions opened here."""
        try:
            await super().run()
        finally:
            for durable in self.agents:
                await durable.close_mcp()


_WORKFLOW_SIDE = ("_output_adapter", "_output_validate", "_output_to_json")
"""The lazily built parts of a tool's schema the workflow uses: re-validating and writing outputs."""


def warm_up(agents: Sequence[TemporalAgent] = ()) -> None:
    """Build what a run's workflow activations would (idempotent, cheap the second time).

    That is the codec's adapters, the tools' output validators and the lazy imports.
    """
    # agentkit imports these lazily (schemas of explicit JSON Schema tools, suspensions): load them now, outside
    # the sandbox, and pass them through with agentkit itself
    import docstring_parser  # noqa: F401  # pyright: ignore[reportUnusedImport]
    import jsonschema  # noqa: F401  # pyright: ignore[reportUnusedImport]

    from .._agent.pending import PendingSuspension
    from .._agent.results import PendingApproval, PendingItem
    from ..messages import (
        AssistantMessage,
        Message,
        ModelResponse,
        SystemMessage,
        ToolCall,
        ToolResult,
        ToolResultsMessage,
        Usage,
        UserMessage,
    )
    from ..models import ModelSettings
    from ..runs import _codec as codec

    call = ToolCall("c1", "t", {"a": 1})
    sample: list[Message] = [
        SystemMessage("s"),
        UserMessage("u"),
        AssistantMessage("a", [call]),
        ToolResultsMessage([ToolResult.error(call, "e", "tool_error")]),
    ]
    codec.decode_messages(codec.encode_messages(sample, {}))
    codec.decode_results(codec.encode_results([ToolResult.error(call, "e", "tool_error")], {}), "warm-up")
    pending: list[PendingItem] = [
        PendingApproval("c1", "t", {}, {}),
        PendingSuspension("c2", "t", {}, None, None, None),
    ]
    codec.decode_pending(codec.encode_pending(pending))
    codec.decode_response(codec.encode_response(ModelResponse(AssistantMessage("a"), Usage()), {}))
    codec.decode_settings(codec.encode_settings(ModelSettings()))
    for durable in agents:
        for _, item in durable.workflow_agent.tools.items():
            for part in _WORKFLOW_SIDE:
                getattr(item.schema, part, None)


def worker(client: Client, agents: Sequence[TemporalAgent], *, task_queue: str, **options: Any) -> Worker:
    """A Temporal `Worker` for several agents on one task queue (each agent's `start` must use that queue).

    `options` go to `temporalio.worker.Worker`; ``sticky_queue_schedule_to_start_timeout`` defaults to 5 s
    here (Temporal's is 10 s): how long the workflow tasks of a worker that died wait for it before
    another worker takes its runs over. ``activities=[]`` makes a worker of workflows only, ``workflows=[]``
    one of activities only (a model request then gets its messages from the workflow by a query).
    """
    from datetime import timedelta

    from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

    from ._activities import call_tool, list_mcp_tools, model_request, run_program
    from ._workflow import AgentRunWorkflow

    for durable in agents:
        DURABLE[durable.agent.id] = durable
    warm_up(agents)
    restrictions = SandboxRestrictions.default.with_passthrough_modules(*_PASSTHROUGH)
    options.setdefault("workflow_runner", SandboxedWorkflowRunner(restrictions=restrictions))
    options.setdefault("sticky_queue_schedule_to_start_timeout", timedelta(seconds=5))
    options.setdefault("workflows", [AgentRunWorkflow])
    options.setdefault("activities", [model_request, call_tool, list_mcp_tools, run_program])
    return AgentWorker(client, agents, task_queue=task_queue, **options)
