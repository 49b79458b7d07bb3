"""How a durable run's activities are run, and the limits Temporal puts on what a run may hold.

`ActivityOptions` are Temporal's own per-activity settings plus agentkit's answer to a call whose
attempts are used up (`on_unknown`). The defaults heartbeat: a worker that dies mid-call is noticed
after `heartbeat_timeout` (10 s), not after the attempt's whole `start_to_close_timeout`.

`TemporalLimits` mirror the Temporal server's size limits (its defaults: 2 MiB per payload, 50 MiB and
51,200 events per workflow history). A run checks its payloads against them before handing them to
Temporal, because a payload over the server's limit is not an error Temporal reports to the run: its
workflow task fails and is retried forever, and the run hangs.
"""

from __future__ import annotations as _annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Literal

from temporalio.common import RetryPolicy

from ..exceptions import TemporalLimitError

__all__ = [
    "DEFAULT_HEARTBEAT",
    "DEFAULT_MODEL",
    "DEFAULT_TOOL",
    "ActivityOptions",
    "TemporalLimitError",
    "TemporalLimits",
    "effect_key",
]

DEFAULT_HEARTBEAT = timedelta(seconds=10)
"""How long an activity may go without a heartbeat before Temporal retries it elsewhere (the default)."""


@dataclass(frozen=True)
class ActivityOptions:
    """How Temporal runs one kind of activity: timeouts, retries, and what a call whose attempts ran out becomes.

    `start_to_close_timeout` bounds one attempt; `heartbeat_timeout` bounds the silence of a running
    attempt (agentkit's activities heartbeat in the background while the model or the tool works, so a
    worker that dies is noticed after this, default 10 s; ``timedelta(0)`` turns heartbeats off);
    `retry_policy` says how often and how soon an attempt that failed or timed out is tried again.

    `on_unknown` decides what a tool call becomes when its last attempt failed or timed out, so it may
    or may not have taken effect: ``"error"`` (default) gives the model an error result saying the
    outcome is unknown, with the call's effect key; ``"pause"`` pauses the run (status ``"suspended"``)
    until a person answers ``{"retry": True}`` (run it again, same effect key), ``{"output": value}``
    (it did run: this is its result) or a `ToolError` (the model gets that message).
    """

    start_to_close_timeout: timedelta | None = None
    retry_policy: RetryPolicy | None = None
    heartbeat_timeout: timedelta | None = None
    on_unknown: Literal["error", "pause"] = "error"


DEFAULT_TOOL = ActivityOptions(timedelta(minutes=5), RetryPolicy(maximum_attempts=3), DEFAULT_HEARTBEAT)
DEFAULT_MODEL = ActivityOptions(
    timedelta(minutes=2),
    RetryPolicy(maximum_attempts=5, non_retryable_error_types=["ModelSetupError", "TemporalLimitError"]),
    DEFAULT_HEARTBEAT,
)

MiB = 1024 * 1024


@dataclass(frozen=True)
class TemporalLimits:
    """The Temporal server's size limits a run keeps under (set them to your server's, if you changed those).

    `payload` is the largest single payload (an activity's input or result, the workflow's input or
    result: ``limit.blobSize.error``), `history` the largest workflow history in bytes
    (``limit.historySize.error``) and `events` in events (``limit.historyCount.error``).
    """

    payload: int = 2 * MiB
    history: int = 50 * MiB
    events: int = 51_200


def effect_key(workflow_id: str, call_id: str) -> str:
    """The stable key of one logical tool call of a durable run: the same for every attempt, replay and resume.

    A workflow id names one run, and a call id is unique within its run, so the pair names one call;
    the key is a short hash of it (``ak-`` and 32 hex digits: fits an ``Idempotency-Key`` header).
    """
    from ..runs._journal import effect_key as key_of  # one formula, in process and on the engine

    return key_of(workflow_id, call_id)


def size_of(data: object) -> int:
    """The bytes `data` takes as Temporal's JSON payload (close enough to compare with a limit)."""
    import json

    return len(json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode())


def too_large(what: str, size: int, limit: int, fix: str) -> str:
    """The message for a payload over the limit: what, how big, the limit, how to fix it."""
    return (
        f"{what} is {size / MiB:.2f} MiB, over Temporal's payload limit of {limit / MiB:.2f} MiB "
        f"(TemporalLimits.payload, the server's limit.blobSize.error): {fix}"
    )
