"""`CodeMode`: which tools a program may call, and the one code tool the model is offered for them.

The code tool takes a program (``code``), runs it in the sandbox (`agentkit.codemode._program`), and
answers with the program's result and its printed output, or with the line and message of its error.
Inside an agent run its calls go through the run (`agentkit.codemode._host`); called on its own (a plain
`Registry.call`, `Tool.invoke`) they go through `Registry.call`, and a call that would need a person
(an approval, a suspension, a client tool) fails in the program instead.
"""

from __future__ import annotations as _annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal, Union

from typing_extensions import TypedDict

from .._text import clip
from ..context import ToolContext
from ..exceptions import AgentSetupError, ClientCallRequested, ProgramPaused, ToolError, ToolSuspended
from ..messages import ToolCall
from ..registry import Registry
from ..tools import Tool
from ._host import current_host
from ._limits import CodeLimits
from ._outcomes import outcome_of
from ._program import Failed, Finished, NestedCall, Outcome, Raised, run_program
from ._segments import current_runner
from ._stubs import ModuleStubs, build_stubs

__all__ = ["CodeMode", "ProgramReport", "ToolSelection"]

ToolSelection = Union[Literal["all"], Iterable[str], Callable[[str, Tool[Any, Any]], bool]]
"""Which tools a program may call: ``"all"``, their keys, or a predicate ``(key, tool) -> bool``."""

_MODULES = "asyncio, json, math, re, datetime, collections, itertools, functools, random, typing, dataclasses"


class ProgramReport(TypedDict):
    """What a program that ran to its end gives back: its last expression and its printed output."""

    result: Any
    printed: str


@dataclass(frozen=True)
class CodeMode:
    """Offer the model one code tool: a Python program that calls the chosen tools.

    The program runs in a sandbox (`pydantic-monty`, a separate worker process: no imports beyond a few
    pure modules, no files, network or environment) under `limits`; every tool call it makes goes
    through the run like a call the model made (validation, approvals, hooks, budgets, limits, events,
    traces, usage), and a call that needs a person pauses the whole run with the program's state in the
    run's snapshot.

    Example:
        ```python
        from agentkit import Agent, tool
        from agentkit.codemode import CodeMode

        @tool
        def price(sku: str) -> float:
            \"\"\"The price of one item.\"\"\"
            return 9.5

        agent = Agent(model="test", tools=[price], code_mode=CodeMode())
        ```
    """

    tools: ToolSelection = "all"
    """The tools programs may call (background tools and the code tool itself never are)."""
    replace: bool = True
    """Whether the chosen tools are offered only through programs (False: also as direct tools)."""
    key: str = "run_python"
    """The code tool's key (the name the model calls it by)."""
    limits: CodeLimits = field(default_factory=CodeLimits)
    """What one program may use."""
    description: str | None = None
    """Text put before the generated description (what programs are for, in your application)."""
    hosted: bool = False
    """Let the vendor run the program where it can (OpenAI Responses' programmatic tool calling, Anthropic's
    code execution): the chosen tools are sent with ``allowed_callers`` and their calls come back as tool
    calls this run runs; other vendors get agentkit's own sandbox."""

    def __post_init__(self) -> None:
        if not isinstance(self.key, str) or not self.key:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise AgentSetupError(f"CodeMode(key={self.key!r}): give a non-empty string")
        if not isinstance(self.limits, CodeLimits):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise AgentSetupError(f"CodeMode(limits={self.limits!r}): give a CodeLimits")
        chosen = self.tools
        if isinstance(chosen, str):
            if chosen != "all":
                raise AgentSetupError(
                    f"CodeMode(tools={chosen!r}): give 'all', a list of keys, or a function (key, tool) -> bool"
                )
        elif not callable(chosen):
            keys = tuple(chosen)
            bad = [k for k in keys if not isinstance(k, str)]  # pyright: ignore[reportUnnecessaryIsInstance]
            if bad:
                raise AgentSetupError(f"CodeMode(tools=...) lists keys (strings), got {bad[0]!r}")
            object.__setattr__(self, "tools", keys)  # an iterator is read once, here

    def select(self, registry: Mapping[str, Tool[..., Any]]) -> list[str]:
        """The keys of `registry` programs may call, in registry order."""
        chosen = self.tools
        if isinstance(chosen, tuple):
            named: tuple[str, ...] = chosen  # pyright: ignore[reportUnknownVariableType]
            for key in named:
                if key not in registry:
                    Registry(dict(registry))[key]  # raises UnknownToolError with a "did you mean"
                item = registry[key]
                if item.background or key == self.key:
                    why = "runs in the background" if item.background else "is the code tool itself"
                    raise AgentSetupError(f"CodeMode(tools=...) names {key!r}, which {why}: programs cannot call it")
            wanted = set(named)
            return [k for k in registry if k in wanted]
        picks: list[str] = []
        for key, item in registry.items():
            if key == self.key or item.background:
                continue
            if chosen == "all" or (callable(chosen) and chosen(key, item)):
                picks.append(key)
        return picks

    def stubs(self, registry: Mapping[str, Tool[..., Any]]) -> str:
        """The Python module the model is shown for `registry`'s chosen tools."""
        return build_stubs({k: registry[k] for k in self.select(registry)}).text

    def extend(self, registry: Registry) -> Registry:
        """`registry` with the code tool added (its tools kept: a run needs them for the program's calls).

        Made once per registry version and kept on the registry; a registry that already has this mode's code
        tool is returned as it is.
        """
        if self.key in registry and getattr(registry[self.key], "_code_mode", None) == self:
            return registry
        cache: dict[Any, Registry] = registry.__dict__.setdefault("_code_modes", {})
        hit = cache.get((self, registry.version))
        if hit is not None:
            return hit
        keys = self.select(registry)
        if self.key in registry:
            raise AgentSetupError(
                f"CodeMode(key={self.key!r}) is already a tool's key; pick another with CodeMode(key=...)"
            )
        extended = registry.copy()
        extended.add(self.key, _CodeTool(self, {k: registry[k] for k in keys}).tool)
        if len(cache) > 8:
            cache.clear()
        cache[(self, registry.version)] = extended
        return extended

    def hidden(self, registry: Mapping[str, Tool[..., Any]]) -> frozenset[str]:
        """The keys only programs call (never sent to the model): the chosen tools when they are replaced."""
        return frozenset(self.select(registry)) if self.replace else frozenset()

    def apply(self, registry: Mapping[str, Tool[..., Any]]) -> Registry:
        """`registry` as the model is offered it: the code tool, plus the tools not replaced by it."""
        keys = self.select(registry)
        if self.key in registry:
            raise AgentSetupError(
                f"CodeMode(key={self.key!r}) is already a tool's key; pick another with CodeMode(key=...)"
            )
        chosen = {k: registry[k] for k in keys}
        offered = Registry({k: v for k, v in registry.items() if not (self.replace and k in chosen)})
        offered.add(self.key, _CodeTool(self, chosen).tool)
        return offered


class _CodeTool:
    """The code tool for one set of tools (its stubs are built once, here)."""

    def __init__(self, mode: CodeMode, tools: Mapping[str, Tool[..., Any]]) -> None:
        self.mode = mode
        self.tools = dict(tools)

    @cached_property
    def module(self) -> ModuleStubs:
        return build_stubs(self.tools)

    @cached_property
    def tool(self) -> Tool[..., Any]:
        mode, module = self.mode, self.module

        async def run_python(ctx: ToolContext[Any], code: str) -> ProgramReport:
            return await self.run(ctx, code)

        intro = (mode.description.strip() + "\n\n") if mode.description else ""
        description = (
            f"{intro}Run a Python program that calls the tools below; use it to make several tool calls in one "
            "step (loops, conditions, several calls at once with asyncio.gather). The language is a subset of "
            f"Python 3 with the modules {_MODULES}; no files, network or other imports. The program's last "
            "expression is its result; print() output is returned too. The tools, as a Python module:\n\n"
            f"```python\n{module.text}```"
        )
        run_python.__doc__ = None
        made = Tool(
            run_python,
            id=mode.key,
            description=description,
            to_model_output=lambda report: _report_text(report, mode.limits.max_result),
        )
        made._code_mode = mode  # type: ignore[attr-defined]  # `CodeMode.extend` recognises its own tool
        made._code_tool = self  # type: ignore[attr-defined]  # a durable engine's segments find the functions
        # its program's calls take the run's concurrency slots; the program itself holds none (no deadlock)
        made._nests_runs = True  # type: ignore[attr-defined]
        return made

    async def run(self, ctx: ToolContext[Any], code: str) -> ProgramReport:
        limits = self.mode.limits
        caller = ctx.call_id or "program"
        host = current_host.get()
        state = host.saved_state(caller) if host is not None else None
        if state is None and len(code) > limits.max_code:
            raise ToolError(f"The program has {len(code)} characters; the limit is {limits.max_code}.")
        dispatch = host.dispatcher(ctx, self.tools) if host is not None else self._plain(ctx)
        # a durable engine's run runs the program in segments, each nested call a step of its own
        runner = (current_runner.get() if host is not None else None) or run_program
        outcome = await runner(code, self.module.functions, dispatch, limits, caller, state=state)
        if isinstance(outcome, Finished):
            return ProgramReport(result=outcome.value, printed=outcome.printed)
        if isinstance(outcome, Failed):
            printed = f"\n\nOutput before the error:\n{outcome.printed}" if outcome.printed else ""
            raise ToolError(f"The program failed. {outcome.message}{printed}")
        if host is None:  # pragma: no cover - the plain dispatcher never pauses
            raise ToolError("The program paused outside an agent run.")
        raise ProgramPaused(caller, outcome)

    def _plain(self, ctx: ToolContext[Any]) -> Callable[[NestedCall], Any]:
        registry = Registry(self.tools)

        async def dispatch(call: NestedCall) -> Outcome:
            item = registry[call.key]
            request = ToolCall(call.id, call.key, call.arguments)
            if item.needs_approval_for(call.arguments, name=call.key):
                return Raised(
                    "PermissionError",
                    f"The call to {call.key!r} needs approval, which only an agent run can ask for.",
                )
            try:
                result = await registry.call(request, deps=ctx.deps, context=ctx)
            except (ToolSuspended, ClientCallRequested):
                return Raised("RuntimeError", f"The call to {call.key!r} paused, which only an agent run allows.")
            return outcome_of(item, result)

        return dispatch


def _report_text(report: ProgramReport, limit: int) -> str:
    result = json.dumps(report["result"], ensure_ascii=False, default=repr)
    if len(result) > limit:
        result = clip(result, limit) + f" [cut: {len(result)} characters in all]"
    text = f"Result: {result}"
    if report["printed"]:
        text += f"\nPrinted:\n{report['printed']}"
    return text
