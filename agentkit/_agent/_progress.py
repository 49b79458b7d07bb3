"""What a tool call reports to its run while it runs, through `ToolContext.emit` (`ToolContext.on_progress`).

A tool's own progress values become `ToolProgressEvent`s. A subagent's tool sends two private messages
the parent's run recognises: `Forwarded` (one of the subagent's stream events) and `SubagentUsage` (what
the subagent's run consumed, added to the parent's usage).
"""

from __future__ import annotations as _annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..events import AgentEvent
from ..messages import ModelResponse, Usage
from ..tools import ToolTransform

__all__ = ["Forwarded", "ProgressSink", "SubagentUsage"]


@dataclass(frozen=True)
class SubagentUsage:
    """A subagent run's usage and model responses, reported to the parent run through `ToolContext.emit`."""

    usage: Usage
    responses: tuple[ModelResponse, ...] = ()


@dataclass(frozen=True)
class ProgressSink:
    """`ToolContext.on_progress` for a call made by a run.

    `streaming` tells a subagent to stream too; `policy` is the run's transform policy, which the
    subagent's run applies beneath its own so the parent's redaction covers the forwarded events.
    """

    deliver: Callable[[Any], None]
    streaming: bool
    policy: ToolTransform | None = None

    def __call__(self, value: Any) -> None:
        self.deliver(value)


@dataclass(frozen=True)
class Forwarded:
    """A subagent's event on its way up through `ToolContext.emit`."""

    agent_id: str
    event: AgentEvent
