"""Where a program's calls go inside an agent run: the run that called the code tool (its "host").

The agent loop installs a `ProgramHost` in `current_host` while it runs the code tool's call; the code
tool asks it for the dispatcher of its nested calls (the run's own tool-call pipeline) and, when the
call is being resumed, for the program's saved state. A program that must wait for a person raises
`ProgramPaused`, which the loop turns into the run's pause.
"""

from __future__ import annotations as _annotations

from collections.abc import Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..context import ToolContext
    from ..tools import Tool
    from ._program import Dispatch, Paused

__all__ = ["ProgramHost", "ProgramPaused", "current_host"]


class ProgramHost(Protocol):
    """What a run offers the programs its code tool runs."""

    def dispatcher(self, ctx: ToolContext[Any], tools: Mapping[str, Tool[..., Any]]) -> Dispatch:
        """How the program called as `ctx.call_id` runs a nested call (and answers a paused one on resume)."""
        ...

    def saved_state(self, caller_id: str) -> Mapping[str, Any] | None:
        """The paused state of the program called as `caller_id`, when this call resumes it."""
        ...


current_host: ContextVar[ProgramHost | None] = ContextVar("agentkit_program_host", default=None)


class ProgramPaused(BaseException):
    """Raised by the code tool: its program waits on nested calls that paused; the loop pauses the run."""

    def __init__(self, caller_id: str, paused: Paused) -> None:
        self.caller_id = caller_id
        self.paused = paused
        super().__init__(caller_id)
