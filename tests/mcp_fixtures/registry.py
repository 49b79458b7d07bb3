"""A registry served over MCP by the tests: `python -m agentkit.mcp serve tests.mcp_fixtures.registry:tools`."""

from __future__ import annotations

import asyncio
import os
from typing import Literal

from pydantic import BaseModel

from agentkit import ImagePart, Registry, ToolContext, ToolError

# A 1x1 transparent PNG.
PIXEL = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000100e5270de40000000049454e44ae426082"
)


class Reading(BaseModel):
    celsius: float
    source: str


class Weather(BaseModel):
    city: str
    unit: Literal["c", "f"]
    readings: list[Reading]


tools = Registry()


@tools.tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


@tools.tool(key="get-weather")
def weather(city: str, unit: Literal["c", "f"] = "c") -> Weather:
    """Fetch the weather for a city.

    Args:
        city: City name.
        unit: Temperature unit.
    """
    return Weather(city=city, unit=unit, readings=[Reading(celsius=21.5, source="station")])


@tools.tool
def boom(reason: str) -> str:
    """Always fails with the given reason."""
    raise ValueError(f"boom: {reason}")


@tools.tool
def refuse() -> str:
    """Fails with a message meant for the model."""
    raise ToolError("not allowed today")


@tools.tool
async def slow(seconds: float) -> str:
    """Sleep, then answer."""
    await asyncio.sleep(seconds)
    return f"slept {seconds}"


@tools.tool
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@tools.tool
def chatty(text: str) -> str:
    """Prints to stdout (which must not reach the MCP wire), then echoes."""
    print("noise on stdout", text)
    return text


@tools.tool
def untyped(text: str):  # type: ignore[no-untyped-def]  # no return annotation: no output schema
    """Echo without an output schema."""
    return text.upper()


@tools.tool(to_model_output=lambda value: [f"a {value} pixel", ImagePart(data=PIXEL, media_type="image/png")])
def picture(color: str) -> str:
    """A tiny picture."""
    return color


@tools.tool
def whoami(ctx: ToolContext, greeting: str = "hi") -> str:
    """Uses the injected context."""
    return f"{greeting} from {ctx.tool_name}"


@tools.tool
def nothing() -> None:
    """Returns nothing."""
