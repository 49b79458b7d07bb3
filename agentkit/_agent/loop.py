"""One run of an agent: model turn -> tool calls (concurrently) -> results -> next turn, until it ends.

A run ends when the model answers (``"complete"``), when `max_steps` turns are used (``"max_steps"``),
or when it pauses: a call needs approval (``"awaiting_approval"``: nothing of that turn runs), a call
suspended (``"suspended"``) or belongs to a client tool (``"awaiting_client"``) (the turn's other calls
run), the run's cancellation event was set (``"cancelled"``, at the next safe point: before a model
turn, or as soon as a pending model request is abandoned), or the model answered while background calls
still run (``"awaiting_background"``). Retry budgets end it by raising `RetryLimitExceeded`.
"""

from __future__ import annotations as _annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from contextvars import Token
from typing import TYPE_CHECKING, Any, TypeVar, Union

from .._tool_errors import enter_calls, leave_calls
from ..codemode._host import LoopHost, current_host
from ..context import ToolContext
from ..events import (
    ApprovalRequestedEvent,
    BackgroundResultEvent,
    ClientToolCallEvent,
    FinishEvent,
    OutputDeltaEvent,
    RunStatus,
    StepFinishEvent,
    SubagentEvent,
    SuspendedEvent,
    TextDeltaEvent,
    ToolCallDeltaEvent,
    ToolCallEvent,
    ToolCallStartEvent,
    ToolErrorEvent,
    ToolProgressEvent,
    ToolResultEvent,
)
from ..exceptions import ClientCallRequested, ModelAPIError, ProgramPaused, RetryLimitExceeded, ToolSuspended
from ..instrumentation import _tracing_for  # pyright: ignore[reportPrivateUsage]  # agentkit's own run plumbing, kept out of the public module's API
from ..messages import AssistantMessage, Message, ModelResponse, ToolCall, ToolResult, ToolResultsMessage, Usage
from ..models import Model, ModelSettings
from ..models._base import ResponseDone, TextDelta, ToolCallArgsDelta, ToolCallStart
from ..registry import Registry
from ..tools import Tool, ToolTransform
from . import observe
from ._intercept import after_model_response, call_with_hooks
from ._limits import enter_run, leave_run, limited, run_calls, spent_tools
from ._output import RunOutput
from ._steps import RunControl, StepRequest, prepare_request
from ._toolset import bind_state, unbind_state
from .display import display_arguments, error_text, merge_transforms, progress_data, shape, tool_made
from .hooks import BACKGROUND, current_hooks
from .interrupts import Interrupt, background_message, background_started, until_set
from .nested import hosted_caller, pause_status
from .pending import PendingBackground, PendingClientCall, PendingSuspension
from .results import NO_OUTPUT, Approval, PendingApproval, PendingItem, RunResult, RunState, Step
from .stream import Emit
from .subagents import Forwarded, ProgressSink, SubagentUsage

if TYPE_CHECKING:
    from ..agent import Agent

__all__ = ["RunLoop"]

# error kinds that spend retry budget: the model can fix these by calling again differently
_RETRYABLE = frozenset({"invalid_arguments", "retry"})

Outcome = Union[ToolResult, Interrupt]
"""What running one call gives: its result, or why it paused."""

_T = TypeVar("_T")


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
        cancel: asyncio.Event | None = None,
        *,
        control: RunControl,
        output: RunOutput | None = None,
        subagent_responses: list[ModelResponse] | None = None,
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
        given = cancel if cancel is not None else (context.cancelled if context is not None else None)
        self.cancel_given = given is not None
        """Whether the caller holds the cancellation event (then a pending model request is raced with it)."""
        self._cancelled = given
        self.hooks = current_hooks.get()
        self.emit = emit
        self.steps = steps
        self.usage = usage
        self.subagent_responses = subagent_responses if subagent_responses is not None else []
        self.policy = policy
        """The agent's transform policy, merged with its supervisors' (a subagent's run inherits them)."""
        self._rules: dict[str, ToolTransform] = {}
        self.tracing = _tracing_for(agent.instrument)
        """The tracer of this run (None: not traced); see `agentkit.instrumentation`."""
        self.observed = self.tracing is not None or observe.debugging()
        """Whether someone looks at this run's model requests (tracing, or DEBUG records): decided per run."""
        self.call_ids = {c.id for m in convo if isinstance(m, AssistantMessage) for c in m.tool_calls}
        """Every call id of the run so far (the given history included): new calls get fresh ones."""
        self.output = output
        """The run's output type and stop-at tools (None: a text answer, no tool ends the run)."""
        self._ended: RunResult[Any] | None = None
        self.callers: dict[str, str] = {}
        """Code mode: the id of each call a program made -> the id of the program's call (its events say so)."""

    # ---- the loop --------------------------------------------------------------------------------

    @property
    def cancelled(self) -> asyncio.Event:
        """The run's cancellation event (the caller's, or made on first use): every tool sees it in its context."""
        if self._cancelled is None:
            self._cancelled = asyncio.Event()
        return self._cancelled

    def run(self) -> Awaitable[RunResult[Any]]:
        """Take model turns until the run ends or pauses; return (an awaitable of) its result."""
        # the error policy of this run's tool calls, then its trace (`observe`: spans, DEBUG records)
        policy = enter_calls(self.agent.mask_error_details, self.policy is not None and self.policy.input is not None)
        if policy is None and self.tracing is None and self.agent.instrument is not False:
            return self.scoped(self._run())  # nothing to set up or undo: no coroutine around the loop's own
        return self._run_within(policy)

    async def _run_within(self, policy: Token[Any] | None) -> RunResult[Any]:
        try:
            if self.tracing is None and self.agent.instrument is not False:
                return await self.scoped(self._run())
            return await observe.agent_run(self, self.scoped(self._run()))  # traced, or below a traced parent
        finally:
            if policy is not None:
                leave_calls(policy)

    async def scoped(self, work: Awaitable[_T]) -> _T:
        """Await `work` with this run's concurrency cap and state installed for its tool calls."""
        token, bound = enter_run(self), bind_state(self.state)
        host = current_host.set(LoopHost(self))  # the code tool's programs call tools through this run
        try:
            return await work
        finally:
            current_host.reset(host)
            unbind_state(bound)
            leave_run(token)

    async def _run(self) -> RunResult[Any]:
        while len(self.steps) < self.state.max_steps:
            if self._ended is not None:  # the last turn's tools ended it (an answer, a stop-at tool)
                return self._ended
            if self._cancelled is not None and self._cancelled.is_set():
                return self._finish("cancelled", self._last_text())
            index = len(self.steps)
            if self.state.background:
                self.join_background(index)
            # A required or named tool_choice holds for the first turn only, else the loop never ends.
            settings = self.first if index == self.first_step else self.later
            step = await prepare_request(self, index, settings)
            request = step.request
            self.executor = step.executor
            if self.emit is None and not self.cancel_given and not self.observed:
                response: ModelResponse | None = await request.model.request(
                    request.messages, request.tools, request.settings
                )
            else:
                response = await self._turn(step, index)
            if response is None:
                return self._finish("cancelled", self._last_text())
            self.usage = self.usage + response.usage
            response = self._with_unique_ids(response)
            if self.control.hooks:
                assert step.ctx is not None  # a step with hooks is never plain
                await after_model_response(self.control.hooks, step.ctx, request, response)
            message = response.message
            self.convo.append(message)
            calls = message.tool_calls
            if not calls:
                answered = await self._answered(index, response)
                if answered is not None:
                    return answered
                continue  # asked again (an invalid answer), or background calls were awaited
            self.steps.append(Step(index, response, calls, []))
            paused = self._ask_approval(index, response, calls) or await self.run_turn(index, {}, {}, {})
            if paused is not None:
                return paused
        if self._ended is not None:
            return self._ended
        if self.state.background and self.hooks.durable:
            await self.wait_background()
            self.join_background(len(self.steps))
        if self.state.background:
            return self._finish("awaiting_background", self._last_text(), self._background_pending())
        return self._finish("max_steps", self._last_text())

    async def _answered(self, index: int, response: ModelResponse) -> RunResult[Any] | None:
        """A turn without tool calls: the run's result, or None to take another turn."""
        if self.output is not None and self.output.schema is not None and not self.state.background:
            return await self.output.text_answer(self, index, response)  # None: asked again, within the budget
        self.steps.append(Step(index, response, [], []))
        self._step_finish(index, response, 0)
        text = response.message.text
        if not self.state.background:
            return self._finish("complete", text)
        if not self.hooks.durable:
            return self._finish("awaiting_background", text, self._background_pending())
        await self.wait_background()  # a durable engine outlives its workers: wait, then go on
        return None

    def _ask_approval(self, index: int, response: ModelResponse, calls: list[ToolCall]) -> RunResult[Any] | None:
        """Announce the turn's calls; pause the run (nothing of the turn runs) when any needs approval."""
        if self.emit is not None:
            for call in calls:
                if self.output is not None and call.name == self.output.key:
                    continue  # the answer: an `OutputEvent` once it is valid, never a tool event
                caller = hosted_caller(call)  # made by a program the vendor runs (hosted code mode)
                if caller is not None:
                    self.callers[call.id] = caller
                shaped, error = shape(self.rules(call.name).input, display_arguments(call), "input")
                self.emit(ToolCallEvent(call.id, call.name, shaped, index, error, caller=caller))
        pending = [call for call in calls if self.needs_approval(call)]
        if not pending:
            return None
        approvals = [self._pending(call) for call in pending]
        if self.emit is not None:
            for item in approvals:
                self.emit(
                    ApprovalRequestedEvent(item.call_id, item.tool_name, item.payload, index, item.transform_error)
                )
        self._step_finish(index, response, len(calls))
        self.state.step_tools = tuple(self.executor)  # a resume runs the calls against what this step could
        return self._pause("awaiting_approval", response.message.text, list(approvals))

    def _last_text(self) -> str:
        return self.steps[-1].text if self.steps else ""

    async def _turn(self, step: StepRequest, index: int) -> ModelResponse | None:
        """One model request (streamed when the run streams); ``None`` when the run was cancelled meanwhile."""
        planned = step.request
        if self.emit is None:
            request: Awaitable[ModelResponse] = planned.model.request(planned.messages, planned.tools, planned.settings)
        else:
            request = self._stream_turn(step, index)
        if self.observed:  # a span and/or DEBUG records around the request
            request = observe.model_turn(self, planned, index, request)
        if not self.cancel_given:
            return await request
        finished, response = await until_set(request, self.cancelled)
        return response if finished else None

    async def run_turn(
        self,
        index: int,
        done: Mapping[str, ToolResult],
        denied: Mapping[str, Approval],
        answers: Mapping[str, Any],
    ) -> RunResult[Any] | None:
        """Run the calls of the last step that have no result in `done`; record the turn, or pause it.

        `denied` calls become ``denied`` results; a suspended call in `answers` runs again with its data.
        Returns the paused result when a call suspended or belongs to a client tool, else ``None``.
        """
        step = self.steps[-1]
        calls = step.tool_calls
        todo = [call for call in calls if call.id not in done]
        outcomes = await self.execute(todo, denied, index, answers)
        results = dict(done)
        interrupts: list[Interrupt] = []
        for outcome in outcomes:
            if isinstance(outcome, Interrupt):
                interrupts.append(outcome)
            else:
                results[outcome.call_id] = outcome
        ordered = [results[call.id] for call in calls if call.id in results]
        # a new Step: a resumed turn's old one still belongs to the paused result
        step = self.steps[-1] = Step(step.index, step.response, calls, ordered)
        if interrupts:
            pending = [p for item in interrupts for p in self._interrupted_all(item, index)]
            self._step_finish(index, step.response, len(calls))
            return self._pause(pause_status(pending), step.text, pending)
        self.record(index, step.response, calls, ordered)
        return None

    async def _stream_turn(self, step: StepRequest, index: int) -> ModelResponse:
        emit = self.emit
        assert emit is not None
        request = step.request
        names: dict[int, str] = {}
        ids: dict[int, str | None] = {}
        taken = set(self.call_ids)  # the ids `_with_unique_ids` will give, calls in the same order
        response: ModelResponse | None = None
        output = self.output if self.output is not None and self.output.schema is not None else None
        if output is not None:
            output.turn_started()
        async for event in request.model.stream(request.messages, request.tools, request.settings):
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
            elif isinstance(event, ResponseDone):  # pyright: ignore[reportUnnecessaryIsInstance]  # others are ignored
                response = event.response
        if response is None:
            raise ModelAPIError(request.model.name, "the stream ended without a complete response")
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
        if output.key is None or not isinstance(event, ToolCallArgsDelta) or names.get(event.index) != output.key:
            return False
        assert self.emit is not None
        changed, partial = output.partial(event.arguments_so_far)
        if changed:
            self.emit(OutputDeltaEvent(partial, index))
        return True

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
                observe.log_retry(self, result, count)
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

    def run_id(self) -> str:
        """The run's id, made when first needed (a pause, a background call) and kept across its pauses."""
        if not self.state.run_id:
            self.state.run_id = self.hooks.new_pause_id()
        return self.state.run_id

    def _result(
        self, status: RunStatus, text: str, pending: list[PendingItem] | None = None, output: Any = NO_OUTPUT
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
            _subagent_responses=self.subagent_responses,
        )

    def _finish(
        self, status: RunStatus, text: str, pending: list[PendingItem] | None = None, *, output: Any = NO_OUTPUT
    ) -> RunResult[Any]:
        if status in ("cancelled", "awaiting_background"):
            self.run_id()
            self.state.pause_token = self.hooks.new_pause_id()  # resumable: one pause, one claim
        if self.emit is not None:
            self.emit(FinishEvent(text, status, self.usage))
        return self._result(status, text, pending, output)

    def _pause(self, status: RunStatus, text: str, pending: list[PendingItem]) -> RunResult[Any]:
        self.run_id()
        self.state.pause_token = self.hooks.new_pause_id()
        return self._finish(status, text, pending)

    # ---- approvals -------------------------------------------------------------------------------

    def needs_approval(self, call: ToolCall, executor: Registry | None = None) -> bool:
        """Whether `call` must be approved before it runs (recomputed, never read from a stored result).

        The tool's own policy, or the run's ``require_approval=True``; never for a call that would not
        run (an unknown tool, a spent budget, arguments that do not validate). `executor`: the tools the
        call may run against (default: the step's).
        """
        executor = executor if executor is not None else self.executor
        if call.name not in executor:
            return False  # nothing would run: the call becomes an unknown-tool error
        spent = spent_tools(self)
        if spent == "all" or (spent is not None and call.name in spent):
            return False  # it gets the budget error, whatever is decided
        item = executor[call.name]
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

    async def execute(
        self,
        calls: list[ToolCall],
        denied: Mapping[str, Approval],
        index: int,
        answers: Mapping[str, Any] | None = None,
    ) -> list[Outcome]:
        """Run the calls concurrently under the run's budgets and limits; outcomes in call order.

        Denied calls become ``denied`` error results, calls over a budget ``budget`` error results; a
        suspended call whose id is in `answers` runs again with that data as `ToolContext.resume_data`.
        """
        answers = answers or {}
        if len(calls) == 1 and not denied and self._plain:
            return [await self._call(calls[0], index, answers, None)]
        return await run_calls(
            self, calls, denied, index, answers, lambda call, turn: self._call(call, index, answers, turn)
        )

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

    def _context(
        self, item: Tool[..., Any] | None, call: ToolCall, answers: Mapping[str, Any]
    ) -> ToolContext[Any] | None:
        # the run's hooks see the context the tool gets, so they get one whatever the tool takes
        if not self.control.hooks and (item is None or not item.schema.context_params):
            return None
        ctx: ToolContext[Any] = ToolContext(
            deps=self.deps,
            call_id=call.id,
            tool_name=call.name,
            agent=self.agent,
            retry=self.state.failures.get(call.name, 0),
            on_progress=self._progress(call),
            cancelled=self.cancelled,
        )
        if call.id in answers:
            ctx.resume_data = answers[call.id]
        return ctx

    def _runner(
        self, ctx: ToolContext[Any] | None, turn: asyncio.Semaphore | None, executor: Registry
    ) -> Callable[[ToolCall], Awaitable[ToolResult]]:
        """How one call of this step runs.

        A deferred tool not found yet is refused; the rest run under the call's limits, through the
        execution hooks (here, or a durable engine's activity), between the run's own hooks.
        """
        deps, engine, tools = self.deps, self.hooks, self.control.tools

        async def run(call: ToolCall) -> ToolResult:
            target = executor.get(call.name) if call.name in executor else None
            if target is None and call.name in tools.deferred:
                search = tools.search.key if tools.search is not None else "the search tool"
                return ToolResult.error(
                    call, f"Tool {call.name!r} is not loaded yet: find it with {search!r} first, then call it.",
                    "unknown_tool",
                )  # fmt: skip
            return await limited(target, call, turn, lambda: engine.call_tool(executor, call, deps, ctx))

        if not self.control.hooks:
            return run
        assert ctx is not None
        return lambda call: call_with_hooks(self, call, ctx, run)

    async def _call(
        self,
        call: ToolCall,
        index: int,
        answers: Mapping[str, Any],
        turn: asyncio.Semaphore | None,
        executor: Registry | None = None,
    ) -> Outcome:
        if self.output is not None and call.name == self.output.key and executor is None:
            return await self.output.tool_result(call)  # an answer, checked: never run as a tool
        executor = executor if executor is not None else self.executor
        item = executor.get(call.name) if call.name in executor else None
        ctx = self._context(item, call, answers)
        run = self._runner(ctx, turn, executor)
        if item is not None and item.background and call.id not in answers:
            result = self._start_background(call, run)
        else:
            try:
                result = await (run(call) if self.tracing is None else self.tracing.tool(self, call, run(call)))
            except ToolSuspended as signal:
                return Interrupt(call, "suspension", signal.payload, signal.schema)
            except ClientCallRequested:
                return Interrupt(call, "client", None, item.output_schema if item is not None else None)
            except ProgramPaused as signal:  # code mode: the program waits on calls that paused
                self.state.programs[call.id] = {"state": signal.paused.state}
                return Interrupt(call, "program", [waiting.record for _, waiting in signal.paused.waiting])
            if self.state.programs:
                self.state.programs.pop(call.id, None)  # a resumed program that ran to its end
        self.emit_result(result, index)
        return result

    # ---- pauses other than approvals -------------------------------------------------------------

    def _interrupted_all(self, item: Interrupt, index: int) -> list[PendingItem]:
        """What an interrupted call waits for: its own pending record, or a paused program's calls'."""
        if item.kind == "program":
            records: list[PendingItem] = item.request
            return records
        return [self._interrupted(item, index)]

    def _interrupted(self, item: Interrupt, index: int) -> PendingItem:
        call = item.call
        caller = self.callers.get(call.id)
        rules = self.rules(call.name)
        arguments = display_arguments(call)
        if item.kind == "suspension":
            payload, error = tool_made(rules, "suspension", item.request)  # withheld if the tool's values are redacted
            if self.emit is not None:
                self.emit(SuspendedEvent(call.id, call.name, payload, item.schema, index, error, caller=caller))
            return PendingSuspension(call.id, call.name, arguments, item.request, payload, item.schema, error)
        payload, error = shape(rules.input, arguments, "input")
        if self.emit is not None:
            self.emit(ClientToolCallEvent(call.id, call.name, payload, index, error, item.schema, caller=caller))
        return PendingClientCall(call.id, call.name, arguments, payload, item.schema, error)

    def _start_background(self, call: ToolCall, run: Callable[[ToolCall], Awaitable[ToolResult]]) -> ToolResult:
        async def work() -> ToolResult:
            try:
                return await run(call)  # under the call's limits and the run's hooks, as any call
            except (ToolSuspended, ClientCallRequested):
                return ToolResult.error(
                    call, f"The background call to {call.name!r} cannot pause the run.", "tool_error"
                )

        BACKGROUND[(self.run_id(), call.id)] = asyncio.ensure_future(work())
        self.state.background[call.id] = None
        return background_started(call)

    def _background_task(self, call_id: str) -> asyncio.Future[ToolResult] | None:
        return BACKGROUND.get((self.state.run_id, call_id))

    def join_background(self, index: int) -> None:
        """Add every finished background call's result to the conversation (before the model turn `index`)."""
        background = self.state.background
        for call_id in list(background):
            result = background[call_id]
            if result is None:
                task = self._background_task(call_id)
                if task is None or not task.done():
                    continue
                result = task.result()
            BACKGROUND.pop((self.state.run_id, call_id), None)
            del background[call_id]
            self.convo.append(background_message(result))
            if self.emit is not None:
                rules = self.rules(result.name)
                if result.is_error:
                    shown, problem = shape(rules.error, error_text(result, rules), "error")
                    event = BackgroundResultEvent(call_id, result.name, None, shown, result.error_kind, index, problem)
                else:
                    shown, problem = shape(rules.output, result.output, "output")
                    event = BackgroundResultEvent(call_id, result.name, shown, None, None, index, problem)
                self.emit(event)

    async def wait_background(self) -> None:
        """Wait for this run's background calls running in this process; their results stay in the state."""
        for call_id, result in list(self.state.background.items()):
            task = self._background_task(call_id) if result is None else None
            if task is not None:
                self.state.background[call_id] = await task

    def _background_pending(self) -> list[PendingItem]:
        calls = {c.id: c for step in self.steps for c in step.tool_calls}
        pending: list[PendingItem] = []
        for call_id, result in self.state.background.items():
            call = calls.get(call_id)
            task = self._background_task(call_id)
            done = result is not None or (task is not None and task.done())
            name = call.name if call is not None else (result.name if result is not None else "")
            arguments = display_arguments(call) if call is not None else None
            pending.append(PendingBackground(call_id, name, arguments, done))
        return pending

    def _progress(self, call: ToolCall) -> ProgressSink:
        emit = self.emit

        def on_progress(value: Any) -> None:
            if isinstance(value, SubagentUsage):
                self.usage = self.usage + value.usage  # a subagent's tokens count in the parent's run
                self.subagent_responses.extend(value.responses)  # and so does its cost
            elif emit is None:
                return
            elif isinstance(value, Forwarded):
                emit(SubagentEvent(call.name, value.agent_id, call.id, value.event))
            else:
                data, error = progress_data(self.rules(call.name), value)
                emit(ToolProgressEvent(call.id, call.name, data, error, caller=self.callers.get(call.id)))

        return ProgressSink(on_progress, streaming=emit is not None, policy=self.policy)

    def emit_result(self, result: ToolResult, index: int) -> None:
        """Report a call's result to the stream, shaped by the tool's transforms (when streaming)."""
        if self.emit is None:
            return
        rules = self.rules(result.name)
        if result.is_error:
            shaped, error = shape(rules.error, error_text(result, rules), "error")
            caller = self.callers.get(result.call_id)
            kind = result.error_kind
            self.emit(ToolErrorEvent(result.call_id, result.name, shaped, kind, index, error, caller=caller))
        else:
            shaped, error = shape(rules.output, result.output, "output")
            caller = self.callers.get(result.call_id)
            self.emit(ToolResultEvent(result.call_id, result.name, shaped, index, error, caller=caller))

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
