"""One run of an agent: model turn -> tool calls (concurrently) -> results -> next turn, until it ends.

A run ends when the model answers (``"complete"``), when `max_steps` turns are used (``"max_steps"``),
or when a call needs approval (``"awaiting_approval"``: nothing of that turn runs). Retry budgets end it
by raising `RetryLimitExceeded`.
"""

from __future__ import annotations as _annotations

import asyncio
import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..context import ToolContext
from ..events import (
    ApprovalRequestedEvent,
    FinishEvent,
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
from ._hooks import after_model_response, call_with_hooks
from ._limits import enter_run, leave_run, limited, run_calls, spent_tools
from ._steps import RunControl, StepRequest, prepare_request
from ._toolset import bind_state, unbind_state
from .display import display_arguments, error_text, merge_transforms, progress_data, shape
from .results import Approval, PendingApproval, RunResult, RunState, Step, new_pause_token
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
        agent: Agent,
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
        *,
        control: RunControl,
    ) -> None:
        self.agent = agent
        self.model = model
        self.registry = registry  # every tool of the run (the agent's, the run's own, deferred ones)
        self.executor = executor  # what may run in the current step: what it sent, its active subset
        self.control = control
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

    # ---- the loop --------------------------------------------------------------------------------

    async def run(self) -> RunResult:
        """Take model turns until the run ends; return its result."""
        token, bound = enter_run(self), bind_state(self.state)
        try:
            return await self._run()
        finally:
            unbind_state(bound)
            leave_run(token)

    async def _run(self) -> RunResult:
        while len(self.steps) < self.state.max_steps:
            index = len(self.steps)
            # A required or named tool_choice holds for the first turn only, else the loop never ends.
            settings = self.first if index == self.first_step else self.later
            step = await prepare_request(self, index, settings)
            request = step.request
            self.executor = step.executor
            if self.emit is None:
                response = await request.model.request(request.messages, request.tools, request.settings)
            else:
                response = await self._stream_turn(step, index)
            self.usage = self.usage + response.usage
            response = self._with_unique_ids(response)
            if self.control.hooks:
                await after_model_response(self.control.hooks, step.ctx, request, response)
            message = response.message
            self.convo.append(message)
            calls = message.tool_calls
            if not calls:
                self.steps.append(Step(index, response, [], []))
                self._step_finish(index, response, 0)
                return self._finish("complete", message.text)
            if self.emit is not None:
                for call in calls:
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
                self.state.step_tools = tuple(self.executor)
                return self._finish("awaiting_approval", message.text, approvals)
            results = await self.execute(calls, {}, index)
            self.steps.append(Step(index, response, calls, results))
            self.record(index, response, calls, results)
        last = self.steps[-1].text if self.steps else ""
        return self._finish("max_steps", last)

    async def _stream_turn(self, step: StepRequest, index: int) -> ModelResponse:
        emit = self.emit
        assert emit is not None
        request = step.request
        names: dict[int, str] = {}
        ids: dict[int, str | None] = {}
        taken = set(self.call_ids)  # the ids `_with_unique_ids` will give, calls in the same order
        response: ModelResponse | None = None
        async for event in request.model.stream(request.messages, request.tools, request.settings):
            if isinstance(event, TextDelta):
                emit(TextDeltaEvent(event.text, index))
            elif isinstance(event, ToolCallStart):
                call_id = event.call_id
                if call_id is not None:
                    call_id = _fresh_id(call_id, taken)
                    taken.add(call_id)
                names[event.index] = event.tool_name
                ids[event.index] = call_id
                emit(ToolCallStartEvent(call_id, event.tool_name, event.index, index))
            elif isinstance(event, ToolCallArgsDelta):
                name = names.get(event.index, "")
                # Partial JSON cannot be redacted by an `input` transform: deltas are shown only through
                # an explicit `input_delta` transform.
                delta_fn = self.rules(name).input_delta
                if delta_fn is not None:
                    shaped, error = shape(delta_fn, event.delta, "input_delta")
                    emit(ToolCallDeltaEvent(ids.get(event.index), name, event.index, shaped, index, error))
            elif isinstance(event, ResponseDone):
                response = event.response
        if response is None:
            raise ModelAPIError(request.model.name, "the stream ended without a complete response")
        return response

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
            raise RetryLimitExceeded(over, self._result("max_steps", ""))

    def _step_finish(self, index: int, response: ModelResponse, calls: int) -> None:
        if self.emit is not None:
            self.emit(StepFinishEvent(index, response.finish_reason, calls, dataclasses.replace(response.usage)))

    def _result(self, status: RunStatus, text: str, pending: list[PendingApproval] | None = None) -> RunResult:
        return RunResult(
            text=text,
            status=status,
            steps=self.steps,
            messages=self.convo[self.prefix :],
            usage=self.usage,
            pending=pending or [],
            agent_id=self.agent.id,
            _state=self.state,
            _run_tools={k: self.registry[k] for k in self.control.extra_keys if k in self.registry} or None,
        )

    def _finish(self, status: RunStatus, text: str, pending: list[PendingApproval] | None = None) -> RunResult:
        if self.emit is not None:
            self.emit(FinishEvent(text, status, self.usage))
        return self._result(status, text, pending)

    # ---- approvals -------------------------------------------------------------------------------

    def needs_approval(self, call: ToolCall) -> bool:
        """Whether `call` must be approved before it runs (recomputed, never read from a stored result).

        The tool's own policy, or the run's ``require_approval=True``; never for a call that would not
        run (an unknown tool, a spent budget, arguments that do not validate).
        """
        if call.name not in self.executor:
            return False  # nothing would run: the call becomes an unknown-tool error
        spent = spent_tools(self)
        if spent == "all" or (spent is not None and call.name in spent):
            return False  # it gets the budget error, whatever is decided
        item = self.executor[call.name]
        if self.state.require_approval:
            try:
                item.schema.validate_arguments(call.name, call.arguments)
            except Exception:  # noqa: BLE001 - invalid arguments never run: no decision is needed
                return False
            return True
        return item.needs_approval_for(call.arguments, name=call.name)

    def _pending(self, call: ToolCall) -> PendingApproval:
        arguments = display_arguments(call)
        rules = self.rules(call.name)
        payload, error = shape(rules.approval or rules.input, arguments, "approval")
        return PendingApproval(call.id, call.name, arguments, payload, error)

    # ---- running tools ---------------------------------------------------------------------------

    async def execute(self, calls: list[ToolCall], denied: Mapping[str, Approval], index: int) -> list[ToolResult]:
        """Run the calls concurrently under the run's budgets and limits; one result per call, in call order.

        Denied calls become ``denied`` error results, calls over a budget ``budget`` error results.
        """
        if len(calls) == 1 and not denied and self._plain:
            return [await self._call(calls[0], index, None)]
        return await run_calls(self, calls, denied, index, lambda call, turn: self._call(call, index, turn))

    @property
    def _plain(self) -> bool:
        """Nothing to check around a single call: no hooks, budgets or limits in this run."""
        control = self.control
        limits = control.limits
        return not (
            control.hooks
            or control.tools.budgeted
            or limits.max_tool_calls is not None
            or limits.max_concurrency is not None
            or limits.max_turn_concurrency is not None
        )

    def deny(self, call: ToolCall, decision: Approval, index: int) -> ToolResult:
        """The ``denied`` error result of a call the user did not approve (its event emitted)."""
        reason = f" Reason: {decision.reason.rstrip('.')}." if decision.reason else ""
        result = ToolResult.error(
            call, f"The user denied this call to {call.name!r}.{reason} Do not call it again unless asked.", "denied"
        )
        self.emit_result(result, index)
        return result

    async def _call(self, call: ToolCall, index: int, turn: asyncio.Semaphore | None) -> ToolResult:
        executor = self.executor
        item = executor.get(call.name) if call.name in executor else None
        ctx: ToolContext[Any] | None = None
        hooks = self.control.hooks
        if hooks or (item is not None and item.schema.context_params):
            ctx = ToolContext(
                deps=self.deps,
                call_id=call.id,
                tool_name=call.name,
                agent=self.agent,
                retry=self.state.failures.get(call.name, 0),
                on_progress=self._progress(call),
            )
            if self.cancelled is not None:
                ctx.cancelled = self.cancelled

        async def run(call: ToolCall) -> ToolResult:
            target = executor.get(call.name) if call.name in executor else None
            if target is None and call.name in self.control.tools.deferred:
                search = self.control.tools.search
                return ToolResult.error(
                    call,
                    f"Tool {call.name!r} is not loaded yet: find it with "
                    f"{search.key if search else 'the search tool'!r} first, then call it.",
                    "unknown_tool",
                )
            return await limited(target, call, turn, lambda: executor.call(call, deps=self.deps, context=ctx))

        if hooks:
            assert ctx is not None
            result = await call_with_hooks(self, call, ctx, run)
        else:
            result = await run(call)
        self.emit_result(result, index)
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

    def emit_result(self, result: ToolResult, index: int) -> None:
        """Report a call's result to the stream, shaped by the tool's transforms (when streaming)."""
        if self.emit is None:
            return
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
