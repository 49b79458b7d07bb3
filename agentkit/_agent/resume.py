"""`Agent.resume`: continue a paused run, from its `RunResult` or its `RunSnapshot`, exactly once.

Order of work, so a wrong request never spends the pause: restore the snapshot (signature, agent, tools),
check every answer against what the pause waits for, claim the pause in the run store, then run.

What each status takes:

* ``awaiting_approval``: ``{call_id: bool | Approval}`` for every call that needs approval (decided again
  here from the history, never from the stored pending list);
* ``suspended`` / ``awaiting_client``: ``{call_id: data}`` for every pending suspension (validated against
  its schema) and ``{call_id: output}`` for every client call (validated against the tool's output
  schema); a `ToolError` instance instead fails the call with its message (a declined question, a
  client that could not run the tool);
* ``cancelled`` and ``awaiting_background``: nothing (the latter waits for the background calls).
"""

from __future__ import annotations as _annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..exceptions import AlreadyResumedError, ApprovalError, ResumeError, ToolError, ToolOutputError
from ..messages import AssistantMessage, ToolResult
from . import _background
from ._approvals import needs_approval
from ._emit import result_event
from ._options import RunOptions
from ._setup import new_config, run_tools_of
from ._toolset import open_run_tools
from .config import AgentSpec
from .hooks import current_hooks
from .loop import RunLoop
from .pending import PendingClientCall, PendingSuspension
from .results import PAUSED_STATUSES, Approval, RunResult
from .stream import Emit

if TYPE_CHECKING:
    from ..registry import Registry
    from ..runs import RunSnapshot

__all__ = ["check_resume", "resume_run"]

_NO_OPTIONS = RunOptions()


@dataclass
class _Plan:
    """A checked resume: the loop to continue and what to feed it; nothing has run or been claimed yet."""

    run: RunLoop
    status: str
    token: str | None
    index: int
    done: dict[str, ToolResult]
    refused: dict[str, Approval]
    data: dict[str, Any]


def _prepare(
    spec: AgentSpec,
    paused: RunResult[Any] | RunSnapshot,
    answers: Mapping[str, Any] | None,
    *,
    options: RunOptions = _NO_OPTIONS,
    registry: Registry | None = None,
    extra_keys: frozenset[str] = frozenset(),
    emit: Emit | None = None,
) -> _Plan:
    registry = registry if registry is not None else spec.tools()
    result = _restored(spec, paused, registry)
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
        run_registry = config.tools.registry
        state.executor = run_registry.select(k for k in state.step_tools if k in run_registry)
    run = RunLoop(config=config, state=state, resumed=True)
    steps = state.steps
    plan = _Plan(run, result.status, token, steps[-1].index if steps else 0, {}, {}, {})
    if result.status == "awaiting_approval":
        plan.refused = _approval_decisions(run, result, answers)
    elif result.status in ("suspended", "awaiting_client"):
        plan.done, plan.data = _pending_answers(run, result, answers)
    else:
        if answers:
            raise ResumeError(f"a run with status {result.status!r} takes no answers; got {sorted(answers)}")
        if result.status == "awaiting_background":
            _check_background_here(run)
    return plan


def check_resume(spec: AgentSpec, paused: RunResult[Any] | RunSnapshot, answers: Mapping[str, Any] | None) -> None:
    """Raise what `resume` would raise for these answers, running and claiming nothing."""
    _prepare(spec, paused, answers)


async def resume_run(
    spec: AgentSpec,
    paused: RunResult[Any] | RunSnapshot,
    answers: Mapping[str, Any] | None,
    *,
    options: RunOptions,
    emit: Emit | None,
) -> RunResult[Any]:
    """Continue `paused` with `answers` (see the module docstring); returns the run's next result.

    The run's own tools and MCP servers (`options`) are opened for the resumed run, as `generate` opens them.
    """
    async with open_run_tools(spec.tools(), options.tools, options.mcp_servers) as (registry, extra_keys):
        plan = _prepare(spec, paused, answers, options=options, registry=registry, extra_keys=extra_keys, emit=emit)
        run = plan.run
        await _claim(spec, plan.token)
        paused_again: RunResult[Any] | None = None
        if plan.status == "awaiting_approval":
            paused_again = await run.scoped(run.run_turn(plan.index, {}, plan.refused, {}))
        elif plan.status in ("suspended", "awaiting_client"):
            for client_result in plan.done.values():
                result_event(run.config, client_result, plan.index)
            done = {**plan.done, **{r.call_id: r for r in run.state.steps[-1].results}}
            paused_again = await run.scoped(run.run_turn(plan.index, done, {}, plan.data))
        elif plan.status == "awaiting_background":
            await _background.wait(run.state)
        if paused_again is not None:
            return paused_again
        return await run.run()


def _restored(spec: AgentSpec, paused: RunResult[Any] | RunSnapshot, registry: Registry) -> RunResult[Any]:
    from ..runs import RunSnapshot
    from ..runs._snapshot import restore

    if isinstance(paused, RunSnapshot):
        # checked against every tool the run could call: its own, its MCP servers', the search tool
        deferred = paused.document.get("state", {}).get("control", {}).get("deferred")
        tools = run_tools_of(spec, registry, deferred)
        return restore(paused, spec.id, tools, spec.snapshot_key())
    if not isinstance(paused, RunResult):  # pyright: ignore[reportUnnecessaryIsInstance]  # untyped callers
        raise TypeError(f"resume() takes a paused RunResult or a RunSnapshot, got {type(paused).__name__}")
    return paused


async def _claim(spec: AgentSpec, token: str | None) -> None:
    if not current_hooks.get().claims:
        return  # a durable engine applies each answer once by itself
    # Single use, copies included: a second resume could run approved calls again or overturn a denial.
    if token is None or not await spec.store().claim(token):
        raise AlreadyResumedError(
            "this paused run (this result or snapshot, or a copy of it) was already resumed; continue from the "
            "result that resume returned"
        )


def _approval_decisions(run: RunLoop, result: RunResult[Any], answers: Mapping[str, Any]) -> dict[str, Approval]:
    last = result.messages[-1] if result.messages else None
    if not isinstance(last, AssistantMessage) or not result.steps:
        raise ApprovalError("the result has no step to resume")
    decisions = {k: v if isinstance(v, Approval) else Approval(bool(v)) for k, v in answers.items()}
    calls = last.tool_calls
    unknown = sorted(set(decisions) - {c.id for c in calls})
    if unknown:
        raise ApprovalError(f"no pending call has the id(s) {unknown}; pending: {[c.id for c in calls]}")
    config, state = run.config, run.state
    executor = state.executor
    assert executor is not None
    missing = [c.id for c in calls if needs_approval(config, state, executor, c) and c.id not in decisions]
    if missing:
        raise ApprovalError(f"no decision for the pending call(s) {missing}: approve or deny each")
    return {call_id: d for call_id, d in decisions.items() if not d.approved}


def _pending_answers(
    run: RunLoop, result: RunResult[Any], answers: Mapping[str, Any]
) -> tuple[dict[str, ToolResult], dict[str, Any]]:
    """Client results (validated) and suspension data (validated) by call id."""
    from ..runs._answers import check_answer

    waiting = {p.call_id: p for p in result.pending if isinstance(p, (PendingSuspension, PendingClientCall))}
    calls = {c.id: c for c in result.steps[-1].tool_calls} if result.steps else {}
    unknown = sorted(set(answers) - set(waiting))
    if unknown:
        raise ResumeError(f"no pending call has the id(s) {unknown}; pending: {sorted(waiting)}")
    missing = sorted(set(waiting) - set(answers))
    if missing:
        raise ResumeError(f"no answer for the pending call(s) {missing}: answer each (data, or a client's output)")
    done: dict[str, ToolResult] = {}
    data: dict[str, Any] = {}
    for call_id, item in waiting.items():
        answer = answers[call_id]
        call = calls.get(call_id)
        if call is None:
            raise ResumeError(f"the pending call {call_id!r} is not among the last step's calls")
        if isinstance(answer, ToolError):  # declined: the call fails with the message, the tool is not called again
            done[call_id] = ToolResult.error(call, answer.message, "tool_error")
            continue
        if isinstance(item, PendingSuspension):
            problems = check_answer(item.schema, answer)
            if problems:
                raise ResumeError(
                    f"the data for the suspended call {call_id!r} ({item.tool_name!r}) does not fit: {problems}"
                )
            data[call_id] = answer
            continue
        if isinstance(answer, ToolError):
            done[call_id] = ToolResult.error(call, answer.message, "tool_error")
            continue
        executor = run.state.executor
        tool = executor.get(call.name) if executor is not None else None
        if tool is None:
            raise ResumeError(f"the client tool {call.name!r} of call {call_id!r} is not among the agent's tools")
        try:
            value = tool.schema.validate_output(call.name, answer)
        except ToolOutputError as exc:
            raise ResumeError(f"the client's output for call {call_id!r} ({call.name!r}) does not fit: {exc}") from None
        done[call_id] = ToolResult(call_id=call.id, name=call.name, content=tool.model_content(value), output=value)
    return done, data


def _check_background_here(run: RunLoop) -> None:
    lost = _background.lost(run.state)
    if lost:
        raise ResumeError(
            f"the background call(s) {lost} run in another process (or it ended before they finished): resume "
            "this run in the process that started it, or run the agent on a durable engine (agentkit.temporal)"
        )
