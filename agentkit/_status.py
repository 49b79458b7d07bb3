"""Why a run ended, in words: one sentence per `RunStatus`, for the command line and the UIs alike."""

from __future__ import annotations as _annotations

from typing_extensions import assert_never

from .events import RunStatus

__all__ = ["status_reason"]


def status_reason(status: RunStatus) -> str:
    """A sentence saying why a run with `status` ended (every status has one: the type checkers see to it)."""
    if status == "complete":
        return "the model answered"
    if status == "max_steps":
        return "the run used all its steps (max_steps) before the model answered"
    if status == "awaiting_approval":
        return "a tool call waits for approval"
    if status == "suspended":
        return "a tool asked for input and waits for it"
    if status == "awaiting_client":
        return "a client tool's call waits for its output"
    if status == "cancelled":
        return "the run was cancelled"
    if status == "awaiting_background":
        return "the model answered while background calls still run"
    assert_never(status)
