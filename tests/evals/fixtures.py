"""Tools and case files the evals tests share (also a `agentkit eval` target: ``tests.evals.fixtures:tools``)."""

from __future__ import annotations

from typing import Literal

from agentkit import Registry, tool


@tool
def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius", days: int = 1) -> str:
    """Get the weather forecast for a city.

    Args:
        city: The city name.
        unit: The temperature unit.
        days: How many days.
    """
    raise AssertionError("an eval never runs a tool")


@tool
def search(query: str) -> str:
    """Search the web.

    Args:
        query: What to look for.
    """
    raise AssertionError("an eval never runs a tool")


tools = Registry({"weather.get": get_weather, "search": search})

CASES = [
    {
        "id": "paris",
        "category": "weather",
        "prompt": "Weather in Paris for 2 days, in Fahrenheit?",
        "expected": [{"weather.get": {"city": ["Paris"], "unit": ["fahrenheit"], "days": [2]}}],
    },
    {
        "id": "two-cities",
        "category": "weather",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Rome and Oslo?"}],
        "tools": ["weather.get"],
        "expected": [
            {"weather.get": {"city": ["Rome"], "unit": ["celsius", ""], "days": [1, ""]}},
            {"weather.get": {"city": ["Oslo"], "unit": ["celsius", ""], "days": [1, ""]}},
        ],
    },
    {"id": "hello", "category": "chat", "prompt": "Say hello.", "expected": []},
]
