"""The options of one run, as `Agent.generate`, `stream` and `resume` take them, checked before it starts."""

from __future__ import annotations as _annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..context import ToolContext
from ..exceptions import AgentSetupError
from ..hooks import PrepareStep, RunHooks
from ..limits import RunLimits
from ..models import ModelSettings
from ..registry import Registry
from ._steps import check_prepare
from ._toolset import DeferredTools, check_deferred
from .sessions import MCPServerLike

__all__ = ["RunOptions", "check_hooks"]


@dataclass(frozen=True)
class RunOptions:
    """The options of one run, as `generate`, `stream` and `resume` take them."""

    tool_choice: str | None = None
    active_tools: Iterable[str] | None = None
    max_steps: int | None = None
    deps: Any = None
    context: ToolContext[Any] | None = None
    model_settings: ModelSettings | None = None
    tools: Registry | Mapping[str, Any] | Iterable[Any] | None = None
    mcp_servers: Sequence[MCPServerLike] = ()
    prepare_step: PrepareStep | None = None
    hooks: Sequence[RunHooks[Any]] = ()
    limits: RunLimits | None = None
    require_approval: bool = False
    deferred_tools: DeferredTools | None = None
    cancel: asyncio.Event | None = None

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
            raise AgentSetupError(f"generate(mcp_servers=...) takes a list of MCP sessions, got {self.mcp_servers!r}")
        if self.model_settings is not None and not isinstance(self.model_settings, ModelSettings):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise AgentSetupError(
                f"generate(model_settings=...) takes a ModelSettings(...), got {self.model_settings!r}"
            )
        if self.cancel is not None and not isinstance(self.cancel, asyncio.Event):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise AgentSetupError(f"generate(cancel=...) takes an asyncio.Event, got {self.cancel!r}")
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
