"""The two tools the Gemini and Ollama model tests share (tool objects, so usable under any name)."""

from __future__ import annotations

from typing import Any, Literal

from agentkit import tool


@tool
def get_weather(city: str, unit: Literal["c", "f"] = "c") -> dict[str, Any]:
    """Forecast for a city.

    Args:
        city: City name.
        unit: Temperature unit.
    """
    return {"city": city, "temp": 21}


@tool
def local_time(tz: str) -> str:
    """The time in a time zone.

    Args:
        tz: IANA zone name.
    """
    return "10:00"
