"""Each model turn planned: dynamic instructions, ``prepare_step``'s changes, the tools sent, the request.

`RunControl` holds what steers one run (instructions, prepare functions, hooks, limits, the run's tools);
`prepare_request` turns it into the `ModelRequest` of one step and the tools that step may run.
"""

from __future__ import annotations as _annotations

import dataclasses
import difflib
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Union

from .._jsonish import is_mapping, is_sequence
from ..context import RunContext
from ..exceptions import AgentSetupError, ToolChoiceError
from ..hooks import ModelRequest, PrepareStep, RunHooks, StepChanges
from ..limits import RunLimits
from ..messages import Message, SystemMessage
from ..models import Model, ModelSettings, infer_model
from ..registry import Registry
from ._intercept import before_model_request
from ._limits import spent_tools
from ._toolset import RunTools

if TYPE_CHECKING:
    from .loop import RunLoop

__all__ = ["Instructions", "InstructionsLike", "RunControl", "StepRequest", "check_prepare", "prepare_request"]

InstructionPart = Union[str, Callable[..., Any]]
InstructionsLike = Union[str, Callable[..., Any], Sequence[InstructionPart], None]
"""``instructions=``: text, a function of the `RunContext` (sync or async, returning text or None), or a
list mixing both (the parts joined by blank lines)."""

_CHANGE_KEYS = tuple(StepChanges.__annotations__)


def _takes_context(fn: Callable[..., Any], where: str) -> bool:
    """Whether `fn` wants the `RunContext` (one positional parameter) or nothing; an error otherwise."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return True  # a builtin or C callable: assume it takes the context
    positional = [
        p
        for p in signature.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
    ]
    keyword_only = [p.name for p in signature.parameters.values() if p.kind is p.KEYWORD_ONLY and p.default is p.empty]
    varargs = any(p.kind is p.VAR_POSITIONAL for p in signature.parameters.values())
    if len(positional) > 1 or keyword_only:
        raise AgentSetupError(
            f"{where}: {_name(fn)} must take the run context as its only argument (or no argument), "
            f"got the signature {signature}"
        )
    return bool(positional) or varargs


def _name(fn: Any) -> str:
    return str(getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn))


class Instructions:
    """The agent's instructions: text parts and functions of the run context, rendered per model turn."""

    def __init__(self, given: InstructionsLike, where: str = "Agent(instructions=...)") -> None:
        self.value = given
        """What was given, as given."""
        value: Any = given  # checked here, whatever the annotation promises
        items: Sequence[Any]
        if value is None:
            items = []
        elif isinstance(value, str) or callable(value):
            items = [value]
        elif is_sequence(value) and not isinstance(value, (bytes, bytearray)):
            items = list(value)
        else:
            raise AgentSetupError(
                f"{where}: instructions are text, a function of the run context, or a list of those; got {value!r}"
            )
        self.parts: list[str | tuple[Callable[..., Any], bool]] = []
        for item in items:
            if isinstance(item, str):
                if item:
                    self.parts.append(item)
            elif callable(item):
                self.parts.append((item, _takes_context(item, where)))
            else:
                raise AgentSetupError(
                    f"{where}: each part of the instructions is text or a function of the run context; got {item!r}"
                )
        self.static: str | None = None
        """The whole text when no part is a function (rendered once, the same every turn)."""
        if all(isinstance(p, str) for p in self.parts):
            self.static = "\n\n".join(p for p in self.parts if isinstance(p, str))

    @property
    def preview(self) -> str:
        """The text parts, with ``{function_name}`` where a function's text goes (for displays)."""
        return "\n\n".join(p if isinstance(p, str) else "{" + _name(p[0]) + "}" for p in self.parts)

    async def render(self, ctx: RunContext[Any]) -> str:
        """The instructions for one turn: every function called (and awaited), empty results left out."""
        if self.static is not None:
            return self.static
        texts: list[str] = []
        for part in self.parts:
            if isinstance(part, str):
                texts.append(part)
                continue
            fn, takes_context = part
            value = fn(ctx) if takes_context else fn()
            if inspect.isawaitable(value):
                value = await value
            if value is None or value == "":
                continue
            if not isinstance(value, str):
                raise AgentSetupError(
                    f"the instructions function {_name(fn)} returned {type(value).__name__} {value!r}; "
                    "it must return text (or None for nothing)"
                )
            texts.append(value)
        return "\n\n".join(texts)

    def render_sync(self, ctx: RunContext[Any]) -> str:
        """`render` without an event loop, for offline payload snapshots (async parts are an error there)."""
        if self.static is not None:
            return self.static
        coroutine = self.render(ctx)
        try:
            coroutine.send(None)
        except StopIteration as done:
            return str(done.value)
        coroutine.close()
        raise AgentSetupError(
            "these instructions have an async function: render them in a run (the payload snapshot cannot await it)"
        )


def check_prepare(fns: Sequence[PrepareStep | None], where: str) -> list[PrepareStep]:
    """The given prepare_step functions, checked to be callables taking the run context."""
    out: list[PrepareStep] = []
    for fn in fns:
        if fn is None:
            continue
        if not callable(fn):
            raise AgentSetupError(f"{where}prepare_step= must be a function of the run context, got {fn!r}")
        if not _takes_context(fn, f"{where}prepare_step="):
            raise AgentSetupError(f"{where}prepare_step= {_name(fn)} must take the run context as its argument")
        out.append(fn)
    return out


def check_changes(value: Any, fn: Callable[..., Any]) -> dict[str, Any]:
    """What a prepare_step function returned, validated key by key (an unknown key names the fix)."""
    if value is None:
        return {}
    where = f"prepare_step {_name(fn)}"
    if not is_mapping(value):
        raise AgentSetupError(f"{where} returned {value!r}; return a StepChanges dict (or None for no change)")
    unknown = [key for key in value if key not in _CHANGE_KEYS]
    if unknown:
        key = unknown[0]
        close = difflib.get_close_matches(str(key), _CHANGE_KEYS, n=1)
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
            raise AgentSetupError(f"{where}: model_settings is a ModelSettings, got {settings!r}")
        if settings.tool_choice != "auto" or settings.active_tools is not None:
            raise AgentSetupError(
                f"{where}: set tool_choice and active_tools with StepChanges' own keys, not inside model_settings"
            )
    return changes


@dataclass
class RunControl:
    """What steers one run besides the loop's own bookkeeping."""

    tools: RunTools
    instructions: Instructions
    prepare: list[PrepareStep]
    hooks: list[RunHooks[Any]]
    limits: RunLimits
    require_approval: bool = False
    extra_keys: frozenset[str] = frozenset()
    """Keys of the tools this run added (its own tools and MCP servers'), not the agent's."""
    plain: bool = field(init=False)
    """Nothing changes a step's plan (no prepare_step, hooks, instruction functions, deferred tools or
    budgets), decided once per run: a step's settings, tools and executor are planned once per settings
    object and kept with the run's tools (`RunTools.plans`), so later steps and runs reuse them."""

    def __post_init__(self) -> None:
        self.plain = not (
            self.prepare
            or self.hooks
            or self.instructions.static is None
            or self.tools.deferred
            or self.tools.budgeted
            or self.limits.max_tool_calls is not None
        )


@dataclass
class _Plan:
    """What a plain step sends and may run, for one settings object (`RunTools.plans`)."""

    given: ModelSettings
    settings: ModelSettings
    tools: Registry
    executor: Registry
    version: int
    """`tools.version` when planned: a tool added or removed meanwhile plans again."""


@dataclass
class StepRequest:
    """One step's request (after the hooks) and the tools the step may run."""

    request: ModelRequest
    executor: Registry
    ctx: RunContext[Any] | None
    """The context the step was planned with (None for a plain step: nothing reads it)."""


def run_context(loop: RunLoop, index: int) -> RunContext[Any]:
    """The `RunContext` before step `index`."""
    return RunContext(
        deps=loop.deps,
        agent=loop.agent,
        step=index,
        messages=tuple(loop.convo),
        usage=loop.usage,
        tools=loop.registry,
    )


async def prepare_request(loop: RunLoop, index: int, settings: ModelSettings) -> StepRequest:
    """Plan step `index`: prepare_step's changes, the instructions, the tools sent, then the hooks."""
    control = loop.control
    if control.plain:
        return _plain_request(loop, settings)
    ctx = run_context(loop, index)
    changes: dict[str, Any] = {}
    for fn in control.prepare:
        value = fn(ctx)
        if inspect.isawaitable(value):
            value = await value
        changes.update(check_changes(value, fn))
    model: Model = changes.get("model", loop.model)
    base = changes.get("model_settings", settings)
    active = changes.get("active_tools", settings.active_tools)
    choice = changes.get("tool_choice", settings.tool_choice)
    registry = loop.registry
    for key in active or ():
        registry[key]  # raises UnknownToolError with a "did you mean"
    native = control.tools.native(model)
    active, choice = _budgeted(loop, active, choice, "tool_choice" in changes, native)
    text = changes["instructions"] if "instructions" in changes else await control.instructions.render(ctx)
    sent = control.tools.sent(loop.state.found, active, native=native)
    deferred = control.tools.deferred_keys(active) if native else ()
    step_settings = dataclasses.replace(base, tool_choice=choice, active_tools=active, deferred_tools=deferred)
    messages: list[Message] = [SystemMessage(text)] if text else []
    messages.extend(loop.convo)
    request = ModelRequest(model=model, messages=messages, tools=sent, settings=step_settings)
    if loop.output is not None:
        request = loop.output.prepared(request)  # the output tool, or the native field, for this step's model
    if control.hooks:
        request = await before_model_request(control.hooks, ctx, request)
    tools, chosen = request.tools, request.settings.active_tools
    executor = tools.select(k for k in chosen if k in tools) if chosen is not None else tools
    return StepRequest(request, executor, ctx)


def _plain_request(loop: RunLoop, settings: ModelSettings) -> StepRequest:
    """A plain step's request: its plan made once per settings object (and tools version), then reused."""
    control = loop.control
    plans = control.tools.plans
    plan = plans.get(id(settings))
    if plan is None or plan.given is not settings or plan.version != plan.tools.version:
        if len(plans) > 16:
            plans.clear()
        plan = plans[id(settings)] = _plain_plan(loop, settings)
    text = control.instructions.static
    messages = [SystemMessage(text), *loop.convo] if text else list(loop.convo)
    request = ModelRequest(loop.model, messages, plan.tools, plan.settings)
    if loop.output is None:
        return StepRequest(request, plan.executor, None)
    request = loop.output.prepared(request)  # the output tool, or the native field, as on the planned path
    tools, chosen = request.tools, request.settings.active_tools
    if tools is plan.tools and chosen == plan.settings.active_tools:
        return StepRequest(request, plan.executor, None)
    return StepRequest(request, tools.select(k for k in chosen if k in tools) if chosen is not None else tools, None)


def _plain_plan(loop: RunLoop, settings: ModelSettings) -> _Plan:
    """The plan of a step that nothing changes: the slow path's checks and results, made once."""
    registry, active = loop.registry, settings.active_tools
    for key in active or ():
        registry[key]  # raises UnknownToolError with a "did you mean"
    active, choice = _budgeted(loop, active, settings.tool_choice, False, False)
    step_settings = settings
    if (settings.tool_choice, settings.active_tools, settings.deferred_tools) != (choice, active, ()):
        step_settings = dataclasses.replace(settings, tool_choice=choice, active_tools=active, deferred_tools=())
    tools = loop.control.tools.sent((), None)  # what the slow path sends when no tool is deferred
    executor = tools.select(k for k in active if k in tools) if active is not None else tools
    return _Plan(settings, step_settings, tools, executor, tools.version)


def _budgeted(
    loop: RunLoop, active: tuple[str, ...] | None, choice: str, chosen_here: bool, native: bool
) -> tuple[tuple[str, ...] | None, str]:
    """The step's active tools without the tools whose budget is spent, and a tool choice that still fits."""
    spent = spent_tools(loop)
    if spent is None:
        keys = active
    elif spent == "all":
        keys = ()
    else:
        pool = active if active is not None else tuple(loop.control.tools.sent(loop.state.found, None, native=native))
        keys = tuple(k for k in pool if k not in spent) if spent & set(pool) else active
    if choice not in ("auto", "none", "required"):
        loop.registry[choice]  # raises UnknownToolError with a "did you mean"
        if keys is not None and choice not in keys:
            why = "its call budget is spent" if spent and (spent == "all" or choice in spent) else "it is not active"
            if chosen_here or why == "it is not active":
                raise ToolChoiceError(
                    f"tool_choice={choice!r} cannot be used in step {len(loop.steps)}: {why} "
                    f"(active tools: {list(keys)!r})"
                )
            choice = "auto"  # the run's first-step choice, spent already: the model may answer
    if keys == () and choice == "required":
        choice = "none"  # every budget is spent: the model can only answer
    return keys, choice
