"""One run of an agent: plan -> request -> calls -> record, turn after turn, until it ends.

The loop only sequences: each stage is a helper that takes the run's `RunConfig` (what it was asked) and
`RunState` (what has happened) and returns an outcome the loop acts on.

* plan: `_steps.plan_step` (``prepare_step``, the instructions, the tools sent, the request hooks);
* request: `_request.request` (streamed, raced with cancellation, observed);
* calls: `_calls.run_calls` (approvals decided first; then each call's pipeline, see `agentkit._agent._calls`);
* record: the results join the conversation, the retry budgets are spent (`_answer.spend_retries`), a
  tool that ends the run ends it.

A run ends when the model answers (``"complete"``), when `max_steps` turns are used (``"max_steps"``),
or when it pauses: a call needs approval (``"awaiting_approval"``: nothing of that turn runs), a call
suspended (``"suspended"``) or belongs to a client tool (``"awaiting_client"``) (the turn's other calls
run), the run's cancellation event was set (``"cancelled"``, at the next safe point: before a model
turn, or as soon as a pending model request is abandoned), or the model answered while background calls
still run (``"awaiting_background"``). Retry budgets end it by raising `RetryLimitExceeded`.
"""

from __future__ import annotations as _annotations

import inspect
from collections.abc import Awaitable, Coroutine, Mapping
from types import MappingProxyType
from typing import Any, TypeVar

from ..codemode._host import LoopHost, current_host
from ..events import OutputEvent, RunStatus
from ..exceptions import RetryLimitExceeded
from ..messages import ModelResponse, ToolCall, ToolResult, ToolResultsMessage
from ..models import ModelSettings
from . import _background, observe
from ._answer import Exhausted, Finished, Retry, spend_retries, text_answer
from ._approvals import needs_approval, pending_approval
from ._calls import run_calls
from ._emit import announce_calls, approvals_requested, finished, interrupted, pause_status, step_finished
from ._intercept import after_model_response
from ._limits import enter_run, leave_run
from ._request import request, unique_ids
from ._steps import StepRequest, plain_sent, plain_step, plan_step
from .config import ASKS, HOOKS, PROGRAMS, REQUEST_WATCH, RUN_SPAN, SCOPED, STEP_PLANNING, RunConfig
from .interrupts import Interrupt
from .results import NO_OUTPUT, Approval, PendingItem, RunResult
from .state import RunState, Step

__all__ = ["RunLoop"]

_T = TypeVar("_T")
_NONE: Mapping[str, Any] = MappingProxyType({})
"""No results done, no refusals, no answers: a new turn's (read only, made once)."""


class RunLoop:
    """One run (or one resumed leg of it): sequences its stages over its config and state."""

    __slots__ = ("config", "first_step", "state")

    def __init__(self, *, config: RunConfig, state: RunState, resumed: bool = False) -> None:
        self.config = config
        self.state = state
        self.first_step = -1 if resumed else len(state.steps)
        """The index of the run's first step: a forced tool choice holds for it only (never again on resume)."""

    # ---- the loop --------------------------------------------------------------------------------

    def run(self) -> Coroutine[Any, Any, RunResult[Any]]:
        """Take model turns until the run ends or pauses; return (a coroutine of) its result."""
        config = self.config
        machinery = config.machinery
        # a coroutine around the loop's own only for what is installed around it
        work = self.scoped(self._run()) if machinery & SCOPED else self._run()
        if not machinery & RUN_SPAN:
            return work
        return observe.agent_run(config, work)  # traced, or below a traced parent, or "off"

    async def scoped(self, work: Awaitable[_T]) -> _T:
        """Await `work` with this run installed for its tool calls.

        Its cap and budget, for the runs they start; in code mode, the host its code tool's programs call
        tools through.
        """
        token = enter_run(self.config, self.state)
        host = current_host.set(LoopHost(self.config, self.state)) if self.config.machinery & PROGRAMS else None
        try:
            return await work
        finally:
            if host is not None:
                current_host.reset(host)
            leave_run(token)

    async def _run(self) -> RunResult[Any]:
        config, state = self.config, self.state
        asked, machinery = config.request, config.machinery
        steps = state.steps
        while len(steps) < asked.max_steps:
            if state.ended is not None:  # the last turn's tools ended it (an answer, a stop-at tool)
                ended: RunResult[Any] = state.ended
                return ended
            cancel = config.cancel if config.cancel is not None else state.cancel
            if cancel is not None and cancel.is_set():  # a safe point: nothing of a turn is under way
                return self._finish("cancelled", self._last_text())
            index = len(steps)
            if state.background:
                _background.join(config, state, index)
            # A required or named tool_choice holds for the first turn only, else the loop never ends.
            settings = config.first if index == self.first_step else config.later
            # plan, request
            step: StepRequest | None = None
            if machinery & (STEP_PLANNING | REQUEST_WATCH):
                planned = await self._request(index, settings)
                if planned is None:
                    return self._finish("cancelled", self._last_text())
                step, response = planned
            else:  # the plan made once, sent as it is: no step objects to make
                tools, step_settings, state.executor, system = plain_sent(config, settings)
                sent = [system, *state.messages] if system is not None else list(state.messages)
                response = await config.model.request(sent, tools, step_settings)
            state.usage = state.usage + response.usage
            if response.message.tool_calls:
                response = unique_ids(state, response)
            if machinery & HOOKS:
                assert step is not None and step.ctx is not None  # a step with hooks is never plain
                await after_model_response(config.hooks, step.ctx, step.request, response)
            message = response.message
            state.messages.append(message)
            calls = message.tool_calls
            if not calls:
                answered = await self._answered(index, response)
                if answered is not None:
                    return answered
                continue  # asked again (an invalid answer), or background calls were awaited
            # calls, then record
            steps.append(Step(index, response, calls, []))
            paused = self._ask_approval(index, response, calls) or await self.run_turn(index, _NONE, _NONE, _NONE)
            if paused is not None:
                return paused
        return await self._out_of_steps()

    async def _request(self, index: int, settings: ModelSettings) -> tuple[StepRequest, ModelResponse] | None:
        """Plan step `index` and make its request: the step and the response (None: cancelled while it waited)."""
        config, state = self.config, self.state
        machinery = config.machinery
        if machinery & STEP_PLANNING:
            step = await plan_step(config, state, index, settings)
        else:
            step = plain_step(config, state, settings)
        state.executor = step.executor
        if machinery & REQUEST_WATCH:
            response = await request(config, state, step, index)
            if response is None:
                return None
        else:
            sent = step.request  # the step's model: prepare_step may have chosen another
            response = await sent.model.request(sent.messages, sent.tools, sent.settings)
        return step, response

    async def _out_of_steps(self) -> RunResult[Any]:
        """The run's result once `max_steps` turns are used (or the last turn's tools ended it)."""
        config, state = self.config, self.state
        if state.ended is not None:
            ended: RunResult[Any] = state.ended
            return ended
        if state.background and config.settles_background:
            await _background.wait(state)
            _background.join(config, state, len(state.steps))
        if state.background:
            return self._finish("awaiting_background", self._last_text(), _background.pending(state))
        return self._finish("max_steps", self._last_text())

    async def _answered(self, index: int, response: ModelResponse) -> RunResult[Any] | None:
        """A turn without tool calls: the run's result, or None to take another turn."""
        config, state = self.config, self.state
        state.steps.append(Step(index, response, [], []))
        if config.emit is not None:
            step_finished(config, index, response, 0)
        if config.options.on_step_finish is not None:
            await self._step_done()
        output = config.output
        if output is not None and output.schema is not None and not state.background:
            outcome = await text_answer(config, state, response)
            if isinstance(outcome, Retry):
                state.messages.append(outcome.message)
                return None  # asked again, within the budget
            if isinstance(outcome, Exhausted):
                raise output.budget_error(outcome.why, self._result("max_steps", outcome.text))
            return self._answer(outcome)
        text = response.message.text
        if not state.background:
            return self._finish("complete", text)
        if not config.settles_background:
            return self._finish("awaiting_background", text, _background.pending(state))
        # a durable engine outlives its workers, and `generate_sync`'s event loop cannot outlive the run:
        # wait, then go on
        await _background.wait(state)
        return None

    def _ask_approval(self, index: int, response: ModelResponse, calls: list[ToolCall]) -> RunResult[Any] | None:
        """Announce the turn's calls; pause the run (nothing of the turn runs) when any needs approval."""
        config, state = self.config, self.state
        if config.emit is not None:
            announce_calls(config, state, index, calls)
        executor = state.executor
        assert executor is not None
        if not config.machinery & ASKS and not executor.asks_approval():
            return None  # no tool here can ask, nor can the run
        waiting = [pending_approval(config, call) for call in calls if needs_approval(config, state, executor, call)]
        if not waiting:
            return None
        approvals_requested(config, index, waiting)
        step_finished(config, index, response, len(calls))
        state.step_tools = tuple(executor)  # a resume runs the calls against what this step could
        return self._pause("awaiting_approval", response.message.text, list(waiting))

    async def run_turn(
        self,
        index: int,
        done: Mapping[str, ToolResult],
        refused: Mapping[str, Approval],
        answers: Mapping[str, Any],
    ) -> RunResult[Any] | None:
        """Run the calls of the last step that have no result in `done`; record the turn, or pause it.

        `refused` calls become ``denied`` results; a suspended call in `answers` runs again with its data.
        Returns the paused result when a call suspended or belongs to a client tool, else ``None``.
        """
        config, state = self.config, self.state
        step = state.steps[-1]
        calls = step.tool_calls
        todo = [call for call in calls if call.id not in done] if done else calls
        executor = state.executor
        assert executor is not None
        outcomes = await run_calls(config, state, executor, todo, index, refused, answers)
        interrupts: list[Interrupt] = []
        for outcome in outcomes:
            if isinstance(outcome, Interrupt):
                interrupts.append(outcome)
        ordered: list[ToolResult]
        if done or interrupts:
            results = dict(done)
            results.update((o.call_id, o) for o in outcomes if not isinstance(o, Interrupt))
            ordered = [results[call.id] for call in calls if call.id in results]
        else:  # every call answered, in call order: the outcomes are the results (no Interrupt among them)
            ordered = outcomes  # type: ignore[assignment]
        if done is _NONE:  # this leg's own turn (`_run`'s): nothing holds its step yet, so it is filled in
            step.results = ordered
        else:  # a new Step: a resumed turn's old one still belongs to the paused result
            step = state.steps[-1] = Step(step.index, step.response, calls, ordered)
        if interrupts:
            pending = [record for item in interrupts for record in interrupted(config, state, item, index)]
            step_finished(config, index, step.response, len(calls))
            return self._pause(pause_status(pending), step.text, pending)
        self._record(index, step.response, calls, ordered)
        if config.options.on_step_finish is not None:
            await self._step_done()
        return None

    async def _step_done(self) -> None:
        """Tell the run's ``on_step_finish`` callback (if any) of the step just recorded."""
        callback = self.config.options.on_step_finish
        if callback is not None:
            done = callback(self.state.steps[-1])
            if inspect.isawaitable(done):
                await done

    def _record(self, index: int, response: ModelResponse, calls: list[ToolCall], results: list[ToolResult]) -> None:
        """The turn's results join the conversation; the retry budgets are spent; an ending tool ends the run."""
        config, state = self.config, self.state
        state.messages.append(ToolResultsMessage(results))
        if config.emit is not None:
            step_finished(config, index, response, len(calls))
        exhausted = spend_retries(config, state, results)
        output = config.output
        if exhausted is not None:
            partial = self._result("max_steps", "")
            if exhausted.answer and output is not None:
                raise output.budget_error(exhausted.why, partial)  # the answers kept failing: with the last one
            raise RetryLimitExceeded(exhausted.why, partial)
        if output is not None:
            ended = output.ended(calls, results)
            if ended is not None:
                state.ended = self._answer(Finished(*ended))

    # ---- ending -----------------------------------------------------------------------------------

    def _last_text(self) -> str:
        steps = self.state.steps
        return steps[-1].text if steps else ""

    def _answer(self, answer: Finished) -> RunResult[Any]:
        """The run's result with its answer as the output (and the `OutputEvent` for a stream)."""
        config = self.config
        if config.emit is not None:
            config.emit(OutputEvent(answer.output, len(self.state.steps) - 1))
        return self._finish("complete", answer.text, output=answer.output)

    def _result(
        self, status: RunStatus, text: str, pending: list[PendingItem] | None = None, output: Any = NO_OUTPUT
    ) -> RunResult[Any]:
        state = self.state
        return RunResult(
            text=text,
            status=status,
            steps=state.steps,
            messages=list(state.messages),
            usage=state.usage,
            pending=pending or [],
            agent_id=self.config.agent.id,
            _state=state,
            _output=output,
            _subagent_responses=state.subagent_responses,
        )

    def _finish(
        self, status: RunStatus, text: str, pending: list[PendingItem] | None = None, *, output: Any = NO_OUTPUT
    ) -> RunResult[Any]:
        if status in ("cancelled", "awaiting_background"):
            self._new_pause()  # resumable: one pause, one claim
        if self.config.emit is not None:
            finished(self.config, text, status, self.state.usage)
        return self._result(status, text, pending, output)

    def _pause(self, status: RunStatus, text: str, pending: list[PendingItem]) -> RunResult[Any]:
        self._new_pause()
        return self._finish(status, text, pending)

    def _new_pause(self) -> None:
        _background.run_id(self.config, self.state)
        self.state.pause_token = self.config.engine.new_pause_id()
