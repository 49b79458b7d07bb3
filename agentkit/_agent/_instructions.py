"""The agent's instructions (text and functions of the run context) and ``prepare_step`` functions, checked.

`Instructions` renders the system instructions of one model turn; `check_prepare` checks the functions
that may change a turn (see `agentkit.hooks.StepChanges`). Both are checked when given: a function that
takes more than the run context is an `AgentSetupError` at construction, not at the first run.
"""

from __future__ import annotations as _annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, Union

from .._jsonish import is_sequence
from .._text import type_name
from ..context import RunContext
from ..exceptions import AgentSetupError
from ..hooks import PrepareStep

__all__ = ["Instructions", "InstructionsLike", "callable_name", "check_prepare", "takes_context"]

InstructionPart = Union[str, Callable[..., Any]]
InstructionsLike = Union[str, Callable[..., Any], Sequence[InstructionPart], None]
"""``instructions=``: text, a function of the `RunContext` (sync or async, returning text or None), or a
list mixing both (the parts joined by blank lines)."""


def takes_context(fn: Callable[..., Any], where: str) -> bool:
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
            f"{where}: {callable_name(fn)} must take the run context as its only argument (or no argument), "
            f"got the signature {signature}"
        )
    return bool(positional) or varargs


def callable_name(fn: Any) -> str:
    """A function's qualified name, for messages."""
    return str(getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn))


def _kind(value: Any) -> str:
    """A wrong value by its type (``int 12``; an object by its type only: it may hold secrets)."""
    shown = type_name(value)
    return f"{type(value).__name__} {shown}" if shown == repr(value) else shown


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
                f"{where}: instructions are text, a function of the run context, or a list of those; "
                f"got {type_name(value)}"
            )
        self.parts: list[str | tuple[Callable[..., Any], bool]] = []
        for item in items:
            if isinstance(item, str):
                if item:
                    self.parts.append(item)
            elif callable(item):
                self.parts.append((item, takes_context(item, where)))
            else:
                raise AgentSetupError(
                    f"{where}: each part of the instructions is text or a function of the run context; "
                    f"got {type_name(item)}"
                )
        self.static: str | None = None
        """The whole text when no part is a function (rendered once, the same every turn)."""
        if all(isinstance(p, str) for p in self.parts):
            self.static = "\n\n".join(p for p in self.parts if isinstance(p, str))

    @property
    def preview(self) -> str:
        """The text parts, with ``{function_name}`` where a function's text goes (for displays)."""
        return "\n\n".join(p if isinstance(p, str) else "{" + callable_name(p[0]) + "}" for p in self.parts)

    async def render(self, ctx: RunContext[Any]) -> str:
        """The instructions for one turn: every function called (and awaited), empty results left out."""
        if self.static is not None:
            return self.static
        texts: list[str] = []
        for part in self.parts:
            if isinstance(part, str):
                texts.append(part)
                continue
            fn, wants_context = part
            value = fn(ctx) if wants_context else fn()
            if inspect.isawaitable(value):
                value = await value
            if value is None or value == "":
                continue
            if not isinstance(value, str):
                raise AgentSetupError(
                    f"the instructions function {callable_name(fn)} returned {_kind(value)}; "
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
        if not takes_context(fn, f"{where}prepare_step="):
            raise AgentSetupError(f"{where}prepare_step= {callable_name(fn)} must take the run context as its argument")
        out.append(fn)
    return out
