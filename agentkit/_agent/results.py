"""What a run returns (`RunResult`, `Step`) and the approval records (`PendingApproval`, `Approval`)."""

from __future__ import annotations as _annotations

import secrets
import threading
from dataclasses import dataclass, field
from typing import Any, Generic

from typing_extensions import TypeVar

from ..events import RunStatus
from ..exceptions import UsageError
from ..messages import Message, ModelResponse, ToolCall, ToolResult, Usage
from ..models import ModelSettings

__all__ = [
    "NO_OUTPUT",
    "Approval",
    "OutputT",
    "PendingApproval",
    "RunResult",
    "RunState",
    "Step",
    "claim_pause",
    "new_pause_token",
]

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
    structured: bool = False
    """Whether the run asks for an output type (its `RunResult.output` is then not simply its text)."""
    output: Any = None
    """How the run asks for its output (`agentkit._agent._output.RunOutput`), kept for `resume`."""


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
    pending: list[PendingApproval] = field(default_factory=list)
    agent_id: str = ""
    _state: RunState | None = field(default=None, repr=False, compare=False)
    _output: Any = field(default=NO_OUTPUT, repr=False)
    """The validated answer; `NO_OUTPUT` for a structured run that ended without one (a text run's is its text)."""

    def __post_init__(self) -> None:
        if self._output is NO_OUTPUT and self._state is not None and not self._state.structured:
            self._output = self.text

    @property
    def output(self) -> OutputT:
        """The run's answer as its output type: the validated value, or the text of a run without an output type.

        Raises:
            UsageError: the run asked for an output type and ended without an answer of it (status
                ``"max_steps"`` or ``"awaiting_approval"``): check `status` first.
        """
        value = self._output
        if value is NO_OUTPUT:
            raise UsageError(
                f"this run ended with status {self.status!r}, without an answer of its output type; check "
                "result.status (resume an 'awaiting_approval' run, or allow more max_steps)"
            )
        result: OutputT = value
        return result

    @property
    def has_output(self) -> bool:
        """Whether `output` holds an answer (a structured run that ended without one has none)."""
        return self._output is not NO_OUTPUT

    @property
    def tool_calls(self) -> list[ToolCall]:
        """Every tool call of the run, in order."""
        return [call for step in self.steps for call in step.tool_calls]

    @property
    def tool_results(self) -> list[ToolResult]:
        """Every tool result of the run, in order."""
        return [result for step in self.steps for result in step.results]
