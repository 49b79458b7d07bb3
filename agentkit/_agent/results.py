"""What a run returns (`RunResult`, `Step`) and the approval records (`PendingApproval`, `Approval`)."""

from __future__ import annotations as _annotations

import secrets
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..events import RunStatus
from ..limits import RunLimits
from ..messages import Message, ModelResponse, ToolCall, ToolResult, Usage
from ..models import ModelSettings

if TYPE_CHECKING:
    from ..tools import Tool

__all__ = ["Approval", "PendingApproval", "RunResult", "RunState", "Step", "claim_pause", "new_pause_token"]

# Pause tokens already resumed in this process. A copy of a paused result (copy.deepcopy, pickle) carries
# the same token, so it cannot resume a second time either. One short string per resumed pause: a process
# that resumes a million runs keeps about 100 MB, which is the price of single use without a store.
_claimed: set[str] = set()
_claimed_lock = threading.Lock()  # runs of other event loops (threads) may resume concurrently


def new_pause_token() -> str:
    """A fresh, unguessable token for one paused result."""
    return secrets.token_hex(16)


def claim_pause(token: str) -> bool:
    """Mark `token` as resumed; False when it already was (by this result or any copy of it)."""
    with _claimed_lock:
        if token in _claimed:
            return False
        _claimed.add(token)
        return True


@dataclass
class Step:
    """One model turn and the tool calls it made, with their results (in call order).

    `results` is empty when the turn made no calls, or while its calls wait for approval.
    """

    index: int
    response: ModelResponse
    tool_calls: list[ToolCall]
    results: list[ToolResult]

    @property
    def text(self) -> str:
        """The model's text in this turn."""
        return self.response.message.text


@dataclass(frozen=True)
class PendingApproval:
    """A tool call waiting for a decision.

    `call_id` is unique within the run (a duplicate id from the model was renamed, see the agents guide);
    `arguments` are the model's arguments as received (for the application deciding); `payload` is what
    a display should show, shaped by ``transform.approval`` (else ``transform.input``); ``None`` with
    `transform_error` set when that transform failed.
    """

    call_id: str
    tool_name: str
    arguments: Any
    payload: Any
    transform_error: str | None = None


@dataclass(frozen=True)
class Approval:
    """A decision on a pending call; a denial's `reason` is passed on to the model."""

    approved: bool
    reason: str | None = None


@dataclass
class RunState:
    """What `resume` needs to continue a run exactly as it would have gone on."""

    max_steps: int
    active_tools: tuple[str, ...] | None
    settings: ModelSettings
    failures: dict[str, int]
    run_retries: int
    pause_token: str | None = None
    """Set when the run pauses for approval; claimed by the one `resume` that continues it."""
    tool_calls: dict[str, int] = field(default_factory=dict)
    """Calls counted against budgets so far, per key."""
    total_calls: int = 0
    """Calls counted against the run's budget so far."""
    found: list[str] = field(default_factory=list)
    """Deferred tools a search found (sent from then on), in the order found."""
    require_approval: bool = False
    """Every call of the run needs approval (`generate(require_approval=True)`)."""
    step_tools: tuple[str, ...] | None = None
    """While paused: the keys the paused step could run (the resumed calls run against those)."""
    limits: RunLimits = field(default_factory=RunLimits)
    """The run's budgets and caps (the agent's, with the run's own over them)."""
    deferred: bool | frozenset[str] | None = None
    """The run's own ``deferred_tools=`` (the agent's apply besides)."""
    run_keys: frozenset[str] = frozenset()
    """Keys of the tools the run added (its own and its MCP servers'): a transcript without those tools
    withholds their payloads rather than show them unshaped."""


@dataclass
class RunResult:
    """The outcome of `Agent.generate` (or a finished stream).

    `messages` is the whole provider-neutral conversation (without the agent's instructions, which are
    added to every request): pass it, plus a new `UserMessage`, to the next `generate`, on any vendor.
    Tool results in `steps` carry `output` (the tool's value, for the application) and `content` (what
    the model received).
    """

    text: str
    status: RunStatus
    steps: list[Step]
    messages: list[Message]
    usage: Usage
    pending: list[PendingApproval] = field(default_factory=list)
    agent_id: str = ""
    _state: RunState | None = field(default=None, repr=False, compare=False)
    _run_tools: Mapping[str, Tool[..., Any]] | None = field(default=None, repr=False, compare=False)
    """The tools the run added (its own and its MCP servers'), for `Agent.transcript`; never copied or pickled."""

    def __getstate__(self) -> dict[str, Any]:
        # A run's own tools may be closures or live sessions: a copy keeps only their keys (in `_state`).
        return {k: v for k, v in self.__dict__.items() if k != "_run_tools"}

    @property
    def tool_calls(self) -> list[ToolCall]:
        """Every tool call of the run, in order."""
        return [call for step in self.steps for call in step.tool_calls]

    @property
    def tool_results(self) -> list[ToolResult]:
        """Every tool result of the run, in order."""
        return [result for step in self.steps for result in step.results]
