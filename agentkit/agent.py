"""`Agent`: a model with instructions and tools, run in a loop until it answers.

```python
agent = Agent(id="weather", instructions="Answer briefly.", model="openai:gpt-4o-mini", tools=[get_weather])
result = await agent.generate("Weather in Paris?")
result.text, result.steps, result.messages, result.usage, result.status
```

A run ends with one of three statuses:

* ``"complete"``: the model answered without calling a tool;
* ``"max_steps"``: `max_steps` model turns were used up (the last turn's tool results are in `messages`);
* ``"awaiting_approval"``: a call needs approval; nothing of that turn ran. Continue with `Agent.resume`.

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
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from typing import Any, Union

from ._agent._limits import enter_run, leave_run
from ._agent._options import RunOptions, check_hooks
from ._agent._steps import Instructions, InstructionsLike, RunControl, check_prepare
from ._agent._toolset import DeferredTools, RunTools, bind_state, check_deferred, open_run_tools, unbind_state
from ._agent.display import TranscriptEntry, merge_transforms, transcript
from ._agent.loop import RunLoop
from ._agent.results import Approval, PendingApproval, RunResult, RunState, Step, claim_pause
from ._agent.sessions import MCPServerLike, MCPSessions
from ._agent.stream import AgentStream, Emit
from ._agent.subagents import subagent_tool
from .context import RunContext, ToolContext
from .events import RunStatus
from .exceptions import AgentSetupError, ApprovalError, ModelSetupError, RetryLimitExceeded, ToolChoiceError
from .hooks import PrepareStep, RunHooks, StepChanges
from .limits import RunLimits
from .messages import AssistantMessage, Message, SystemMessage, ToolResultsMessage, Usage, UserMessage
from .models import KNOWN_VENDORS, Model, ModelLike, ModelSettings, infer_model
from .registry import Registry
from .search import ToolSearch
from .tools import Tool, ToolTransform
from .workflows import Workflow

__all__ = [
    "Agent",
    "AgentStream",
    "Approval",
    "ApprovalError",
    "MCPServerLike",
    "PendingApproval",
    "RetryLimitExceeded",
    "RunContext",
    "RunResult",
    "RunStatus",
    "Step",
    "StepChanges",
    "TranscriptEntry",
]

Prompt = Union[str, UserMessage, Sequence[Message]]
"""A prompt text, one user message, or a whole neutral history (e.g. a previous `RunResult.messages` plus a
new `UserMessage`)."""


def _slug(text: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_-]+", "-", text).strip("-").lower() or "agent"


class Agent:
    """A model with instructions and tools, run in a loop until it answers.

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
    """

    def __init__(
        self,
        *,
        id: str | None = None,  # noqa: A002 - the public name DESIGN.md fixes
        name: str | None = None,
        instructions: InstructionsLike = None,
        model: ModelLike | None = None,
        tools: Registry | Mapping[str, Any] | Iterable[Any] | None = None,
        agents: Mapping[str, Agent] | None = None,
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
        if limits is not None and not isinstance(limits, RunLimits):
            raise AgentSetupError(f"Agent(limits=...) takes RunLimits(...), got {limits!r}")
        self.limits = limits or RunLimits()
        """Budgets and concurrency caps for every run (a run's own `limits` go over them field by field)."""
        if tool_search is not None and not isinstance(tool_search, ToolSearch):
            raise AgentSetupError(f"Agent(tool_search=...) takes ToolSearch(...), got {tool_search!r}")
        self.tool_search = tool_search
        self._deferred = check_deferred(deferred_tools, "Agent(...): ")
        self.description = description
        self.transform = transform
        self.max_steps = max_steps
        self.retries = retries
        self.max_retries = max_retries
        self.model_settings = model_settings or ModelSettings()
        self.deps = deps
        self.mcp_servers = list(mcp_servers)
        _check_model(model)
        self.model: ModelLike | None = model
        """The model as given; see `resolve_model` for the instance a run uses."""
        self._model: Model | None = model if isinstance(model, Model) else None
        self._override: ContextVar[Model | None] = ContextVar(f"agentkit_override_{self.id}", default=None)
        self.agents: dict[str, Agent] = dict(agents or {})
        self.workflows: dict[str, Workflow[..., Any]] = dict(workflows or {})
        self._sessions = MCPSessions(self._build_registry(tools), self.mcp_servers)

    def __repr__(self) -> str:
        return f"Agent(id={self.id!r}, model={self.model!r}, tools={list(self.tools)!r})"

    # ---- configuration ---------------------------------------------------------------------------

    def _build_registry(self, tools: Registry | Mapping[str, Any] | Iterable[Any] | None) -> Registry:
        base = tools if isinstance(tools, Registry) else Registry(tools)
        if not self.agents and not self.workflows:
            return base  # the caller's own registry: later additions stay visible
        registry = Registry(dict(base.items()))
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
        self, result: RunResult, *, tools: Registry | Mapping[str, Any] | Iterable[Any] | None = None
    ) -> list[TranscriptEntry]:
        """Every tool call of `result` shaped for a transcript by the tools' and this agent's transforms.

        The same fail-closed rules as the stream events: a transform that raises withholds that payload.
        Calls still waiting for approval are listed with their (shaped) input only. Tools given to the
        run itself are known to the result it returned; for a copy of it (``pickle``, ``deepcopy``), pass
        them as `tools`, or their calls' payloads are withheld.
        """
        known: dict[str, Any] = dict(self.tools.items())
        known.update(result._run_tools or {})
        if tools is not None:
            known.update((tools if isinstance(tools, Registry) else Registry(tools)).items())
        unknown = result._state.run_keys - set(known) if result._state is not None else frozenset()
        return transcript(result, known, self.transform, withheld=unknown)

    @contextlib.contextmanager
    def override(self, *, model: ModelLike) -> Iterator[None]:
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

    async def __aenter__(self) -> Agent:
        await self._sessions.enter()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._sessions.leave()

    @contextlib.asynccontextmanager
    async def _session(self) -> AsyncIterator[None]:
        # A run holds the MCP sessions open for its own duration (re-entrant: inside `async with agent:`
        # or beside concurrent runs, they stay open until the last one leaves).
        if self.mcp_servers:
            async with self:
                yield
        else:
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
        first, _, active = self._settings(tool_choice, active_tools, None)
        tools = RunTools.build(self.tools, self.tool_search, self._deferred)
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
    ) -> RunLoop:
        agent_deferred = self._deferred
        deferred: bool | frozenset[str] | None
        if agent_deferred is True or state.deferred is True:
            deferred = True
        else:
            deferred = frozenset(agent_deferred or ()) | frozenset(state.deferred or ())
        tools = RunTools.build(registry, self.tool_search, deferred)
        state.run_keys = state.run_keys | extra_keys
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
        return RunLoop(
            self,
            self.resolve_model(),
            run_registry,
            executor,
            list(messages),
            0,
            first,
            later,
            state,
            deps if deps is not None else self.deps,
            context,
            emit,
            steps,
            usage,
            merge_transforms(self.transform, inherited),
            control=control,
        )

    async def _start(
        self, prompt: Prompt, options: RunOptions, emit: Emit | None, inherited: ToolTransform | None = None
    ) -> RunResult:
        messages = _as_messages(prompt)
        if options.max_steps is not None:
            _check_max_steps(options.max_steps)
        limits = options.limits.over(self.limits) if options.limits is not None else self.limits
        async with self._session(), open_run_tools(self.tools, options.tools, options.mcp_servers) as opened:
            registry, extra_keys = opened
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

    async def generate(
        self,
        prompt: Prompt,
        *,
        tool_choice: str | None = None,
        active_tools: Iterable[str] | None = None,
        max_steps: int | None = None,
        deps: Any = None,
        context: ToolContext[Any] | None = None,
        model_settings: ModelSettings | None = None,
        tools: Registry | Mapping[str, Any] | Iterable[Any] | None = None,
        mcp_servers: Sequence[MCPServerLike] = (),
        prepare_step: PrepareStep | None = None,
        hooks: Sequence[RunHooks[Any]] = (),
        limits: RunLimits | None = None,
        require_approval: bool = False,
        deferred_tools: DeferredTools | None = None,
    ) -> RunResult:
        """Run the loop on `prompt` until the model answers, `max_steps` ends, or a call needs approval.

        Args:
            prompt: a text, a `UserMessage`, or a whole neutral history to continue.
            tool_choice: ``"auto"``, ``"none"``, ``"required"`` or a tool key. ``"required"`` and a key
                apply to the first model turn only (then ``"auto"``), or the model could never answer.
            active_tools: the keys the model may call in this run (others are neither shown nor run).
            max_steps: model turns for this run (default: the agent's `max_steps`).
            deps: dependencies for `ToolContext.deps` (default: the agent's `deps`, else `context.deps`).
            context: a `ToolContext` whose deps and cancellation event the run's tools share.
            model_settings: settings for this run instead of the agent's `model_settings`.
            tools: tools for this run only (a `Registry`, a dict or a list), beside the agent's; a key
                both have is an error naming both tools. No other run sees them.
            mcp_servers: MCP sessions for this run only (e.g. with one user's credentials): opened when
                the run starts, closed when it ends; their tools join this run's.
            prepare_step: runs before each model turn (after the agent's own) and may change that turn
                (see `agentkit.hooks.StepChanges`).
            hooks: `RunHooks` for this run, after the agent's own.
            limits: `RunLimits` for this run; fields left None keep the agent's.
            require_approval: every tool call of this run needs approval (besides the tools' own policies).
            deferred_tools: keys to defer in this run (or True for all), besides the agent's and the
                tools' own ``deferred=True`` (see `agentkit.search`).

        Raises:
            RetryLimitExceeded: a retry budget ran out (the partial result is on the exception).
            UnknownToolError: `active_tools` or `tool_choice` names no registered tool.
            ToolChoiceError: `tool_choice` names a tool outside `active_tools`, or is ``"required"`` with
                ``active_tools=[]``.
            RegistryError: a tool of this run (or of its MCP servers) has a key the agent already uses.
            AgentSetupError: `max_steps` is below 1, or a run option cannot work.
            HookError: a model-request hook failed (tool-call hooks never raise).
        """
        options = RunOptions(
            tool_choice, active_tools, max_steps, deps, context, model_settings, tools, mcp_servers,
            prepare_step, hooks, limits, require_approval, deferred_tools,
        )  # fmt: skip
        return await self._start(prompt, options.checked(), None)

    def generate_sync(
        self,
        prompt: Prompt,
        *,
        tool_choice: str | None = None,
        active_tools: Iterable[str] | None = None,
        max_steps: int | None = None,
        deps: Any = None,
        context: ToolContext[Any] | None = None,
        model_settings: ModelSettings | None = None,
        tools: Registry | Mapping[str, Any] | Iterable[Any] | None = None,
        mcp_servers: Sequence[MCPServerLike] = (),
        prepare_step: PrepareStep | None = None,
        hooks: Sequence[RunHooks[Any]] = (),
        limits: RunLimits | None = None,
        require_approval: bool = False,
        deferred_tools: DeferredTools | None = None,
    ) -> RunResult:
        """`generate` for scripts: runs its own event loop (inside async code, await `generate`)."""
        options = RunOptions(
            tool_choice, active_tools, max_steps, deps, context, model_settings, tools, mcp_servers,
            prepare_step, hooks, limits, require_approval, deferred_tools,
        )  # fmt: skip
        return asyncio.run(self._start(prompt, options.checked(), None))

    def stream(
        self,
        prompt: Prompt,
        *,
        tool_choice: str | None = None,
        active_tools: Iterable[str] | None = None,
        max_steps: int | None = None,
        deps: Any = None,
        context: ToolContext[Any] | None = None,
        model_settings: ModelSettings | None = None,
        tools: Registry | Mapping[str, Any] | Iterable[Any] | None = None,
        mcp_servers: Sequence[MCPServerLike] = (),
        prepare_step: PrepareStep | None = None,
        hooks: Sequence[RunHooks[Any]] = (),
        limits: RunLimits | None = None,
        require_approval: bool = False,
        deferred_tools: DeferredTools | None = None,
    ) -> AgentStream:
        """Like `generate` (same options), as an async iterator of typed events (see `agentkit.events`).

        The run starts when iteration starts; the `RunResult` is `AgentStream.result` afterwards.
        """
        options = RunOptions(
            tool_choice, active_tools, max_steps, deps, context, model_settings, tools, mcp_servers,
            prepare_step, hooks, limits, require_approval, deferred_tools,
        ).checked()  # fmt: skip

        async def start(emit: Emit) -> RunResult:
            return await self._start(prompt, options, emit)

        return AgentStream(start)

    def _stream_for_parent(self, prompt: str, *, deps: Any, policy: ToolTransform | None) -> AgentStream:
        """`stream` for a run as a supervisor's tool: the supervisor's `policy` applies beneath this agent's."""

        async def start(emit: Emit) -> RunResult:
            return await self._start(prompt, RunOptions(deps=deps), emit, policy)

        return AgentStream(start)

    # ---- approvals -------------------------------------------------------------------------------

    async def resume(
        self,
        result: RunResult,
        approvals: Mapping[str, bool | Approval],
        *,
        deps: Any = None,
        context: ToolContext[Any] | None = None,
        tools: Registry | Mapping[str, Any] | Iterable[Any] | None = None,
        mcp_servers: Sequence[MCPServerLike] = (),
        prepare_step: PrepareStep | None = None,
        hooks: Sequence[RunHooks[Any]] = (),
    ) -> RunResult:
        """Continue a run that stopped with status ``"awaiting_approval"``.

        `approvals` maps each pending call id to True/False or an `Approval` (a denial's reason reaches the
        model). Approved calls run (with the rest of that turn's calls); denied ones become ``denied``
        error results; then the loop goes on. Whether a call needs approval is decided again here, from
        the calls in `result.messages`, so an edited `result.pending` cannot let a call through.

        The run's budgets, limits, ``require_approval`` and the tools its searches found carry over;
        functions and sessions do not travel with a result, so give the run's own `tools`,
        `mcp_servers`, `prepare_step` and `hooks` again (as `generate` took them).

        Raises:
            ApprovalError: the result is not awaiting approval, a pending call has no decision, a
                decision names a call that is not pending, or this result (or a copy of it: ``deepcopy``,
                ``pickle``) was already resumed in this process. Nothing runs then.
        """
        options = RunOptions(
            deps=deps, context=context, tools=tools, mcp_servers=mcp_servers, prepare_step=prepare_step,
            hooks=hooks,
        ).checked()  # fmt: skip
        return await self._resume(result, approvals, options, None)

    def resume_stream(
        self,
        result: RunResult,
        approvals: Mapping[str, bool | Approval],
        *,
        deps: Any = None,
        context: ToolContext[Any] | None = None,
        tools: Registry | Mapping[str, Any] | Iterable[Any] | None = None,
        mcp_servers: Sequence[MCPServerLike] = (),
        prepare_step: PrepareStep | None = None,
        hooks: Sequence[RunHooks[Any]] = (),
    ) -> AgentStream:
        """`resume` as a stream of events (the resumed turn's tool results first)."""
        options = RunOptions(
            deps=deps, context=context, tools=tools, mcp_servers=mcp_servers, prepare_step=prepare_step,
            hooks=hooks,
        ).checked()  # fmt: skip

        async def start(emit: Emit) -> RunResult:
            return await self._resume(result, approvals, options, emit)

        return AgentStream(start)

    async def _resume(
        self,
        result: RunResult,
        approvals: Mapping[str, bool | Approval],
        options: RunOptions,
        emit: Emit | None,
    ) -> RunResult:
        state = result._state
        last = result.messages[-1] if result.messages else None
        if result.status != "awaiting_approval" or state is None or not isinstance(last, AssistantMessage):
            raise ApprovalError(f"only a run with status 'awaiting_approval' can be resumed (got {result.status!r})")
        if not result.steps:
            raise ApprovalError("the result has no step to resume")
        decisions = {k: v if isinstance(v, Approval) else Approval(bool(v)) for k, v in approvals.items()}
        calls = last.tool_calls
        unknown = sorted(set(decisions) - {c.id for c in calls})
        if unknown:
            raise ApprovalError(f"no pending call has the id(s) {unknown}; pending: {[c.id for c in calls]}")
        token = state.pause_token
        state = dataclasses.replace(
            state,
            failures=dict(state.failures),
            pause_token=None,
            tool_calls=dict(state.tool_calls),
            found=list(state.found),
        )
        later = state.settings if state.settings.tool_choice in ("auto", "none") else None
        later = later or dataclasses.replace(state.settings, tool_choice="auto")
        steps = list(result.steps)
        async with self._session(), open_run_tools(self.tools, options.tools, options.mcp_servers) as opened:
            registry, extra_keys = opened
            run = self._new_run(
                list(result.messages),
                state,
                later,
                later,
                options=options,
                registry=registry,
                extra_keys=extra_keys,
                emit=emit,
                steps=steps,
                usage=result.usage,
            )
            if state.step_tools is not None:
                # the paused step's tools: what could run then is what may run now
                run.executor = run.registry.select(k for k in state.step_tools if k in run.registry)
                state.step_tools = None
            missing = [c.id for c in calls if run.needs_approval(c) and c.id not in decisions]
            if missing:
                raise ApprovalError(f"no decision for the pending call(s) {missing}: approve or deny each")
            # Single use, copies included: a second resume could re-run approved calls or overturn a denial.
            if token is None or not claim_pause(token):
                raise ApprovalError(
                    "this result (or a copy of it) was already resumed; continue from the result that resume returned"
                )
            denied = {call_id: d for call_id, d in decisions.items() if not d.approved}
            step = steps[-1]
            token_run, bound = enter_run(run), bind_state(run.state)
            try:
                results = await run.execute(calls, denied, step.index)
            finally:
                unbind_state(bound)
                leave_run(token_run)
            steps[-1] = dataclasses.replace(step, results=results)
            run.record(step.index, step.response, calls, results)
            return await run.run()


def _check_max_steps(max_steps: int) -> None:
    if not isinstance(max_steps, int) or max_steps < 1:
        raise AgentSetupError(f"max_steps must be a whole number of model turns, at least 1; got {max_steps!r}")


def _check_model(model: ModelLike | None) -> None:
    # Fail at construction for a bad vendor prefix, but build the client on first use only.
    if isinstance(model, str) and model != "test" and model.partition(":")[0] not in KNOWN_VENDORS:
        infer_model(model)  # raises the "did you mean" error
    elif model is not None and not isinstance(model, (str, Model)):
        raise ModelSetupError(f"model must be a 'vendor:model-name' string or a Model instance, got {model!r}")


def _as_messages(prompt: Prompt) -> list[Message]:
    if isinstance(prompt, str):
        return [UserMessage(prompt)]
    if isinstance(prompt, UserMessage):
        return [prompt]
    messages = list(prompt)
    for message in messages:
        if not isinstance(message, (SystemMessage, UserMessage, AssistantMessage, ToolResultsMessage)):
            raise TypeError(f"a history holds agentkit messages, got {message!r}")
    return messages
