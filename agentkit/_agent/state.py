"""What has happened in a run (`RunState`), and what it was asked (`RunRequest`), which travels with it.

`RunState` is the run's progress: the conversation, the steps, the usage, the retry and budget counters,
the background calls, the pause ids. The loop and its helpers change it; nothing else does. A paused
`RunResult` keeps it (with its `RunRequest`), so `Agent.resume` continues the run exactly as it would
have gone on, in this process or, through a `RunSnapshot`, in another.

`RunRequest` is the part of what the run was asked that a resume needs (its step budget, tool choice,
limits, output...): frozen, decided once when the run starts. The rest of the run's configuration (the
model, the tools, the hooks) is `agentkit._agent.config.RunConfig`, made again for each leg of the run.
"""

from __future__ import annotations as _annotations

import asyncio
import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from ..limits import RunLimits
from ..messages import Message, ModelResponse, ToolCall, ToolResult, Usage
from ..models import ModelSettings

if TYPE_CHECKING:
    from ..registry import Registry
    from ..tools import Tool

__all__ = ["RunRequest", "RunState", "Step"]


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
class RunRequest:
    """What a run was asked, as far as a resume needs it (frozen: decided when the run starts)."""

    max_steps: int
    active_tools: tuple[str, ...] | None
    settings: ModelSettings
    """The first step's settings (its tool choice as asked; later steps take ``"auto"`` for a forced one)."""
    require_approval: bool = False
    """Every call of the run needs approval (`generate(require_approval=True)`)."""
    limits: RunLimits = field(default_factory=RunLimits)
    """The run's budgets and caps (the agent's, with the run's own over them)."""
    deferred: bool | frozenset[str] | None = None
    """The run's own ``deferred_tools=`` (the agent's apply besides)."""
    output: Any = None
    """What the run asks of its answer (`agentkit._agent._output.OutputConfig`); None for a snapshot's run
    until it is matched against the agent's (types do not travel as JSON)."""
    structured: bool = False
    """Whether the run asks for an output type (its `RunResult.output` is then not simply its text)."""
    output_fingerprint: str | None = None
    """A restored snapshot's record of `output`: checked against the agent's output on resume."""
    run_keys: frozenset[str] = frozenset()
    """Keys of the tools the run added (its own and its MCP servers'): a transcript without those tools
    withholds their payloads rather than show them unshaped."""

    @property
    def later(self) -> ModelSettings:
        """The settings of every step but the first: a required or named tool choice holds once only."""
        first = self.settings
        if first.tool_choice in ("auto", "none"):
            return first
        later: ModelSettings | None = self.__dict__.get("_later")
        if later is None:
            later = dataclasses.replace(first, tool_choice="auto")
            object.__setattr__(self, "_later", later)  # a cache on a frozen record: the same every time
        return later


@dataclass
class UnknownOutcomes:
    """How a resume treats calls that started, recorded no result and may not run twice (`agentkit._agent._effects`).

    `pause`: pause each for a person (``Agent.recover(..., on_unknown="pause")``) instead of telling the model
    its outcome is unknown. `answers`: what a person answered to such a pause, by call id (`UNKNOWN_ANSWER`:
    ``{"retry": True}``, or ``{"output": value}`` already validated against the tool's output schema).
    """

    pause: bool = False
    answers: dict[str, dict[str, Any]] = field(default_factory=lambda: {})


class RunState:
    """What has happened in a run so far (see the module docstring)."""

    __slots__ = (
        "approved",
        "background",
        "callers",
        "call_ids",
        "cancel",
        "ended",
        "executor",
        "failures",
        "found",
        "memo",
        "messages",
        "pause_token",
        "programs",
        "registry",
        "request",
        "run_id",
        "run_retries",
        "signing_key",
        "step_tools",
        "steps",
        "subagent_responses",
        "tool_calls",
        "total_calls",
        "unknown",
        "usage",
    )

    def __init__(
        self,
        request: RunRequest,
        messages: list[Message] | None = None,
        steps: list[Step] | None = None,
        usage: Usage | None = None,
        subagent_responses: list[ModelResponse] | None = None,
        failures: dict[str, int] | None = None,
        run_retries: int = 0,
        tool_calls: dict[str, int] | None = None,
        total_calls: int = 0,
        found: list[str] | None = None,
        background: dict[str, ToolResult | None] | None = None,
        run_id: str = "",
        pause_token: str | None = None,
        step_tools: tuple[str, ...] | None = None,
        registry: Mapping[str, Tool[..., Any]] | None = None,
        approved: frozenset[str] = frozenset(),
        programs: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self.request = request
        self.messages: list[Message] = messages if messages is not None else []
        """The conversation (without the instructions, which every request adds in front)."""
        self.steps: list[Step] = steps if steps is not None else []
        self.usage = usage if usage is not None else Usage()
        self.subagent_responses: list[ModelResponse] = subagent_responses if subagent_responses is not None else []
        """The model responses of the subagents the run called (their usage is in `usage` already)."""
        self.failures: dict[str, int] = failures if failures is not None else {}
        """Consecutive retryable failures per key (the retry budget per tool)."""
        self.run_retries = run_retries
        """Retries the run used (the retry budget per run)."""
        self.tool_calls: dict[str, int] = tool_calls if tool_calls is not None else {}
        """Calls counted against budgets so far, per key."""
        self.total_calls = total_calls
        """Calls counted against the run's budget so far, its nested runs' calls included."""
        self.found: list[str] = found if found is not None else []
        """Deferred tools a search found (sent from then on), in the order found."""
        self.background: dict[str, ToolResult | None] = background if background is not None else {}
        """Background calls not yet joined to the conversation: call id -> result (``None`` while running)."""
        self.run_id = run_id
        """The run's id, the same across its pauses (background calls are found by it)."""
        self.pause_token = pause_token
        """Set when the run pauses; claimed in the run store by the one `resume` that continues it."""
        self.step_tools = step_tools
        """While paused for approval: the keys the paused step could run (the resumed calls run against those)."""
        self.registry = registry
        """The tools the run could call (MCP servers' included), for `RunResult.snapshot`; never pickled."""
        self.approved = approved
        """Calls a resume approved: one that then paused (suspended, or a client tool's) may run again."""
        self.programs: dict[str, dict[str, Any]] = programs if programs is not None else {}
        """Code mode: the programs paused in the last step, by the code tool's call id: ``{"state": ...}``
        (JSON: the sandbox's dump and the calls it waits on), plus ``"answers"`` while a resume runs it."""
        self.signing_key: Callable[[], Any] | None = None
        """Gives the agent's snapshot key(s) (looked up when `RunResult.snapshot` signs); never pickled."""
        # ---- the live run only (never pickled) ----
        self.executor: Registry | None = None
        """What the current step may run: the tools it sent (its active subset)."""
        self.call_ids: set[str] = set()
        """Every call id of the run so far (the given history included): new calls get fresh ones."""
        self.callers: dict[str, str] = {}
        """Code mode: the id of each call a program made -> the id of the program's call (its events say so)."""
        self.ended: Any = None
        """The run's result once a turn's tools ended it (an answer, a stop-at tool): returned before the next turn."""
        self.cancel: asyncio.Event | None = None
        """The run's cancellation event when the caller gave none (made on first use)."""
        self.memo: Any = None
        """What the run remembers of its calls for loop detection and its run-scoped caches
        (`agentkit._agent._repeats.Memo`, made on first use; kept by an in-process resume)."""
        self.unknown: UnknownOutcomes | None = None
        """A resume's way with calls whose outcome the journal cannot tell (`Agent.recover`); None: the model
        gets an ``outcome_unknown`` error result."""

    def __repr__(self) -> str:
        return (
            f"RunState(steps={len(self.steps)}, messages={len(self.messages)}, run_id={self.run_id!r}, "
            f"pause_token={self.pause_token!r})"
        )

    @property
    def structured(self) -> bool:
        """Whether the run asks for an output type."""
        return self.request.structured

    def resumed(self) -> RunState:
        """A fresh state continuing this one (its counters copied, its pause used up), for `resume`."""
        fresh = RunState(
            self.request,
            list(self.messages),
            list(self.steps),
            self.usage,
            list(self.subagent_responses),
            dict(self.failures),
            self.run_retries,
            dict(self.tool_calls),
            self.total_calls,
            list(self.found),
            dict(self.background),
            self.run_id,
            None,
            self.step_tools,
            approved=self.approved,
            programs={call_id: dict(entry) for call_id, entry in self.programs.items()},
        )
        fresh.memo = self.memo  # the repeat counters and run-scoped cache entries go on with the run
        return fresh

    _PERSISTED: ClassVar[tuple[str, ...]] = (
        "request",
        "messages",
        "steps",
        "usage",
        "subagent_responses",
        "failures",
        "run_retries",
        "tool_calls",
        "total_calls",
        "found",
        "background",
        "run_id",
        "pause_token",
        "step_tools",
        "approved",
        "programs",
    )

    def __getstate__(self) -> dict[str, Any]:
        # A copied or pickled result carries neither the key nor the tools nor live objects of the run.
        return {name: getattr(self, name) for name in self._PERSISTED}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name in self.__slots__:  # what was not kept starts empty, as in a new state
            setattr(self, name, None)
        for name, value in state.items():
            setattr(self, name, value)
        self.call_ids, self.callers = set(), {}
        self.approved = self.approved or frozenset()
        self.programs = self.programs or {}
