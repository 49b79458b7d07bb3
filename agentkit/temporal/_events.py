"""A durable run's events, for a caller who asks: the workflow's log, the tools' progress, and typed events again.

The workflow passes an emitter to agentkit's loop, as `Agent.stream` does, and keeps the events (frozen
objects) in a log bounded to its newest `KEPT` events, numbered from 1; the ``agentkit.events`` query
reads it, as JSON data (`AgentEvent.to_dict`, made only then: a run nobody watches pays an append).
Neither is written to the workflow's history, so watching a run costs it nothing. Progress a tool
reports with `ToolContext.emit` happens inside an activity: it rides on the activity's heartbeats (their
details), which `TemporalRun.events` reads from the workflow's description while the call runs.
"""

from __future__ import annotations as _annotations

import dataclasses
from collections import deque
from typing import Any

from .. import events as _events
from ..messages import Usage

__all__ = ["EVENTS_QUERY", "KEPT", "EventLog", "event_from_dict"]

EVENTS_QUERY = "agentkit.events"
"""The workflow's query for the events after a number: ``{"after": n}`` -> ``{"events", "status"}``."""

KEPT = 1000
"""Events the workflow keeps for readers (the newest); one reading slower than the run misses older ones."""

_KINDS: dict[str, type[Any]] = {}
for _name in _events.__all__:
    _cls = getattr(_events, _name)
    if dataclasses.is_dataclass(_cls) and isinstance(_cls, type):
        _kind = next((f.default for f in dataclasses.fields(_cls) if f.name == "kind"), None)
        if isinstance(_kind, str):
            _KINDS[_kind] = _cls


class EventLog:
    """The run's events, numbered; the newest `KEPT` of them are kept."""

    def __init__(self) -> None:
        self.entries: deque[tuple[int, Any]] = deque(maxlen=KEPT)
        self.count = 0

    def __call__(self, event: Any) -> None:
        self.count += 1
        self.entries.append((self.count, event))

    def after(self, seq: int) -> list[dict[str, Any]]:
        """The kept events numbered after `seq`, as JSON data: ``{"seq", "event"}``."""
        return [{"seq": number, "event": event.to_dict()} for number, event in self.entries if number > seq]


def event_from_dict(data: dict[str, Any]) -> Any:
    """The typed event of `AgentEvent.to_dict`'s data (payloads stay JSON data; an unknown kind: the dict)."""
    cls = _KINDS.get(str(data.get("kind")))
    if cls is None:
        return data
    fields = {f.name for f in dataclasses.fields(cls)}
    values = {k: v for k, v in data.items() if k in fields}
    if isinstance(values.get("usage"), dict):
        values["usage"] = Usage(**values["usage"])
    if cls is _events.SubagentEvent and isinstance(values.get("event"), dict):
        values["event"] = event_from_dict(values["event"])
    return cls(**values)
