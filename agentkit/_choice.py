"""One rule for ``tool_choice`` and ``active_tools``: the agent, its step planning and every codec apply it.

A choice is ``"auto"``, ``"none"``, ``"required"`` or a tool's key. Every active key and a named choice must
name a tool; ``"required"`` needs at least one active tool; a named choice must be among the active tools.
"""

from __future__ import annotations as _annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from ._text import closest
from .exceptions import ToolChoiceError, UnknownToolError

__all__ = ["BUILT_IN_CHOICES", "check_tool_choice", "require_keys"]

BUILT_IN_CHOICES = frozenset({"auto", "none", "required"})
"""The tool choices that name no tool."""


def require_keys(tools: Mapping[str, Any], keys: Iterable[str]) -> None:
    """Raise `UnknownToolError` (the closest keys suggested) for the first of `keys` no tool has."""
    for key in keys:
        if key not in tools:
            raise UnknownToolError(key, list(tools), closest(key, tools))


def check_tool_choice(
    choice: str, active: Collection[str] | None, tools: Mapping[str, Any], *, step: int | None = None
) -> None:
    """Raise unless `tools` (keys to anything) can honour `choice` with `active` (None: every tool).

    `step` names the agent step the choice was made for (by ``prepare_step``), in the message.

    Raises:
        UnknownToolError: an active key, or a named choice, that no tool has.
        ToolChoiceError: ``"required"`` with no active tool, or a named choice outside `active`.
    """
    if active:
        require_keys(tools, active)
    named = choice not in BUILT_IN_CHOICES
    if named:
        require_keys(tools, (choice,))
    if active is None:
        return
    if choice == "required" and not active:
        raise ToolChoiceError("tool_choice='required' with active_tools=[]: no tool could be called")
    if named and choice not in active:
        if step is not None:
            raise ToolChoiceError(
                f"tool_choice={choice!r} cannot be used in step {step}: it is not active "
                f"(active tools: {list(active)!r})"
            )
        raise ToolChoiceError(
            f"tool_choice={choice!r} is not among active_tools={list(active)!r}; "
            "add it to active_tools or choose another tool"
        )
