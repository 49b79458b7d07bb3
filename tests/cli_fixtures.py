"""Targets for the command-line tests."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from agentkit import Registry, ToolContext, tool


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


@tool
def ask_seat(ctx: ToolContext, flight: str) -> str:
    """Book a seat (asks which)."""
    seat = ctx.suspend({"question": f"Which seat on {flight}?"}, schema={"type": "string"})
    return f"seat {seat}"


asking = Registry([ask_seat])
