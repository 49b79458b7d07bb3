"""Which calls need approval (decided from the calls themselves, every time), and what a decision makes.

Whether a call needs approval is recomputed wherever it matters (before a turn runs, when a hook changes
a call's arguments, on every resume), never read from a stored result: an edited pending list cannot let
a call through.
"""

from __future__ import annotations as _annotations

from typing import TYPE_CHECKING

from ..messages import ToolCall, ToolResult
from ..registry import Registry
from ._limits import spent_tools
from ._repeats import needs_repeat_approval
from .config import REPEATS
from .display import display_arguments, shape
from .results import Approval, PendingApproval

if TYPE_CHECKING:
    from .config import RunConfig
    from .state import RunState

__all__ = ["denied", "needs_approval", "pending_approval"]


def needs_approval(config: RunConfig, state: RunState, executor: Registry, call: ToolCall) -> bool:
    """Whether `call` must be approved before it runs.

    The tool's own policy, the run's ``require_approval=True``, or a repeat under ``RepeatPolicy(on="approve")``;
    never for a call that would not run (an unknown tool, a spent budget, arguments that do not validate).
    """
    item = executor.get(call.name)
    if item is None:
        return False  # nothing would run: the call becomes an unknown-tool error
    if config.machinery & REPEATS and state.memo is not None and needs_repeat_approval(config, state, call):
        return True  # the model repeats itself and the run's RepeatPolicy asks a human (on="approve")
    require_all = config.request.require_approval
    if not require_all and item.requires_approval is False:
        return False  # never needs it (the common case, decided before anything is validated)
    spent = spent_tools(config, state)
    if spent == "all" or (spent is not None and call.name in spent):
        return False  # it gets the budget error, whatever is decided
    if require_all:
        try:
            item.schema.validate_arguments(call.name, call.arguments)
        except Exception:  # noqa: BLE001 - invalid arguments never run: no decision is needed
            return False
        return True
    return item.needs_approval_for(call.arguments, name=call.name)


def pending_approval(config: RunConfig, call: ToolCall) -> PendingApproval:
    """The record of a call waiting for a decision, its payload shaped for displays."""
    arguments = display_arguments(call)
    rules = config.rules(call.name)
    payload, error = shape(rules.approval or rules.input, arguments, "approval")
    return PendingApproval(call.id, call.name, arguments, payload, error)


def denied(call: ToolCall, decision: Approval) -> ToolResult:
    """The ``denied`` error result of a call the user did not approve (a denial's reason reaches the model)."""
    reason = f" Reason: {decision.reason.rstrip('.')}." if decision.reason else ""
    return ToolResult.error(
        call, f"The user denied this call to {call.name!r}.{reason} Do not call it again unless asked.", "denied"
    )
