"""What a UI sends back (`RunInput`), where paused runs wait for it (`RunStore`), and `start_stream`.

`start_stream` turns a `RunInput` into the next `AgentStream`.

Both protocol adapters parse their request bodies into a `RunInput`; nothing here knows a wire format.

A paused `RunResult` (status ``awaiting_approval``) stays on the server, keyed by a run id the UI echoes
back; the UI never holds the arguments that will run, only their display-shaped copies. Finished runs
leave their neutral history under the id of the last message the UI was sent, so the next turn
continues from the exact history (real arguments and results, not display-shaped ones) when the UI's
conversation still ends with that message. `MemoryRunStore` keeps both in this process; issue 11's
durable, single-use snapshots plug in behind the same `RunStore` protocol.
"""

from __future__ import annotations as _annotations

import secrets
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..exceptions import UIInputError
from ..messages import AssistantMessage, Message, ToolResult, ToolResultsMessage

if TYPE_CHECKING:
    from ..agent import Agent, AgentStream, Approval, RunResult

__all__ = [
    "ClientToolResult",
    "MemoryRunStore",
    "RunInput",
    "RunStore",
    "UIInputError",
    "exact_history",
    "start_stream",
]


@dataclass(frozen=True)
class ClientToolResult:
    """The result of a tool call the UI ran itself (a client tool, issue 11).

    Parsed from both protocols so the shape is settled; resuming with these is not wired yet, and a
    request carrying them is refused with a clear error.
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
    is used instead. A resume names the paused run (`resume_run_id`) and decides each pending call
    (`approvals`: call id -> decision).
    """

    thread_id: str | None = None
    messages: list[Message] = field(default_factory=list)
    anchor_id: str | None = None
    tail: list[Message] = field(default_factory=list)
    resume_run_id: str | None = None
    approvals: dict[str, Approval] = field(default_factory=dict)
    client_results: dict[str, ClientToolResult] = field(default_factory=dict)
    """Results of client tools (issue 11): where they arrive; refused until client tools exist."""
    resumed: RunResult | None = None
    """Set by `start_stream` to the paused result it claimed (e.g. to report only the new run's usage)."""

    @property
    def is_resume(self) -> bool:
        """Whether this request continues a paused run rather than starting a turn."""
        return self.resume_run_id is not None


@runtime_checkable
class RunStore(Protocol):
    """Where the UI adapters keep paused runs (single use) and finished histories.

    Async so a durable store (issue 11: snapshots in SQLite, Redis, ...) never blocks the event loop.
    """

    async def save_paused(self, run_id: str, result: RunResult) -> None:
        """Keep a paused result until one `claim_paused(run_id)` takes it."""
        ...

    async def claim_paused(self, run_id: str) -> RunResult | None:
        """Take the paused result away atomically (a second claim gets ``None``)."""
        ...

    async def paused(self, run_id: str) -> RunResult | None:
        """Look at a paused result without taking it."""
        ...

    async def save_history(self, message_id: str, messages: list[Message]) -> None:
        """Record the neutral history as it stood when the UI was sent `message_id`."""
        ...

    async def history(self, message_id: str) -> list[Message] | None:
        """The history recorded for `message_id`, or ``None``."""
        ...


class MemoryRunStore:
    """An in-process `RunStore`, bounded: the oldest entries go first past `max_entries` of each kind.

    Lost on restart, and not shared between worker processes: run one process, or use a durable store.
    """

    def __init__(self, max_entries: int = 1000) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be at least 1, got {max_entries}")
        self.max_entries = max_entries
        self._paused: OrderedDict[str, RunResult] = OrderedDict()
        self._histories: OrderedDict[str, list[Message]] = OrderedDict()

    def _put(self, table: OrderedDict[str, Any], key: str, value: Any) -> None:
        table[key] = value
        table.move_to_end(key)
        while len(table) > self.max_entries:
            table.popitem(last=False)

    async def save_paused(self, run_id: str, result: RunResult) -> None:
        """Keep a paused result until it is claimed (or pushed out by newer ones)."""
        self._put(self._paused, run_id, result)

    async def claim_paused(self, run_id: str) -> RunResult | None:
        """Take the paused result (no await inside: atomic on the event loop)."""
        return self._paused.pop(run_id, None)

    async def paused(self, run_id: str) -> RunResult | None:
        """The paused result, left in place."""
        return self._paused.get(run_id)

    async def save_history(self, message_id: str, messages: list[Message]) -> None:
        """Record a finished run's history under the last message id the UI saw."""
        self._put(self._histories, message_id, list(messages))

    async def history(self, message_id: str) -> list[Message] | None:
        """The history recorded for `message_id` (a copy), or ``None``."""
        found = self._histories.get(message_id)
        return list(found) if found is not None else None


async def start_stream(agent: Agent[Any, Any], run_input: RunInput, store: RunStore, **run_options: Any) -> AgentStream:
    """The `AgentStream` answering `run_input`: `agent.resume_stream` for a resume, else `agent.stream`.

    A paused run is claimed from `store` before anything runs, so a second request resuming the same run
    (a double click, a replay) gets a 409 `UIInputError` and no call runs twice. A new turn whose anchor
    is a run still waiting for approval continues that run's history with its pending calls denied
    (the user moved on without deciding), then the new message.

    Raises:
        UIInputError: unknown or already resumed run, decisions that do not match the pending calls,
            client-tool results (not supported yet), or nothing to answer.
    """
    if run_input.client_results:
        ids = sorted(run_input.client_results)
        raise UIInputError(
            f"client-tool results arrived for call(s) {ids}, but agentkit has no client tools yet (issue 11): "
            "only the server's own tools run",
            422,
        )
    if run_input.resume_run_id is not None:
        return await _resume(agent, run_input, run_input.resume_run_id, store, run_options)
    history = await _history(run_input, store)
    if not history:
        raise UIInputError("the request has no message to answer")
    return agent.stream(history, **run_options)


async def _resume(
    agent: Agent[Any, Any], run_input: RunInput, run_id: str, store: RunStore, run_options: dict[str, Any]
) -> AgentStream:
    approvals = run_input.approvals
    paused = await store.claim_paused(run_id)
    if paused is None:
        raise UIInputError(
            f"no paused run {run_id!r}: it was already resumed, or this server does not know it (restarted, "
            "or another worker: give every worker one shared RunStore)",
            409,
        )
    pending = {p.call_id for p in paused.pending}
    missing = sorted(pending - set(approvals))
    unknown = sorted(set(approvals) - pending)
    if missing or unknown:
        await store.save_paused(run_id, paused)  # the request was wrong, not the run: it can still be resumed
        detail = f"no decision for the pending call(s) {missing}" if missing else f"no pending call {unknown}"
        raise UIInputError(f"cannot resume run {run_id!r}: {detail}", 422)
    run_input.resumed = paused
    # a paused run keeps its own turn options (tool_choice, max_steps, ...): only these apply to a resume
    resume_options = {key: run_options[key] for key in ("deps", "context") if key in run_options}
    return agent.resume_stream(paused, approvals, **resume_options)


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


def _denials(paused: RunResult) -> ToolResultsMessage:
    """Results for the paused turn: pending calls denied, the turn's other calls not run either."""
    last = paused.messages[-1]
    calls = last.tool_calls if isinstance(last, AssistantMessage) else []
    pending = {p.call_id for p in paused.pending}
    results = [
        ToolResult.error(
            call,
            "The user did not approve this call and sent a new message instead."
            if call.id in pending
            else "Not run: another call of this turn was waiting for approval when the user sent a new message.",
            "denied",
        )
        for call in calls
    ]
    return ToolResultsMessage(results)


def new_id(prefix: str) -> str:
    """A fresh random id such as ``msg_3f2a...`` (unguessable: it is the key to a paused run)."""
    return f"{prefix}_{secrets.token_hex(12)}"
