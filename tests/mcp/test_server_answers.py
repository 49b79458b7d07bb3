"""A served tool's suspension is asked of the MCP client; the client's answer is checked before the tool sees it.

Issue 17 §4.1: the answer went to the tool unvalidated (a string for an integer, a value over the maximum,
an extra field, a missing one: 4 of 4 got through). Real HTTP on 127.0.0.1, the official `mcp` client.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import types
from mcp.client.streamable_http import streamable_http_client

from agentkit import Registry, ToolContext, tool
from agentkit.mcp import serving_http

from .fixtures.helpers import session_in_task

SEAT = {
    "type": "object",
    "properties": {
        "row": {"type": "integer", "minimum": 1, "maximum": 40},
        "letter": {"type": "string", "pattern": "^[A-F]$"},
    },
    "required": ["row", "letter"],
    "additionalProperties": False,
}
SEEN: list[Any] = []


@tool
def choose_seat(ctx: ToolContext[Any], flight: str) -> str:
    """Choose a seat (asks which)."""
    seat = ctx.suspend(f"Which seat on {flight}?", schema=SEAT)
    SEEN.append(seat)
    return f"{flight}: {seat['row']}{seat['letter']}"


@pytest.fixture
async def url() -> AsyncIterator[str]:
    SEEN.clear()
    async with serving_http(Registry([choose_seat])) as served:
        yield served


def answering(*answers: dict[str, Any]) -> tuple[Any, list[str]]:
    """An elicitation callback giving `answers` in turn (the last one again), and the messages it was asked."""
    asked: list[str] = []

    async def callback(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content=answers[min(len(asked), len(answers)) - 1])

    return callback, asked


UNFIT = {
    "a string for an integer": ({"row": "3", "letter": "F"}, "$.row: '3' is not of type 'integer'"),
    "over the maximum": ({"row": 99, "letter": "F"}, "$.row: 99 is greater than the maximum of 40"),
    "an extra field": ({"row": 3, "letter": "F", "upgrade": True}, "Additional properties are not allowed"),
    "a missing field": ({"row": 3}, "'letter' is a required property"),
    "a pattern": ({"row": 3, "letter": "Z"}, "$.letter: 'Z' does not match '^[A-F]$'"),
}


@pytest.mark.parametrize("case", list(UNFIT))
async def test_an_answer_that_does_not_fit_never_reaches_the_tool(url: str, case: str) -> None:
    """Regression (issue 17 §4.1): the tool received the client's answer as it was."""
    bad, problem = UNFIT[case]
    callback, asked = answering(bad)
    async with session_in_task(lambda: streamable_http_client(url), elicitation_callback=callback) as session:
        result = await session.call_tool("choose_seat", {"flight": "LH1"})
    assert SEEN == []  # the tool never saw it
    assert result.is_error
    text = result.content[0].text
    assert "3 answers did not fit what it asked for" in text and problem in text, text
    assert len(asked) == 3 and problem in asked[1] and asked[0] == "Which seat on LH1?"


async def test_the_client_is_asked_again_and_a_fitting_answer_runs_the_tool(url: str) -> None:
    callback, asked = answering({"row": 99, "letter": "F"}, {"row": 12, "letter": "C"})
    async with session_in_task(lambda: streamable_http_client(url), elicitation_callback=callback) as session:
        result = await session.call_tool("choose_seat", {"flight": "LH1"})
    assert not result.is_error, result.content
    assert result.structured_content == {"result": "LH1: 12C"}
    assert SEEN == [{"row": 12, "letter": "C"}]
    assert asked[1].startswith("Which seat on LH1?\n\nThe last answer did not fit: $.row: 99 is greater")
