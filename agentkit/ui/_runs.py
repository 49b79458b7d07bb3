"""What a UI sends back (`RunInput`), where paused runs wait for it (`RunStore`), and `start_stream`.

`start_stream` turns a `RunInput` into the next `AgentStream`.

Both protocol adapters parse their request bodies into a `RunInput`; nothing here knows a wire format.

A paused run (any paused status) stays on the server as a `RunSnapshot`, keyed by a run id the UI echoes
back; the UI never holds the arguments that will run, only their display-shaped copies. Finished runs
leave their neutral history under the id of the last message the UI was sent, so the next turn
continues from the exact history (real arguments and results, not display-shaped ones) when the UI's
conversation still ends with that message. The stores are `agentkit.runs`' own: `MemoryRunStore` keeps
both in this process, `SQLiteRunStore` on disk for every worker process of the machine.
"""

from __future__ import annotations as _annotations

import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..exceptions import ToolError, UIInputError
from ..messages import AssistantMessage, Message, ToolResult, ToolResultsMessage
from ..runs import MemoryRunStore, RunSnapshot, RunStore

if TYPE_CHECKING:
    from starlette.requests import Request

    from ..agent import Agent, AgentStream, Approval

__all__ = [
    "ClientToolResult",
    "MemoryRunStore",
    "RunInput",
    "RunStore",
    "UIInputError",
    "exact_history",
    "read_json",
    "start_stream",
]


@dataclass(frozen=True)
class ClientToolResult:
    """The result of a tool call the UI ran itself (a client tool, `agentkit.client_tool`).

    `output` is validated against the tool's output schema on resume; `error` fails the call instead
    (the model gets the text).
    """

    call_id: str
    tool_name: str | None
    output: Any = None
    error: str | None = None


@dataclass
class RunInput:
    """A UI request in agentkit's terms: a new turn, or the continuation of a paused run.

    A new turn runs on `messages`, the UI's whole conversation converted to neutral messages (display
    values, as the UI holds them). When `anchor_id` names a message this server sent and recorded, the
    recorded exact history plus `tail` (the UI's messages after the anchor, usually the new user message)
    is used instead. A resume names the paused run (`resume_run_id`) and answers each pending call:
    `approvals` (call id -> decision), `client_results` (client tools' outputs) and `data` (what a
    suspended call asked for).
    """

    thread_id: str | None = None
    messages: list[Message] = field(default_factory=lambda: [])
    anchor_id: str | None = None
    tail: list[Message] = field(default_factory=lambda: [])
    resume_run_id: str | None = None
    approvals: dict[str, Approval] = field(default_factory=lambda: {})
    client_results: dict[str, ClientToolResult] = field(default_factory=lambda: {})
    """Outputs of client tools the UI ran, by call id."""
    data: dict[str, Any] = field(default_factory=lambda: {})
    """Answers to suspended calls (`ToolContext.suspend`), by call id."""
    resumed: RunSnapshot | None = None
    """Set by `start_stream` to the paused run it claimed (e.g. to report only the new run's usage)."""
    settle: Callable[[RunSnapshot], None] | None = field(default=None, repr=False)
    """For protocols whose answers only make sense against the paused run (AG-UI's resume entries): fills
    `approvals`, `client_results` and `data` from it, once claimed (raising `UIInputError` for bad ones)."""

    @property
    def is_resume(self) -> bool:
        """Whether this request continues a paused run rather than starting a turn."""
        return self.resume_run_id is not None

    def answers(self) -> dict[str, Any]:
        """Every answer by call id, as `Agent.resume` takes them."""
        answers: dict[str, Any] = dict(self.data)
        answers.update(self.approvals)
        for call_id, client in self.client_results.items():
            answers[call_id] = ToolError(client.error) if client.error is not None else client.output
        return answers


async def start_stream(agent: Agent[Any, Any], run_input: RunInput, store: RunStore, **run_options: Any) -> AgentStream:
    """The `AgentStream` answering `run_input`: `agent.resume_stream` for a resume, else `agent.stream`.

    A paused run is claimed from `store` before anything runs, so a second request resuming the same run
    (a double click, a replay) gets a 409 `UIInputError` and no call runs twice (the agent's own resume
    claims the pause once more, in its run store). A new turn whose anchor is a paused run continues that
    run's history with its pending calls answered as not done (the user moved on), then the new message.

    Raises:
        UIInputError: unknown or already resumed run, answers that do not match the pending calls, or
            nothing to answer.
    """
    if run_input.resume_run_id is not None:
        return await _resume(agent, run_input, run_input.resume_run_id, store, run_options)
    history = await _history(run_input, store)
    if not history:
        raise UIInputError("the request has no message to answer")
    return agent.stream(history, **run_options)


async def _resume(
    agent: Agent[Any, Any], run_input: RunInput, run_id: str, store: RunStore, run_options: dict[str, Any]
) -> AgentStream:
    paused = await store.claim_paused(run_id)
    if paused is None:
        raise UIInputError(
            f"no paused run {run_id!r}: it was already resumed, or this server does not know it (restarted, "
            "or another worker: give every worker one shared RunStore, e.g. SQLiteRunStore)",
            409,
        )
    if run_input.settle is not None:
        try:
            run_input.settle(paused)
        except UIInputError:
            await store.save_paused(run_id, paused)
            raise
    for item in paused.pending:  # a UI that answers a suspension through a tool output (Vercel's addToolOutput)
        if item.kind == "suspension" and item.call_id in run_input.client_results:
            client = run_input.client_results.pop(item.call_id)
            run_input.data[item.call_id] = client.output
    answers = run_input.answers()
    pending = {p.call_id for p in paused.pending if p.kind != "background"}
    missing = sorted(pending - set(answers))
    unknown = sorted(set(answers) - pending)
    if missing or unknown:
        await store.save_paused(run_id, paused)  # the request was wrong, not the run: it can still be resumed
        detail = f"no decision for the pending call(s) {missing}" if missing else f"no pending call {unknown}"
        raise UIInputError(f"cannot resume run {run_id!r}: {detail}", 422)
    from .._agent.resume import check_resume
    from .._agent.runs import spec_of
    from ..exceptions import ResumeError

    try:
        check_resume(spec_of(agent), paused, answers)  # the stream starts later: a wrong answer must not cost the pause
    except ResumeError as exc:
        await store.save_paused(run_id, paused)
        raise UIInputError(f"cannot resume run {run_id!r}: {exc}", 422) from None
    run_input.resumed = paused
    # a paused run keeps its own turn options (tool_choice, max_steps, ...): only these apply to a resume
    resume_options = {key: run_options[key] for key in ("deps", "context") if key in run_options}
    return agent.resume_stream(paused, answers, **resume_options)


async def _history(run_input: RunInput, store: RunStore) -> list[Message]:
    anchor = run_input.anchor_id
    if anchor is None:
        return list(run_input.messages)
    paused = await store.claim_paused(anchor)
    if paused is not None:
        return [*paused.messages, _denials(paused), *run_input.tail]
    recorded = await store.history(anchor)
    if recorded is not None:
        return [*recorded, *run_input.tail]
    return list(run_input.messages)


async def exact_history(run_input: RunInput, store: RunStore) -> list[Message]:
    """The history a new turn from `run_input` would start from, consuming nothing (for inspectors).

    A paused anchor contributes its messages up to the pending calls (their outcome is not decided yet).
    """
    anchor = run_input.anchor_id
    if anchor is not None:
        paused = await store.paused(anchor)
        if paused is not None:
            return [*paused.messages, *run_input.tail]
        recorded = await store.history(anchor)
        if recorded is not None:
            return [*recorded, *run_input.tail]
    return list(run_input.messages)


def _denials(paused: RunSnapshot) -> ToolResultsMessage:
    """Results for the paused turn: pending calls denied (the user moved on), the turn's finished calls kept."""
    last = paused.messages[-1]
    calls = last.tool_calls if isinstance(last, AssistantMessage) else []
    pending = {p.call_id: p.kind for p in paused.pending}
    finished = {r.call_id: r for r in _turn_results(paused)}
    unanswered = {
        "approval": "The user did not approve this call and sent a new message instead.",
        "suspension": "The user did not give the data this call asked for and sent a new message instead.",
        "client": "The user's application did not run this call and the user sent a new message instead.",
    }
    others = "Not run: another call of this turn was waiting for the user when the user sent a new message."
    results = [
        finished.get(call.id) or ToolResult.error(call, unanswered.get(pending.get(call.id, ""), others), "denied")
        for call in calls
    ]
    return ToolResultsMessage(results)


def _turn_results(paused: RunSnapshot) -> list[ToolResult]:
    """The results of the paused turn's calls that did finish (a suspended turn runs its other calls)."""
    from ..runs._codec import decode_results

    steps = paused.document["steps"]
    if not steps or not isinstance(steps[-1].get("results"), list):
        return []
    return decode_results(steps[-1]["results"], "steps[-1].results")


def new_id(prefix: str) -> str:
    """A fresh random id such as ``msg_3f2a...`` (unguessable: it is the key to a paused run)."""
    return f"{prefix}_{secrets.token_hex(12)}"


async def read_json(request: Request) -> Any:
    """The request's JSON body; `UIInputError` (415/400) for another content type or malformed JSON."""
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != "application/json":
        raise UIInputError(f"send the request as JSON (Content-Type: application/json), got {content_type!r}", 415)
    try:
        return json.loads(await request.body())
    except ValueError as exc:
        raise UIInputError(f"the request body is not valid JSON: {exc}") from None
