"""Agents that exercise every stream event, for the UI adapter tests."""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid
from collections.abc import AsyncIterator
from typing import Any

from pydantic import BaseModel

from agentkit import Agent, ToolCall, ToolContext, ToolError, ToolResultsMessage, ToolTransform, tool
from agentkit.events import AgentEvent
from agentkit.messages import Message
from agentkit.testing import FunctionInfo, FunctionModel, ToolCallChunk


class Forecast(BaseModel):
    city: str
    when: dt.datetime
    temperatures: set[int]


@dataclasses.dataclass
class Opaque:
    """A return value pydantic-core cannot dump as JSON (its `handle` is an arbitrary object)."""

    handle: Any


SECRET = "s3cr3t-value"


class Secret:
    def __repr__(self) -> str:
        return f"Secret({SECRET})"


def make_tools() -> dict[str, Any]:
    @tool(transform=ToolTransform(input_delta=lambda text: text.upper()))
    async def forecast(ctx: ToolContext[None], city: str) -> Forecast:
        """Forecast the weather."""
        ctx.emit({"fetched": city, "at": dt.date(2026, 5, 1)})
        return Forecast(city=city, when=dt.datetime(2026, 5, 1, 12), temperatures={18, 21})

    @tool
    def broken(reason: str) -> str:
        """Always fails."""
        raise ToolError(f"cannot: {reason}")

    @tool(transform=ToolTransform(output=lambda value: 1 / 0))
    def hidden(x: int) -> dict[str, int]:
        """Its output transform fails."""
        return {"x": x}

    @tool(transform=ToolTransform(output=lambda value: Opaque(Secret())))
    def opaque() -> dict[str, str]:
        """Its display value cannot be dumped as JSON (and its repr holds a secret)."""
        return {"ok": "yes"}

    @tool(requires_approval=True, transform=ToolTransform(approval=lambda args: {"amount": args["amount"]}))
    def pay(amount: int, iban: str) -> str:
        """Pay someone (needs approval)."""
        return f"paid {amount}"

    return {"forecast": forecast, "broken": broken, "hidden": hidden, "opaque": opaque, "pay": pay}


def helper_agent() -> Agent:
    @tool
    def note(text: str) -> str:
        """Take a note."""
        return f"noted {text}"

    async def turn(messages: list[Message], info: FunctionInfo) -> AsyncIterator[str | ToolCall | ToolCallChunk]:
        if isinstance(messages[-1], ToolResultsMessage):
            yield "The helper "
            yield "is done."
            return
        yield ToolCall("sub_1", "note", {"text": "x"})

    return Agent(id="helper", model=FunctionModel(stream_fn=turn), tools=[note])


async def kitchen_sink_turn(
    messages: list[Message], info: FunctionInfo
) -> AsyncIterator[str | ToolCall | ToolCallChunk]:
    """Step 0: text + a streamed call + four whole calls. Step 1: a subagent. Step 2: an approval."""
    results = [m for m in messages if isinstance(m, ToolResultsMessage)]
    if not results:
        yield "Checking "
        yield "a few things."
        yield ToolCallChunk(0, name="forecast", call_id="c_forecast")
        yield ToolCallChunk(0, '{"city": ')
        yield ToolCallChunk(0, '"Paris"}')
        yield ToolCall("c_broken", "broken", {"reason": "no"})
        yield ToolCall("c_hidden", "hidden", {"x": 1})
        yield ToolCall("c_opaque", "opaque", {})
        yield ToolCall("c_bad", "forecast", {"city": 5})
        return
    if len(results) == 1:
        yield ToolCall("c_helper", "agent-helper", {"prompt": "help"})
        return
    if len(results) == 2:
        yield ToolCall("c_pay", "pay", {"amount": 5, "iban": "DE00 SECRET"})
        return
    yield "All done."


def kitchen_sink() -> Agent:
    return Agent(
        id="sink",
        model=FunctionModel(stream_fn=kitchen_sink_turn),
        tools=make_tools(),
        agents={"helper": helper_agent()},
    )


async def collect(stream: AsyncIterator[AgentEvent] | Any) -> list[AgentEvent]:
    return [event async for event in stream]


def new_thread() -> str:
    return f"t_{uuid.uuid4().hex[:8]}"
