"""What a run was asked to do: `RunConfig`, frozen, made once per run (and once per resumed leg).

`AgentSpec` is the agent's side of it (its id, instructions, hooks, budgets...), as the agent hands it to
the run: nothing under `agentkit._agent` reads the `Agent` itself. `RunConfig` adds the run's own side
(the resolved model, the run's tools, its deps, cancellation, event sink, execution engine) and one
number, `machinery`, computed once, saying which of the run's machinery is in play: each fast path of the
loop checks the bits of what it would skip (`STEP_PLANNING`, `CALL_CONTROL`, `REQUEST_WATCH`), so a new
feature adds its bit here and to the groups it concerns, and no path can miss it.

What has happened in the run is `agentkit._agent.state.RunState`; helpers take both and return outcomes.
"""

from __future__ import annotations as _annotations

import asyncio
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._tool_errors import ErrorPolicy
from ..context import ToolContext
from ..hooks import PrepareStep, RunHooks
from ..limits import RunLimits
from ..models import Model, ModelSettings
from ..registry import Registry
from ..search import ToolSearch
from ..tools import ToolTransform
from ._instructions import Instructions
from ._options import RunOptions
from ._output import OutputConfig, RunOutput
from ._toolset import RunTools
from .display import merge_transforms
from .hooks import ExecutionHooks
from .state import RunRequest, RunState
from .stream import Emit

if TYPE_CHECKING:
    from .._otel import Tracing
    from ..codemode._mode import CodeMode
    from ..instrumentation import Instrument
    from ..runs import RunStore

__all__ = [
    "ASKS",
    "CACHED",
    "CALL_CONTROL",
    "CANCEL",
    "CAPS",
    "HOOKS",
    "OBSERVED",
    "PROGRAMS",
    "REPEATS",
    "REQUEST_WATCH",
    "RUN_SPAN",
    "STEP_PLANNING",
    "AgentSpec",
    "RunConfig",
    "cancel_event",
    "machinery",
]

# ---- which machinery a run has in play (one bit each) --------------------------------------------------

PREPARE = 1 << 0
"""``prepare_step`` functions change steps."""
HOOKS = 1 << 1
"""`RunHooks` around model requests and tool calls."""
DYNAMIC_INSTRUCTIONS = 1 << 2
"""Instruction functions, rendered per step."""
DEFERRED = 1 << 3
"""Deferred tools and the search tool."""
BUDGETS = 1 << 4
"""Tool-call budgets: the run's, a tool's ``max_calls``, an enclosing run's."""
CAPS = 1 << 5
"""Concurrency caps of the turn, the run, or an enclosing run."""
STREAM = 1 << 6
"""Events go to a stream."""
CANCEL = 1 << 7
"""The caller holds a cancellation event: a model request is raced with it."""
OBSERVED = 1 << 8
"""Tracing, or DEBUG records, look at the run."""
SCOPED = 1 << 9
"""Something is installed around the run for its tool calls (`RunLoop.scoped`): its cap or budget for
nested runs, the host of its code tool's programs."""
PROGRAMS = 1 << 10
"""Code mode runs programs here: the code tool's calls find the run through `codemode._host.current_host`."""
REPEATS = 1 << 11
"""Loop detection is on (`agentkit.repeats`): each call and each turn is checked and noted."""
CACHED = 1 << 12
"""A tool of the run caches its results (`agentkit.cache`): its calls go through the cache (step 6)."""
ASKS = 1 << 13
"""A call may need approval whatever its tool says: the run's ``require_approval=True``, or a
``RepeatPolicy(on="approve")``. Without it, only a tool's own policy asks (`Registry.asks_approval`)."""
RUN_SPAN = 1 << 14
"""The run's tracer (or "off") is installed around it: a traced run, one below a traced parent, or
``instrument=False``."""

STEP_PLANNING = PREPARE | HOOKS | DYNAMIC_INSTRUCTIONS | DEFERRED | BUDGETS
"""What can change a step's plan: without these, a plan made once per settings is reused."""
CALL_CONTROL = HOOKS | BUDGETS | CAPS
"""What a call is admitted, watched or held by: without these, a lone call runs straight away."""
REQUEST_WATCH = STREAM | CANCEL | OBSERVED
"""What a model request is streamed, raced or observed by: without these, it is awaited as it is."""


def machinery(
    *,
    prepare: Sequence[Any],
    hooks: Sequence[Any],
    instructions: Instructions,
    tools: RunTools,
    limits: RunLimits,
    inherited: tuple[bool, bool],
    streaming: bool,
    cancel: bool,
    observed: bool,
    traced: bool,
    tracing_off: bool,
    programs: bool = False,
    repeats: bool = False,
    cached: bool = False,
    asks: bool = False,
) -> int:
    """The run's machinery bits (see the module docstring), computed once per run."""
    bits = 0
    if prepare:
        bits |= PREPARE
    if hooks:
        bits |= HOOKS
    if instructions.static is None:
        bits |= DYNAMIC_INSTRUCTIONS
    if tools.deferred:
        bits |= DEFERRED
    budget, caps = inherited  # an enclosing run's budget and caps hold in this run too
    if tools.budgeted or limits.max_tool_calls is not None or budget:
        bits |= BUDGETS
    if limits.max_concurrency is not None or limits.max_turn_concurrency is not None or caps:
        bits |= CAPS
    flags = (
        (streaming, STREAM),
        (cancel, CANCEL),
        (observed or traced, OBSERVED),
        (programs, PROGRAMS),
        (repeats, REPEATS),
        (cached, CACHED),
        (asks, ASKS),
        (traced or tracing_off, RUN_SPAN),
    )
    for flag, bit in flags:
        if flag:
            bits |= bit
    if limits.max_concurrency is not None or limits.max_tool_calls is not None or programs:
        bits |= SCOPED
    return bits


@dataclass(frozen=True, eq=False)
class AgentSpec:
    """The agent's configuration as a run reads it, handed over by the agent (see the module docstring).

    Collections are the agent's own (its `hooks` list, say), so a change the application makes to them
    between runs is seen by the next run, as before.
    """

    owner: Any
    """The `Agent`: what `RunContext.agent` and `ToolContext.agent` give the application."""
    id: str
    name: str
    description: str | None
    instructions: Any
    """As given (text, a function, or a list of both)."""
    instruction_parts: Instructions
    prepare: Sequence[PrepareStep]
    hooks: Sequence[RunHooks[Any]]
    limits: RunLimits
    tool_search: ToolSearch | None
    deferred: bool | frozenset[str] | None
    transform: ToolTransform | None
    max_steps: int
    retries: int
    max_retries: int
    model_settings: ModelSettings
    deps: Any
    deps_type: Any
    output: OutputConfig
    mask_error_details: bool
    instrument: Instrument
    code_mode: CodeMode | None
    tools: Callable[[], Registry]
    """The agent's tools now (its entered MCP servers' included)."""
    model: Callable[[], Model]
    """The model a run uses now (an `Agent.override`, else the agent's own)."""
    override: Callable[[], Model | None]
    """The model an `Agent.override` puts in place now, if any."""
    snapshot_key: Callable[[], Any]
    """The key(s) that sign its snapshots (its own, else its store's)."""
    store: Callable[[], RunStore]
    """Where resumes claim their pause."""
    session: Callable[[], AbstractAsyncContextManager[None]]
    """Holds the agent's MCP sessions open for one run."""
    has_sessions: bool = False
    """Whether the agent has MCP servers (else `session` does nothing)."""
    plans: dict[Any, Any] = field(default_factory=lambda: {}, repr=False)
    """Runs made without options reuse their config (`agentkit._agent._setup`), kept here: a change to the
    agent makes a new spec, and with it new plans."""

    def merged_deferred(self, run_deferred: bool | frozenset[str] | None) -> bool | frozenset[str] | None:
        """The agent's deferred tools with a run's own."""
        if self.deferred is True or run_deferred is True:
            return True
        return frozenset(self.deferred or ()) | frozenset(run_deferred or ())


@dataclass(frozen=True, eq=False)
class RunConfig:
    """What one run (or one resumed leg of it) was asked to do; see the module docstring."""

    agent: AgentSpec
    model: Model
    tools: RunTools
    """Every tool the run can call, and what each step sends."""
    request: RunRequest
    """The part of the request that travels with a pause (`RunState.request`, the same object)."""
    first: ModelSettings
    """The first step's settings: the request's, with what this leg adds (the tools a vendor's own programs
    may call, in hosted code mode)."""
    later: ModelSettings
    """Every later step's (a required or named tool choice holds for the first step only)."""
    prepare: tuple[PrepareStep, ...]
    hooks: tuple[RunHooks[Any], ...]
    policy: ToolTransform | None
    """The agent's display transforms, over its supervisors' (a subagent's run inherits theirs)."""
    errors: ErrorPolicy
    """What the model and the logs are told of failing calls (passed to each call)."""
    output: RunOutput | None
    """The run's output type and stop-at tools (None: a text answer, no tool ends the run)."""
    deps: Any
    context: ToolContext[Any] | None
    cancel: asyncio.Event | None
    """The caller's cancellation event (the given one, or the context's); None: made on first use."""
    emit: Emit | None
    engine: ExecutionHooks
    tracing: Tracing | None
    """The tracer of this run (None: not traced); see `agentkit.instrumentation`."""
    extra_keys: frozenset[str]
    """Keys of the tools this run added (its own tools and MCP servers'), not the agent's."""
    settles_background: bool
    """The run waits for its background calls instead of ending before them (a durable engine's
    workers outlive the process; `generate_sync`'s event loop does not outlive the call)."""
    machinery: int
    """Which machinery is in play (see the module docstring)."""
    options: RunOptions
    """The call's own options, as given (`DEFAULT_OPTIONS` for a call with none)."""
    _rules: dict[str, ToolTransform] = field(default_factory=lambda: {}, repr=False)

    @property
    def registry(self) -> Registry:
        """Every tool of the run: the agent's, the run's own, MCP servers', deferred ones, the search tool."""
        return self.tools.registry

    @property
    def streaming(self) -> bool:
        """Whether the run's events go to a stream."""
        return self.emit is not None

    @property
    def retries(self) -> int:
        """Consecutive retryable failures allowed per tool (the run's `RunLimits`, else the agent's)."""
        retries = self.request.limits.retries
        return retries if retries is not None else self.agent.retries

    @property
    def max_retries(self) -> int:
        """Retryable failures allowed per run (the run's `RunLimits`, else the agent's)."""
        retries = self.request.limits.max_retries
        return retries if retries is not None else self.agent.max_retries

    def for_run(self, emit: Emit | None, output: RunOutput | None) -> RunConfig:
        """This config for another run: its own event sink and answer reader, the rest shared (all frozen)."""
        copied = object.__new__(RunConfig)
        copied.__dict__.update(self.__dict__)
        copied.__dict__["emit"] = emit
        copied.__dict__["output"] = output
        return copied

    def rules(self, key: str) -> ToolTransform:
        """The display transforms for the tool under `key`: its own, field by field over the policy."""
        rules = self._rules.get(key)
        if rules is None:
            registry = self.tools.registry
            own = registry[key].transform if key in registry else None
            rules = self._rules[key] = merge_transforms(own, self.policy) or ToolTransform()
        return rules


def cancel_event(config: RunConfig, state: RunState) -> asyncio.Event:
    """The run's cancellation event (the caller's, or made on first use): every tool sees it in its context."""
    if config.cancel is not None:
        return config.cancel
    if state.cancel is None:
        state.cancel = asyncio.Event()
    return state.cancel
