"""Targets for the command-line tests."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from agentkit import Agent, Registry, ToolContext, ToolTransform, tool
from agentkit.messages import AssistantMessage, Message, ToolCall, ToolResultsMessage
from agentkit.testing import FunctionInfo, FunctionModel


@tool
def add(a: int, b: int = 1) -> int:
    """Add two integers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


@tool
def forecast(city: str, unit: Literal["c", "f"] = "c", days: Annotated[int, Field(gt=0, le=7)] = 1) -> dict[str, float]:
    """Forecast for a city."""
    return {"temperature": 20.0 if unit == "c" else 68.0, "days": float(days)}


tools = Registry({"add": add, "weather.forecast": forecast})


@tool
def boom(x: int) -> int:
    """Always fails."""
    raise RuntimeError(f"disk {x} on fire")


@tool(requires_approval=True)
def wire_money(amount: int) -> str:
    """Send money (needs approval)."""
    return f"sent {amount}"


failing = Registry([boom])
guarded = Registry([wire_money])


@tool(requires_approval=lambda args: args["amount"] > 100)
def refund(amount: int = 500) -> str:
    """Refund an amount (approval above 100; the default needs it too)."""
    REFUNDS.append(amount)
    return f"refunded {amount}"


REFUNDS: list[int] = []
refunds = Registry([refund])


def _sloppy_turn(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
    """A model that writes arguments that are not JSON, then answers once it sees the error."""
    if isinstance(messages[-1], ToolResultsMessage):
        return "sorry, my arguments were broken"
    return AssistantMessage(tool_calls=[ToolCall(id="c1", name="add", arguments='{"a": 1, "b": ')])


sloppy = Agent(name="sloppy", model=FunctionModel(_sloppy_turn, name="sloppy-model"), tools=Registry([add]))


@tool
def ask_seat(ctx: ToolContext, flight: str) -> str:
    """Book a seat (asks which)."""
    seat = ctx.suspend({"question": f"Which seat on {flight}?"}, schema={"type": "string"})
    return f"seat {seat}"


asking = Registry([ask_seat])
asking_masked = Registry([ask_seat], transform=ToolTransform(input=lambda args: {"flight": "***"}))
"""The same tool under a registry policy that redacts inputs: its question may quote them, so it is withheld."""


@tool(transform=ToolTransform(input=lambda args: {**args, "card": "****" + args["card"][-4:]}))
def charge(card: str, amount: int) -> str:
    """Charge a card (the number is masked in displays)."""
    return f"charged {amount}"


def _charging_turn(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
    if isinstance(messages[-1], ToolResultsMessage):
        return "done"
    return AssistantMessage(
        tool_calls=[
            ToolCall(id="c1", name="charge", arguments={"card": "4111111111111111", "amount": 5}),
            ToolCall(id="c2", name="charge", arguments={"card": "4111111111111111", "amount": "x"}),
        ]
    )


charging = Agent(name="charging", model=FunctionModel(_charging_turn, name="charging-model"), tools=[charge])


def _deep_turn(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
    """Arguments nested 5,000 levels deep, as text and as an object."""
    if isinstance(messages[-1], ToolResultsMessage):
        return "deep enough"
    nested: object = 1
    for _ in range(5_000):
        nested = [nested]
    text = '{"a": ' + "[" * 5_000 + "1" + "]" * 5_000 + "}"
    return AssistantMessage(
        tool_calls=[
            ToolCall(id="c1", name="add", arguments=text),
            ToolCall(id="c2", name="add", arguments={"a": nested}),
        ]
    )


deep = Agent(name="deep", model=FunctionModel(_deep_turn, name="deep-model"), tools=Registry([add]))
