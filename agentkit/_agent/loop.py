"""One run of an agent: model turn -> tool calls (concurrently) -> results -> next turn, until it ends.

A run ends when the model answers (``"complete"``), when `max_steps` turns are used (``"max_steps"``),
or when a call needs approval (``"awaiting_approval"``: nothing of that turn runs). Retry budgets end it
by raising `RetryLimitExceeded`.
"""

from __future__ import annotations as _annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Mapping
from typing import TYPE_CHECKING, Any

from ..context import ToolContext
from ..events import (
    ApprovalRequestedEvent,
    FinishEvent,
    OutputDeltaEvent,
    RunStatus,
    StepFinishEvent,
    SubagentEvent,
    TextDeltaEvent,
    ToolCallDeltaEvent,
    ToolCallEvent,
    ToolCallStartEvent,
    ToolErrorEvent,
    ToolProgressEvent,
    ToolResultEvent,
)
from ..exceptions import ModelAPIError, RetryLimitExceeded
from ..messages import AssistantMessage, Message, ModelResponse, ToolCall, ToolResult, ToolResultsMessage, Usage
from ..models import Model, ModelSettings
from ..models._base import ResponseDone, TextDelta, ToolCallArgsDelta, ToolCallStart
from ..registry import Registry
from ..tools import ToolTransform
from ._output import RunOutput
from .display import display_arguments, error_text, merge_transforms, progress_data, shape
from .results import NO_OUTPUT, Approval, PendingApproval, RunResult, RunState, Step, new_pause_token
from .stream import Emit
from .subagents import Forwarded, ProgressSink, SubagentUsage

if TYPE_CHECKING:
    from ..agent import Agent

__all__ = ["RunLoop"]

# error kinds that spend retry budget: the model can fix these by calling again differently
_RETRYABLE = frozenset({"invalid_arguments", "retry"})


class RunLoop:
    """One run (or one resumed run) of an agent: the loop and its bookkeeping."""

    def __init__(
        self,
        agent: Agent[Any, Any],
        model: Model,
        registry: Registry,
        executor: Registry,
        convo: list[Message],
        prefix: int,
        first: ModelSettings,
        later: ModelSettings,
        state: RunState,
        deps: Any,
        context: ToolContext[Any] | None,
        emit: Emit | None,
        steps: list[Step],
        usage: Usage,
        policy: ToolTransform | None = None,
        output: RunOutput | None = None,
    ) -> None:
        self.agent = agent
        self.model = model
        self.registry = registry  # what the model is told about
        self.executor = executor  # what may run: the active subset
        self.convo = convo
        self.prefix = prefix  # leading instruction messages, not part of the result's history
        self.first = first
        self.later = later
        self.first_step = len(steps)
        self.state = state
        self.deps = deps
        self.cancelled = context.cancelled if context is not None else None
        self.emit = emit
        self.steps = steps
        self.usage = usage
        self.policy = policy
        """The agent's transform policy, merged with its supervisors' (a subagent's run inherits them)."""
        self._rules: dict[str, ToolTransform] = {}
        self.call_ids = {c.id for m in convo if isinstance(m, AssistantMessage) for c in m.tool_calls}
        """Every call id of the run so far (the given history included): new calls get fresh ones."""
        self.output = output
        """The run's output type and stop-at tools (None: a text answer, no tool ends the run)."""
        self._ended: RunResult[Any] | None = None

    # ---- the loop --------------------------------------------------------------------------------

    async def run(self) -> RunResult[Any]:
        """Take model turns until the run ends; return its result."""
        while len(self.steps) < self.state.max_steps:
            if self._ended is not None:  # the last turn's tools ended it (an answer, a stop-at tool)
                return self._ended
            index = len(self.steps)
            # A required or named tool_choice holds for the first turn only, else the loop never ends.
            settings = self.first if index == self.first_step else self.later
            if self.emit is None:
                response = await self.model.request(self.convo, self.registry, settings)
            else:
                response = await self._stream_turn(settings, index)
            self.usage = self.usage + response.usage
            response = self._with_unique_ids(response)
            message = response.message
            self.convo.append(message)
            calls = message.tool_calls
            if not calls and self.output is not None and self.output.schema is not None:
                answered = await self.output.text_answer(self, index, response)
                if answered is not None:
                    return answered
                continue  # asked again, within the retry budget
            if not calls:
                self.steps.append(Step(index, response, [], []))
                self._step_finish(index, response, 0)
                return self._finish("complete", message.text)
            if self.emit is not None:
                for call in calls:
                    if self.output is not None and call.name == self.output.key:
                        continue  # the answer: an `OutputEvent` once it is valid, never a tool event
                    shaped, error = shape(self.rules(call.name).input, display_arguments(call), "input")
                    self.emit(ToolCallEvent(call.id, call.name, shaped, index, error))
            pending = [call for call in calls if self.needs_approval(call)]
            if pending:
                self.steps.append(Step(index, response, calls, []))
                approvals = [self._pending(call) for call in pending]
                if self.emit is not None:
                    for item in approvals:
                        self.emit(
                            ApprovalRequestedEvent(
                                item.call_id, item.tool_name, item.payload, index, item.transform_error
                            )
                        )
                self._step_finish(index, response, len(calls))
                self.state.pause_token = new_pause_token()
                return self._finish("awaiting_approval", message.text, approvals)
            results = await self.execute(calls, {}, index)
            self.steps.append(Step(index, response, calls, results))
            self.record(index, response, calls, results)
        if self._ended is not None:
            return self._ended
        last = self.steps[-1].text if self.steps else ""
        return self._finish("max_steps", last)

    async def _stream_turn(self, settings: ModelSettings, index: int) -> ModelResponse:
        emit = self.emit
        assert emit is not None
        names: dict[int, str] = {}
        ids: dict[int, str | None] = {}
        taken = set(self.call_ids)  # the ids `_with_unique_ids` will give, calls in the same order
        response: ModelResponse | None = None
        output = self.output if self.output is not None and self.output.schema is not None else None
        if output is not None:
            output.turn_started()
        async for event in self.model.stream(self.convo, self.registry, settings):
            if isinstance(event, TextDelta):
                emit(TextDeltaEvent(event.text, index))
                if output is not None and output.streams_text:
                    changed, partial = output.text_delta(event.text)
                    if changed:
                        emit(OutputDeltaEvent(partial, index))
            elif output is not None and self._answer_event(output, event, names, index):
                continue
            elif isinstance(event, ToolCallStart):
                call_id = event.call_id
                if call_id is not None:
                    call_id = _fresh_id(call_id, taken)
                    taken.add(call_id)
                names[event.index] = event.tool_name
                ids[event.index] = call_id
                if output is None or event.tool_name != output.key:
                    emit(ToolCallStartEvent(call_id, event.tool_name, event.index, index))
            elif isinstance(event, ToolCallArgsDelta):
                name = names.get(event.index, "")
                # Partial JSON cannot be redacted by an `input` transform: deltas (and the arguments parsed
                # so far) are shown only through an explicit `input_delta` (`input_partial`) transform.
                rules = self.rules(name)
                if rules.input_delta is not None or rules.input_partial is not None:
                    emit(self._delta_event(rules, name, ids.get(event.index), event, index))
            elif isinstance(event, ResponseDone):
                response = event.response
        if response is None:
            raise ModelAPIError(self.model.name, "the stream ended without a complete response")
        return response

    def _delta_event(
        self, rules: ToolTransform, name: str, call_id: str | None, event: ToolCallArgsDelta, index: int
    ) -> ToolCallDeltaEvent:
        shaped, error = shape(rules.input_delta, event.delta, "input_delta") if rules.input_delta else (None, None)
        partial: Any = None
        if rules.input_partial is not None and name in self.registry:
            so_far = self.registry[name].partial_arguments(event.arguments_so_far)
            partial, failed = shape(rules.input_partial, so_far, "input_partial")
            error = error or failed
        return ToolCallDeltaEvent(call_id, name, event.index, shaped, index, error, partial)

    def _answer_event(self, output: RunOutput, event: Any, names: dict[int, str], index: int) -> bool:
        """Whether `event` belongs to the output tool's call (shown as `OutputDeltaEvent`s, not tool events)."""
        if output.key is None:
            return False
        if isinstance(event, ToolCallArgsDelta) and names.get(event.index) == output.key:
            assert self.emit is not None
            changed, partial = output.partial(event.arguments_so_far)
            if changed:
                self.emit(OutputDeltaEvent(partial, index))
            return True
        return False

    def _with_unique_ids(self, response: ModelResponse) -> ModelResponse:
        """`response` with every call id unique in the run.

        A duplicate (in this turn or an earlier one) becomes ``<id>_2``, ``<id>_3``..., an empty id
        ``call_1``, ... (the same renaming every time), so one approval decision can never stand for two
        calls, and every result links to exactly one call in the history every vendor is sent.
        """
        calls = response.message.tool_calls
        renamed: list[ToolCall] = []
        for call in calls:
            call_id = _fresh_id(call.id, self.call_ids)
            self.call_ids.add(call_id)
            renamed.append(call if call_id == call.id else dataclasses.replace(call, id=call_id))
        if all(new is old for new, old in zip(renamed, calls, strict=True)):
            return response
        message = dataclasses.replace(response.message, tool_calls=renamed)
        return dataclasses.replace(response, message=message)

    def record(self, index: int, response: ModelResponse, calls: list[ToolCall], results: list[ToolResult]) -> None:
        """Append the results to the conversation, report the step, and enforce the retry budgets."""
        self.convo.append(ToolResultsMessage(results))
        self._step_finish(index, response, len(calls))
        state = self.state
        failures = state.failures
        over: str | None = None
        culprit: ToolResult | None = None
        for result in results:
            kind = result.error_kind
            if kind is None:
                if failures:
                    failures.pop(result.name, None)  # the budget is for consecutive failures of a tool
                continue
            if kind in _RETRYABLE:
                count = failures[result.name] = failures.get(result.name, 0) + 1
                state.run_retries += 1
                if count > self.agent.retries:
                    culprit = result
                    over = (
                        f"Tool {result.name!r} failed {count} times in a row ({kind}); "
                        f"the agent allows {self.agent.retries} retries per tool (Agent(retries=...))."
                    )
            elif kind == "unknown_tool":
                state.run_retries += 1
        if over is None and state.run_retries > self.agent.max_retries:
            over = (
                f"The run used {state.run_retries} retries; the agent allows {self.agent.max_retries} per run "
                "(Agent(max_retries=...))."
            )
        if over is not None:
            partial = self._result("max_steps", "")
            output = self.output
            if output is not None and output.key is not None and culprit is not None and culprit.name == output.key:
                raise output.budget_error(over, partial)  # the answers kept failing: with the last one
            raise RetryLimitExceeded(over, partial)
        if self.output is not None:
            ended = self.output.ended(calls, results)
            if ended is not None:
                text, value = ended
                self._ended = self.output.finish(self, text, value)

    def _step_finish(self, index: int, response: ModelResponse, calls: int) -> None:
        if self.emit is not None:
            self.emit(StepFinishEvent(index, response.finish_reason, calls, dataclasses.replace(response.usage)))

    def _result(
        self, status: RunStatus, text: str, pending: list[PendingApproval] | None = None, output: Any = NO_OUTPUT
    ) -> RunResult[Any]:
        return RunResult(
            text=text,
            status=status,
            steps=self.steps,
            messages=self.convo[self.prefix :],
            usage=self.usage,
            pending=pending or [],
            agent_id=self.agent.id,
            _state=self.state,
            _output=output,
        )

    def _finish(
        self, status: RunStatus, text: str, pending: list[PendingApproval] | None = None, *, output: Any = NO_OUTPUT
    ) -> RunResult[Any]:
        if self.emit is not None:
            self.emit(FinishEvent(text, status, self.usage))
        return self._result(status, text, pending, output)

    # ---- approvals -------------------------------------------------------------------------------

    def needs_approval(self, call: ToolCall) -> bool:
        """Whether `call` must be approved before it runs (recomputed, never read from a stored result)."""
        if call.name not in self.executor:
            return False  # nothing would run: the call becomes an unknown-tool error
        return self.executor[call.name].needs_approval_for(call.arguments, name=call.name)

    def _pending(self, call: ToolCall) -> PendingApproval:
        arguments = display_arguments(call)
        rules = self.rules(call.name)
        payload, error = shape(rules.approval or rules.input, arguments, "approval")
        return PendingApproval(call.id, call.name, arguments, payload, error)

    # ---- running tools ---------------------------------------------------------------------------

    async def execute(self, calls: list[ToolCall], denied: Mapping[str, Approval], index: int) -> list[ToolResult]:
        """Run the calls concurrently (denied ones become ``denied`` error results); results in call order."""
        if len(calls) == 1 and not denied:
            return [await self._call(calls[0], index)]
        runs: list[Awaitable[ToolResult]] = []
        for call in calls:
            decision = denied.get(call.id)
            if decision is None:
                runs.append(self._call(call, index))
            else:
                runs.append(self._deny(call, decision, index))
        return list(await asyncio.gather(*runs))

    async def _deny(self, call: ToolCall, decision: Approval, index: int) -> ToolResult:
        reason = f" Reason: {decision.reason.rstrip('.')}." if decision.reason else ""
        result = ToolResult.error(
            call, f"The user denied this call to {call.name!r}.{reason} Do not call it again unless asked.", "denied"
        )
        if self.emit is not None:
            self._emit_result(result, index)
        return result

    async def _call(self, call: ToolCall, index: int) -> ToolResult:
        if self.output is not None and call.name == self.output.key:
            return await self.output.tool_result(call)  # an answer, checked: never run as a tool
        executor = self.executor
        ctx: ToolContext[Any] | None = None
        if call.name in executor and executor[call.name].schema.context_params:
            ctx = ToolContext(
                deps=self.deps,
                agent=self.agent,
                retry=self.state.failures.get(call.name, 0),
                on_progress=self._progress(call),
            )
            if self.cancelled is not None:
                ctx.cancelled = self.cancelled
        result = await executor.call(call, deps=self.deps, context=ctx)
        if self.emit is not None:
            self._emit_result(result, index)
        return result

    def _progress(self, call: ToolCall) -> ProgressSink:
        emit = self.emit

        def on_progress(value: Any) -> None:
            if isinstance(value, SubagentUsage):
                self.usage = self.usage + value.usage  # a subagent's tokens count in the parent's run
            elif emit is None:
                return
            elif isinstance(value, Forwarded):
                emit(SubagentEvent(call.name, value.agent_id, call.id, value.event))
            else:
                data, error = progress_data(self.rules(call.name), value)
                emit(ToolProgressEvent(call.id, call.name, data, error))

        return ProgressSink(on_progress, streaming=emit is not None, policy=self.policy)

    def _emit_result(self, result: ToolResult, index: int) -> None:
        assert self.emit is not None
        rules = self.rules(result.name)
        if result.is_error:
            shaped, error = shape(rules.error, error_text(result, rules), "error")
            self.emit(ToolErrorEvent(result.call_id, result.name, shaped, result.error_kind, index, error))
        else:
            shaped, error = shape(rules.output, result.output, "output")
            self.emit(ToolResultEvent(result.call_id, result.name, shaped, index, error))

    def rules(self, key: str) -> ToolTransform:
        """The display transforms for the tool under `key`: its own, field by field over the policy."""
        rules = self._rules.get(key)
        if rules is None:
            own = self.registry[key].transform if key in self.registry else None
            rules = self._rules[key] = merge_transforms(own, self.policy) or ToolTransform()
        return rules


def _fresh_id(call_id: str, taken: set[str]) -> str:
    if call_id and call_id not in taken:
        return call_id
    base, n = (call_id, 2) if call_id else ("call", 1)
    while f"{base}_{n}" in taken:
        n += 1
    return f"{base}_{n}"
