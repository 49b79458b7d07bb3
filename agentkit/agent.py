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

import asyncio
import contextlib
import dataclasses
import re
from collections.abc import AsyncGenerator, Generator, Iterable, Mapping, Sequence
from contextvars import ContextVar
from typing import Any, overload

from ._agent._deps import check_deps
from ._agent._options import ResumeKwargs, RunKwargs, RunOptions, check_hooks
from ._agent._output import OutputConfig, OutputValidatorFn, RunOutput, output_config
from ._agent._steps import Instructions, InstructionsLike, RunControl, check_prepare
from ._agent._toolset import DeferredTools, RunTools, check_deferred, open_run_tools
from ._agent.display import TranscriptEntry, merge_transforms, transcript
from ._agent.loop import RunLoop
from ._agent.pending import PendingBackground, PendingClientCall, PendingSuspension
from ._agent.results import Approval, OutputT, PendingApproval, PendingItem, RunResult, RunState, Step
from ._agent.runs import AgentRuns, DepsT
from ._agent.runs import Prompt as Prompt
from ._agent.sessions import MCPServerLike, MCPSessions
from ._agent.stream import AgentStream, Emit
from ._agent.subagents import subagent_tool
from .codemode._mode import CodeMode
from .codemode._run import hosted_by, run_tools
from .context import RunContext
from .events import RunStatus
from .exceptions import (
    AgentSetupError,
    AlreadyResumedError,
    ApprovalError,
    ModelSetupError,
    ResumeError,
    RetryLimitExceeded,
    ToolChoiceError,
)
from .hooks import PrepareStep, RunHooks, StepChanges
from .instrumentation import Instrument, _check_instrument  # pyright: ignore[reportPrivateUsage]  # agentkit's own run plumbing, kept out of the public module's API
from .limits import RunLimits
from .messages import AssistantMessage, Message, ModelResponse, SystemMessage, ToolResultsMessage, Usage, UserMessage
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


class Agent(AgentRuns[DepsT, OutputT]):
    """A model with instructions and tools, run in a loop until it answers.

    ``Agent[Deps, Output]``: both types are inferred from the constructor (``deps=``/``deps_type=``,
    ``output_type=``); `generate` returns a ``RunResult[Output]`` (a per-call ``output_type`` changes it).

    Args:
        id: the agent's identifier (events of a subagent carry it); defaults to a slug of `name`.
        name: a display name; defaults to `id`.
        instructions: the system instructions, sent first in every request (not stored in the history):
            text, a function of the `RunContext` (sync or async, returning text or None; called before
            every model turn), or a list mixing text and functions (joined by blank lines).
        model: ``"vendor:model-name"``, ``"test"``, or a `Model` instance (which may wrap your own SDK
            client). Resolved on first use, so tests can `override` it without an API key.
        tools: a `Registry`, a dict ``{key: tool_or_function}`` or a list of tools (key = tool id).
        agents: subagents, each exposed as the tool ``agent-<key>`` (input ``{"prompt": str}``, output
            its text).
        workflows: workflows, each exposed as ``workflow-<key>`` with its own input and output schemas.
        description: what this agent does, told to a supervisor that uses it as a subagent.
        transform: a `ToolTransform` policy for every tool's display payloads; a tool's own transform
            wins field by field.
        max_steps: model turns per run (a run that uses them all ends with status ``"max_steps"``).
        retries: consecutive retryable failures (invalid arguments, `ModelRetry`) allowed per tool.
        max_retries: retryable failures (including unknown tool names) allowed per run.
        model_settings: default `ModelSettings` (temperature, strict, parallel_tool_calls, ...).
        deps: default dependencies given to tools through `ToolContext.deps`.
        mcp_servers: MCP sessions (async context managers with a `registry`); their tools join this
            agent's tools while ``async with agent:`` is open (or for the duration of each run).
        prepare_step: runs before each model turn with the `RunContext` and may change that turn's
            model, active tools, tool choice, instructions and settings (returns `StepChanges` or None).
        hooks: `RunHooks` around every model request and tool call, in order (see `agentkit.hooks`).
        limits: `RunLimits` for every run: a tool-call budget and concurrency caps (`agentkit.limits`).
        tool_search: how runs search deferred tools (`agentkit.search.ToolSearch`; the default when
            omitted); the search tool is added only to runs that have deferred tools.
        deferred_tools: keys of tools to defer (or True for all), besides tools marked ``deferred=True``.
        store: the `RunStore` where each resume claims its pause (single use across copies and
            processes); default: the machine's `SQLiteRunStore` (`agentkit.runs.default_store`).
        snapshot_key: signs this agent's snapshots and makes `resume` refuse unsigned or edited ones
            (bytes or text of at least 16 bytes, or several to rotate: the first signs); default: the
            store's ``key``, if any.
        deps_type: the type of `deps` when they are given per call (for the type checker, and checked
            against the tools' ``ToolContext[...]`` at run time).
        output_type: what a run answers with: a type (pydantic model, dataclass, TypedDict, ``list[...]``,
            scalar, ``Literal``, a list of models for a union) or an `Output` with options; `str` (the
            default) is the text answer. See `agentkit.output`.
        output_validators: functions of the validated answer (sync or async) run before it is accepted;
            they may raise `ModelRetry` (the model is asked again) and a non-None result replaces it.
        stop_at_tools: keys of tools whose successful call ends the run, with the call's result as its
            output and no further model turn (a tool's own ``ends_run=True`` does the same).
        mask_error_details: when a tool raises, tell the model a generic text instead of the exception's
            type and message (a tool's or registry's own setting wins). `ToolError` and `ModelRetry`
            messages always go through. See the errors guide.
        instrument: OpenTelemetry tracing of this agent's runs: None follows `agentkit.instrument` (and a
            traced parent run); True traces; False never; an `InstrumentationSettings` traces with those.
        code_mode: offer the model one code tool (a Python program calling the chosen tools, run in a
            sandbox) in place of or beside them; see `agentkit.codemode.CodeMode`.
    """

    @overload
    def __init__(
        self,
        *,
        id: str | None = None,
        name: str | None = None,
        instructions: InstructionsLike = None,
        model: ModelLike | None = None,
        tools: Registry | Mapping[str, Any] | Iterable[Any] | None = None,
        agents: Mapping[str, Agent[Any, Any]] | None = None,
        workflows: Mapping[str, Workflow[..., Any]] | None = None,
        description: str | None = None,
        transform: ToolTransform | None = None,
        max_steps: int = 10,
        retries: int = 2,
        max_retries: int = 10,
        model_settings: ModelSettings | None = None,
        deps: DepsT | None = None,
        mcp_servers: Sequence[MCPServerLike] = (),
        prepare_step: PrepareStep | None = None,
        hooks: Sequence[RunHooks[Any]] = (),
        limits: RunLimits | None = None,
        tool_search: ToolSearch | None = None,
        deferred_tools: DeferredTools | None = None,
        store: RunStore | None = None,
        snapshot_key: Any = None,
        mask_error_details: bool = False,
        instrument: Instrument = None,
        deps_type: type[DepsT] | None = None,
        output_type: OutputSpec[OutputT] | None = None,
        output_validators: Sequence[OutputValidatorFn] = (),
        stop_at_tools: Sequence[str] = (),
        code_mode: CodeMode | None = None,
    ) -> None: ...
    @overload
    def __init__(
        self: Agent[Any, Any],
        *,
        id: str | None = None,
        name: str | None = None,
        instructions: InstructionsLike = None,
        model: ModelLike | None = None,
        tools: Registry | Mapping[str, Any] | Iterable[Any] | None = None,
        agents: Mapping[str, Agent[Any, Any]] | None = None,
        workflows: Mapping[str, Workflow[..., Any]] | None = None,
        description: str | None = None,
        transform: ToolTransform | None = None,
        max_steps: int = 10,
        retries: int = 2,
        max_retries: int = 10,
        model_settings: ModelSettings | None = None,
        deps: Any = None,
        mcp_servers: Sequence[MCPServerLike] = (),
        prepare_step: PrepareStep | None = None,
        hooks: Sequence[RunHooks[Any]] = (),
        limits: RunLimits | None = None,
        tool_search: ToolSearch | None = None,
        deferred_tools: DeferredTools | None = None,
        store: RunStore | None = None,
        snapshot_key: Any = None,
        mask_error_details: bool = False,
        instrument: Instrument = None,
        deps_type: Any = None,
        output_type: Any = None,
        output_validators: Sequence[OutputValidatorFn] = (),
        stop_at_tools: Sequence[str] = (),
        code_mode: CodeMode | None = None,
    ) -> None: ...
    def __init__(
        self,
        *,
        id: str | None = None,  # noqa: A002 - the public name DESIGN.md fixes
        name: str | None = None,
        instructions: InstructionsLike = None,
        model: ModelLike | None = None,
        tools: Registry | Mapping[str, Any] | Iterable[Any] | None = None,
        agents: Mapping[str, Agent[Any, Any]] | None = None,
        workflows: Mapping[str, Workflow[..., Any]] | None = None,
        description: str | None = None,
        transform: ToolTransform | None = None,
        max_steps: int = 10,
        retries: int = 2,
        max_retries: int = 10,
        model_settings: ModelSettings | None = None,
        deps: Any = None,
        mcp_servers: Sequence[MCPServerLike] = (),
        prepare_step: PrepareStep | None = None,
        hooks: Sequence[RunHooks[Any]] = (),
        limits: RunLimits | None = None,
        tool_search: ToolSearch | None = None,
        deferred_tools: DeferredTools | None = None,
        store: RunStore | None = None,
        snapshot_key: Any = None,
        mask_error_details: bool = False,
        instrument: Instrument = None,
        deps_type: Any = None,
        output_type: Any = None,
        output_validators: Sequence[OutputValidatorFn] = (),
        stop_at_tools: Sequence[str] = (),
        code_mode: CodeMode | None = None,
    ) -> None:
        _check_max_steps(max_steps)
        if retries < 0 or max_retries < 0:
            raise AgentSetupError(
                f"retries and max_retries must not be negative, got retries={retries}, max_retries={max_retries}"
            )
        self.id: str = id if id is not None else _slug(name or "agent")
        self.name: str = name if name is not None else self.id
        self._instructions = Instructions(instructions)
        self.instructions: InstructionsLike = instructions
        """The instructions as given (text, a function, or a list of both)."""
        self._prepare = check_prepare([prepare_step], "Agent(...): ")
        self.hooks: list[RunHooks[Any]] = check_hooks(hooks, "Agent(hooks=...)")
        """Hooks around every model request and tool call of every run, in order."""
        if limits is not None and not isinstance(limits, RunLimits):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise AgentSetupError(f"Agent(limits=...) takes RunLimits(...), got {limits!r}")
        self.limits = limits or RunLimits()
        """Budgets and concurrency caps for every run (a run's own `limits` go over them field by field)."""
        if tool_search is not None and not isinstance(tool_search, ToolSearch):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise AgentSetupError(f"Agent(tool_search=...) takes ToolSearch(...), got {tool_search!r}")
        self.tool_search = tool_search
        self._deferred = check_deferred(deferred_tools, "Agent(...): ")
        self.description = description
        if transform is not None and not isinstance(transform, ToolTransform):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise AgentSetupError(f"Agent(transform=...) takes a ToolTransform(...), got {transform!r}")
        self.transform = transform
        self.max_steps = max_steps
        self.retries = retries
        self.max_retries = max_retries
        if model_settings is not None and not isinstance(model_settings, ModelSettings):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise AgentSetupError(f"Agent(model_settings=...) takes a ModelSettings(...), got {model_settings!r}")
        self.model_settings = model_settings or ModelSettings()
        self.deps = deps
        self.deps_type: type[Any] | None = deps_type
        """The declared type of the dependencies (None: the type of `deps`, or not known)."""
        self.output: OutputConfig = output_config(output_type, output_validators, stop_at_tools, "Agent")
        """What runs answer with: the output type and its options, validators and stop-at tools."""
        self.mcp_servers = list(mcp_servers)
        self.mask_error_details = mask_error_details
        """Tell the model a generic text for a tool's exception (unless the tool or registry says otherwise)."""
        self.instrument: Instrument = _check_instrument(instrument)
        """Tracing of this agent's runs (see `agentkit.instrumentation`)."""
        if store is not None and not isinstance(store, RunStore):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise AgentSetupError(f"store= must be a RunStore (e.g. SQLiteRunStore(path)), got {store!r}")
        self.store = store
        """Where resumes claim their pause; None: `agentkit.runs.default_store()`."""
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
        self._override: ContextVar[Model | None] = ContextVar(f"agentkit_override_{self.id}", default=None)
        self.agents: dict[str, Agent[Any, Any]] = dict(agents or {})
        self.workflows: dict[str, Workflow[..., Any]] = dict(workflows or {})
        if code_mode is not None and not isinstance(code_mode, CodeMode):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise AgentSetupError(f"Agent(code_mode=...) takes CodeMode(...), got {code_mode!r}")
        self.code_mode = code_mode
        """The code mode of every run (a run's own ``code_mode=`` replaces it); None: tools are offered directly."""
        self._sessions = MCPSessions(self._build_registry(tools), self.mcp_servers)
        for key in self.output.stop_at:
            self.tools[key]  # a stop-at key that names no tool raises UnknownToolError with a "did you mean"
        check_deps(self.tools, deps, deps_type, "Agent(...)")

    def __repr__(self) -> str:
        return f"Agent(id={self.id!r}, model={self.model!r}, tools={list(self.tools)!r})"

    # ---- configuration ---------------------------------------------------------------------------

    def _build_registry(self, tools: Registry | Mapping[str, Any] | Iterable[Any] | None) -> Registry:
        base = tools if isinstance(tools, Registry) else Registry(tools)
        if not self.agents and not self.workflows:
            return base  # the caller's own registry: later additions stay visible
        registry = Registry(dict(base.items()), mask_error_details=base.mask_error_details)
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
        unknown: frozenset[str] = state.run_keys - set(known) if state is not None else frozenset()
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

    def _settings(
        self,
        tool_choice: str | None,
        active_tools: Iterable[str] | None,
        model_settings: ModelSettings | None,
        registry: Registry | None = None,
    ) -> tuple[ModelSettings, ModelSettings, tuple[str, ...] | None]:
        base = model_settings or self.model_settings
        if tool_choice is None and active_tools is None:
            active = base.active_tools
            first = base
        else:
            active = tuple(active_tools) if active_tools is not None else base.active_tools
            first = dataclasses.replace(base, tool_choice=tool_choice or base.tool_choice, active_tools=active)
        registry = registry if registry is not None else self.tools
        for key in active or ():
            registry[key]  # raises UnknownToolError with a "did you mean"
        choice = first.tool_choice
        if choice == "required" and active == ():
            raise ToolChoiceError("tool_choice='required' with active_tools=[]: no tool could be called")
        if choice not in ("auto", "none", "required"):
            registry[choice]
            if active is not None and choice not in active:
                raise ToolChoiceError(
                    f"tool_choice={choice!r} is not among active_tools={list(active)!r}; "
                    "add it to active_tools or choose another tool"
                )
        later = first if choice in ("auto", "none") else dataclasses.replace(first, tool_choice="auto")
        return first, later, active

    def _first_request(
        self,
        history: list[Message],
        tool_choice: str | None,
        active_tools: Iterable[str] | None,
        model: Model | None = None,
    ) -> tuple[list[Message], Registry, ModelSettings]:
        """The first step's messages, tools sent and settings, offline (for payload snapshots).

        With `model`, deferred tools take the form that model gets (its vendor's native one, or held back).
        """
        coded = run_tools(self.code_mode, self.tools, model)  # hosted only for a `model` whose vendor runs programs
        first, _, active = self._settings(tool_choice, active_tools, None, coded.registry)
        if coded.programmatic:
            first = dataclasses.replace(first, programmatic_tools=coded.programmatic, programmatic_direct=coded.direct)
        tools = RunTools.build(coded.registry, self.tool_search, self._deferred, coded.hidden)
        ctx = RunContext(
            deps=self.deps, agent=self, step=0, messages=tuple(history), usage=Usage(), tools=tools.registry
        )
        text = self._instructions.render_sync(ctx)
        messages: list[Message] = [SystemMessage(text)] if text else []
        native = model is not None and tools.native(model)
        if native:
            first = dataclasses.replace(first, deferred_tools=tools.deferred_keys(active))
        return [*messages, *history], tools.sent([], active, native=native), first

    def _new_run(
        self,
        messages: list[Message],
        state: RunState,
        first: ModelSettings,
        later: ModelSettings,
        *,
        options: RunOptions,
        registry: Registry,
        extra_keys: frozenset[str],
        emit: Emit | None,
        steps: list[Step],
        usage: Usage,
        inherited: ToolTransform | None = None,
        subagent_responses: list[ModelResponse] | None = None,
    ) -> RunLoop:
        model = self.resolve_model()
        coded = run_tools(self._code_mode_of(options), registry, model)
        registry = coded.registry
        if coded.programmatic:  # the vendor runs the programs: its requests name the tools they may call
            keys, direct = coded.programmatic, coded.direct
            first = dataclasses.replace(first, programmatic_tools=keys, programmatic_direct=direct)
            later = dataclasses.replace(later, programmatic_tools=keys, programmatic_direct=direct)
        tools = RunTools.build(registry, self.tool_search, self._merged_deferred(state.deferred), coded.hidden)
        state.run_keys = state.run_keys | extra_keys
        state.registry = tools.registry  # every tool the run can call, for snapshots and transcripts
        control = RunControl(
            tools=tools,
            instructions=self._instructions,
            prepare=[*self._prepare, *check_prepare([options.prepare_step], "generate(...): ")],
            hooks=[*self.hooks, *check_hooks(options.hooks, "generate(hooks=...)")],
            limits=state.limits,
            require_approval=state.require_approval,
            extra_keys=extra_keys,
        )
        run_registry = tools.registry
        executor = run_registry.select(state.active_tools) if state.active_tools is not None else run_registry
        deps, context = options.deps, options.context
        if deps is None and context is not None:
            deps = context.deps
        deps = deps if deps is not None else self.deps
        check_deps(run_registry, deps, self.deps_type, "generate(...)")
        config = state.output if state.output is not None else self._restored_output(state)
        return RunLoop(
            self,
            model,
            run_registry,
            executor,
            list(messages),
            0,
            first,
            later,
            state,
            deps,
            context,
            emit,
            steps,
            usage,
            merge_transforms(self.transform, inherited),
            options.cancel,
            control=control,
            output=RunOutput.of(config, model, run_registry),
            subagent_responses=subagent_responses,
        )

    def _restored_output(self, state: RunState) -> OutputConfig:
        """A snapshot's run resumes with the agent's output, which must be the one it paused with."""
        from .runs._snapshot import output_fingerprint

        if state.output_fingerprint != output_fingerprint(self.output):
            from .exceptions import SnapshotError

            raise SnapshotError(
                "the run paused asking for another output type than this agent's (a per-call output_type?): "
                "a snapshot resumes with the agent's output_type; resume the RunResult in the same process, "
                "or give the agent that output_type"
            )
        state.output, state.structured = self.output, self.output.structured
        return self.output

    def _output_for(
        self, output_type: Any, validators: Sequence[OutputValidatorFn] | None, stop_at: Sequence[str] | None
    ) -> OutputConfig:
        """The output a run asks for: a per-call type (with its own validators) or the agent's, plus stop-at keys."""
        if output_type is None:
            config = self.output
            if validators:
                config = dataclasses.replace(
                    config, validators=output_config(config.target, validators, None, "generate").validators
                )
        else:
            config = output_config(output_type, validators, None, "generate")
            config = dataclasses.replace(config, stop_at=self.output.stop_at)
        for key in stop_at or ():
            self.tools[key]  # raises UnknownToolError with a "did you mean"
        return config.with_stop_at(list(stop_at or ()))

    def _snapshot_key(self) -> Any:
        return self.snapshot_key if self.snapshot_key is not None else getattr(self._run_store(), "key", None)

    def _run_store(self) -> RunStore:
        return self.store if self.store is not None else default_store()

    async def _start(
        self,
        prompt: Prompt,
        options: RunOptions,
        emit: Emit | None,
        inherited: ToolTransform | None = None,
        output: OutputConfig | None = None,
    ) -> RunResult[Any]:
        messages = _as_messages(prompt)
        if options.max_steps is not None:
            _check_max_steps(options.max_steps)
        limits = options.limits.over(self.limits) if options.limits is not None else self.limits
        async with self._session(), open_run_tools(self.tools, options.tools, options.mcp_servers) as opened:
            registry, extra_keys = opened
            registry = self._with_code_tool(registry, options)
            first, later, active = self._settings(
                options.tool_choice, options.active_tools, options.model_settings, registry
            )
            state = RunState(
                options.max_steps if options.max_steps is not None else self.max_steps,
                active,
                first,
                {},
                0,
                require_approval=options.require_approval,
                limits=limits,
                deferred=options.deferred,
            )
            config = output if output is not None else self.output
            state.structured, state.output = config.structured, config
            state.signing_key = self._snapshot_key  # looked up only when a snapshot is signed
            run = self._new_run(
                messages,
                state,
                first,
                later,
                options=options,
                registry=registry,
                extra_keys=extra_keys,
                emit=emit,
                steps=[],
                usage=Usage(),
                inherited=inherited,
            )
            return await run.run()

    def _stream_for_parent(
        self, prompt: str, *, deps: Any, policy: ToolTransform | None, cancel: asyncio.Event | None = None
    ) -> AgentStream[OutputT]:
        """`stream` for a run as a supervisor's tool: the supervisor's `policy` applies beneath this agent's."""

        async def start(emit: Emit) -> RunResult[Any]:
            return await self._start(prompt, RunOptions(deps=deps, cancel=cancel), emit, policy)

        return AgentStream(start)

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
            tools = self._run_tools_of(self.tools, state.deferred if state is not None else None)
        return snapshot_of(result, tools=tools, key=self._snapshot_key())

    def _code_mode_of(self, options: RunOptions | None) -> CodeMode | None:
        """The run's code mode: its own, else the agent's."""
        if options is not None and options.code_mode is not None:
            return options.code_mode
        return self.code_mode

    def _with_code_tool(self, registry: Registry, options: RunOptions | None, model: Model | None = None) -> Registry:
        """`registry` with agentkit's code tool when the run's code mode runs programs here (not hosted).

        `model`: the model the run uses (default: the agent's, resolved).
        """
        mode = self._code_mode_of(options)
        if mode is None:
            return registry
        if mode.hosted and hosted_by(model if model is not None else self.resolve_model()):
            return registry
        return mode.extend(registry)

    def _merged_deferred(self, run_deferred: bool | frozenset[str] | None) -> bool | frozenset[str] | None:
        """The agent's deferred tools with a run's own."""
        if self._deferred is True or run_deferred is True:
            return True
        return frozenset(self._deferred or ()) | frozenset(run_deferred or ())

    def _run_tools_of(self, registry: Registry, run_deferred: Any, options: RunOptions | None = None) -> Registry:
        """Every tool a run over `registry` can call (the search tool included when it defers tools).

        `run_deferred` is the run's own ``deferred_tools`` (as a snapshot records it, JSON included).
        """
        deferred = check_deferred(run_deferred, "the snapshot's ")
        registry = self._with_code_tool(registry, options)
        return RunTools.build(registry, self.tool_search, self._merged_deferred(deferred)).registry


def _check_max_steps(max_steps: int) -> None:
    if not isinstance(max_steps, int) or max_steps < 1:  # pyright: ignore[reportUnnecessaryIsInstance]
        raise AgentSetupError(f"max_steps must be a whole number of model turns, at least 1; got {max_steps!r}")


def _check_model(model: ModelLike | None) -> None:
    # Fail at construction for a bad vendor prefix, but build the client on first use only.
    if isinstance(model, str) and model != "test" and model.partition(":")[0] not in KNOWN_VENDORS:
        infer_model(model)  # raises the "did you mean" error
    elif model is not None and not isinstance(model, (str, Model)):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise ModelSetupError(f"model must be a 'vendor:model-name' string or a Model instance, got {model!r}")


def _as_messages(prompt: Prompt) -> list[Message]:
    if isinstance(prompt, str):
        return [UserMessage(prompt)]
    if isinstance(prompt, UserMessage):
        return [prompt]
    messages = list(prompt)
    for message in messages:
        if not isinstance(message, (SystemMessage, UserMessage, AssistantMessage, ToolResultsMessage)):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f"a history holds agentkit messages, got {message!r}")
    return messages
