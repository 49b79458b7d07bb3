"""The options of one run, as `Agent.generate`, `stream` and `resume` take them, checked before it starts.

`RunOptions` declares them once, each with its type and default, and whether `resume` takes it too. The
entry points take them as ``**options: Unpack[RunKwargs]`` (PEP 692), so type checkers and IDEs see each
keyword with its type: `RunKwargs` and `ResumeKwargs` are typed dicts written out for the checkers, and a
test holds them to `RunOptions` (same keys, same types). `run_options` turns the keywords of one call into
a checked `RunOptions`, refusing a keyword the entry point does not take.
"""

from __future__ import annotations as _annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Union

from typing_extensions import TypedDict, TypeVar

from .._text import closest, type_name
from ..codemode._mode import CodeMode
from ..context import ToolContext
from ..exceptions import AgentSetupError
from ..hooks import PrepareStep, RunHooks
from ..limits import RunLimits
from ..models import ModelSettings
from ..registry import Registry
from ._instructions import check_prepare
from ._output import OutputValidatorFn
from ._toolset import DeferredTools, check_deferred
from .results import RunResult
from .sessions import MCPServerLike
from .state import Step

__all__ = [
    "DEFAULT_OPTIONS",
    "RESUME_KEYWORDS",
    "RUN_KEYWORDS",
    "DepsT",
    "FinishCallback",
    "ResumeKwargs",
    "RunKwargs",
    "RunOptions",
    "StepCallback",
    "check_hooks",
    "run_options",
]

DepsT = TypeVar("DepsT", default=Any)
"""The type of an agent's dependencies (`ToolContext.deps`): inferred from ``deps=`` or ``deps_type=``."""

StepCallback = Callable[[Step], Union[Awaitable[None], None]]
"""``on_step_finish=``: called with each finished `Step` (a plain or an async function)."""
FinishCallback = Callable[[RunResult[Any]], Union[Awaitable[None], None]]
"""``on_finish=``: called with the run's `RunResult` before the entry point returns it (plain or async)."""


# The typed dicts below are `RunOptions` written out for the type checkers (``Unpack`` needs a TypedDict,
# and a generic one to type ``deps`` by the agent's ``Deps``): tests/test_run_options.py holds them to it.


class ResumeKwargs(TypedDict, Generic[DepsT], total=False):
    """The keywords `Agent.resume` and `Agent.resume_stream` take (see `Agent.resume` for their meaning).

    Every key is optional. Annotate a wrapper's ``**kwargs: Unpack[ResumeKwargs[MyDeps]]`` to pass them on
    typed.
    """

    deps: DepsT | None
    context: ToolContext[DepsT] | None
    cancel: asyncio.Event | None
    tools: Registry | Mapping[str, Any] | Iterable[Any] | None
    mcp_servers: Sequence[MCPServerLike]
    prepare_step: PrepareStep | None
    hooks: Sequence[RunHooks[Any]]
    code_mode: CodeMode | None
    session_id: str | None
    on_step_finish: StepCallback | None
    on_finish: FinishCallback | None


class RunKwargs(ResumeKwargs[DepsT], total=False):
    """The keywords `Agent.generate`, `generate_sync` and `stream` take besides ``output_type=``.

    See `Agent.generate` for their meaning and defaults. Every key is optional. Annotate a wrapper's
    ``**kwargs: Unpack[RunKwargs[MyDeps]]`` to pass them on typed.
    """

    tool_choice: str | None
    active_tools: Iterable[str] | None
    max_steps: int | None
    model_settings: ModelSettings | None
    limits: RunLimits | None
    require_approval: bool
    deferred_tools: DeferredTools | None
    output_validators: Sequence[OutputValidatorFn] | None
    stop_at_tools: Sequence[str] | None


_RESUME = {"resume": True}  # field metadata: `resume` and `resume_stream` take this option too


@dataclass(frozen=True)
class RunOptions:
    """The options of one run, as `generate`, `stream` and `resume` take them (see `Agent.generate`)."""

    tool_choice: str | None = None
    active_tools: Iterable[str] | None = None
    max_steps: int | None = None
    deps: Any | None = dataclasses.field(default=None, metadata=_RESUME)
    context: ToolContext[Any] | None = dataclasses.field(default=None, metadata=_RESUME)
    model_settings: ModelSettings | None = None
    tools: Registry | Mapping[str, Any] | Iterable[Any] | None = dataclasses.field(default=None, metadata=_RESUME)
    mcp_servers: Sequence[MCPServerLike] = dataclasses.field(default=(), metadata=_RESUME)
    prepare_step: PrepareStep | None = dataclasses.field(default=None, metadata=_RESUME)
    hooks: Sequence[RunHooks[Any]] = dataclasses.field(default=(), metadata=_RESUME)
    limits: RunLimits | None = None
    require_approval: bool = False
    deferred_tools: DeferredTools | None = None
    output_validators: Sequence[OutputValidatorFn] | None = None
    stop_at_tools: Sequence[str] | None = None
    cancel: asyncio.Event | None = dataclasses.field(default=None, metadata=_RESUME)
    code_mode: CodeMode | None = dataclasses.field(default=None, metadata=_RESUME)
    session_id: str | None = dataclasses.field(default=None, metadata=_RESUME)
    on_step_finish: StepCallback | None = dataclasses.field(default=None, metadata=_RESUME)
    on_finish: FinishCallback | None = dataclasses.field(default=None, metadata=_RESUME)

    @property
    def deferred(self) -> bool | frozenset[str] | None:
        """`deferred_tools` normalised."""
        return check_deferred(self.deferred_tools, "generate(...): ")

    def checked(self) -> RunOptions:
        """These options, or an `AgentSetupError` for one that cannot work (raised before anything runs)."""
        check_prepare([self.prepare_step], "generate(...): ")
        check_hooks(self.hooks, "generate(hooks=...)")
        # run-time checks of the options: callers without a type checker pass anything
        if self.limits is not None and not isinstance(self.limits, RunLimits):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise AgentSetupError(f"generate(limits=...) takes RunLimits(...), got {self.limits!r}")
        if not isinstance(self.require_approval, bool):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise AgentSetupError(f"generate(require_approval=...) is True or False, got {self.require_approval!r}")
        servers: Any = self.mcp_servers
        if isinstance(servers, (str, bytes)) or not isinstance(servers, Sequence):
            raise AgentSetupError(f"generate(mcp_servers=...) takes a list of MCP sessions, got {type_name(servers)}")
        if self.model_settings is not None and not isinstance(self.model_settings, ModelSettings):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise AgentSetupError(
                f"generate(model_settings=...) takes a ModelSettings(...), got {type_name(self.model_settings)}"
            )
        if self.cancel is not None and not isinstance(self.cancel, asyncio.Event):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise AgentSetupError(f"generate(cancel=...) takes an asyncio.Event, got {type_name(self.cancel)}")
        if self.code_mode is not None and not isinstance(self.code_mode, CodeMode):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise AgentSetupError(f"generate(code_mode=...) takes CodeMode(...), got {type_name(self.code_mode)}")
        if self.session_id is not None and not isinstance(self.session_id, str):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise AgentSetupError(
                f"generate(session_id=...) takes a str (the conversation's id), got {type_name(self.session_id)}"
            )
        for name in ("on_step_finish", "on_finish"):
            callback = getattr(self, name)
            if callback is not None and not callable(callback):
                raise AgentSetupError(f"generate({name}=...) takes a function (plain or async), got {callback!r}")
        _ = self.deferred
        return self


def check_hooks(hooks: Sequence[RunHooks[Any]], where: str) -> list[RunHooks[Any]]:
    """`hooks` as a list, or an `AgentSetupError` naming the first that is not a `RunHooks`."""
    if isinstance(hooks, RunHooks):
        hooks = [hooks]
    bad = [h for h in hooks if not isinstance(h, RunHooks)]  # pyright: ignore[reportUnnecessaryIsInstance]
    if bad:
        raise AgentSetupError(f"{where} takes RunHooks objects (subclass RunHooks, or use Hooks(...)), got {bad[0]!r}")
    return list(hooks)


DEFAULT_OPTIONS = RunOptions()
"""A call without keywords (most calls): nothing to check."""


def run_options(where: str, options: Mapping[str, Any], takes: frozenset[str]) -> RunOptions:
    """The checked `RunOptions` of the keywords `where` got; a ``TypeError`` names one it does not take.

    Callers without a type checker can pass any keyword through ``**options``: refuse it as Python refuses
    an unknown keyword argument, with the closest keyword it takes.
    """
    if not options:
        return DEFAULT_OPTIONS
    for key in options:
        if key not in takes:
            close = closest(key, sorted(takes), n=1, cutoff=0.6)  # difflib's own cutoff
            hint = f" (did you mean {close[0]!r}?)" if close else f" (it takes {', '.join(sorted(takes))})"
            raise TypeError(f"{where}() got an unexpected keyword argument {key!r}{hint}")
    return RunOptions(**options).checked()


_ALL = dataclasses.fields(RunOptions)
RUN_KEYWORDS = frozenset(f.name for f in _ALL) | {"output_type"}
"""The keywords of `generate`, `generate_sync` and `stream`."""
RESUME_KEYWORDS = frozenset(f.name for f in _ALL if f.metadata.get("resume"))
"""The keywords of `resume` and `resume_stream`."""
