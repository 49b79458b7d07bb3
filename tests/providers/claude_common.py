"""The realistic registry shared by the Anthropic and Bedrock (Claude on AWS) provider tests."""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, Field

from agentkit import Registry
from agentkit.messages import ImagePart, TextPart

from .common import PNG


class Address(BaseModel):
    """A postal address."""

    street: str
    city: str
    zip: Optional[str] = None


class Item(BaseModel):
    """One order line."""

    sku: str = Field(min_length=3, description="Stock keeping unit.")
    qty: int = Field(1, ge=1, le=100)


def get_weather(city: str, unit: Literal["c", "f"] = "c") -> dict[str, str]:
    """Current weather for a city.

    Args:
        city: City name.
        unit: Temperature unit.
    """
    return {"city": city, "unit": unit}


def make_registry() -> Registry:
    """get_weather, place_order (nested models, $defs, bounds) and show_chart (answers with an image)."""
    registry = Registry()
    registry.tool(get_weather)

    @registry.tool
    def place_order(
        address: Address, items: list[Item], priority: Literal["low", "high"] = "low", note: str | None = None
    ) -> str:
        """Place an order.

        Args:
            address: Where to ship.
            items: What to ship.
            priority: Shipping priority.
            note: A note for the courier.
        """
        return f"{len(items)} line(s) to {address.city}, {priority}"

    @registry.tool(to_model_output=lambda title: [TextPart(f"chart: {title}"), ImagePart(data=PNG)])
    def show_chart(title: str) -> str:
        """Draw a chart."""
        return title

    return registry
