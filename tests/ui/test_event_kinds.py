"""Both UI adapters handle every `Agent.stream` event kind, or list it as ignored (issue 18 §5, second half).

A kind added to `agentkit.events` and not handled fails here at run time (the adapters end their event
chains with `assert_never`) and in mypy/pyright (the chain no longer narrows to `Never`).
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from dataclasses import dataclass
from typing import Any

import pytest

from agentkit import events
from agentkit.events import AgentEvent, ToolCallEvent
from agentkit.messages import Usage
from agentkit.ui import agui, vercel

KINDS: list[type[Any]] = list(typing.get_args(AgentEvent))


def sample(kind: type[Any]) -> Any:
    """An instance of an event kind, every field filled by its type."""
    hints = typing.get_type_hints(kind)
    values: dict[str, Any] = {}
    for spec in dataclasses.fields(kind):
        if spec.name == "kind":
            continue
        hint = hints[spec.name]
        if hint is Usage:
            values[spec.name] = Usage(3, 4)
        elif hint is int:
            values[spec.name] = 1
        elif spec.name == "event":
            values[spec.name] = ToolCallEvent("sub_1", "note", {"text": "x"}, 0)  # a subagent's call: shown at once
        elif spec.name in ("error_kind",):
            values[spec.name] = "tool_error"
        elif spec.name == "status":
            values[spec.name] = "complete"
        elif spec.name in ("transform_error",):
            values[spec.name] = None
        else:
            values[spec.name] = f"{spec.name}-value"
    return kind(**values)


def test_every_event_class_is_an_agent_event() -> None:
    defined = {
        cls
        for _, cls in inspect.getmembers(events, inspect.isclass)
        if cls.__module__ == "agentkit.events" and cls.__name__.endswith("Event") and dataclasses.is_dataclass(cls)
    }
    assert defined == set(KINDS)


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_the_vercel_stream_maps_each_kind_or_says_why_not(kind: type[Any]) -> None:
    event = sample(kind)
    translator = vercel._Translator("m1")  # pyright: ignore[reportPrivateUsage]
    translator.enter_step(1)
    chunks = translator.translate(event)
    if kind in vercel.IGNORED_EVENTS:
        assert chunks == [] and vercel.IGNORED_EVENTS[kind]
    else:
        assert chunks, f"{kind.__name__} sends nothing and is not in IGNORED_EVENTS"
    vercel._SubagentView("helper").apply(event)  # pyright: ignore[reportPrivateUsage]  # a subagent's events too


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_agui_maps_each_kind(kind: type[Any]) -> None:
    scope = agui._Scope(interrupt_key="pause_x")  # pyright: ignore[reportPrivateUsage]
    scope.enter_step(1)
    out = scope.translate(sample(kind))
    assert out or scope.interrupts or kind in agui.IGNORED_EVENTS, kind.__name__


def test_an_unknown_kind_is_refused_not_dropped() -> None:
    @dataclass(frozen=True)
    class NewEvent:
        step: int = 0
        kind: str = "new"

    with pytest.raises(AssertionError):
        vercel._Translator("m1").translate(NewEvent())  # type: ignore[arg-type]  # pyright: ignore[reportPrivateUsage, reportArgumentType]
    with pytest.raises(AssertionError):
        agui._Scope().translate(NewEvent())  # type: ignore[arg-type]  # pyright: ignore[reportPrivateUsage, reportArgumentType]
