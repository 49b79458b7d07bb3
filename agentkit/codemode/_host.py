"""Where a program's calls go inside an agent run: the run that called the code tool (its "host").

The agent loop installs a `ProgramHost` in `current_host` while it runs; the code tool asks it for the
dispatcher of its nested calls and, when its call is being resumed, for the program's saved state. Each
nested call goes through the run's own pipeline (`agentkit._agent.nested.call_nested`: approval, budgets, hooks, limits,
timeouts, events, traces), tagged with the program's call as its caller. A call that must wait for a
person comes back as a pending record; a program left waiting only on those raises `ProgramPaused`,
which the loop turns into the run's pause, the program's state kept in `RunState.programs`.
"""

from __future__ import annotations as _annotations

from collections.abc import Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol

from ..messages import ToolCall, ToolResult

if TYPE_CHECKING:
    from .._agent.config import RunConfig
    from .._agent.state import RunState
    from ..context import ToolContext
    from ..registry import Registry
    from ..tools import Tool
    from ._program import Dispatch, NestedCall, Outcome

__all__ = ["LoopHost", "ProgramHost", "current_host"]

NOT_ANSWERED: Any = object()


class ProgramHost(Protocol):
    """What a run offers the programs its code tool runs."""

    def dispatcher(self, ctx: ToolContext[Any], tools: Mapping[str, Tool[..., Any]]) -> Dispatch:
        """How the program called as `ctx.call_id` runs a nested call (and answers a paused one on resume)."""
        ...

    def saved_state(self, caller_id: str) -> Mapping[str, Any] | None:
        """The paused state of the program called as `caller_id`, when this call resumes it."""
        ...


current_host: ContextVar[ProgramHost | None] = ContextVar("agentkit_program_host", default=None)


class LoopHost:
    """The `ProgramHost` of one agent run (made by the loop, one per run): its config and its state."""

    def __init__(self, config: RunConfig, state: RunState) -> None:
        self.config = config
        self.state = state
        self._executors: dict[tuple[str, ...], Registry] = {}

    def saved_state(self, caller_id: str) -> Mapping[str, Any] | None:
        entry = self.state.programs.get(caller_id)
        if entry is None or "answers" not in entry:
            return None  # paused in an earlier step, or not paused: a fresh program
        state: Mapping[str, Any] = entry["state"]
        return state

    def dispatcher(self, ctx: ToolContext[Any], tools: Mapping[str, Tool[..., Any]]) -> Dispatch:
        from .._agent.nested import call_nested
        from ._outcomes import outcome_of
        from ._program import Waiting

        config, state = self.config, self.state
        caller = ctx.call_id or ""
        entry = state.programs.get(caller)
        answers: dict[str, Any] = dict(entry.get("answers", {})) if entry is not None else {}
        executor = self._executor(tuple(tools))

        async def dispatch(call: NestedCall) -> Outcome:
            request = ToolCall(call.id, call.key, call.arguments)
            answer = answers.pop(call.id, NOT_ANSWERED)
            got = await call_nested(config, state, request, caller, executor, answer)
            if not isinstance(got, ToolResult):
                return Waiting(got)
            item = executor.get(call.key) if call.key in executor else None
            return outcome_of(item, got)

        return dispatch

    def _executor(self, keys: tuple[str, ...]) -> Registry:
        found = self._executors.get(keys)
        if found is None:
            found = self._executors[keys] = self.config.registry.select(keys)
        return found
