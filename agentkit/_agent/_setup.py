"""How a run starts: the agent's `AgentSpec` and one call's `RunOptions` become its `RunConfig` and `RunState`.

Every check of a call's options happens here, before anything runs (the tool choice against the tools,
the deps against the tools' context types, the output type against the model). `start` is
`Agent.generate`'s body (and `stream`'s, `generate_sync`'s); `agentkit._agent.resume` makes the config of
a resumed leg with `new_config` too.
"""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import Coroutine, Iterable, Sequence
from typing import Any

from .._choice import check_tool_choice
from .._text import type_name
from .._tool_errors import ErrorPolicy
from ..codemode._mode import CodeMode
from ..codemode._run import hosted_by
from ..codemode._run import run_tools as run_code_tools
from ..context import RunContext
from ..exceptions import AgentSetupError, SnapshotError
from ..instrumentation import _tracing_for  # pyright: ignore[reportPrivateUsage]  # agentkit's own run plumbing, kept out of the public module's API
from ..limits import RunLimits
from ..messages import AssistantMessage, Message, SystemMessage, ToolResultsMessage, Usage, UserMessage
from ..models import Model, ModelSettings
from ..registry import Registry
from ..tools import ToolTransform
from . import observe
from ._deps import check_deps
from ._instructions import check_prepare
from ._intercept import prepare_functions
from ._limits import enclosing
from ._options import DEFAULT_OPTIONS, RunOptions, check_hooks
from ._output import OutputConfig, OutputValidatorFn, RunOutput, output_config
from ._repeats import repeat_policy
from ._toolset import RunTools, check_deferred, open_run_tools
from .config import AgentSpec, RunConfig, machinery
from .display import merge_transforms
from .hooks import current_hooks
from .loop import RunLoop
from .results import RunResult
from .state import RunRequest, RunState
from .stream import Emit

__all__ = [
    "as_messages",
    "check_max_steps",
    "code_mode_of",
    "first_request",
    "new_config",
    "output_for",
    "run_tools_of",
    "start",
    "with_code_tool",
]


def check_max_steps(max_steps: int) -> None:
    """Raise `AgentSetupError` unless `max_steps` is a whole number of at least 1."""
    if not isinstance(max_steps, int) or max_steps < 1:  # pyright: ignore[reportUnnecessaryIsInstance]
        raise AgentSetupError(f"max_steps must be a whole number of model turns, at least 1; got {max_steps!r}")


def as_messages(prompt: str | UserMessage | Sequence[Message]) -> list[Message]:
    """A prompt as a history: a text or a user message becomes one message; a history is checked."""
    if isinstance(prompt, str):
        return [UserMessage(prompt)]
    if isinstance(prompt, UserMessage):
        return [prompt]
    messages = list(prompt)
    for message in messages:
        if not isinstance(message, (SystemMessage, UserMessage, AssistantMessage, ToolResultsMessage)):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f"a history holds agentkit messages, got {type_name(message)}")
    return messages


def settings_for(
    spec: AgentSpec,
    tool_choice: str | None,
    active_tools: Iterable[str] | None,
    model_settings: ModelSettings | None,
    registry: Registry,
) -> tuple[ModelSettings, tuple[str, ...] | None]:
    """The first step's settings and the run's active tools, checked against `registry`."""
    base = model_settings or spec.model_settings
    if tool_choice is None and active_tools is None:
        first, active = base, base.active_tools
    else:
        active = tuple(active_tools) if active_tools is not None else base.active_tools
        first = dataclasses.replace(base, tool_choice=tool_choice or base.tool_choice, active_tools=active)
    check_tool_choice(first.tool_choice, active, registry)
    return first, active


def output_for(
    spec: AgentSpec,
    output_type: Any,
    validators: Sequence[OutputValidatorFn] | None,
    stop_at: Sequence[str] | None,
) -> OutputConfig:
    """The output a run asks for: a per-call type (with its own validators) or the agent's, plus stop-at keys."""
    if output_type is None:
        config = spec.output
        if validators:
            config = dataclasses.replace(
                config, validators=output_config(config.target, validators, None, "generate").validators
            )
    else:
        config = output_config(output_type, validators, None, "generate")
        if config.stop_at:
            spec.tools().require(*config.stop_at)
        config = dataclasses.replace(config, stop_at=config.stop_at | spec.output.stop_at)
    if stop_at:
        spec.tools().require(*stop_at)
    return config.with_stop_at(list(stop_at or ()))


def run_tools(spec: AgentSpec, registry: Registry, run_deferred: bool | frozenset[str] | None) -> RunTools:
    """The run's tools: `registry` with the agent's and the run's deferred tools, and the search tool."""
    return RunTools.build(registry, spec.tool_search, spec.merged_deferred(run_deferred))


def run_tools_of(
    spec: AgentSpec, registry: Registry, run_deferred: Any, options: RunOptions = DEFAULT_OPTIONS
) -> Registry:
    """Every tool a run over `registry` can call (the search tool and the code tool included when it has them).

    `run_deferred` is the run's own ``deferred_tools`` (as a snapshot records it, JSON included).
    """
    registry = with_code_tool(spec, registry, options)
    return run_tools(spec, registry, check_deferred(run_deferred, "the snapshot's ")).registry


def restored_output(spec: AgentSpec, request: RunRequest) -> RunRequest:
    """A snapshot's run resumes with the agent's output, which must be the one it paused with."""
    if request.output is not None:
        return request
    from ..runs._snapshot import output_fingerprint

    if request.output_fingerprint != output_fingerprint(spec.output):
        raise SnapshotError(
            "the run paused asking for another output type than this agent's (a per-call output_type?): "
            "a snapshot resumes with the agent's output_type; resume the RunResult in the same process, "
            "or give the agent that output_type"
        )
    return dataclasses.replace(request, output=spec.output, structured=spec.output.structured)


def code_mode_of(spec: AgentSpec, options: RunOptions) -> CodeMode | None:
    """The run's code mode: its own, else the agent's."""
    return options.code_mode if options.code_mode is not None else spec.code_mode


def with_code_tool(spec: AgentSpec, registry: Registry, options: RunOptions, model: Model | None = None) -> Registry:
    """`registry` with agentkit's code tool when the run's code mode runs programs here (not the vendor).

    `model`: the model the run uses (default: the agent's, resolved).
    """
    mode = code_mode_of(spec, options)
    if mode is None:
        return registry
    if mode.hosted and hosted_by(model if model is not None else spec.model()):
        return registry
    return mode.extend(registry)


def new_config(
    spec: AgentSpec,
    state: RunState,
    options: RunOptions,
    registry: Registry,
    extra_keys: frozenset[str],
    emit: Emit | None,
    *,
    inherited: ToolTransform | None = None,
    settles_background: bool = False,
) -> RunConfig:
    """The `RunConfig` of one leg of a run over `registry` (the agent's tools with the run's own)."""
    request = restored_output(spec, state.request)
    if extra_keys - request.run_keys:
        request = dataclasses.replace(request, run_keys=request.run_keys | extra_keys)
    state.request = request
    model = spec.model()
    coded = run_code_tools(code_mode_of(spec, options), registry, model)
    first, later = request.settings, request.later
    if coded.programmatic:  # the vendor runs the programs: its requests name the tools they may call
        keys, direct = coded.programmatic, coded.direct
        first = dataclasses.replace(first, programmatic_tools=keys, programmatic_direct=direct)
        later = dataclasses.replace(later, programmatic_tools=keys, programmatic_direct=direct)
    tools = RunTools.build(coded.registry, spec.tool_search, spec.merged_deferred(request.deferred), coded.hidden)
    run_registry = tools.registry
    state.registry = run_registry  # every tool the run can call, for snapshots and transcripts
    state.signing_key = spec.snapshot_key  # looked up only when a snapshot is signed
    active = request.active_tools
    state.executor = run_registry.select(active) if active is not None else run_registry
    # before each step: the agent's prepare functions and hooks, then the run's
    prepare = (*spec.prepare, *prepare_functions(spec.hooks))
    hooks = tuple(spec.hooks)
    if options.prepare_step is not None:
        prepare = (*prepare, *check_prepare([options.prepare_step], "generate(...): "))
    if options.hooks:
        own = check_hooks(options.hooks, "generate(hooks=...)")
        hooks, prepare = (*hooks, *own), (*prepare, *prepare_functions(own))
    deps, context = options.deps, options.context
    if deps is None and context is not None:
        deps = context.deps
    deps = deps if deps is not None else spec.deps
    check_deps(run_registry, deps, spec.deps_type, "generate(...)")
    cancel = options.cancel if options.cancel is not None else (context.cancelled if context is not None else None)
    policy = merge_transforms(spec.transform, inherited)
    tracing = _tracing_for(spec.instrument)
    engine = current_hooks.get()
    repeats = repeat_policy(request)
    bits = machinery(
        prepare=prepare,
        hooks=hooks,
        instructions=spec.instruction_parts,
        tools=tools,
        limits=request.limits,
        inherited=enclosing(),
        streaming=emit is not None,
        cancel=cancel is not None,
        observed=observe.debugging(),
        traced=tracing is not None,
        tracing_off=spec.instrument is False,
        programs=code_mode_of(spec, options) is not None and not coded.programmatic,
        repeats=repeats.active,
        cached=any(item.cache is not None for _, item in run_registry.items()),
        asks=request.require_approval or (repeats.active and repeats.on == "approve"),
    )
    return RunConfig(
        agent=spec,
        model=model,
        tools=tools,
        request=request,
        first=first,
        later=later,
        prepare=prepare,
        hooks=hooks,
        policy=policy,
        # the agent's masking, or its registry's (a tool's own setting still wins, call by call)
        errors=ErrorPolicy(
            spec.mask_error_details or run_registry.mask_error_details or None,
            policy is not None and policy.input is not None,
        ),
        output=RunOutput.of(request.output, model, run_registry),
        deps=deps,
        context=context,
        cancel=cancel,
        emit=emit,
        engine=engine,
        tracing=tracing,
        extra_keys=extra_keys,
        settles_background=settles_background or engine.durable,
        machinery=bits,
        options=options,
    )


def start(
    spec: AgentSpec,
    prompt: str | UserMessage | Sequence[Message],
    options: RunOptions,
    emit: Emit | None,
    *,
    inherited: ToolTransform | None = None,
    output: OutputConfig | None = None,
    settles_background: bool = False,
) -> Coroutine[Any, Any, RunResult[Any]]:
    """Run `prompt` to its end (or pause) with `options`; see `Agent.generate`.

    Call it where the run is awaited (the plain run is set up in the call): it returns the loop's own
    coroutine, with none of its own around it.
    """
    if (
        options is DEFAULT_OPTIONS
        and inherited is None
        and not spec.has_sessions
        and (output is None or output is spec.output)
    ):
        # most runs: nothing of their own, so what they were asked is the agent's, the same every time
        return _planned(spec, as_messages(prompt), emit, settles_background).run()
    return _start(spec, prompt, options, emit, inherited, output, settles_background)


async def _start(
    spec: AgentSpec,
    prompt: str | UserMessage | Sequence[Message],
    options: RunOptions,
    emit: Emit | None,
    inherited: ToolTransform | None,
    output: OutputConfig | None,
    settles_background: bool,
) -> RunResult[Any]:
    """`start` of a run with options of its own (or MCP sessions, or an inherited policy): set up here."""
    messages = as_messages(prompt)
    limits = _limits(spec, options)
    async with spec.session(), open_run_tools(spec.tools(), options.tools, options.mcp_servers) as opened:
        registry, extra_keys = opened
        registry = with_code_tool(spec, registry, options)
        first, active = settings_for(spec, options.tool_choice, options.active_tools, options.model_settings, registry)
        chosen = output if output is not None else spec.output
        request = RunRequest(
            max_steps=limits.max_steps if limits.max_steps is not None else spec.max_steps,
            active_tools=active,
            settings=first,
            require_approval=options.require_approval,
            limits=limits,
            deferred=options.deferred,
            output=chosen,
            structured=chosen.structured,
            run_keys=extra_keys,
        )
        state = _new_state(request, messages)
        config = new_config(
            spec, state, options, registry, extra_keys, emit, inherited=inherited, settles_background=settles_background
        )
        return await RunLoop(config=config, state=state).run()


def _limits(spec: AgentSpec, options: RunOptions) -> RunLimits:
    """The run's limits: its own over the agent's; its turns and retries its own, else the agent's now."""
    own = options.limits
    if options.max_steps is not None:
        check_max_steps(options.max_steps)
        own = dataclasses.replace(own or RunLimits(), max_steps=options.max_steps)
    if own is None:
        own = RunLimits()
    merged = own.over(spec.limits)
    if (merged.max_steps, merged.retries, merged.max_retries) == (own.max_steps, own.retries, own.max_retries):
        return merged
    # the agent's turns and retries are its attributes (`Agent.max_steps`...), read when the run needs them
    return dataclasses.replace(merged, max_steps=own.max_steps, retries=own.retries, max_retries=own.max_retries)


def _new_state(request: RunRequest, messages: list[Message]) -> RunState:
    state = RunState(request, messages)
    for message in messages:
        if isinstance(message, AssistantMessage):
            state.call_ids.update(call.id for call in message.tool_calls)
    return state


def _planned(spec: AgentSpec, messages: list[Message], emit: Emit | None, settles_background: bool) -> RunLoop:
    """The loop of a run without options: its config made once, then reused while nothing it depends on changes.

    What it depends on besides the spec (which the agent replaces when it changes): the registry and its
    version, the model in use (an `Agent.override`), the execution engine, tracing and DEBUG logging, an
    enclosing run's budget, and whether the run streams (a stream's own events sink is set per run).
    """
    registry = spec.tools() if spec.code_mode is None else with_code_tool(spec, spec.tools(), DEFAULT_OPTIONS)
    # by identity: the config it finds keeps each of these alive, so no id is reused while it is kept
    key = (
        id(registry),
        registry.version,
        id(spec.model()),
        id(current_hooks.get()),
        id(_tracing_for(spec.instrument)),
        observe.debugging(),
        enclosing(),
        emit is not None,
        settles_background,
    )
    plans = spec.plans
    planned: RunConfig | None = plans.get(key)
    if planned is None:
        first, active = settings_for(spec, None, None, None, registry)
        output, limits = spec.output, _limits(spec, DEFAULT_OPTIONS)
        request = RunRequest(spec.max_steps, active, first, limits=limits, output=output, structured=output.structured)
        planned = new_config(
            spec, RunState(request), DEFAULT_OPTIONS, registry, frozenset(), emit, settles_background=settles_background
        )
        if len(plans) > 8:
            plans.clear()
        plans[key] = planned
    state = _new_state(planned.request, messages)
    state.registry, state.signing_key = planned.tools.registry, spec.snapshot_key
    config = planned
    if emit is not None or planned.output is not None:  # a stream's sink, and a typed answer's reader, are the run's
        config = planned.for_run(emit, planned.output.fresh() if planned.output is not None else None)
    return RunLoop(config=config, state=state)


def first_request(
    spec: AgentSpec,
    history: list[Message],
    tool_choice: str | None,
    active_tools: Iterable[str] | None,
    model: Model | None = None,
) -> tuple[list[Message], Registry, ModelSettings]:
    """The first step's messages, tools sent and settings, offline (for payload snapshots).

    With `model`, deferred tools take the form that model gets (its vendor's native one, or held back), and
    code mode the form it takes there (hosted only for a `model` whose vendor runs programs).
    """
    coded = run_code_tools(spec.code_mode, spec.tools(), model)
    first, active = settings_for(spec, tool_choice, active_tools, None, coded.registry)
    if coded.programmatic:
        first = dataclasses.replace(first, programmatic_tools=coded.programmatic, programmatic_direct=coded.direct)
    tools = RunTools.build(coded.registry, spec.tool_search, spec.merged_deferred(None), coded.hidden)
    ctx = RunContext(
        deps=spec.deps, agent=spec.owner, step=0, messages=tuple(history), usage=Usage(), tools=tools.registry
    )
    text = spec.instruction_parts.render_sync(ctx)
    messages: list[Message] = [SystemMessage(text)] if text else []
    native = model is not None and tools.native(model)
    if native:
        first = dataclasses.replace(first, deferred_tools=tools.deferred_keys(active))
    return [*messages, *history], tools.sent([], active, native=native), first
