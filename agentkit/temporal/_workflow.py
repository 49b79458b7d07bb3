"""`AgentRunWorkflow`: agentkit's own run loop, inside a Temporal workflow.

The loop is the same code as in-process; only its side effects are routed (`ExecutionHooks`): the model
is a proxy whose `request` executes the ``agentkit.model_request`` activity, each tool call executes
``agentkit.call_tool`` (a background call is such an activity started without waiting), pause and run
ids come from `workflow.uuid4`, and no run store is claimed (Temporal applies each update once). When the
run pauses, the workflow waits for a ``resume`` update (validated before it is accepted, so wrong answers
are refused and leave nothing in the history), then resumes the loop; its result is the run's result.

This module is imported by Temporal's sandbox; ``agentkit`` is passed through (see `worker`), so the
agents, tools and policies it reaches are the worker process's own objects.
"""

from __future__ import annotations as _annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from .._agent._options import RunOptions
    from .._agent._setup import start
    from .._agent.hooks import ExecutionHooks, current_hooks
    from .._agent.results import RunResult
    from .._agent.resume import check_resume, resume_run
    from .._agent.runs import spec_of
    from .._client_tool import ClientTool
    from ..context import ToolContext
    from ..exceptions import AgentkitError, ClientCallRequested, ResumeError, ToolSuspended
    from ..messages import Message, ModelResponse, ToolCall, ToolResult
    from ..models import Model, ModelSettings
    from ..registry import Registry
    from ..runs._codec import (
        decode_messages,
        decode_response,
        decode_results,
        encode_messages,
        encode_pending,
        encode_settings,
    )
    from ..runs._snapshot import result_document
    from ._agent import TemporalAgent, decode_answers, lookup

__all__ = ["AgentRunWorkflow"]


class _ModelActivity(Model):
    """The agent's model as seen from the workflow: every request is an ``agentkit.model_request`` activity."""

    def __init__(self, durable: TemporalAgent) -> None:
        self.durable = durable

    @property
    def name(self) -> str:
        return str(self.durable.model_name)

    async def request(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> ModelResponse:
        options = self.durable.model_options
        data = await workflow.execute_activity(
            "agentkit.model_request",
            {
                "agent": self.durable.agent.id,
                "messages": encode_messages(messages, tools),
                "settings": encode_settings(settings),
            },
            start_to_close_timeout=options.start_to_close_timeout,
            retry_policy=options.retry_policy,
            heartbeat_timeout=options.heartbeat_timeout,
            summary="model request",
        )
        return decode_response(data)


def _tool_caller(durable: TemporalAgent) -> Any:
    async def call_tool(executor: Registry, call: ToolCall, deps: Any, ctx: ToolContext[Any] | None) -> ToolResult:
        item = executor.get(call.name)
        if item is None or isinstance(item, ClientTool):
            # nothing to do outside: an unknown name's error, a client tool's check and pause (no I/O)
            return await executor.call(call, deps=deps, context=ctx)
        options = durable.options_for(call.name)
        resumed = ctx is not None and ctx.resumed
        outcome = await workflow.execute_activity(
            "agentkit.call_tool",
            {
                "agent": durable.agent.id,
                "call": {"id": call.id, "name": call.name, "arguments": call.arguments},
                "retry": ctx.retry if ctx is not None else 0,
                "resumed": resumed,
                "resume_data": ctx.resume_data if resumed and ctx is not None else None,
            },
            start_to_close_timeout=options.start_to_close_timeout,
            retry_policy=options.retry_policy,
            heartbeat_timeout=options.heartbeat_timeout,
            summary=call.name,
        )
        if "suspended" in outcome:
            raise ToolSuspended(outcome["suspended"]["payload"], outcome["suspended"]["schema"])
        if "client" in outcome:
            raise ClientCallRequested()
        result = decode_results([outcome["result"]], "the tool call's result")[0]
        if not result.is_error and result.output is not None:
            result.output = item.schema.validate_output(call.name, result.output)
        return result

    return call_tool


@workflow.defn(name="agentkit.AgentRun", failure_exception_types=[AgentkitError])
class AgentRunWorkflow:
    """One agent run; input ``{"agent", "messages", "max_steps", "tool_choice", "active_tools"}``.

    An agentkit error in the loop (a retry budget used up, bad run options) fails the workflow, with the
    error as its cause, instead of retrying the workflow task forever.
    """

    def __init__(self) -> None:
        self._paused: RunResult[Any] | None = None
        self._answers: dict[str, Any] | None = None
        self._cancel = asyncio.Event()
        self._status = "running"
        self._durable: TemporalAgent | None = None

    def _hooks(self, durable: TemporalAgent) -> ExecutionHooks:
        return ExecutionHooks(
            call_tool=_tool_caller(durable), new_pause_id=lambda: workflow.uuid4().hex, claims=False, durable=True
        )

    @workflow.run
    async def run(self, request: dict[str, Any]) -> dict[str, Any]:
        """Run the agent to its end, waiting at each pause for a ``resume`` update."""
        durable = self._durable = lookup(request["agent"])
        agent = durable.agent
        reset = current_hooks.set(self._hooks(durable))
        try:
            with agent.override(model=_ModelActivity(durable)):
                prompt = decode_messages(request["messages"])
                options = RunOptions(
                    tool_choice=request.get("tool_choice"),
                    active_tools=request.get("active_tools"),
                    max_steps=request.get("max_steps"),
                    cancel=self._cancel,
                )
                result = await start(spec_of(agent), prompt, options, None)
                while result.paused and result.status != "cancelled":
                    self._paused, self._status, self._answers = result, result.status, None
                    await workflow.wait_condition(lambda: self._answers is not None or self._cancel.is_set())
                    answered = self._take_answers()
                    if answered is None:
                        break  # cancelled while waiting: the run ends paused, as it stood
                    answers = decode_answers(answered)
                    self._paused, self._status = None, "running"
                    options = RunOptions(cancel=self._cancel)
                    result = await resume_run(spec_of(agent), result, answers, options=options, emit=None)
        finally:
            current_hooks.reset(reset)
        self._paused, self._status = None, result.status
        await workflow.wait_condition(workflow.all_handlers_finished)
        return result_document(result, agent.tools)

    def _take_answers(self) -> dict[str, Any] | None:
        answers, self._answers = self._answers, None
        return answers

    def _state(self) -> dict[str, Any]:
        pending = encode_pending(self._paused.pending) if self._paused is not None else []
        return {"status": self._status, "pending": pending}

    @workflow.query(name="state")
    def state(self) -> dict[str, Any]:
        """``{"status", "pending"}``: running, paused (and for what), or ended."""
        return self._state()

    @workflow.update(name="wait")
    async def wait(self) -> dict[str, Any]:
        """Return once the run is paused or has ended (its `state` then)."""
        await workflow.wait_condition(lambda: self._status != "running")
        return self._state()

    @workflow.update(name="resume")
    async def resume(self, answers: dict[str, Any]) -> str:
        """Answer the pause (checked by `check` first); the loop picks the answers up."""
        self._answers = answers
        return "accepted"

    @resume.validator
    def check(self, answers: dict[str, Any]) -> None:
        """Refuse answers that `Agent.resume` would refuse, and a second answer to one pause."""
        from temporalio.exceptions import ApplicationError

        paused, durable = self._paused, self._durable
        if paused is None or durable is None or self._answers is not None:
            raise ApplicationError(f"the run is not waiting for answers (status {self._status!r})", type="ResumeError")
        try:
            with durable.agent.override(model=_ModelActivity(durable)):
                check_resume(spec_of(durable.agent), paused, decode_answers(answers))
        except ResumeError as exc:
            raise ApplicationError(str(exc), type=type(exc).__name__, non_retryable=True) from None

    @workflow.signal(name="cancel")
    def cancel(self) -> None:
        """Cancel the run at its next safe point."""
        self._cancel.set()
