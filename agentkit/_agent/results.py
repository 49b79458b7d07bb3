"""What a run returns (`RunResult`) and the approval records (`PendingApproval`, `Approval`).

`Step` and `RunState` (what has happened in a run) live in `agentkit._agent.state`, below: a result
carries its run's state, and the state knows nothing of results.
"""

from __future__ import annotations as _annotations

import secrets
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Generic, Literal, Union

from typing_extensions import TypeVar

from ..events import RunStatus
from ..exceptions import UsageError
from ..messages import Message, ModelResponse, ToolCall, ToolResult, Usage
from .pending import PendingBackground, PendingClientCall, PendingSuspension
from .state import RunState, Step

if TYPE_CHECKING:
    from ..runs import RunSnapshot

OutputT = TypeVar("OutputT", default=str)
"""A run's output type: the model's text (`str`) unless an output type was asked for."""


class _NoOutput:
    """The output of a run that ended without an answer of its output type (see `RunResult.output`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NO_OUTPUT"

    def __reduce__(self) -> str:
        return "NO_OUTPUT"  # one object, through pickle and deepcopy too


NO_OUTPUT: Any = _NoOutput()

__all__ = [
    "NO_OUTPUT",
    "PAUSED_STATUSES",
    "Approval",
    "OutputT",
    "PendingApproval",
    "PendingItem",
    "RunResult",
    "RunState",
    "Step",
    "new_pause_token",
]

PAUSED_STATUSES: frozenset[str] = frozenset(
    {"awaiting_approval", "suspended", "awaiting_client", "cancelled", "awaiting_background"}
)
"""The statuses `Agent.resume` continues (and `RunResult.snapshot` captures)."""


def new_pause_token() -> str:
    """A fresh, unguessable id for one pause: the key a run store claims on resume (single use)."""
    return secrets.token_hex(16)


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
    kind: Literal["approval"] = "approval"


PendingItem = Union[PendingApproval, PendingSuspension, PendingClientCall, PendingBackground]
"""What a paused run waits for; `kind` tells which."""


@dataclass(frozen=True)
class Approval:
    """A decision on a pending call; a denial's `reason` is passed on to the model."""

    approved: bool
    reason: str | None = None


@dataclass
class RunResult(Generic[OutputT]):
    """The outcome of `Agent.generate` (or a finished stream).

    `output` is the run's answer as its output type (the validated value of a structured run, else the
    text); `text` is the model's raw answer. `messages` is the whole provider-neutral conversation
    (without the agent's instructions, which are added to every request): pass it, plus a new
    `UserMessage`, to the next `generate`, on any vendor. Tool results in `steps` carry `output` (the
    tool's value, for the application) and `content` (what the model received).
    """

    text: str
    status: RunStatus
    steps: list[Step]
    messages: list[Message]
    usage: Usage
    pending: list[PendingItem] = field(default_factory=lambda: [])
    agent_id: str = ""
    _state: RunState | None = field(default=None, repr=False, compare=False)
    _output: Any = field(default=NO_OUTPUT, repr=False)
    """The validated answer; `NO_OUTPUT` for a structured run that ended without one (a text run's is its text)."""
    _subagent_responses: list[ModelResponse] = field(default_factory=lambda: [], repr=False, compare=False)
    """The model responses of the subagents this run called (their usage is in `usage` already)."""

    def __post_init__(self) -> None:
        if self._output is NO_OUTPUT and self._state is not None and not self._state.request.structured:
            self._output = self.text

    @property
    def output(self) -> OutputT:
        """The run's answer as its output type: the validated value, or the text of a run without an output type.

        Raises:
            UsageError: the run asked for an output type and ended without an answer of it (status
                ``"max_steps"``, or paused): check `status` first.
        """
        value = self._output
        if value is NO_OUTPUT:
            raise UsageError(
                f"this run ended with status {self.status!r}, without an answer of its output type; check "
                "result.status (resume a paused run, or allow more max_steps)"
            )
        result: OutputT = value
        return result

    @property
    def has_output(self) -> bool:
        """Whether `output` holds an answer (a structured run that ended without one has none)."""
        return self._output is not NO_OUTPUT

    @property
    def responses(self) -> list[ModelResponse]:
        """Every model response of the run: its own steps' in order, then those of the subagents it called."""
        return [step.response for step in self.steps] + self._subagent_responses

    def cost(self) -> Decimal | None:
        """The run's estimated price in USD (subagents included), from the ``genai-prices`` table.

        None when any request's price is unknown (a model or endpoint the table does not know, a local
        server, a test model): a partial sum would understate. See `agentkit.costs`.
        """
        from ..costs import total_cost

        return total_cost(self.responses)

    @property
    def paused(self) -> bool:
        """Whether `Agent.resume` can continue this run (approvals, suspensions, client calls, ...)."""
        return self.status in PAUSED_STATUSES and self._state is not None

    def snapshot(self) -> RunSnapshot:
        """This paused run as a portable, versioned, JSON-only `RunSnapshot` (signed with the agent's key).

        Raises:
            ResumeError: the run is not paused (see `paused`).
        """
        from ..runs._snapshot import snapshot_of

        return snapshot_of(self)

    @property
    def tool_calls(self) -> list[ToolCall]:
        """Every tool call of the run, in order."""
        return [call for step in self.steps for call in step.tool_calls]

    @property
    def tool_results(self) -> list[ToolResult]:
        """Every tool result of the run, in order."""
        return [result for step in self.steps for result in step.results]
