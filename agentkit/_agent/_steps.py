"""Each model turn planned: ``prepare_step``'s changes, the instructions, the tools sent, the request.

`plan_step` turns the run's configuration and state into the `ModelRequest` of one step and the tools
that step may run. A run that nothing changes between steps (no `STEP_PLANNING` machinery) makes that
plan once per settings object and reuses it (`RunTools.plans`), so later steps and runs skip the work.
"""

from __future__ import annotations as _annotations

import dataclasses
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, Union

from .._choice import BUILT_IN_CHOICES, check_tool_choice
from .._jsonish import is_mapping, is_sequence
from .._text import closest, type_name
from ..context import RunContext
from ..exceptions import AgentSetupError, ToolChoiceError
from ..hooks import ModelRequest, StepChanges
from ..messages import Message, SystemMessage
from ..models import Model, ModelSettings, infer_model
from ..registry import Registry
from ._instructions import callable_name
from ._intercept import before_model_request
from ._limits import spent_tools
from .config import HOOKS

if TYPE_CHECKING:
    from .config import RunConfig
    from .state import RunState

__all__ = [
    "PlainSent",
    "StepPlan",
    "StepRequest",
    "check_changes",
    "plain_sent",
    "plain_step",
    "plan_step",
    "run_context",
]

_CHANGE_KEYS = tuple(StepChanges.__annotations__)


def check_changes(value: Any, fn: Callable[..., Any]) -> dict[str, Any]:
    """What a prepare_step function returned, validated key by key (an unknown key names the fix)."""
    if value is None:
        return {}
    where = f"prepare_step {callable_name(fn)}"
    if not is_mapping(value):
        raise AgentSetupError(f"{where} returned {type_name(value)}; return a StepChanges dict (or None for no change)")
    unknown = [key for key in value if key not in _CHANGE_KEYS]
    if unknown:
        key = unknown[0]
        close = closest(str(key), _CHANGE_KEYS, n=1, cutoff=0.6)  # difflib's own cutoff
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise AgentSetupError(
            f"{where} returned the unknown key {key!r}.{hint} StepChanges may set: {', '.join(_CHANGE_KEYS)}."
        )
    changes = dict(value)
    if "model" in changes:
        changes["model"] = infer_model(changes["model"])
    if "active_tools" in changes:
        active = changes["active_tools"]
        if active is not None:
            if isinstance(active, (str, bytes)) or not is_sequence(active):
                raise AgentSetupError(f"{where}: active_tools is a list of keys (or None), got {active!r}")
            bad = [k for k in active if not isinstance(k, str)]
            if bad:
                raise AgentSetupError(f"{where}: active_tools lists keys (strings), got {bad[0]!r}")
            changes["active_tools"] = tuple(active)
    if "tool_choice" in changes and not isinstance(changes["tool_choice"], str):
        raise AgentSetupError(
            f"{where}: tool_choice is 'auto', 'none', 'required' or a key, got {changes['tool_choice']!r}"
        )
    if "instructions" in changes and not isinstance(changes["instructions"], (str, type(None))):
        raise AgentSetupError(f"{where}: instructions is text (or None), got {changes['instructions']!r}")
    if "model_settings" in changes:
        settings = changes["model_settings"]
        if not isinstance(settings, ModelSettings):
            raise AgentSetupError(f"{where}: model_settings is a ModelSettings, got {type_name(settings)}")
        if settings.tool_choice != "auto" or settings.active_tools is not None:
            raise AgentSetupError(
                f"{where}: set tool_choice and active_tools with StepChanges' own keys, not inside model_settings"
            )
    return changes


@dataclass
class StepPlan:
    """What a plain step sends and may run, for one settings object (`RunTools.plans`)."""

    given: ModelSettings
    settings: ModelSettings
    tools: Registry
    executor: Registry
    version: int
    """`tools.version` when planned: a tool added or removed meanwhile plans again."""
    system: SystemMessage | None
    """The instructions, the same every step (messages are never changed in place)."""
    prepared: tuple[Any, PlainSent] | None = None
    """A typed run's `plain_sent` for this plan: ``(output request, sent)``, reused by the runs whose
    output was planned the same way (`RunOutput.fresh` shares the plan)."""

    @cached_property
    def sent(self) -> PlainSent:
        """What a text run's plain step sends (see `plain_sent`), made once."""
        return self.tools, self.settings, self.executor, self.system


PlainSent = tuple[Registry, ModelSettings, Registry, Union[SystemMessage, None]]
"""A plain step's tools sent, its settings, the tools it may run, and the instructions in front of the messages."""


@dataclass
class StepRequest:
    """One step's request (after the hooks) and the tools the step may run."""

    request: ModelRequest
    executor: Registry
    ctx: RunContext[Any] | None
    """The context the step was planned with (None for a plain step: nothing reads it)."""


def run_context(config: RunConfig, state: RunState, index: int) -> RunContext[Any]:
    """The `RunContext` before step `index`."""
    return RunContext(
        deps=config.deps,
        agent=config.agent.owner,
        step=index,
        messages=tuple(state.messages),
        usage=state.usage,
        tools=config.tools.registry,
    )


async def plan_step(config: RunConfig, state: RunState, index: int, settings: ModelSettings) -> StepRequest:
    """Plan step `index`: prepare_step's changes, the instructions, the tools sent, then the hooks.

    A run with no `STEP_PLANNING` machinery takes `plain_step` instead (what this would give, made once).
    """
    ctx = run_context(config, state, index)
    changes: dict[str, Any] = {}
    for fn in config.prepare:
        value = fn(ctx)
        if inspect.isawaitable(value):
            value = await value
        changes.update(check_changes(value, fn))
    model: Model = changes.get("model", config.model)
    base = changes.get("model_settings", settings)
    active = changes.get("active_tools", settings.active_tools)
    choice = changes.get("tool_choice", settings.tool_choice)
    tools = config.tools
    if active:
        tools.registry.require(*active)
    native = tools.native(model)
    spent = spent_tools(config, state)
    active, choice = _budgeted(config, spent, state.found, active, choice, "tool_choice" in changes, native, index)
    text = changes["instructions"] if "instructions" in changes else await config.agent.instruction_parts.render(ctx)
    sent = tools.sent(state.found, active, native=native)
    deferred = tools.deferred_keys(active) if native else ()
    step_settings = dataclasses.replace(base, tool_choice=choice, active_tools=active, deferred_tools=deferred)
    messages: list[Message] = [SystemMessage(text)] if text else []
    messages.extend(state.messages)
    request = ModelRequest(model=model, messages=messages, tools=sent, settings=step_settings)
    if config.output is not None:
        request = config.output.prepared(request)  # the output tool, or the native field, for this step's model
    if config.machinery & HOOKS:
        request = await before_model_request(config.hooks, ctx, request)
    sent, chosen = request.tools, request.settings.active_tools
    executor = sent.select(k for k in chosen if k in sent) if chosen is not None else sent
    return StepRequest(request, executor, ctx)


def _plan_for(config: RunConfig, settings: ModelSettings) -> StepPlan:
    """A plain step's plan: made once per settings object (and tools version), then reused."""
    plans = config.tools.plans
    plan: StepPlan | None = plans.get(id(settings))
    if plan is None or plan.given is not settings or plan.version != plan.tools.version:
        if len(plans) > 16:
            plans.clear()
        plan = plans[id(settings)] = _new_plan(config, settings)
    return plan


def plain_sent(config: RunConfig, settings: ModelSettings) -> PlainSent:
    """What a plain step sends: its plan's tools and settings, with a typed run's output asked for.

    Also the tools it may run, and the instructions to put in front of the run's messages (which are sent
    as they are).
    """
    plan = _plan_for(config, settings)
    output = config.output
    if output is None:
        return plan.sent
    hit = plan.prepared
    if hit is not None and hit[0] is output.request and output.settled(config.model, plan.tools):
        return hit[1]
    # the output tool, or the native field, as on the planned path (only tools and settings change)
    request = output.prepared(ModelRequest(config.model, [], plan.tools, plan.settings))
    tools, chosen = request.tools, request.settings.active_tools
    if tools is plan.tools and chosen == plan.settings.active_tools:
        executor = plan.executor
    else:
        executor = tools.select(k for k in chosen if k in tools) if chosen is not None else tools
    sent = (tools, request.settings, executor, plan.system)
    if output.request is not None:
        plan.prepared = (output.request, sent)
    return sent


def plain_step(config: RunConfig, state: RunState, settings: ModelSettings) -> StepRequest:
    """A plain step's request (`plain_sent`, as a `StepRequest` for the request's watchers)."""
    tools, step_settings, executor, system = plain_sent(config, settings)
    messages = [system, *state.messages] if system is not None else list(state.messages)
    return StepRequest(ModelRequest(config.model, messages, tools, step_settings), executor, None)


def _new_plan(config: RunConfig, settings: ModelSettings) -> StepPlan:
    """The plan of a step that nothing changes: the planned path's checks and results, made once."""
    tools = config.tools.sent((), None)  # what the planned path sends when no tool is deferred
    active = settings.active_tools
    if active:
        tools.require(*active)
    active, choice = _budgeted(config, None, (), active, settings.tool_choice, False, False, None)
    step_settings = settings
    if (settings.tool_choice, settings.active_tools, settings.deferred_tools) != (choice, active, ()):
        step_settings = dataclasses.replace(settings, tool_choice=choice, active_tools=active, deferred_tools=())
    executor = tools.select(k for k in active if k in tools) if active is not None else tools
    text = config.agent.instruction_parts.static
    return StepPlan(settings, step_settings, tools, executor, tools.version, SystemMessage(text) if text else None)


def _budgeted(
    config: RunConfig,
    spent: frozenset[str] | Literal["all"] | None,
    found: list[str] | tuple[str, ...],
    active: tuple[str, ...] | None,
    choice: str,
    chosen_here: bool,
    native: bool,
    step: int | None,
) -> tuple[tuple[str, ...] | None, str]:
    """The step's active tools without the tools whose budget is spent, and a tool choice that still fits."""
    if spent is None:
        keys = active
    elif spent == "all":
        keys = ()
    else:
        pool = active if active is not None else tuple(config.tools.sent(found, None, native=native))
        keys = tuple(k for k in pool if k not in spent) if spent & set(pool) else active
    spent_choice = spent is not None and (spent == "all" or choice in spent)
    if choice not in BUILT_IN_CHOICES and spent_choice and keys is not None and choice not in keys:
        if chosen_here:
            raise ToolChoiceError(
                f"tool_choice={choice!r} cannot be used in step {step}: its call budget is spent "
                f"(active tools: {list(keys)!r})"
            )
        choice = "auto"  # the run's first-step choice, spent already: the model may answer
    if keys == () and choice == "required":
        choice = "none"  # every budget is spent: the model can only answer
    check_tool_choice(choice, keys, config.tools.registry, step=step)  # the one rule for every choice
    return keys, choice
