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

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..exceptions import AlreadyResumedError, ApprovalError, ResumeError, ToolError, ToolOutputError
from ..messages import AssistantMessage, ToolResult
from ._toolset import open_run_tools
from .hooks import BACKGROUND, current_hooks
from .pending import PendingClientCall, PendingSuspension
from .results import PAUSED_STATUSES, Approval, RunResult
from .stream import Emit

if TYPE_CHECKING:
    from ..agent import Agent
    from ..registry import Registry
    from ..runs import RunSnapshot
    from ._options import RunOptions
    from .loop import RunLoop

__all__ = ["check_resume", "resume_run"]


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


def _prepare(
    agent: Agent[Any, Any],
    paused: RunResult[Any] | RunSnapshot,
    answers: Mapping[str, Any] | None,
    *,
    options: RunOptions | None = None,
    registry: Registry | None = None,
    extra_keys: frozenset[str] = frozenset(),
    emit: Emit | None = None,
) -> _Plan:
    from ._options import RunOptions

    options = options if options is not None else RunOptions()
    registry = registry if registry is not None else agent.tools
    result = _restored(agent, paused, registry)
    # resume is the agent's own code, split out of agent.py: it uses the agent's and the result's private parts
    state = result._state  # pyright: ignore[reportPrivateUsage]
    if result.status not in PAUSED_STATUSES or state is None:
        raise ApprovalError(
            f"only a paused run can be resumed (status awaiting_approval, suspended, awaiting_client, cancelled or "
            f"awaiting_background); got {result.status!r}"
        )
    answers = dict(answers or {})
    token = state.pause_token
    state = dataclasses.replace(
        state,
        failures=dict(state.failures),
        background=dict(state.background),
        pause_token=None,
        tool_calls=dict(state.tool_calls),
        found=list(state.found),
    )
    state.signing_key = agent._snapshot_key  # pyright: ignore[reportPrivateUsage]
    later = state.settings if state.settings.tool_choice in ("auto", "none") else None
    later = later or dataclasses.replace(state.settings, tool_choice="auto")
    steps = list(result.steps)
    run = agent._new_run(  # pyright: ignore[reportPrivateUsage]
        list(result.messages), state, later, later, options=options, registry=registry, extra_keys=extra_keys,
        emit=emit, steps=steps, usage=result.usage,
        subagent_responses=list(result._subagent_responses),  # pyright: ignore[reportPrivateUsage]
    )  # fmt: skip
    if state.step_tools is not None:
        # the paused step's tools: what could run then is what may run now
        run.executor = run.registry.select(k for k in state.step_tools if k in run.registry)
    plan = _Plan(run, result.status, token, steps[-1].index if steps else 0, {}, {}, {})
    if result.status == "awaiting_approval":
        plan.denied = _approval_decisions(run, result, answers)
    elif result.status in ("suspended", "awaiting_client"):
        plan.done, plan.data = _pending_answers(run, result, answers)
    else:
        if answers:
            raise ResumeError(f"a run with status {result.status!r} takes no answers; got {sorted(answers)}")
        if result.status == "awaiting_background":
            _check_background_here(run)
    return plan


def check_resume(
    agent: Agent[Any, Any], paused: RunResult[Any] | RunSnapshot, answers: Mapping[str, Any] | None
) -> None:
    """Raise what `resume` would raise for these answers, running and claiming nothing."""
    _prepare(agent, paused, answers)


async def resume_run(
    agent: Agent[Any, Any],
    paused: RunResult[Any] | RunSnapshot,
    answers: Mapping[str, Any] | None,
    *,
    options: RunOptions,
    emit: Emit | None,
) -> RunResult[Any]:
    """Continue `paused` with `answers` (see the module docstring); returns the run's next result.

    The run's own tools and MCP servers (`options`) are opened for the resumed run, as `generate` opens them.
    """
    async with open_run_tools(agent.tools, options.tools, options.mcp_servers) as (registry, extra_keys):
        plan = _prepare(agent, paused, answers, options=options, registry=registry, extra_keys=extra_keys, emit=emit)
        run = plan.run
        await _claim(agent, plan.token)
        paused_again: RunResult[Any] | None = None
        if plan.status == "awaiting_approval":
            paused_again = await run.scoped(run.run_turn(plan.index, {}, plan.denied, {}))
        elif plan.status in ("suspended", "awaiting_client"):
            for client_result in plan.done.values():
                run.emit_result(client_result, plan.index)
            done = {**plan.done, **{r.call_id: r for r in run.steps[-1].results}}
            paused_again = await run.scoped(run.run_turn(plan.index, done, {}, plan.data))
        elif plan.status == "awaiting_background":
            await run.wait_background()
        if paused_again is not None:
            return paused_again
        return await run.run()


def _restored(agent: Agent[Any, Any], paused: RunResult[Any] | RunSnapshot, registry: Registry) -> RunResult[Any]:
    from ..runs import RunSnapshot
    from ..runs._snapshot import restore

    if isinstance(paused, RunSnapshot):
        # checked against every tool the run could call: its own, its MCP servers', the search tool
        deferred = paused._deferred()  # pyright: ignore[reportPrivateUsage]  # read safely: checked in restore
        tools = agent._run_tools_of(registry, deferred)  # pyright: ignore[reportPrivateUsage]
        return restore(paused, agent.id, tools, agent._snapshot_key())  # pyright: ignore[reportPrivateUsage]
    if not isinstance(paused, RunResult):  # pyright: ignore[reportUnnecessaryIsInstance]  # untyped callers
        raise TypeError(f"resume() takes a paused RunResult or a RunSnapshot, got {type(paused).__name__}")
    return paused


async def _claim(agent: Agent[Any, Any], token: str | None) -> None:
    if not current_hooks.get().claims:
        return  # a durable engine applies each answer once by itself
    # Single use, copies included: a second resume could run approved calls again or overturn a denial.
    if token is None or not await agent._run_store().claim(token):  # pyright: ignore[reportPrivateUsage]
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
    missing = [c.id for c in calls if run.needs_approval(c) and c.id not in decisions]
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
        tool = run.executor.get(call.name)
        if tool is None:
            raise ResumeError(f"the client tool {call.name!r} of call {call_id!r} is not among the agent's tools")
        try:
            value = tool.schema.validate_output(call.name, answer)
        except ToolOutputError as exc:
            raise ResumeError(f"the client's output for call {call_id!r} ({call.name!r}) does not fit: {exc}") from None
        done[call_id] = ToolResult(call_id=call.id, name=call.name, content=tool.model_content(value), output=value)
    return done, data


def _check_background_here(run: RunLoop) -> None:
    state = run.state
    lost = [c for c, r in state.background.items() if r is None and (state.run_id, c) not in BACKGROUND]
    if lost:
        raise ResumeError(
            f"the background call(s) {lost} run in another process (or it ended before they finished): resume "
            "this run in the process that started it, or run the agent on a durable engine (agentkit.temporal)"
        )
