"""What a UI sends back (`RunInput`), where paused runs wait for it (`RunStore`), and `start_stream`.

`start_stream` turns a `RunInput` into the next run (`UIRun`: the agent's stream, started when iterated).

Both protocol adapters parse their request bodies into a `RunInput`; nothing here knows a wire format.

A paused run (any paused status) stays on the server as a `RunSnapshot`, keyed by an unguessable id the
server made and the UI echoes back (whoever holds it may answer the pause: bind it to your users, see
the UI guide); the UI never holds the arguments that will run, only their display-shaped copies.
Finished runs leave their neutral history under the id of the last message the UI was sent, so the next
turn continues from the exact history (real arguments and results, not display-shaped ones) when the UI's
conversation still ends with that message. The stores are `agentkit.runs`' own: `MemoryRunStore` keeps
both in this process, `SQLiteRunStore` on disk for every worker process of the machine.

A request is checked before its response starts (HTTP errors), but a paused run is taken from the store
only when the response streams, and put back when the stream closes before the run got going: a client
that goes away early loses nothing.
"""

from __future__ import annotations as _annotations

import asyncio
import dataclasses
import json
import secrets
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._agent.stream import AgentStream
from .._validation import MAX_DEPTH, parse_json
from ..events import AgentEvent
from ..exceptions import ToolError, UIInputError
from ..messages import AssistantMessage, Message, ToolResult, ToolResultsMessage
from ..runs import MemoryRunStore, RunSnapshot, RunStore

if TYPE_CHECKING:
    from starlette.requests import Request

    from ..agent import Agent, Approval

__all__ = [
    "MAX_BODY_BYTES",
    "ClientToolResult",
    "MemoryRunStore",
    "RunInput",
    "RunStore",
    "UIInputError",
    "UIRun",
    "exact_history",
    "read_json",
    "start_stream",
]

MAX_BODY_BYTES = 8 * 1024 * 1024
"""The largest request body the UI endpoints read by default (larger ones get HTTP 413)."""


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
    """Set by `start_stream` to the paused run it continues (e.g. to report only the new run's usage)."""
    settle: Callable[[RunSnapshot], None] | None = field(default=None, repr=False)
    """For protocols whose answers only make sense against the paused run (AG-UI's resume entries): fills
    `approvals`, `client_results` and `data` from it (raising `UIInputError` for bad ones)."""
    also_take: tuple[str, ...] = ()
    """Other store keys holding the same paused run (AG-UI's per-thread marker), taken and put back with it."""

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


class UIRun(AgentStream[Any]):
    """The run answering one UI request: an `AgentStream` (its events, then `result`) started when iterated.

    Nothing runs and nothing is taken from the store until it is iterated. A paused run it continues (a
    resume, or a new message sent while a run was paused) is then taken from the store atomically; a
    second request that got there first makes this one fail with a 409 `UIInputError` (from the
    iteration). If the stream is closed before the run got going (the client went away), the paused run
    is put back, so a retry can resume it: for a resume, when the agent had not claimed its pause yet (its
    run store's `ResumeRecord` says so); for a new message, when no event was produced yet.
    """

    def __init__(
        self,
        agent: Agent[Any, Any],
        store: RunStore,
        open_stream: Callable[[RunSnapshot | None], AgentStream[Any]],
        taken: RunSnapshot | None = None,
        keys: tuple[str, ...] = (),
        resumes: bool = False,
    ) -> None:
        super().__init__(_unused)
        self._agent = agent
        self._store = store
        self._open = open_stream
        self._taken = taken
        self._keys = keys
        self._resumes = resumes

    async def _events(self) -> AsyncIterator[AgentEvent]:
        taking: asyncio.Future[list[RunSnapshot | None]] | None = None
        events: AsyncIterator[AgentEvent] | None = None
        seen = finished = False
        try:
            if self._taken is not None:
                # a task, shielded: a request cancelled meanwhile still learns what it took, to put it back
                taking = asyncio.ensure_future(asyncio.gather(*(self._store.claim_paused(k) for k in self._keys)))
                claimed = (await asyncio.shield(taking))[0]
                if claimed is None or claimed.pause_id != self._taken.pause_id:
                    if claimed is not None:
                        await self._store.save_paused(self._keys[0], claimed)  # another pause: not ours to take
                    taking = None  # another request resumed the run: whatever else was taken is its business
                    raise UIInputError(
                        f"the paused run {self._keys[0]!r} was resumed by another request meanwhile; nothing ran", 409
                    )
            stream = self._open(self._taken)
            events = stream.__aiter__()
            async for event in events:
                seen = True
                yield event
            self._result = stream.result
            finished = True
        finally:
            if not finished:  # one shielded task: it finishes even while this request is being cancelled
                await asyncio.shield(asyncio.ensure_future(self._settle(events, taking, seen)))

    async def _settle(
        self,
        events: AsyncIterator[AgentEvent] | None,
        taking: asyncio.Future[list[RunSnapshot | None]] | None,
        seen: bool,
    ) -> None:
        """Stop the run (the agent stream cancels it and waits), then put back what it took if it never got going."""
        if events is not None:
            close = getattr(events, "aclose", None)
            if close is not None:
                await close()
        if taking is not None:
            taken = await taking
            if events is None or not await self._got_going(seen):
                for key, snapshot in zip(self._keys, taken, strict=False):
                    if snapshot is not None:
                        await self._store.save_paused(key, snapshot)

    async def _got_going(self, seen: bool) -> bool:
        """Whether the run may have done something: a resume whose pause the agent claimed, or events seen."""
        from ..runs import ResumeRecords

        if not self._resumes or self._taken is None:
            return seen  # a new turn does nothing before its first event (a model request comes first)
        runs = self._agent._run_store()  # pyright: ignore[reportPrivateUsage]  # the UI adapters are agentkit's own
        if not isinstance(runs, ResumeRecords):
            return True  # no records to tell: keep the pause spent (at most once), never put it back
        return await runs.resume_record(self._taken.pause_id) is not None


async def _unused(emit: Any) -> Any:
    raise AssertionError("a UIRun starts its agent stream itself")  # pragma: no cover - never called


async def start_stream(agent: Agent[Any, Any], run_input: RunInput, store: RunStore, **run_options: Any) -> UIRun:
    """The run answering `run_input` (`agent.resume_stream` for a resume, else `agent.stream`), not started yet.

    Everything that can be checked is checked here, before a response starts: the paused run exists, the
    answers fit its pending calls (`UIInputError` with 409 / 422 otherwise, the run left in place). The paused
    run is taken from `store` when the returned `UIRun` is iterated, so two requests resuming one run (a
    double click, a replay) run its calls once: the later gets a 409 (the agent's own resume also claims
    the pause in its run store). A new turn whose anchor is a paused run continues that run's history with
    its pending calls answered as not done (the user moved on), then the new message.

    Raises:
        UIInputError: unknown or already resumed run, answers that do not match the pending calls, or
            nothing to answer.
    """
    if run_input.resume_run_id is not None:
        return await _resume(agent, run_input, run_input.resume_run_id, store, run_options)
    anchor = run_input.anchor_id
    paused = await store.paused(anchor) if anchor is not None else None
    if paused is not None and anchor is not None:
        history = [*_typed(agent, paused.messages), _denials(paused), *run_input.tail]
        return UIRun(agent, store, lambda _: agent.stream(history, **run_options), paused, (anchor,))
    history = await _history(agent, run_input, store)
    if not history:
        raise UIInputError("the request has no message to answer")
    return UIRun(agent, store, lambda _: agent.stream(history, **run_options))


async def _resume(
    agent: Agent[Any, Any], run_input: RunInput, run_id: str, store: RunStore, run_options: dict[str, Any]
) -> UIRun:
    paused = await store.paused(run_id)
    if paused is None:
        raise UIInputError(
            f"no paused run {run_id!r}: it was already resumed, or this server does not know it (restarted, "
            "or another worker: give every worker one shared RunStore, e.g. SQLiteRunStore)",
            409,
        )
    if run_input.settle is not None:
        run_input.settle(paused)
    finished = {r.call_id for r in _turn_results(paused)}
    for call_id in finished & set(run_input.client_results):
        del run_input.client_results[call_id]  # the server's own outputs, as the UI shows them: not answers
    for item in paused.pending:  # a UI that answers a suspension through a tool output (Vercel's addToolOutput)
        if item.kind == "suspension" and item.call_id in run_input.client_results:
            client = run_input.client_results.pop(item.call_id)
            run_input.data[item.call_id] = client.output
    answers = run_input.answers()
    pending = {p.call_id for p in paused.pending if p.kind != "background"}
    missing = sorted(pending - set(answers))
    unknown = sorted(set(answers) - pending)
    if missing or unknown:
        detail = f"no decision for the pending call(s) {missing}" if missing else f"no pending call {unknown}"
        raise UIInputError(f"cannot resume run {run_id!r}: {detail}", 422)
    from .._agent.resume import check_resume_async
    from .._agent.runs import spec_of
    from ..exceptions import ResumeError

    try:
        await check_resume_async(
            spec_of(agent), paused, answers
        )  # the stream starts later: a wrong answer costs nothing
    except ResumeError as exc:
        raise UIInputError(f"cannot resume run {run_id!r}: {exc}", 422) from None
    run_input.resumed = paused
    # a paused run keeps its own turn options (tool_choice, max_steps, ...): only these apply to a resume
    resume_options = {key: run_options[key] for key in ("deps", "context") if key in run_options}

    def resume(taken: RunSnapshot | None) -> AgentStream[Any]:
        return agent.resume_stream(taken or paused, answers, **resume_options)

    return UIRun(agent, store, resume, paused, (run_id, *run_input.also_take), resumes=True)


async def _history(agent: Agent[Any, Any], run_input: RunInput, store: RunStore) -> list[Message]:
    anchor = run_input.anchor_id
    if anchor is None:
        return list(run_input.messages)
    recorded = await store.history(anchor)
    if recorded is not None:
        return [*_typed(agent, recorded), *run_input.tail]
    return list(run_input.messages)


def _typed(agent: Agent[Any, Any], messages: list[Message]) -> list[Message]:
    """Stored messages with their tool outputs typed again (a store may hold them as JSON values).

    An output that no longer fits its tool (the tool changed) is left out: the model keeps its text.
    """
    from ..exceptions import SnapshotError
    from ..runs._codec import restore_outputs

    copied = [ToolResultsMessage(list(m.results)) if isinstance(m, ToolResultsMessage) else m for m in messages]
    try:
        restore_outputs(copied, [], agent.tools)
    except SnapshotError:
        copied = [
            ToolResultsMessage([dataclasses.replace(r, output=None) for r in m.results])
            if isinstance(m, ToolResultsMessage)
            else m
            for m in copied
        ]
    return copied


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


async def read_json(request: Request, max_bytes: int = MAX_BODY_BYTES) -> Any:
    """The request's JSON body, read up to `max_bytes`.

    Raises:
        UIInputError: 415 for another content type, 413 for a larger body (the declared length is checked
            before anything is read), 400 for malformed JSON or JSON nested deeper than
            `agentkit._validation.MAX_DEPTH` levels.
    """
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != "application/json":
        raise UIInputError(f"send the request as JSON (Content-Type: application/json), got {content_type!r}", 415)
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise UIInputError(
            f"the request body has {int(declared):,} bytes; this endpoint takes up to {max_bytes:,}", 413
        )
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > max_bytes:
            raise UIInputError(f"the request body is over {max_bytes:,} bytes, the most this endpoint takes", 413)
    return parse_body(bytes(body))


def parse_body(raw: bytes) -> Any:
    """JSON request text -> Python: nesting bounded, never `RecursionError`; `UIInputError` (400) otherwise."""
    try:
        return parse_json(raw)
    except ValueError as exc:
        problem = str(exc)
    try:  # pydantic-core refuses lone surrogates ("\ud800"), which browsers do send: the stdlib reads them
        value = json.loads(raw)
    except (ValueError, RecursionError):
        raise UIInputError(f"the request body is not valid JSON: {problem}") from None
    if _depth(value) > MAX_DEPTH:
        raise UIInputError(f"the request body is nested more than {MAX_DEPTH} levels deep") from None
    return value


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    return deepest
