"""Effect keys and the effect journal: each journaled tool call is reserved, run, then committed.

A journaled call (a tool that requires approval or declares ``idempotent=``) writes two records in the
run store: a **reservation** before the function starts and a **commit** with its result after. A run
continued after a crash (`Agent.recover`) reads them back:

* committed: the recorded result is used, the function does not run again;
* reserved, not committed (the process died while the call ran, or just before or after): the call runs
  again under the same effect key when the tool is idempotent, else it becomes an ``outcome_unknown``
  error result the model decides on, or (``Agent.recover(..., on_unknown="pause")``) a pause a person
  answers with `UNKNOWN_ANSWER`: it did run (and returned this), or run it again under the same key;
* nothing: the call never started, and runs.

`effect_key` names one logical call: a run id and a call id (unique in its run), hashed. The same
formula keys a Temporal run's calls by its workflow id (`agentkit.temporal.effect_key`).

The stores (`agentkit.runs.MemoryRunStore`, `agentkit.runs.SQLiteRunStore`) implement `EffectJournal`.
"""

from __future__ import annotations as _annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Literal, Protocol, cast, runtime_checkable

__all__ = ["UNKNOWN_ANSWER", "EffectJournal", "JournalEntry", "effect_key", "is_unknown_request", "unknown_request"]

EffectState = Literal["reserved", "committed"]

UNKNOWN_ANSWER: dict[str, Any] = {
    "type": "object",
    "properties": {
        "retry": {"const": True, "description": "run the call again, with the same effect key"},
        "output": {"description": "the call did run: this is its result"},
    },
    "minProperties": 1,
    "maxProperties": 1,
    "additionalProperties": False,
}
"""What a person answers to a call paused because its outcome is unknown (``on_unknown="pause"``, in
process and on Temporal); a `ToolError` instead fails the call with its message."""


def unknown_request(tool: str, key: str, reason: str) -> dict[str, Any]:
    """What a call paused for its unknown outcome asks.

    The tool, its effect key (to look the effect up in the service's records) and why it is unknown.
    """
    return {"outcome": "unknown", "tool": tool, "effect_key": key, "reason": reason}


def is_unknown_request(request: Any) -> bool:
    """Whether a suspension's request is the pause of a call whose outcome is unknown (`unknown_request`)."""
    if not isinstance(request, dict):
        return False
    fields = cast("dict[str, Any]", request)
    return fields.get("outcome") == "unknown" and "effect_key" in fields


def effect_key(run_id: str, call_id: str) -> str:
    """The stable key of one logical tool call: ``ak-`` and 32 hex digits (fits an ``Idempotency-Key`` header).

    A run id names one run (kept across its pauses and in its snapshots; a Temporal run's is its workflow
    id) and a call id is unique within its run, so the pair names one call: the same key for every attempt,
    resume, recovery and copy of that call, a different one for any other call.
    """
    digest = hashlib.sha256(f"{run_id}\x00{call_id}".encode()).hexdigest()
    return f"ak-{digest[:32]}"


@dataclass(frozen=True)
class JournalEntry:
    """What the journal holds for one effect key: reserved (the call started), or committed with its result."""

    effect_key: str
    state: EffectState
    result: Any = None
    """For ``committed``: the call's `ToolResult` as JSON data (`agentkit.runs._codec.encode_results`)."""
    run_id: str | None = None
    call_id: str | None = None
    tool: str | None = None
    """The registry key the call was made by."""


@runtime_checkable
class EffectJournal(Protocol):
    """A `RunStore` that also journals journaled tool calls (both stores shipped here do). Async throughout."""

    async def reserve(self, effect_key: str, *, run_id: str, call_id: str, tool: str) -> JournalEntry | None:
        """Reserve the key, atomically: ``None`` when this reserved it, else the entry already there."""
        ...

    async def commit(self, effect_key: str, result: Any) -> None:
        """Record the call's result (JSON data) under its reserved key."""
        ...

    async def release(self, effect_key: str) -> None:
        """Drop a reservation whose call paused before any effect (a suspension): it runs again when answered."""
        ...

    async def effect(self, effect_key: str) -> JournalEntry | None:
        """The entry under the key, or ``None``."""
        ...
