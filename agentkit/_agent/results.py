"""What a run returns (`RunResult`, `Step`) and the approval records (`PendingApproval`, `Approval`)."""

from __future__ import annotations as _annotations

import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Generic, Literal, Union

from typing_extensions import TypeVar

from ..events import RunStatus
from ..exceptions import UsageError
from ..limits import RunLimits
from ..messages import Message, ModelResponse, ToolCall, ToolResult, Usage
from ..models import ModelSettings
from .pending import PendingBackground, PendingClientCall, PendingSuspension

if TYPE_CHECKING:
    from ..runs import RunSnapshot
    from ..tools import Tool

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


@dataclass
class Step:
    """One model turn and the tool calls it made, with their results (in call order).

    `results` is empty when the turn made no calls, or while its calls wait for approval; while some of
    its calls are suspended or wait for a client, it holds the results of the others.
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
    kind: Literal["approval"] = "approval"


PendingItem = Union[PendingApproval, PendingSuspension, PendingClientCall, PendingBackground]
"""What a paused run waits for; `kind` tells which."""


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
    """Set when the run pauses; claimed in the run store by the one `resume` that continues it."""
    run_id: str = ""
    """The run's id, the same across its pauses (background calls are found by it)."""
    background: dict[str, ToolResult | None] = field(default_factory=lambda: {})
    """Background calls not yet joined to the conversation: call id -> result (``None`` while running)."""
    signing_key: Callable[[], Any] | None = field(default=None, repr=False, compare=False)
    """Gives the agent's snapshot key(s) (looked up when `RunResult.snapshot` signs); never pickled or copied."""
    registry: Mapping[str, Tool[..., Any]] | None = field(default=None, repr=False, compare=False)
    """The tools the run used (MCP servers' included), for `RunResult.snapshot`; never pickled or copied."""
    structured: bool = False
    """Whether the run asks for an output type (its `RunResult.output` is then not simply its text)."""
    output: Any = None
    """What the run asks of its answer (`agentkit._agent._output.OutputConfig`), kept for `resume`."""
    output_fingerprint: str | None = None
    """A restored snapshot's record of `output` (types do not travel as JSON): checked against the agent's."""
    tool_calls: dict[str, int] = field(default_factory=lambda: {})
    """Calls counted against budgets so far, per key."""
    total_calls: int = 0
    """Calls counted against the run's budget so far."""
    found: list[str] = field(default_factory=lambda: [])
    """Deferred tools a search found (sent from then on), in the order found."""
    require_approval: bool = False
    """Every call of the run needs approval (`generate(require_approval=True)`)."""
    approved: frozenset[str] = frozenset()
    """Calls a resume approved: one that then paused (suspended, or a client tool's) may run again."""
    step_tools: tuple[str, ...] | None = None
    """While paused: the keys the paused step could run (the resumed calls run against those)."""
    limits: RunLimits = field(default_factory=RunLimits)
    """The run's budgets and caps (the agent's, with the run's own over them)."""
    deferred: bool | frozenset[str] | None = None
    """The run's own ``deferred_tools=`` (the agent's apply besides)."""
    programs: dict[str, dict[str, Any]] = field(default_factory=lambda: {})
    """Code mode: the programs paused in the last step, by the code tool's call id: ``{"state": ...}`` (JSON,
    the sandbox's dump and the calls it waits on), plus ``"answers"`` while a resume runs it again."""
    run_keys: frozenset[str] = frozenset()
    """Keys of the tools the run added (its own and its MCP servers'): a transcript without those tools
    withholds their payloads rather than show them unshaped."""

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        # A copied or pickled result carries neither the key nor live tool objects.
        state.pop("signing_key", None)
        state.pop("registry", None)
        return state


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
        if self._output is NO_OUTPUT and self._state is not None and not self._state.structured:
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
