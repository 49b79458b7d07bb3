"""A 10 MB unknown name cannot hold the loop: fuzzy matching and echoed names are bounded (issue 8, §4 item 10)."""

from __future__ import annotations

import difflib
from typing import Any

import pytest

from agentkit import ModelSetupError, Registry, ToolCall, UnknownToolError, tool
from agentkit._text import MAX_NAME_FOR_SUGGESTIONS, closest
from agentkit.models import infer_model
from agentkit.providers import get_provider

HUGE = "w" * 10_000_000


@tool
def weather(city: str) -> str:
    """Weather."""
    return city


@pytest.fixture
def compared(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Sizes of the names difflib was asked about (none may be unbounded)."""
    sizes: list[int] = []
    real = difflib.get_close_matches

    def spy(word: Any, possibilities: Any, *args: Any, **kwargs: Any) -> Any:
        sizes.append(len(word))
        return real(word, possibilities, *args, **kwargs)

    monkeypatch.setattr(difflib, "get_close_matches", spy)
    return sizes


async def test_a_huge_unknown_tool_name_gets_a_short_error(compared: list[int]) -> None:
    result = await Registry([weather]).call(ToolCall("1", HUGE, {}))
    assert result.error_kind == "unknown_tool"
    assert len(result.text) < 500 and "Available tools: weather" in result.text
    assert all(size <= MAX_NAME_FOR_SUGGESTIONS for size in compared)
    near = await Registry([weather]).call(ToolCall("2", "wether", {}))
    assert "Did you mean 'weather'?" in near.text


def test_every_did_you_mean_is_bounded(compared: list[int]) -> None:
    with pytest.raises(UnknownToolError) as info:
        Registry([weather])[HUGE]
    assert len(str(info.value)) < 500
    with pytest.raises(Exception, match="Unknown provider") as provider:
        get_provider(HUGE)
    assert len(str(provider.value)) < 1000
    with pytest.raises(ModelSetupError) as model:
        infer_model(HUGE + ":x")
    assert len(str(model.value)) < 1000
    assert all(size <= MAX_NAME_FOR_SUGGESTIONS for size in compared)
    assert closest("wether", ["weather"]) == ["weather"]
    assert closest(HUGE, ["weather"]) == [] and closest(42, ["weather"]) == []  # type: ignore[arg-type]
