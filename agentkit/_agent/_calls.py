"""The tool calls of a turn, and the pipeline each call goes through.

One call, in order (`call_tool`):

1. **answer?** a call of the output tool is the run's answer: validated (`RunOutput.tool_result`), never run;
   **repeat?** a call the model keeps repeating with the same answer trips the run's `RepeatPolicy`
   (`_repeats.call_trips`: a warning, or a ``repeated`` error result instead of running);
2. **context**: the `ToolContext` the tool and the hooks see (deps, call id, retry count, cancellation,
   progress sink);
3. **background?** a background tool's call is answered "started" at once; steps 4-6 run in its own task;
4. **hooks** (`_intercept.call_with_hooks`): ``before_tool_call`` may change, answer or deny the call (a
   change that would need approval is denied), ``after_tool_call`` may replace the result;
5. **limits** (`_limits.limited`): the turn's, the run's and the enclosing runs' caps, the tool's own;
6. **execute** (`_execute`): nothing starts once the run is cancelled; the engine runs the call (in
   process: `Registry.call` with the run's error policy, which validates the arguments and runs the
   tool, through the effect journal for a journaled tool (`_effects.journaled`: reserve, run, commit);
   a durable engine: its activity); a suspension or a client call becomes an `Interrupt`; a tool
   with ``cache=`` goes through its cache (`_cache.through_cache`: a hit, or run once and kept);
7. **record**: what a tool search found is noted, the call and its answer are noted for loop detection,
   the result is reported to the stream.

Before any call runs, the turn is admitted in call order (`run_calls`): approvals were decided (the
loop pauses the turn when one is needed), denied calls get their ``denied`` result, budgets are counted
(`_limits.admit`), a turn that repeats the last ones too often is answered (`_repeats.round_trips`). Then
the admitted calls run concurrently, a ``sequential`` tool's alone. What a turn's
results do next (the conversation, the retry budgets, an ending tool) is the loop's record step.
"""

from __future__ import annotations as _annotations

import asyncio
from collections.abc import Awaitable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, Union

from .._tool_errors import failure
from ..context import ToolContext
from ..events import SubagentEvent, ToolProgressEvent
from ..exceptions import ClientCallRequested, ProgramPaused, ToolSuspended
from ..messages import ToolCall, ToolResult
from ..registry import Registry
from ..tools import Tool
from . import _background
from ._approvals import denied
from ._cache import through_cache
from ._effects import UNKNOWN_ANSWERED, call_key, journaled
from ._emit import result_event
from ._intercept import call_with_hooks
from ._limits import admit, limited, turn_cap
from ._progress import Forwarded, ProgressSink, SubagentUsage
from ._repeats import call_trips, memo, note_call, note_round, round_trips
from ._toolset import found_keys
from ._usercode import TELLS_APART, own_cancellation, settle
from .config import CACHED, CALL_CONTROL, CAPS, HOOKS, REPEATS, cancel_event
from .display import progress_data
from .interrupts import Interrupt
from .results import Approval

if TYPE_CHECKING:
    from .config import RunConfig
    from .state import RunState

__all__ = ["Outcome", "call_tool", "run_calls"]

Outcome = Union[ToolResult, Interrupt]
"""What running one call gives: its result, or why it paused."""


async def run_calls(
    config: RunConfig,
    state: RunState,
    executor: Registry,
    calls: list[ToolCall],
    index: int,
    refused: Mapping[str, Approval],
    answers: Mapping[str, Any],
) -> list[Outcome]:
    """One outcome per call, in call order: refused and over-budget calls answered at once, the rest run.

    A ``sequential`` tool's call runs alone: the calls before it finish first, the ones after wait. A
    suspended call running again with its answer (in `answers`) was counted when it first ran.
    """
    machinery = config.machinery
    # loop detection has nothing to compare before the run's first call is noted
    repeated = round_trips(config, state, calls, index) if machinery & REPEATS and state.memo is not None else {}
    if len(calls) == 1 and not refused and not repeated and not machinery & CALL_CONTROL:
        outcome = await call_tool(config, state, executor, calls[0], index, answers, None)
        if machinery & REPEATS and not isinstance(outcome, Interrupt):
            note_round(state, calls, [outcome])
        return [outcome]
    results: list[Outcome | None] = [None] * len(calls)
    admitted: list[tuple[int, ToolCall]] = []
    for position, call in enumerate(calls):
        decision = refused.get(call.id)
        if decision is not None:
            result = denied(call, decision)
        elif call.id in repeated:
            result = repeated[call.id]
        else:
            error = None if call.id in answers else await admit(config, state, executor, call)
            if error is None:
                admitted.append((position, call))
                continue
            result = ToolResult.error(call, error, "budget")
        result_event(config, result, index, state.callers.get(call.id))
        results[position] = result
    turn = turn_cap(config, len(admitted))
    batch: list[tuple[int, ToolCall]] = []

    async def flush() -> None:
        if len(batch) == 1:
            position, call = batch[0]
            results[position] = await call_tool(config, state, executor, call, index, answers, turn)
        elif batch:
            done = await asyncio.gather(
                *(call_tool(config, state, executor, call, index, answers, turn) for _, call in batch)
            )
            for (position, _), result in zip(batch, done, strict=True):
                results[position] = result
        batch.clear()

    for position, call in admitted:
        item = executor.get(call.name) if call.name in executor else None
        if item is not None and item.sequential:
            await flush()
            results[position] = await call_tool(config, state, executor, call, index, answers, turn)
        else:
            batch.append((position, call))
    await flush()
    assert all(r is not None for r in results)
    if machinery & REPEATS and not any(isinstance(r, Interrupt) for r in results):
        note_round(state, calls, results)  # type: ignore[arg-type]  # every outcome a result
    return results  # type: ignore[return-value]


async def call_tool(
    config: RunConfig,
    state: RunState,
    executor: Registry,
    call: ToolCall,
    index: int,
    answers: Mapping[str, Any],
    turn: asyncio.Semaphore | None,
    *,
    nested: bool = False,
) -> Outcome:
    """One call through the pipeline (see the module docstring); its result, or the `Interrupt` it paused on.

    `nested`: a call a program made (code mode, `agentkit._agent.nested`), never the run's answer.
    """
    output = config.output
    if output is not None and call.name == output.key and not nested:
        return await output.tool_result(call)  # 1. an answer, checked: never run as a tool
    if config.machinery & REPEATS and state.memo is not None:  # none before the run's first call is noted
        tripped = call_trips(config, state, call, index)
        if tripped is not None:  # 1. the model repeats itself: answered, not run
            if config.emit is not None:
                result_event(config, tripped, index, state.callers.get(call.id))
            return tripped
    item = executor.get(call.name)
    # 2. the run's hooks see the context the tool gets, so they get one whatever the tool takes
    needs_context = config.machinery & HOOKS or (item is not None and item.schema.context_params)
    ctx = _context(config, state, call, answers) if needs_context else None
    if item is not None and item.background and call.id not in answers:  # 3.
        result = _background.start(config, state, call, partial(_guarded, config, state, executor, ctx, turn))
    else:
        try:
            work: Awaitable[ToolResult]
            if item is not None and turn is None and not item.limits and not config.machinery & (HOOKS | CAPS):
                work = _execute(config, state, executor, item, call, ctx)  # nothing around it: straight to 6.
            else:
                work = _guarded(config, state, executor, ctx, turn, call)
            result = await (work if config.tracing is None else config.tracing.tool(config, call, work))
        except ToolSuspended as signal:
            return Interrupt(call, "suspension", signal.payload, signal.schema)
        except ClientCallRequested:
            return Interrupt(call, "client", None, item.output_schema if item is not None else None)
        except ProgramPaused as signal:  # code mode: the program waits on calls that paused
            state.programs[call.id] = {"state": signal.paused.state}
            return Interrupt(call, "program", [waiting.record for _, waiting in signal.paused.waiting])
        if state.programs:
            state.programs.pop(call.id, None)  # a resumed program that ran to its end
    _record(config, state, call, result, index)  # 7.
    return result


async def _guarded(
    config: RunConfig,
    state: RunState,
    executor: Registry,
    ctx: ToolContext[Any] | None,
    turn: asyncio.Semaphore | None,
    call: ToolCall,
    *,
    hooked: bool = True,
) -> ToolResult:
    """Steps 4-6: the hooks around the limits around the execution (a deferred tool not found yet is refused)."""
    if hooked and config.machinery & HOOKS:
        assert ctx is not None  # a run with hooks gives every call a context
        inner = partial(_guarded, config, state, executor, ctx, turn, hooked=False)
        return await call_with_hooks(config, state, executor, call, ctx, inner)
    item = executor.get(call.name)
    if item is None:
        tools = config.tools
        if call.name in tools.deferred:
            search = tools.search.key if tools.search is not None else "the search tool"
            return ToolResult.error(
                call, f"Tool {call.name!r} is not loaded yet: find it with {search!r} first, then call it.",
                "unknown_tool",
            )  # fmt: skip
    elif turn is None and not item.limits and not config.machinery & CAPS:
        return await _execute(config, state, executor, item, call, ctx)  # nothing to hold
    return await limited(item, call, turn, partial(_execute, config, state, executor, item, call, ctx), config.errors)


def _execute(
    config: RunConfig,
    state: RunState,
    executor: Registry,
    item: Tool[..., Any] | None,
    call: ToolCall,
    ctx: ToolContext[Any] | None,
) -> Awaitable[ToolResult]:
    """Step 6: run the call (raising `ToolSuspended` / `ClientCallRequested` to pause), unless cancelled.

    A plain function returning the awaitable: the call's own coroutine is awaited by the caller directly.
    """
    cancel = config.cancel if config.cancel is not None else state.cancel
    if cancel is not None and cancel.is_set():  # set while the hooks or the limits held the call
        return _ready(
            ToolResult.error(
                call, f"The call to {call.name!r} did not run: the run was cancelled before it started.", "cancelled"
            )
        )
    if config.machinery & CACHED and item is not None and item.cache is not None:
        run = partial(_run, config, state, executor, item, call, ctx)
        return through_cache(config, state, item, call, run)
    return _run(config, state, executor, item, call, ctx)


async def _ready(result: ToolResult) -> ToolResult:
    return result


async def _run(
    config: RunConfig,
    state: RunState,
    executor: Registry,
    item: Tool[..., Any] | None,
    call: ToolCall,
    ctx: ToolContext[Any] | None,
) -> ToolResult:
    """Step 6 itself: the engine runs the call; the tool's own cancellation is its failure."""
    errors = config.errors
    engine = config.engine.call_tool
    sent: Awaitable[ToolResult]
    if engine is None:  # in process: the registry validates and runs it under the run's error policy
        if item is not None and item.journaled:
            run = partial(
                executor.call, call, deps=config.deps, context=ctx, mask_error_details=errors.mask,
                redact_input=errors.redact_input,
            )  # fmt: skip
            key = ctx.effect_key if ctx is not None and ctx.effect_key is not None else call_key(config, state, call)
            sent = journaled(config, state, item, call, key, run)
        else:
            sent = executor.call(
                call, deps=config.deps, context=ctx, mask_error_details=errors.mask, redact_input=errors.redact_input
            )
    else:
        sent = engine(executor, call, config.deps, ctx)
    own: BaseException
    if TELLS_APART:
        try:
            return await sent
        except asyncio.CancelledError as exc:
            if not own_cancellation():
                raise  # the run is cancelled
            own = exc
    else:
        result, cancelled = await settle(sent)
        if cancelled is None:
            assert result is not None
            return result
        own = cancelled
    # the tool's own CancelledError: its failure, not the run's
    own_mask = item.mask_error_details if item is not None else None
    mask = own_mask if own_mask is not None else bool(errors.mask)
    redacted = errors.redact_input or (
        item is not None and item.transform is not None and item.transform.input is not None
    )
    return failure(call, "exception", own, mask=mask, redacted=redacted)


def _record(config: RunConfig, state: RunState, call: ToolCall, result: ToolResult, index: int) -> None:
    """Step 7: a search's finds join the run, loop detection notes the call, the stream hears the result."""
    search = config.tools.search
    if search is not None and result.name == search.key and not result.is_error:
        found = state.found
        found.extend(key for key in found_keys(config.tools, result.output) if key not in found)
    machinery = config.machinery
    if machinery & REPEATS:
        note_call(state, call, result)
    if config.emit is not None:
        cache = memo(state).outcomes.pop(result.call_id, None) if machinery & CACHED else None
        result_event(config, result, index, state.callers.get(result.call_id), cache)


def _context(config: RunConfig, state: RunState, call: ToolCall, answers: Mapping[str, Any]) -> ToolContext[Any]:
    ctx: ToolContext[Any] = ToolContext(
        deps=config.deps,
        call_id=call.id,
        tool_name=call.name,
        agent=config.agent.owner,
        retry=state.failures.get(call.name, 0),
        effect_key=call_key(config, state, call),
        on_progress=_progress(config, state, call),
        cancelled=cancel_event(config, state),
    )
    if call.id in answers and answers[call.id] is not UNKNOWN_ANSWERED:
        ctx.resume_data = answers[call.id]
    return ctx


def _progress(config: RunConfig, state: RunState, call: ToolCall) -> ProgressSink:
    emit = config.emit

    def on_progress(value: Any) -> None:
        if isinstance(value, SubagentUsage):
            state.usage = state.usage + value.usage  # a subagent's tokens count in the parent's run
            state.subagent_responses.extend(value.responses)  # and so does its cost
        elif emit is None:
            return
        elif isinstance(value, Forwarded):
            emit(SubagentEvent(call.name, value.agent_id, call.id, value.event))
        else:
            data, error = progress_data(config.rules(call.name), value)
            emit(ToolProgressEvent(call.id, call.name, data, error, caller=state.callers.get(call.id)))

    return ProgressSink(on_progress, streaming=emit is not None, policy=config.policy)
