"""`Agent.resume`: continue a paused run, from its `RunResult` or its `RunSnapshot`, exactly once.

Order of work, so a wrong request never spends the pause: restore the snapshot (signature, agent, tools),
check every answer against what the pause waits for, claim the pause in the run store, then run.

What each status takes (a paused turn can wait for approvals and interrupts at once):

* ``awaiting_approval``: ``{call_id: True | False | Approval}`` for every call of the paused turn that needs
  approval and has not run (decided again here from the history, never from the stored pending list);
  nothing else is a decision (`agentkit.runs._answers.check_approval`);
* ``suspended`` / ``awaiting_client``: ``{call_id: data}`` for every pending suspension (validated against
  its schema) and ``{call_id: output}`` for every client call (validated against the tool's output
  schema); a `ToolError` instance instead fails the call with its message (a declined question, a
  client that could not run the tool). An interrupted call that needs approval runs again only if this
  run approved it (`RunState.approved`); a stored interrupt must be an unfinished call of the paused step
  of a tool that can pause that way (one taking a `ToolContext` / a client tool);
* ``cancelled`` and ``awaiting_background``: nothing (the latter waits for the background calls).
"""

from __future__ import annotations as _annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

from .._text import shorten
from ..exceptions import AlreadyResumedError, ApprovalError, ResumeError, SnapshotError, ToolError, ToolOutputError
from ..messages import AssistantMessage, ToolCall, ToolResult
from ..runs._journal import is_unknown_request
from . import _background
from ._approvals import needs_approval
from ._effects import UNKNOWN_ANSWERED, journal_of
from ._emit import result_event
from ._options import DEFAULT_OPTIONS, RunOptions
from ._setup import new_config, run_tools_of
from ._toolset import open_run_tools
from .config import AgentSpec
from .hooks import current_hooks
from .loop import RunLoop
from .pending import PendingClientCall, PendingSuspension
from .results import PAUSED_STATUSES, Approval, RunResult
from .state import UnknownOutcomes
from .stream import Emit

if TYPE_CHECKING:
    from ..registry import Registry
    from ..runs import RunSnapshot
    from ..runs._stores import ResumeRecords
    from ..tools import Tool

__all__ = ["check_resume", "check_resume_async", "resume_run"]


@dataclass
class _Plan:
    """A checked resume: the loop to continue and what to feed it; nothing has run or been claimed yet."""

    run: RunLoop
    status: str
    token: str | None
    index: int
    done: dict[str, ToolResult]
    denied: dict[str, Approval]
    data: dict[str, Any]
    checks: list[tuple[PendingSuspension, Any]]
    """Suspension data still to check against its schema (`_check_data`: off the loop when it needs to be)."""
    programs: dict[str, dict[str, Any]] | None = None
    """Code mode: the answers to calls made by paused programs, by the program's call id."""


def _prepare(
    spec: AgentSpec,
    paused: RunResult[Any] | RunSnapshot,
    answers: Mapping[str, Any] | None,
    *,
    options: RunOptions = DEFAULT_OPTIONS,
    registry: Registry | None = None,
    extra_keys: frozenset[str] = frozenset(),
    emit: Emit | None = None,
) -> _Plan:
    registry = registry if registry is not None else spec.tools()
    result = _restored(spec, paused, registry, options)
    # resume continues the paused result's own run: its state, which only results carry
    paused_state = result._state  # pyright: ignore[reportPrivateUsage]
    if result.status not in PAUSED_STATUSES or paused_state is None:
        raise ApprovalError(
            f"only a paused run can be resumed (status awaiting_approval, suspended, awaiting_client, cancelled or "
            f"awaiting_background); got {result.status!r}"
        )
    answers = dict(answers or {})
    token = paused_state.pause_token
    state = paused_state.resumed()
    # what the result shows is what goes on (a copy or a snapshot carries them on the result itself)
    state.messages, state.steps, state.usage = list(result.messages), list(result.steps), result.usage
    state.subagent_responses = list(result._subagent_responses)  # pyright: ignore[reportPrivateUsage]
    for message in state.messages:
        if isinstance(message, AssistantMessage):
            state.call_ids.update(call.id for call in message.tool_calls)
    config = new_config(spec, state, options, registry, extra_keys, emit)
    if state.step_tools is not None:
        # the paused step's tools: what could run then is what may run now
        run_registry = config.registry
        state.executor = run_registry.select(k for k in state.step_tools if k in run_registry)
    run = RunLoop(config=config, state=state, resumed=True)
    steps = state.steps
    plan = _Plan(run, result.status, token, steps[-1].index if steps else 0, {}, {}, {}, [])
    if result.status in ("awaiting_approval", "suspended", "awaiting_client"):
        if state.programs:
            from ..codemode._run import program_answers

            # calls made by programs (code mode) are answered through their programs, which run again
            plan.programs = program_answers(result.pending, state.programs, config.registry, answers)
        _turn_answers(plan, result, answers)
    else:
        if answers:
            raise ResumeError(f"a run with status {result.status!r} takes no answers; got {sorted(answers)}")
        if result.status == "awaiting_background":
            _check_background_here(run)
    return plan


def check_resume(spec: AgentSpec, paused: RunResult[Any] | RunSnapshot, answers: Mapping[str, Any] | None) -> None:
    """Raise what `resume` would raise for these answers, running and claiming nothing.

    Suspension data is checked here, on this thread: on an event loop use `check_resume_async`.
    """
    from ..runs._answers import check_answer

    plan = _prepare(spec, paused, answers)
    for item, answer in plan.checks:
        _raise_misfit(item, check_answer(item.schema, answer))


async def check_resume_async(
    spec: AgentSpec, paused: RunResult[Any] | RunSnapshot, answers: Mapping[str, Any] | None
) -> None:
    """`check_resume`, with schema checks that may backtrack run off the event loop."""
    await _check_data(_prepare(spec, paused, answers))


async def resume_run(
    spec: AgentSpec,
    paused: RunResult[Any] | RunSnapshot,
    answers: Mapping[str, Any] | None,
    *,
    options: RunOptions,
    emit: Emit | None,
    recover: bool = False,
    on_unknown: Literal["error", "pause"] = "error",
) -> RunResult[Any]:
    """Continue `paused` with `answers` (see the module docstring); returns the run's next result.

    The run's own tools and MCP servers (`options`) are opened for the resumed run, as `generate` opens them.
    `recover`: take over a resume of this pause that was lost mid-way (`Agent.recover`); `on_unknown`: what a
    call whose outcome the journal cannot tell becomes (an error result the model sees, or a pause).
    """
    async with open_run_tools(spec.tools(), options.tools, options.mcp_servers) as (registry, extra_keys):
        plan = _prepare(spec, paused, answers, options=options, registry=registry, extra_keys=extra_keys, emit=emit)
        if on_unknown == "pause":
            unknown = plan.run.state.unknown = plan.run.state.unknown or UnknownOutcomes()
            unknown.pause = True
        await _check_data(plan)
        records = await _claim(spec, plan.token, plan.run.state.run_id, recover=recover)
        if records is None or plan.token is None:
            return await _continue(plan)
        try:
            result = await _continue(plan)
        except BaseException as exc:
            await _record(records, plan.token, state="failed", error=type(exc).__name__)
            raise
        state = result._state  # pyright: ignore[reportPrivateUsage]  # the run's own result
        if result.paused and state is not None:
            await _record(records, plan.token, state="paused", status=result.status, next_pause_id=state.pause_token)
        else:
            await _record(records, plan.token, state="finished", status=result.status)
        return result


async def _continue(plan: _Plan) -> RunResult[Any]:
    run = plan.run
    paused_again: RunResult[Any] | None = None
    if plan.status in ("awaiting_approval", "suspended", "awaiting_client"):
        for client_result in plan.done.values():
            result_event(run.config, client_result, plan.index)
        done = {**plan.done, **{r.call_id: r for r in run.state.steps[-1].results}}
        data = plan.data
        if plan.programs is not None:
            for call_id, filed in plan.programs.items():
                run.state.programs[call_id]["answers"] = filed
            data = {**data, **dict.fromkeys(plan.programs)}  # the programs' calls run again, as resumed calls
        paused_again = await run.scoped(run.run_turn(plan.index, done, plan.denied, data))
    elif plan.status == "awaiting_background":
        await _background.wait(run.state)
    if paused_again is not None:
        return paused_again
    return await run.run()


def _restored(
    spec: AgentSpec, paused: RunResult[Any] | RunSnapshot, registry: Registry, options: RunOptions
) -> RunResult[Any]:
    from ..runs import RunSnapshot
    from ..runs._snapshot import restore

    if isinstance(paused, RunSnapshot):
        # checked against every tool the run could call: its own, its MCP servers', the search tool
        deferred = paused._deferred()  # pyright: ignore[reportPrivateUsage]  # read safely: checked in restore
        tools = run_tools_of(spec, registry, deferred, options)
        return restore(paused, spec.id, tools, spec.snapshot_key())
    if not isinstance(paused, RunResult):  # pyright: ignore[reportUnnecessaryIsInstance]  # untyped callers
        raise TypeError(f"resume() takes a paused RunResult or a RunSnapshot, got {type(paused).__name__}")
    return paused


async def _claim(spec: AgentSpec, token: str | None, run_id: str, *, recover: bool = False) -> ResumeRecords | None:
    """Claim the pause; the store to record the resume's progress in (None: it keeps no records).

    `recover`: a pause already claimed by a resume that recorded no end (``started``, lost in a crash) or
    ``failed`` is taken over; its journaled calls are answered from the effect journal.
    """
    from ..runs._journal import EffectJournal
    from ..runs._stores import ResumeRecords

    if not current_hooks.get().claims:
        return None  # a durable engine applies each answer once by itself
    store = spec.store()
    records = store if isinstance(store, ResumeRecords) else None
    if recover and not (isinstance(store, EffectJournal) and records is not None):
        raise ResumeError(
            f"recover() needs a run store that keeps resume records and an effect journal, got {type(store).__name__}: "
            "use SQLiteRunStore or MemoryRunStore (or implement ResumeRecords and EffectJournal)"
        )
    # Single use, copies included: a second resume could run approved calls again or overturn a denial.
    if token is None or not await store.claim(token):
        record = await records.resume_record(token) if records is not None and token is not None else None
        if recover and records is not None and record is not None and record.state in _RECOVERABLE:
            await _record(records, record.pause_id, state="started", run_id=run_id or None)
            return records
        how = f": {record.describe()}" if record is not None else ""
        raise AlreadyResumedError(
            f"this paused run (this result or snapshot, or a copy of it) was already resumed{how}. Continue from "
            "the result that resume returned (a pause is resumed at most once)"
        )
    if records is not None:
        await _record(records, token, state="started", run_id=run_id or None)
    return records


_RECOVERABLE = frozenset({"started", "failed", "unknown"})
"""How a resume that `recover` may take over went: lost mid-way (no end), failed, or not recorded."""


async def _record(records: ResumeRecords, token: str, **progress: Any) -> None:
    """Write the resume's progress even while the run is being cancelled (a shielded task finishes it)."""
    await asyncio.shield(asyncio.ensure_future(records.record_resume(token, **progress)))


def _turn_answers(plan: _Plan, result: RunResult[Any], answers: Mapping[str, Any]) -> None:
    """Check every answer against the paused turn, as the history (not the stored pending list) has it.

    The turn's calls without a result are either interrupted (a pending suspension or client call, each
    checked to be one of the last step's calls, of a tool that can pause that way) or not run yet. Each
    of those that needs approval (decided again here) needs a decision now, or, once interrupted, the
    approval it ran with (`RunState.approved`). Fills the plan's client results, denials and data.
    """
    run = plan.run
    last = result.messages[-1] if result.messages else None
    if not isinstance(last, AssistantMessage) or not result.steps or not last.tool_calls:
        raise ApprovalError("the result has no step to resume")
    step = result.steps[-1]
    calls = {c.id: c for c in step.tool_calls}
    finished = {r.call_id for r in step.results}
    nested = {str(w["id"]) for entry in run.state.programs.values() for w in entry["state"]["waiting"]}
    waiting = {  # a call a program made is not a call of the step: its program answers it (code mode)
        p.call_id: p
        for p in result.pending
        if isinstance(p, (PendingSuspension, PendingClientCall)) and p.call_id not in nested
    }
    for item in waiting.values():
        _check_interrupt(run, calls, finished, item)
    open_calls = [c for c in step.tool_calls if c.id not in finished and c.id not in waiting]
    config, state = run.config, run.state
    executor = state.executor
    assert executor is not None
    pending = [c.id for c in open_calls if needs_approval(config, state, executor, c)]
    unapproved = [i for i in waiting if i not in state.approved and needs_approval(config, state, executor, calls[i])]
    if unapproved:
        raise ApprovalError(
            f"the call(s) {unapproved} need approval and were never approved in this run, yet the paused run "
            "lists them as interrupted: the snapshot does not match its history. Nothing ran"
        )
    keys = [k for k in answers if not isinstance(k, str)]  # pyright: ignore[reportUnnecessaryIsInstance]  # untyped callers
    error = ApprovalError if result.status == "awaiting_approval" else ResumeError
    if keys:
        raise error(f"answers are keyed by call id (a str), got {[shorten(k, 40) for k in keys]}")
    decidable = {c.id for c in open_calls}
    unknown = sorted(set(answers) - decidable - set(waiting))
    if unknown:
        raise error(f"no pending call has the id(s) {unknown}; pending: {[*pending, *waiting]}")
    from ..runs._answers import check_approval

    decisions = {call_id: check_approval(call_id, answers[call_id]) for call_id in answers if call_id in decidable}
    missing = [call_id for call_id in pending if call_id not in decisions]
    if missing:
        raise ApprovalError(f"no decision for the pending call(s) {missing}: approve or deny each")
    unanswered = sorted(set(waiting) - set(answers))
    if unanswered:
        raise ResumeError(f"no answer for the pending call(s) {unanswered}: answer each (data, or a client's output)")
    plan.denied = {call_id: d for call_id, d in decisions.items() if not d.approved}
    approved = {call_id for call_id, d in decisions.items() if d.approved}
    run.state.approved = run.state.approved | approved
    for call_id, item in waiting.items():
        _interrupt_answer(plan, calls[call_id], item, answers[call_id])


def _check_interrupt(
    run: RunLoop, calls: Mapping[str, ToolCall], finished: set[str], item: PendingSuspension | PendingClientCall
) -> None:
    """A stored interrupt must be an unfinished call of the paused step, of a tool that can pause that way."""
    call = calls.get(item.call_id)
    if call is None or item.call_id in finished or call.name != item.tool_name:
        raise SnapshotError(
            f"the pending {item.kind} {item.call_id!r} ({item.tool_name!r}) is not an unfinished call of the "
            "paused step: the run's pending list does not match its history. Nothing ran"
        )
    executor = run.state.executor
    tool = executor.get(call.name) if executor is not None else None
    if item.kind == "suspension":
        # a durable engine pauses a call itself when its outcome is unknown (agentkit.temporal, on_unknown="pause");
        # in process, the effect journal does (`Agent.recover(..., on_unknown="pause")`) for a tool it journals
        able = tool is not None and (
            bool(tool.schema.context_params) or run.config.engine.durable or _journal_pause(run, tool, item)
        )
        why = "takes no ToolContext, so it cannot suspend"
    else:
        able = tool is not None and bool(getattr(tool, "executed_by_client", False))
        why = "is not a client tool"
    if not able:
        raise SnapshotError(
            f"the pending {item.kind} {item.call_id!r} belongs to a call of {call.name!r}, which "
            f"{why if tool is not None else 'is not among the tools of the paused step'}: the run's pending list "
            "does not match its history. Nothing ran"
        )


def _interrupt_answer(plan: _Plan, call: ToolCall, item: PendingSuspension | PendingClientCall, answer: Any) -> None:
    """A declined call (a `ToolError`), suspension data (checked later), or a client's output (validated)."""
    call_id = call.id
    if isinstance(answer, ToolError):  # declined: the call fails with the message, the tool is not called again
        plan.done[call_id] = ToolResult.error(call, answer.message, "tool_error")
        return
    if isinstance(item, PendingSuspension):
        run = plan.run
        tool = run.state.executor.get(call.name) if run.state.executor is not None else None
        if tool is not None and _journal_pause(run, tool, item):
            unknown = run.state.unknown = run.state.unknown or UnknownOutcomes()
            unknown.answers[call_id] = _unknown_answer(call, tool, answer)
            plan.data[call_id] = UNKNOWN_ANSWERED  # counted when it first ran; the tool gets no resume data
            return
        plan.checks.append((item, answer))
        plan.data[call_id] = answer
        return
    executor = plan.run.state.executor
    assert executor is not None
    tool = executor[call.name]
    try:
        value = tool.schema.validate_output(call.name, answer)
    except ToolOutputError as exc:
        raise ResumeError(f"the client's output for call {call_id!r} ({call.name!r}) does not fit: {exc}") from None
    plan.done[call_id] = ToolResult(call_id=call.id, name=call.name, content=tool.model_content(value), output=value)


def _journal_pause(run: RunLoop, tool: Tool[..., Any], item: PendingSuspension) -> bool:
    """Whether `item` is an in-process pause for a call whose outcome the effect journal cannot tell."""
    return (
        is_unknown_request(item.request)
        and not run.config.engine.durable
        and tool.journaled
        and not tool.reruns_unknown
        and journal_of(run.config) is not None
    )


def _unknown_answer(call: ToolCall, tool: Tool[..., Any], answer: Any) -> dict[str, Any]:
    """A person's answer to an unknown outcome (`UNKNOWN_ANSWER`), its output validated as the tool's own."""
    fields = cast("dict[str, Any]", answer) if isinstance(answer, dict) else {}
    if set(fields) == {"retry"} and fields["retry"] is True:
        return {"retry": True}
    if set(fields) != {"output"}:
        raise ResumeError(
            f"the call {call.id!r} ({call.name!r}) paused because its outcome is unknown: answer "
            '{"retry": True} to run it again under the same effect key, {"output": value} if it did run '
            f"(its result), or a ToolError to fail it; got {shorten(repr(cast(object, answer)), 80)}"
        )
    try:
        value = tool.schema.validate_output(call.name, fields["output"])
    except ToolOutputError as exc:
        raise ResumeError(f"the output given for call {call.id!r} ({call.name!r}) does not fit: {exc}") from None
    return {"output": value}


async def _check_data(plan: _Plan) -> None:
    from ..runs._answers import check_answer_async

    for item, answer in plan.checks:
        _raise_misfit(item, await check_answer_async(item.schema, answer))


def _raise_misfit(item: PendingSuspension, problems: list[str]) -> None:
    if problems:
        raise ResumeError(
            f"the data for the suspended call {item.call_id!r} ({item.tool_name!r}) does not fit: {problems}"
        )


def _check_background_here(run: RunLoop) -> None:
    lost = _background.lost(run.state)
    if lost:
        raise ResumeError(
            f"the background call(s) {lost} run in another process (or it ended before they finished): resume "
            "this run in the process that started it, or run the agent on a durable engine (agentkit.temporal)"
        )
