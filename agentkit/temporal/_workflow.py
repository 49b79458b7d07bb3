"""`AgentRunWorkflow`: agentkit's own run loop, inside a Temporal workflow.

The loop is the same code as in-process; only its side effects are routed (`ExecutionHooks`): the model
is a proxy whose `request` executes the ``agentkit.model_request`` activity, each tool call executes
``agentkit.call_tool`` (a background call is such an activity started without waiting; the code tool's
program runs in ``agentkit.run_program`` segments, its calls each a call like the model's), pause and run
ids come from `workflow.uuid4`, and no run store is claimed (Temporal applies each update once). When the
run pauses, the workflow waits for a ``resume`` update (validated before it is accepted, so wrong answers
are refused and leave nothing in the history), then resumes the loop; its result is the run's result.

A model request's messages go to its activity by reference (`agentkit.temporal._history`), so the
history stays linear; every payload is checked against `TemporalLimits` first, so a run that cannot go
on fails with a `TemporalLimitError` naming the limit instead of hanging. A tool call whose attempts ran
out becomes an "outcome unknown" error result, or a pause (`ActivityOptions.on_unknown`).

This module is imported by Temporal's sandbox; ``agentkit`` is passed through (see `worker`), so the
agents, tools and policies it reaches are the worker process's own objects.
"""

from __future__ import annotations as _annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError, TimeoutType
from temporalio.exceptions import TimeoutError as ActivityTimeoutError

with workflow.unsafe.imports_passed_through():
    from .._agent._options import RunOptions
    from .._agent._setup import start
    from .._agent.hooks import ExecutionHooks, current_hooks
    from .._agent.results import RunResult
    from .._agent.resume import check_resume, resume_run
    from .._agent.runs import spec_of
    from .._client_tool import ClientTool
    from .._tool_results import result_of
    from ..codemode._program import ProgramOutcome, Raised, Returned
    from ..codemode._segments import current_runner, decode_outcome, encode_results, segmented
    from ..context import ToolContext
    from ..exceptions import (
        AgentkitError,
        AgentSetupError,
        ClientCallRequested,
        ModelAPIError,
        ModelSetupError,
        ResumeError,
        ToolError,
        ToolSuspended,
    )
    from ..messages import Message, ModelResponse, ToolCall, ToolResult
    from ..models import Model, ModelSettings
    from ..registry import Registry
    from ..runs._codec import decode_messages, decode_response, decode_results, encode_pending, encode_settings
    from ..runs._journal import UNKNOWN_ANSWER, unknown_request
    from ..runs._snapshot import result_document
    from ._agent import TemporalAgent, decode_answers, lookup
    from ._events import EVENTS_QUERY, EventLog
    from ._history import HISTORY_QUERY, page, publish, withdraw
    from ._mcp import mcp_tools
    from ._options import ActivityOptions, TemporalLimitError, effect_key, size_of, too_large

__all__ = ["AgentRunWorkflow"]

_NO_ANSWER: Any = object()


class _ModelActivity(Model):
    """The agent's model as seen from the workflow: every request is an ``agentkit.model_request`` activity."""

    def __init__(self, run: AgentRunWorkflow, durable: TemporalAgent) -> None:
        self.run = run
        self.durable = durable
        self._settings: tuple[ModelSettings, dict[str, Any]] | None = None

    def _encoded(self, settings: ModelSettings) -> dict[str, Any]:
        # a run sends the same (frozen) settings object at every step but the first: encoded once
        if self._settings is None or self._settings[0] is not settings:
            self._settings = (settings, encode_settings(settings))
        return self._settings[1]

    @property
    def name(self) -> str:
        return str(self.durable.model_name)

    async def request(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> ModelResponse:
        run, durable = self.run, self.durable
        run.check_history()
        options = durable.model_options
        info = workflow.info()
        number = run.requests_made = run.requests_made + 1
        held = tuple(messages)
        key = (info.workflow_id, info.run_id, number)
        run.requests[number] = (held, tools)
        publish(key, held)
        reference = {"workflow_id": key[0], "run_id": key[1], "request": number, "count": len(held)}
        try:
            data = await workflow.execute_activity(
                "agentkit.model_request",
                {"agent": durable.agent.id, "history": reference, "settings": self._encoded(settings)},
                start_to_close_timeout=options.start_to_close_timeout,
                retry_policy=options.retry_policy,
                heartbeat_timeout=options.heartbeat_timeout,
                summary="model request",
            )
        except ActivityError as error:
            raise _model_failure(self.name, error) from None
        finally:
            del run.requests[number]
            withdraw(key)
        return decode_response(data)


def _model_failure(model_name: str, error: ActivityError) -> AgentkitError:
    cause = error.cause
    message = getattr(cause, "message", None) or str(cause or error)
    kind = cause.type if isinstance(cause, ApplicationError) else None
    if kind == "TemporalLimitError":
        return TemporalLimitError(message)
    if kind == "ModelSetupError":
        return ModelSetupError(message)
    if kind == "AgentSetupError":
        return AgentSetupError(message)
    return ModelAPIError(model_name, f"the model request failed in every attempt: {message}")


def _reason(error: ActivityError) -> str:
    cause = error.cause
    if isinstance(cause, ActivityTimeoutError):
        if cause.type == TimeoutType.HEARTBEAT:
            return "its last attempt stopped heartbeating (the worker running it died or hung)"
        return "its last attempt timed out"
    return f"its last attempt failed ({getattr(cause, 'message', None) or cause or error})"


@workflow.defn(name="agentkit.AgentRun", failure_exception_types=[AgentkitError])
class AgentRunWorkflow:
    """One agent run; input ``{"agent", "messages", "max_steps", "tool_choice", "active_tools"}``.

    An agentkit error in the loop (a retry budget used up, bad run options, a Temporal limit reached)
    fails the workflow, with the error as its cause, instead of retrying the workflow task forever.
    """

    def __init__(self) -> None:
        self._paused: RunResult[Any] | None = None
        self._answers: dict[str, Any] | None = None
        self._cancel = asyncio.Event()
        self._status = "running"
        self._durable: TemporalAgent | None = None
        self._tools: Registry | None = None
        self.events = EventLog()
        self.requests: dict[int, tuple[tuple[Message, ...], Registry]] = {}
        """The model requests waiting for their activity: their messages, for the history query."""
        self.requests_made = 0
        self.unknown: dict[str, str] = {}
        """Calls whose outcome is unknown, paused for a person: call id -> effect key."""
        self.unknown_answers: dict[str, Any] = {}

    @workflow.run
    async def run(self, request: dict[str, Any]) -> dict[str, Any]:
        """Run the agent to its end, waiting at each pause for a ``resume`` update."""
        durable = self._durable = lookup(request["agent"])
        agent = durable.workflow_agent
        reset = current_hooks.set(self._hooks(durable))
        runner = current_runner.set(segmented(self._program_segment))  # each nested call: an activity
        try:
            if durable.agent.mcp_servers:
                self._tools = await self._list_mcp_tools(durable)
            with agent.override(model=_ModelActivity(self, durable)):
                prompt = decode_messages(request["messages"])
                options = RunOptions(
                    tool_choice=request.get("tool_choice"),
                    active_tools=request.get("active_tools"),
                    max_steps=request.get("max_steps"),
                    cancel=self._cancel,
                    tools=self._tools,
                )
                result = await start(spec_of(agent), prompt, options, self.events)
                while result.paused and result.status != "cancelled":
                    self._paused, self._status, self._answers = result, result.status, None
                    await workflow.wait_condition(lambda: self._answers is not None or self._cancel.is_set())
                    answered = self._take_answers()
                    if answered is None:
                        break  # cancelled while waiting: the run ends paused, as it stood
                    answers = decode_answers(answered)
                    self._keep_unknown_answers(answers)
                    self._paused, self._status = None, "running"
                    options = RunOptions(cancel=self._cancel, tools=self._tools)
                    result = await resume_run(spec_of(agent), result, answers, options=options, emit=self.events)
        finally:
            current_runner.reset(runner)
            current_hooks.reset(reset)
        self._paused, self._status = None, result.status
        await workflow.wait_condition(workflow.all_handlers_finished)
        document = result_document(result, agent.tools)
        size = size_of(document)
        if size > durable.limits.payload:
            fix = "end runs sooner (max_steps), or keep large tool outputs out of the conversation"
            raise TemporalLimitError(too_large("the run's result", size, durable.limits.payload, fix))
        return document

    def _hooks(self, durable: TemporalAgent) -> ExecutionHooks:
        return ExecutionHooks(
            call_tool=self._call_tool, new_pause_id=lambda: workflow.uuid4().hex, claims=False, durable=True
        )

    async def _list_mcp_tools(self, durable: TemporalAgent) -> Registry:
        options = durable.model_options
        definitions = await workflow.execute_activity(
            "agentkit.list_mcp_tools",
            {"agent": durable.agent.id},
            start_to_close_timeout=options.start_to_close_timeout,
            retry_policy=options.retry_policy,
            heartbeat_timeout=options.heartbeat_timeout,
            summary="list MCP tools",
        )
        return mcp_tools(durable, definitions)

    def check_history(self) -> None:
        """Fail the run, naming the limit, when one more step could take its history past Temporal's limits."""
        durable = self._durable
        assert durable is not None
        limits, info = durable.limits, workflow.info()
        size, length = info.get_current_history_size(), info.get_current_history_length()
        if size > limits.history - 2 * limits.payload or length > limits.events - 1000:
            raise TemporalLimitError(
                f"the run's Temporal history holds {length} events and {size / 2**20:.1f} MiB: one more step could "
                f"pass Temporal's history limits ({limits.events} events, {limits.history / 2**20:.0f} MiB: "
                "TemporalLimits.history and .events, the server's limit.historySize.error and "
                "limit.historyCount.error); end runs sooner (max_steps)"
            )

    # ---- tool calls ----------------------------------------------------------------------------------

    async def _call_tool(
        self, executor: Registry, call: ToolCall, deps: Any, ctx: ToolContext[Any] | None
    ) -> ToolResult:
        item = executor.get(call.name)
        if item is None or isinstance(item, ClientTool) or getattr(item, "_code_tool", None) is not None:
            # nothing to do outside: an unknown name's error, a client tool's check and pause (no I/O);
            # the code tool drives its program here: each segment and each nested call is an activity
            return await executor.call(call, deps=deps, context=ctx)
        durable = self._durable
        assert durable is not None
        key = effect_key(workflow.info().workflow_id, call.id)
        answer = self.unknown_answers.pop(call.id, _NO_ANSWER)
        if isinstance(answer, dict) and "output" in answer:
            return await result_of(item, call, answer["output"])  # a person says it ran, and what it returned
        options = durable.options_for(call.name)
        resumed = ctx is not None and ctx.resumed and answer is _NO_ANSWER
        try:
            outcome = await workflow.execute_activity(
                "agentkit.call_tool",
                {
                    "agent": durable.agent.id,
                    "call": {"id": call.id, "name": call.name, "arguments": call.arguments},
                    "retry": ctx.retry if ctx is not None else 0,
                    "resumed": resumed,
                    "resume_data": ctx.resume_data if resumed and ctx is not None else None,
                    "effect_key": key,
                },
                start_to_close_timeout=options.start_to_close_timeout,
                retry_policy=options.retry_policy,
                heartbeat_timeout=options.heartbeat_timeout,
                summary=call.name,
            )
        except ActivityError as error:
            return self._outcome_unknown(call, key, options, error)
        if "suspended" in outcome:
            raise ToolSuspended(outcome["suspended"]["payload"], outcome["suspended"]["schema"])
        if "client" in outcome:
            raise ClientCallRequested()
        result = decode_results([outcome["result"]], "the tool call's result")[0]
        written = outcome.get("output")
        if written is not None:  # the activity wrote the output once, as the content the model reads
            result.output = result.text if written == "text" else json.loads(result.text)
        if not result.is_error and result.output is not None:
            result.output = item.schema.validate_output(call.name, result.output)
        return result

    async def _program_segment(
        self, call_id: str, code: str | None, state: Mapping[str, Any] | None, results: Mapping[str, Returned | Raised]
    ) -> ProgramOutcome:
        """One stretch of a code-mode program in the sandbox: the ``agentkit.run_program`` activity."""
        durable = self._durable
        assert durable is not None and durable.agent.code_mode is not None
        key = durable.agent.code_mode.key
        options = durable.options_for(key)
        request = {
            "agent": durable.agent.id,
            "tool": key,
            "call_id": call_id,
            "code": code,
            "state": state,
            "results": encode_results(results),
        }
        try:
            data = await workflow.execute_activity(
                "agentkit.run_program",
                request,
                start_to_close_timeout=options.start_to_close_timeout,
                retry_policy=options.retry_policy,
                heartbeat_timeout=options.heartbeat_timeout,
                summary=f"{key} (program)",
            )
        except ActivityError as error:
            cause = error.cause
            if isinstance(cause, ApplicationError) and cause.type == "AgentSetupError":
                raise AgentSetupError(cause.message) from None
            raise ToolError(f"The program could not run: {_reason(error)}.") from None
        return decode_outcome(data)

    def _outcome_unknown(self, call: ToolCall, key: str, options: ActivityOptions, error: ActivityError) -> ToolResult:
        """A call whose attempts ran out: it may or may not have taken effect. An error result, or a pause."""
        cause = error.cause
        if isinstance(cause, CancelledError):
            raise error
        if isinstance(cause, ApplicationError) and cause.type == "AgentSetupError":
            raise AgentSetupError(cause.message) from None
        reason = _reason(error)
        if options.on_unknown == "pause":
            self.unknown[call.id] = key
            raise ToolSuspended(unknown_request(call.name, key, reason), UNKNOWN_ANSWER)
        message = (
            f"The outcome of this call to {call.name!r} is unknown: {reason}, so it may or may not have taken "
            f"effect (effect key {key}). Do not assume either; check before calling it again."
        )
        return ToolResult.error(call, message, "outcome_unknown")

    def _keep_unknown_answers(self, answers: dict[str, Any]) -> None:
        for call_id in list(self.unknown):
            answer = answers.get(call_id, _NO_ANSWER)
            if answer is not _NO_ANSWER:
                del self.unknown[call_id]
                if not isinstance(answer, ToolError):  # a ToolError ends the call in the loop itself
                    self.unknown_answers[call_id] = answer

    # ---- handlers --------------------------------------------------------------------------------------

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

    @workflow.query(name=EVENTS_QUERY)
    def read_events(self, request: dict[str, Any]) -> dict[str, Any]:
        """``{"after": n}`` -> the kept events numbered after n, and the run's status."""
        return {"events": self.events.after(int(request.get("after", 0))), "status": self._status}

    @workflow.query(name=HISTORY_QUERY)
    def history(self, request: dict[str, Any]) -> dict[str, Any]:
        """``{"request", "start", "limit"}`` -> a page of the messages of a model request in flight."""
        held = self.requests.get(int(request["request"]))
        if held is None:
            raise ApplicationError(f"model request {request['request']} is not waiting for its activity")
        messages, tools = held
        return page(messages, int(request["start"]), int(request["limit"]), tools)

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
        paused, durable = self._paused, self._durable
        if paused is None or durable is None or self._answers is not None:
            raise ApplicationError(f"the run is not waiting for answers (status {self._status!r})", type="ResumeError")
        reset = current_hooks.set(self._hooks(durable))  # a validator runs outside the run's context
        try:
            with durable.workflow_agent.override(model=_ModelActivity(self, durable)):
                check_resume(spec_of(durable.workflow_agent), paused, decode_answers(answers))
        except ResumeError as exc:
            raise ApplicationError(str(exc), type=type(exc).__name__, non_retryable=True) from None
        finally:
            current_hooks.reset(reset)

    @workflow.signal(name="cancel")
    def cancel(self) -> None:
        """Cancel the run at its next safe point."""
        self._cancel.set()
