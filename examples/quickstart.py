"""agentkit's main job, offline: tools from plain functions, a registry, schemas and validated calls."""

from __future__ import annotations

import asyncio
import json
from typing import Literal

from pydantic import BaseModel, Field

from agentkit import Registry, ToolCall, tool


class Weather(BaseModel):
    """The weather in a city."""

    city: str
    temperature: float = Field(description="Degrees in the requested unit.")
    unit: Literal["c", "f"]


@tool
def get_weather(city: str, unit: Literal["c", "f"] = "c") -> Weather:
    """Fetch the current weather for a city.

    Args:
        city: City name, e.g. "Paris".
        unit: Temperature unit.
    """
    celsius = 8.0 + len(city) % 10
    return Weather(city=city, temperature=celsius if unit == "c" else celsius * 9 / 5 + 32, unit=unit)


@tool
async def convert(amount: float, rate: float = 1.08) -> float:
    """Convert an amount of money with an exchange rate.

    Args:
        amount: The amount to convert.
        rate: Units of the target currency per unit of the source currency.
    """
    return round(amount * rate, 2)


async def main() -> None:
    """Show the schemas, one validated call, and what a model's calls get back."""
    tools = Registry({"weather": get_weather, "convert-currency": convert})
    for key, item in tools.items():
        print(f"== {key} ({item.id}): {item.description.splitlines()[0]}")
        print("input_schema: ", json.dumps(item.input_schema))
        print("output_schema:", json.dumps(item.output_schema))
    print("\nget_weather.invoke({'city': 'Paris'}) ->", get_weather.invoke({"city": "Paris"}))
    calls = [
        ToolCall(id="call_1", name="weather", arguments='{"city": "Lisbon", "unit": "f"}'),
        ToolCall(id="call_2", name="convert-currency", arguments={"amount": 100}),
        ToolCall(id="call_3", name="weather", arguments='{"city": 7}'),  # the model's mistake
        ToolCall(id="call_4", name="wether", arguments="{}"),  # an unknown tool
    ]
    print("\nWhat a model's calls get back (errors are results, not exceptions):")
    for result in await tools.call_many(calls):
        flag = "ERROR" if result.is_error else "ok"
        print(f"- {result.call_id} {result.name} [{flag}] {result.text}")


if __name__ == "__main__":
    asyncio.run(main())
