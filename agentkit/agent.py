"""`Agent`: a model with instructions and tools, run in a loop until it answers.

```python
agent = Agent(id="weather", instructions="Answer briefly.", model="openai:gpt-4o-mini", tools=[get_weather])
result = await agent.generate("Weather in Paris?")
result.text, result.steps, result.messages, result.usage, result.status
```

A run ends with one of these statuses:

* ``"complete"``: the model answered without calling a tool;
* ``"max_steps"``: `max_steps` model turns were used up (the last turn's tool results are in `messages`);
* ``"awaiting_approval"``: a call needs approval; nothing of that turn ran;
* ``"suspended"``: a tool called `ToolContext.suspend` and waits for data (the turn's other calls ran);
* ``"awaiting_client"``: a client tool's call waits for the caller's output (the turn's other calls ran);
* ``"cancelled"``: the run's cancellation event was set (``cancel=``, or ``context.cancelled``);
* ``"awaiting_background"``: the model answered while background calls still run.

The last five are paused: continue with `Agent.resume` (once), from the result or its `RunSnapshot`.

Retry budgets (invalid arguments, `ModelRetry`, unknown tool names) end a run by raising
`RetryLimitExceeded` (a `UsageLimitExceeded`) that carries the partial `RunResult`.

This module holds the agent's configuration and its entry points; the machinery is in `agentkit._agent`
(the loop of one run, results and approvals, display transforms, the stream, subagents, MCP sessions).
"""

from __future__ import annotations as _annotations

import contextlib
import re
import warnings
from collections.abc import AsyncGenerator, Generator, Iterable, Mapping, Sequence
from contextvars import ContextVar
from typing import Any, overload

from typing_extensions import TypedDict, Unpack

from ._agent._deps import check_deps
from ._agent._instructions import Instructions, InstructionsLike, check_prepare
from ._agent._options import ResumeKwargs, RunKwargs, check_hooks
from ._agent._output import OutputConfig, OutputValidatorFn, output_config
from ._agent._setup import check_max_steps, run_tools_of
from ._agent._toolset import DeferredTools, check_deferred
from ._agent.config import AgentSpec
from ._agent.display import TranscriptEntry, transcript
from ._agent.pending import PendingBackground, PendingClientCall, PendingSuspension
from ._agent.results import Approval, OutputT, PendingApproval, PendingItem, RunResult
from ._agent.runs import AgentRuns, DepsT
from ._agent.runs import Prompt as Prompt
from ._agent.sessions import MCPServerLike, MCPSessions
from ._agent.state import Step
from ._agent.stream import AgentStream
from ._agent.subagents import subagent_tool
from ._text import closest, type_name
from .codemode._mode import CodeMode
from .context import RunContext
from .events import RunStatus
from .exceptions import (
    AgentSetupError,
    AlreadyResumedError,
    ApprovalError,
    ModelSetupError,
    ResumeError,
    RetryLimitExceeded,
)
from .hooks import PrepareStep, RunHooks, StepChanges
from .instrumentation import Instrument, _check_instrument  # pyright: ignore[reportPrivateUsage]  # agentkit's own run plumbing, kept out of the public module's API
from .limits import RunLimits
from .models import KNOWN_VENDORS, Model, ModelLike, ModelSettings, infer_model
from .output import Output, OutputSpec
from .registry import Registry
from .runs import RunSnapshot, RunStore, default_store
from .search import ToolSearch
from .tools import Tool, ToolTransform
from .workflows import Workflow

__all__ = [
    "Agent",
    "AgentStream",
    "AlreadyResumedError",
    "Approval",
    "ApprovalError",
    "MCPServerLike",
    "Output",
    "PendingApproval",
    "PendingBackground",
    "PendingClientCall",
    "PendingItem",
    "PendingSuspension",
    "ResumeError",
    "ResumeKwargs",
    "RetryLimitExceeded",
    "RunContext",
    "RunKwargs",
    "RunResult",
    "RunSnapshot",
    "RunStatus",
    "Step",
    "StepChanges",
    "TranscriptEntry",
]


def _slug(text: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_-]+", "-", text).strip("-").lower() or "agent"


class _DeprecatedOptions(TypedDict, total=False):
    """`Agent(...)` keywords of earlier releases, each now part of a group (see `Agent`)."""

    max_steps: int
    retries: int
    max_retries: int
    output_validators: Sequence[OutputValidatorFn]
    stop_at_tools: Sequence[str]
    deferred_tools: DeferredTools | None
    prepare_step: PrepareStep | None
    snapshot_key: Any
    mask_error_details: bool
    transform: ToolTransform | None


_INSTEAD = {
    "max_steps": "limits=RunLimits(max_steps=...)",
    "retries": "limits=RunLimits(retries=...)",
    "max_retries": "limits=RunLimits(max_retries=...)",
    "output_validators": "output_type=Output(<type>, validators=[...])",
    "stop_at_tools": "output_type=Output(<type>, stop_at_tools=[...]) (Output(str, ...) for a text answer)",
    "deferred_tools": "tool_search=ToolSearch(deferred=...)",
    "prepare_step": "hooks=[Hooks(prepare_step=...)]",
    "snapshot_key": "a store with the key: store=SQLiteRunStore(path, key=...) or MemoryRunStore(key=...)",
    "mask_error_details": "tools=Registry({...}, mask_error_details=True) (or the tool's own option)",
    "transform": "tools=Registry({...}, transform=ToolTransform(...)) (or the tool's own transform)",
}
"""Each deprecated keyword, and what to write instead."""


def _deprecated(options: Mapping[str, Any]) -> None:
    for key in options:
        instead = _INSTEAD.get(key)
        if instead is None:
            close = closest(key, [*_KEYWORDS, *_INSTEAD], n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise TypeError(f"Agent() got an unexpected keyword argument {key!r}{hint}")
        warnings.warn(f"Agent({key}=...) is deprecated; use {instead}", DeprecationWarning, stacklevel=3)


class Agent(AgentRuns[DepsT, OutputT]):
    """A model with instructions and tools, run in a loop until it answers.

    ``Agent[Deps, Output]``: both types are inferred from the constructor (``deps=``/``deps_type=``,
    ``output_type=``); `generate` returns a ``RunResult[Output]`` (a per-call ``output_type`` changes it).

    Args:
        id: the agent's identifier (events of a subagent carry it); defaults to a slug of `name`.
        name: a display name; defaults to `id`.
        description: what this agent does, told to a supervisor that uses it as a subagent.
        instructions: the system instructions, sent first in every request (not stored in the history):
            text, a function of the `RunContext` (sync or async, returning text or None; called before
            every model turn), or a list mixing text and functions (joined by blank lines).
        model: ``"vendor:model-name"``, ``"test"``, or a `Model` instance (which may wrap your own SDK
            client). Resolved on first use, so tests can `override` it without an API key.
        model_settings: default `ModelSettings` (temperature, strict, parallel_tool_calls, ...).
        tools: a `Registry`, a dict ``{key: tool_or_function}`` or a list of tools (key = tool id). A
            registry's options hold for every run: ``mask_error_details=True`` tells the model a generic
            text when one of its tools raises (see the errors guide), ``transform=`` shapes every tool's
            display payloads (a tool's own transform wins field by field).
        agents: subagents, each exposed as the tool ``agent-<key>`` (input ``{"prompt": str}``, output
            its text).
        workflows: workflows, each exposed as ``workflow-<key>`` with its own input and output schemas.
        mcp_servers: MCP sessions (async context managers with a `registry`); their tools join this
            agent's tools while ``async with agent:`` is open (or for the duration of each run).
        deps: default dependencies given to tools through `ToolContext.deps`.
        deps_type: the type of `deps` when they are given per call (for the type checker, and checked
            against the tools' ``ToolContext[...]`` at run time).
        hooks: `RunHooks` before each model turn (``prepare_step``: change that turn's model, tools, tool
            choice, instructions or settings) and around every model request and tool call, in order
            (see `agentkit.hooks`).
        limits: `RunLimits` for every run: the model turns (``max_steps``, default 10) and retries
            (``retries`` per tool, default 2; ``max_retries`` per run, default 10) it may take, a
            tool-call budget and concurrency caps (`agentkit.limits`).
        tool_search: how runs search deferred tools, and which tools to defer besides those marked
            ``deferred=True`` (`agentkit.search.ToolSearch`); the search tool is added only to runs that
            have deferred tools.
        output_type: what a run answers with: a type (pydantic model, dataclass, TypedDict, ``list[...]``,
            scalar, ``Literal``, a list of models for a union) or an `Output` with options (validators of
            the answer, tools whose call ends the run); `str` (the default) is the text answer. See
            `agentkit.output`.
        code_mode: offer the model one code tool (a Python program calling the chosen tools, run in a
            sandbox) in place of or beside them; see `agentkit.codemode.CodeMode`.
        store: the `RunStore` where each resume claims its pause (single use across copies and
            processes); default: the machine's `SQLiteRunStore` (`agentkit.runs.default_store`). A store
            with a ``key`` signs this agent's snapshots, and `resume` then refuses unsigned or edited ones.
        instrument: OpenTelemetry tracing of this agent's runs: None follows `agentkit.instrument` (and a
            traced parent run); True traces; False never; an `InstrumentationSettings` traces with those.
        **deprecated: the keywords of earlier releases, still accepted with a `DeprecationWarning` that
            names their place now: ``max_steps``, ``retries``, ``max_retries`` (in `limits`),
            ``output_validators``, ``stop_at_tools`` (in `Output`), ``deferred_tools`` (in `tool_search`),
            ``prepare_step`` (in `hooks`), ``snapshot_key`` (the store's key), ``mask_error_details`` and
            ``transform`` (the tools' `Registry`).
    """

    @overload
    def __init__(
        self,
        *,
        id: str | None = None,
        name: str | None = None,
        description: str | None = None,
        instructions: InstructionsLike = None,
        model: ModelLike | None = None,
        model_settings: ModelSettings | None = None,
        tools: Registry | Mapping[str, Any] | Iterable[Any] | None = None,
        agents: Mapping[str, Agent[Any, Any]] | None = None,
        workflows: Mapping[str, Workflow[..., Any]] | None = None,
        mcp_servers: Sequence[MCPServerLike] = (),
        deps: DepsT | None = None,
        deps_type: type[DepsT] | None = None,
        hooks: Sequence[RunHooks[Any]] = (),
        limits: RunLimits | None = None,
        tool_search: ToolSearch | None = None,
        output_type: OutputSpec[OutputT] | None = None,
        code_mode: CodeMode | None = None,
        store: RunStore | None = None,
        instrument: Instrument = None,
        **deprecated: Unpack[_DeprecatedOptions],
    ) -> None: ...
    @overload
    def __init__(
        self: Agent[Any, Any],
        *,
        id: str | None = None,
        name: str | None = None,
        description: str | None = None,
        instructions: InstructionsLike = None,
        model: ModelLike | None = None,
        model_settings: ModelSettings | None = None,
        tools: Registry | Mapping[str, Any] | Iterable[Any] | None = None,
        agents: Mapping[str, Agent[Any, Any]] | None = None,
        workflows: Mapping[str, Workflow[..., Any]] | None = None,
        mcp_servers: Sequence[MCPServerLike] = (),
        deps: Any = None,
        deps_type: Any = None,
        hooks: Sequence[RunHooks[Any]] = (),
        limits: RunLimits | None = None,
        tool_search: ToolSearch | None = None,
        output_type: Any = None,
        code_mode: CodeMode | None = None,
        store: RunStore | None = None,
        instrument: Instrument = None,
        **deprecated: Unpack[_DeprecatedOptions],
    ) -> None: ...
    def __init__(
        self,
        *,
        id: str | None = None,  # noqa: A002 - the public name DESIGN.md fixes
        name: str | None = None,
        description: str | None = None,
        instructions: InstructionsLike = None,
        model: ModelLike | None = None,
        model_settings: ModelSettings | None = None,
        tools: Registry | Mapping[str, Any] | Iterable[Any] | None = None,
        agents: Mapping[str, Agent[Any, Any]] | None = None,
        workflows: Mapping[str, Workflow[..., Any]] | None = None,
        mcp_servers: Sequence[MCPServerLike] = (),
        deps: Any = None,
        deps_type: Any = None,
        hooks: Sequence[RunHooks[Any]] = (),
        limits: RunLimits | None = None,
        tool_search: ToolSearch | None = None,
        output_type: Any = None,
        code_mode: CodeMode | None = None,
        store: RunStore | None = None,
        instrument: Instrument = None,
        **deprecated: Unpack[_DeprecatedOptions],
    ) -> None:
        _deprecated(deprecated)
        if limits is not None and not isinstance(limits, RunLimits):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise AgentSetupError(f"Agent(limits=...) takes RunLimits(...), got {limits!r}")
        limits = limits or RunLimits()
        max_steps = deprecated.get("max_steps", limits.max_steps if limits.max_steps is not None else 10)
        retries = deprecated.get("retries", limits.retries if limits.retries is not None else 2)
        max_retries = deprecated.get("max_retries", limits.max_retries if limits.max_retries is not None else 10)
        check_max_steps(max_steps)
        if retries < 0 or max_retries < 0:
            raise AgentSetupError(
                f"retries and max_retries must not be negative, got retries={retries}, max_retries={max_retries}"
            )
        self.id: str = id if id is not None else _slug(name or "agent")
        self.name: str = name if name is not None else self.id
        self._instructions = Instructions(instructions)
        self.instructions: InstructionsLike = instructions
        """The instructions as given (text, a function, or a list of both)."""
        self._prepare = check_prepare([deprecated.get("prepare_step")], "Agent(...): ")
        self.hooks: list[RunHooks[Any]] = check_hooks(hooks, "Agent(hooks=...)")
        """Hooks before each model turn and around every model request and tool call of every run, in order."""
        self.limits = limits
        """Budgets and concurrency caps for every run (a run's own `limits` go over them field by field)."""
        if tool_search is not None and not isinstance(tool_search, ToolSearch):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise AgentSetupError(f"Agent(tool_search=...) takes ToolSearch(...), got {tool_search!r}")
        self.tool_search = tool_search
        self._deferred = check_deferred(deprecated.get("deferred_tools"), "Agent(...): ")
        if tool_search is not None and tool_search.deferred is not None:
            self._deferred = _merged(self._deferred, tool_search.deferred)
        self.description = description
        transform = deprecated.get("transform")
        if transform is not None and not isinstance(transform, ToolTransform):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise AgentSetupError(f"Agent(transform=...) takes a ToolTransform(...), got {transform!r}")
        self._transform = transform
        self.max_steps: int = max_steps
        """Model turns per run (`RunLimits.max_steps`)."""
        self.retries: int = retries
        """Consecutive retryable failures allowed per tool (`RunLimits.retries`)."""
        self.max_retries: int = max_retries
        """Retryable failures allowed per run (`RunLimits.max_retries`)."""
        if model_settings is not None and not isinstance(model_settings, ModelSettings):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise AgentSetupError(
                f"Agent(model_settings=...) takes a ModelSettings(...), got {type_name(model_settings)}"
            )
        self.model_settings = model_settings or ModelSettings()
        self.deps = deps
        self.deps_type: type[Any] | None = deps_type
        """The declared type of the dependencies (None: the type of `deps`, or not known)."""
        self.output: OutputConfig = output_config(
            output_type, deprecated.get("output_validators", ()), deprecated.get("stop_at_tools", ()), "Agent"
        )
        """What runs answer with: the output type and its options, validators and stop-at tools."""
        self.mcp_servers = list(mcp_servers)
        self.mask_error_details: bool = deprecated.get("mask_error_details", False)
        """Tell the model a generic text for a tool's exception (unless the tool or registry says otherwise)."""
        self.instrument: Instrument = _check_instrument(instrument)
        """Tracing of this agent's runs (see `agentkit.instrumentation`)."""
        if store is not None and not isinstance(store, RunStore):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise AgentSetupError(f"store= must be a RunStore (e.g. SQLiteRunStore(path)), got {type_name(store)}")
        self.store = store
        """Where resumes claim their pause; None: `agentkit.runs.default_store()`."""
        snapshot_key = deprecated.get("snapshot_key")
        if snapshot_key is not None:
            from .runs._snapshot import signing_keys

            try:
                signing_keys(snapshot_key)
            except (TypeError, ValueError) as exc:
                raise AgentSetupError(f"snapshot_key: {exc}") from None
        self.snapshot_key = snapshot_key
        """Signs this agent's snapshots and is required on theirs at resume (None: the store's key)."""
        _check_model(model)
        self.model: ModelLike | None = model
        """The model as given; see `resolve_model` for the instance a run uses."""
        self._model: Model | None = model if isinstance(model, Model) else None
        # `override` holds for the `with` block in this task and the tasks it starts (a test's runs), not for
        # concurrent runs elsewhere: a context variable, as the model a run uses is asked at run time
        self._override: ContextVar[Model | None] = ContextVar(f"agentkit_override_{self.id}", default=None)
        self.agents: dict[str, Agent[Any, Any]] = dict(agents or {})
        self.workflows: dict[str, Workflow[..., Any]] = dict(workflows or {})
        if code_mode is not None and not isinstance(code_mode, CodeMode):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise AgentSetupError(f"Agent(code_mode=...) takes CodeMode(...), got {code_mode!r}")
        self.code_mode = code_mode
        """The code mode of every run (a run's own ``code_mode=`` replaces it); None: tools are offered directly."""
        self._sessions = MCPSessions(self._build_registry(tools), self.mcp_servers)
        self.tools.require(*self.output.stop_at)
        check_deps(self.tools, deps, deps_type, "Agent(...)")

    @property
    def transform(self) -> ToolTransform | None:
        """The display transforms of every run's tools: the tools' registry's ``transform``.

        A tool's own transform wins field by field.
        """
        return self._transform if self._transform is not None else self.tools.transform

    @transform.setter
    def transform(self, value: ToolTransform | None) -> None:
        self._transform = value

    def __repr__(self) -> str:
        return f"Agent(id={self.id!r}, model={self.model!r}, tools={list(self.tools)!r})"

    # ---- configuration ---------------------------------------------------------------------------

    def _build_registry(self, tools: Registry | Mapping[str, Any] | Iterable[Any] | None) -> Registry:
        base = tools if isinstance(tools, Registry) else Registry(tools)
        if not self.agents and not self.workflows:
            return base  # the caller's own registry: later additions stay visible
        registry = Registry(dict(base.items()), mask_error_details=base.mask_error_details, transform=base.transform)
        for key, sub in self.agents.items():
            registry.add(f"agent-{key}", sub.as_tool())
        for key, workflow in self.workflows.items():
            registry.add(f"workflow-{key}", workflow.as_tool())
        return registry

    @property
    def instructions_preview(self) -> str:
        """The instructions for a display: the text parts, ``{function_name}`` where a function's text goes."""
        return self._instructions.preview

    @property
    def tools(self) -> Registry:
        """Every tool the model may call: own tools, ``agent-*``, ``workflow-*`` and entered MCP servers'."""
        return self._sessions.registry

    def as_tool(self) -> Tool[..., Any]:
        """This agent as a tool taking ``{"prompt": str}`` and returning its final text.

        Inside a streaming parent, the subagent streams too and its events reach the parent's stream as
        `SubagentEvent`s, shaped by the parent's transform policy beneath the subagent's own. A subagent
        run that stops for approval fails the call (approvals cannot be granted from inside another run):
        give the supervisor's tool `requires_approval` instead. A vendor error of the subagent's model
        fails the call with what failed (class, model, status), never the vendor's body.
        """
        return subagent_tool(self)

    def resolve_model(self) -> Model:
        """The model a run uses now: an `override`, else the agent's own (built on first use).

        Raises:
            ModelSetupError: no model was given, or it cannot be built (e.g. a missing API key).
        """
        override = self._override.get()
        if override is not None:
            return override
        if self._model is None:
            if self.model is None:
                raise ModelSetupError(
                    f"Agent {self.id!r} has no model: pass model='vendor:model-name' (or 'test'), or use "
                    "agent.override(model=...)."
                )
            self._model = infer_model(self.model)
        return self._model

    def transcript(
        self, result: RunResult[Any], *, tools: Registry | Mapping[str, Any] | Iterable[Any] | None = None
    ) -> list[TranscriptEntry]:
        """Every tool call of `result` shaped for a transcript by the tools' and this agent's transforms.

        The same fail-closed rules as the stream events: a transform that raises withholds that payload.
        Calls still waiting for approval are listed with their (shaped) input only. Tools given to the
        run itself are known to the result it returned; for a copy of it (``pickle``, ``deepcopy``), pass
        them as `tools`, or their calls' payloads are withheld.
        """
        known: dict[str, Any] = dict(self.tools.items())
        state = result._state  # pyright: ignore[reportPrivateUsage]
        known.update(state.registry or {} if state is not None else {})  # the run's own tools, in process
        if tools is not None:
            known.update((tools if isinstance(tools, Registry) else Registry(tools)).items())
        unknown: frozenset[str] = state.request.run_keys - set(known) if state is not None else frozenset()
        return transcript(result, known, self.transform, withheld=unknown)

    @contextlib.contextmanager
    def override(self, *, model: ModelLike) -> Generator[None, None, None]:
        """Use `model` instead of the agent's own within the ``with`` block (in this task and its children).

        ```python
        with agent.override(model=TestModel()):
            result = await agent.generate("hi")
        ```
        """
        token = self._override.set(infer_model(model))
        try:
            yield
        finally:
            self._override.reset(token)

    # ---- MCP sessions ----------------------------------------------------------------------------

    async def __aenter__(self) -> Agent[DepsT, OutputT]:
        await self._sessions.enter()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._sessions.leave()

    def _session(self) -> contextlib.AbstractAsyncContextManager[None]:
        # A run holds the MCP sessions open for its own duration (re-entrant: inside `async with agent:`
        # or beside concurrent runs, they stay open until the last one leaves); without servers, nothing.
        return self._held_sessions() if self.mcp_servers else contextlib.nullcontext()

    @contextlib.asynccontextmanager
    async def _held_sessions(self) -> AsyncGenerator[None, None]:
        async with self:
            yield

    # ---- running ---------------------------------------------------------------------------------

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        if name != "_spec_cache":
            object.__setattr__(self, "_spec_cache", None)  # the next run reads the changed configuration

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_spec_cache", None)  # a copy makes its own: the spec names the agent it describes
        return state

    def _spec(self) -> AgentSpec:
        spec: AgentSpec | None = self.__dict__.get("_spec_cache")
        if spec is None:
            spec = AgentSpec(
                owner=self,
                id=self.id,
                name=self.name,
                description=self.description,
                instructions=self.instructions,
                instruction_parts=self._instructions,
                prepare=self._prepare,
                hooks=self.hooks,
                limits=self.limits,
                tool_search=self.tool_search,
                deferred=self._deferred,
                transform=self.transform,
                max_steps=self.max_steps,
                retries=self.retries,
                max_retries=self.max_retries,
                model_settings=self.model_settings,
                deps=self.deps,
                deps_type=self.deps_type,
                output=self.output,
                mask_error_details=self.mask_error_details,
                instrument=self.instrument,
                code_mode=self.code_mode,
                tools=lambda: self._sessions.registry,
                model=self.resolve_model,
                override=self._override.get,
                snapshot_key=self._snapshot_key,
                store=self._run_store,
                session=self._session,
                has_sessions=bool(self.mcp_servers),
            )
            object.__setattr__(self, "_spec_cache", spec)
        return spec

    def _snapshot_key(self) -> Any:
        return self.snapshot_key if self.snapshot_key is not None else getattr(self._run_store(), "key", None)

    def _run_store(self) -> RunStore:
        return self.store if self.store is not None else default_store()

    # ---- pauses -----------------------------------------------------------------------------------

    def snapshot(self, result: RunResult[Any]) -> RunSnapshot:
        """The `RunSnapshot` of a paused `result` of this agent, signed with its key (see `RunResult.snapshot`).

        Works for copies and unpickled results too (they no longer know their tools).

        Raises:
            ResumeError: the result is not paused.
        """
        from .runs._snapshot import snapshot_of

        state = result._state  # pyright: ignore[reportPrivateUsage]
        if state is not None and state.registry is not None:
            tools = state.registry
        else:  # a copy: the agent's tools (the run's own are unknown), with the search tool if it had one
            tools = run_tools_of(self._spec(), self.tools, state.request.deferred if state is not None else None)
        return snapshot_of(result, tools=tools, key=self._snapshot_key())


_KEYWORDS = (
    "id", "name", "description", "instructions", "model", "model_settings", "tools", "agents", "workflows",
    "mcp_servers", "deps", "deps_type", "hooks", "limits", "tool_search", "output_type", "code_mode", "store",
    "instrument",
)  # fmt: skip


def _merged(own: bool | frozenset[str] | None, more: bool | Iterable[str]) -> bool | frozenset[str]:
    if own is True or more is True:
        return True
    return frozenset(own or ()) | frozenset(more or ())


def _check_model(model: ModelLike | None) -> None:
    # Fail at construction for a bad vendor prefix, but build the client on first use only.
    if isinstance(model, str) and model != "test" and model.partition(":")[0] not in KNOWN_VENDORS:
        infer_model(model)  # raises the "did you mean" error
    elif model is not None and not isinstance(model, (str, Model)):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise ModelSetupError(f"model must be a 'vendor:model-name' string or a Model instance, got {type_name(model)}")
