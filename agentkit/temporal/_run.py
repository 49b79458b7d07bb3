"""`TemporalRun`: the handle of one durable run, from any process with a Temporal client.

Looking at a run (`state`, `events`) uses queries and the workflow's description, which are not written
to its history; waiting (`wait`) and answering (`resume`) are updates, cancelling is a signal.
"""

from __future__ import annotations as _annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._jsonish import is_object
from ..events import FinishEvent, ToolProgressEvent
from ..exceptions import ResumeError
from ..runs._codec import decode_pending
from ._agent import TemporalAgent, _encode_answers  # pyright: ignore[reportPrivateUsage]  # the package's own
from ._events import EVENTS_QUERY, event_from_dict

if TYPE_CHECKING:
    from temporalio.client import WorkflowHandle

    from .._agent.results import PendingItem, RunResult
    from ..events import AgentEvent

__all__ = ["RunState", "TemporalRun"]


@dataclass(frozen=True)
class RunState:
    """What a Temporal run is doing: ``"running"``, a paused status, or how it ended; and what it waits for."""

    status: str
    pending: list[PendingItem] = field(default_factory=lambda: [])


class TemporalRun:
    """A run on Temporal: look at it, follow its events, answer its pauses, cancel it, get its `RunResult`."""

    def __init__(self, durable: TemporalAgent, handle: WorkflowHandle[Any, Any]) -> None:
        self.durable = durable
        self.handle = handle

    @property
    def id(self) -> str:
        """The workflow id."""
        return self.handle.id

    def __repr__(self) -> str:
        return f"TemporalRun({self.id!r})"

    async def state(self) -> RunState:
        """What the run does now (a query: answered from the workflow's memory, no waiting)."""
        data = await self.handle.query("state")
        return RunState(data["status"], decode_pending(data["pending"]))

    async def pending(self) -> list[PendingItem]:
        """What the paused run waits for (empty while it runs or once it ended)."""
        return (await self.state()).pending

    async def wait(self) -> RunState:
        """Wait until the run pauses (for approval, data or a client) or ends; its state then."""
        from temporalio.service import RPCError

        try:
            # temporalio leaves an overload of execute_update (one we do not call) partly untyped
            data = await self.handle.execute_update("wait")  # pyright: ignore[reportUnknownMemberType]
        except RPCError:  # the workflow has ended: an update cannot reach it, a query still can
            return await self.state()
        return RunState(data["status"], decode_pending(data["pending"]))

    async def events(self, *, after: int = 0, poll: float = 0.5) -> AsyncIterator[AgentEvent]:
        """The run's events as `Agent.stream` yields them, from event `after` on, until it pauses or ends.

        Events are read from the workflow every `poll` seconds (a query: nothing is written to the run's
        history). The run's own events all arrive, in order (the workflow keeps its newest 1,000);
        `ToolProgressEvent`s of a running tool come from its activity's heartbeats, so they arrive at
        the heartbeat pace and a tool that reports faster than that shows only its newest 50. The last
        event is the `FinishEvent` of the pause or the end; after a resume, call again with `after` set
        to the number of events seen so far.
        """
        from temporalio.client import WorkflowExecutionStatus

        seen = after
        progress: dict[str, int] = {}
        while True:
            description = await self.handle.describe()
            data = await self.handle.query(EVENTS_QUERY, {"after": seen})
            for event in self._progress(description, progress):
                yield event
            for entry in data["events"]:
                seen = int(entry["seq"])
                event = event_from_dict(entry["event"])
                yield event
                if isinstance(event, FinishEvent):
                    return
            if description.status != WorkflowExecutionStatus.RUNNING:
                return  # the workflow closed without a finish event (it failed): nothing more will come
            await asyncio.sleep(poll)

    def _progress(self, description: Any, seen: dict[str, int]) -> list[ToolProgressEvent]:
        converter = self.handle._client.data_converter.payload_converter  # pyright: ignore[reportPrivateUsage]
        out: list[ToolProgressEvent] = []
        for pending in description.raw_description.pending_activities:
            payloads = pending.heartbeat_details.payloads
            if not payloads:
                continue
            details: Any = converter.from_payloads(list(payloads))[0]
            if not is_object(details) or "progress" not in details:
                continue
            call_id, tool_name = str(details["call_id"]), str(details["tool_name"])
            for item in details["progress"]:
                number = int(item["seq"])
                if number > seen.get(call_id, 0):
                    seen[call_id] = number
                    out.append(ToolProgressEvent(call_id, tool_name, item["data"], item["transform_error"]))
        return out

    async def resume(self, answers: Mapping[str, Any]) -> None:
        """Answer the paused run (as `Agent.resume` takes answers); the run goes on in the workers.

        Raises:
            ResumeError: the run is not paused, or the answers do not fit (the workflow refused them:
                nothing is recorded, the pause stays open).
            TemporalLimitError: the answers are over the payload limit.
        """
        from temporalio.client import WorkflowUpdateFailedError

        state = await self.state()
        kinds = {p.call_id: p.kind for p in state.pending}
        payload = _encode_answers(answers, kinds)
        self.durable.check_size("the answers", payload, "send large data by reference (a URL, a file id)")
        try:
            await self.handle.execute_update("resume", payload)  # pyright: ignore[reportUnknownMemberType]
        except WorkflowUpdateFailedError as exc:
            cause = exc.cause
            raise ResumeError(getattr(cause, "message", None) or str(cause or exc)) from None

    async def cancel(self) -> None:
        """Cancel the run at its next safe point (status ``"cancelled"``; a pending model request is abandoned)."""
        await self.handle.signal("cancel")

    async def result(self) -> RunResult[Any]:
        """Wait for the workflow to end; its `RunResult` (outputs re-validated against the agent's tools)."""
        from ..runs._snapshot import result_from_document

        return result_from_document(await self.handle.result(), self.durable.agent.tools)
