"""A zoo of tools covering the shapes the schema builder supports; shared by property and provider tests."""

from __future__ import annotations

import datetime as dt
import enum
import uuid
from dataclasses import dataclass
from typing import Annotated, Literal, Union

from pydantic import BaseModel, Field
from typing_extensions import NotRequired, TypedDict

from agentkit import Registry, Tool, ToolContext, tool


class Unit(str, enum.Enum):
    CELSIUS = "c"
    FAHRENHEIT = "f"


class Location(BaseModel):
    """A point on Earth."""

    lat: Annotated[float, Field(ge=-90, le=90)]
    lon: Annotated[float, Field(ge=-180, le=180)]
    label: str | None = None


@dataclass
class Item:
    name: str
    quantity: int = 1


class Filters(TypedDict):
    tags: list[str]
    since: NotRequired[dt.date]


class Circle(BaseModel):
    shape: Literal["circle"]
    radius: Annotated[float, Field(gt=0)]


class Square(BaseModel):
    shape: Literal["square"]
    side: Annotated[float, Field(gt=0)]


class Category(BaseModel):
    name: str
    children: list[Category] = []


@tool
def get_weather(
    city: str, days: int = 1, unit: Unit = Unit.CELSIUS, precision: float | None = None
) -> dict[str, float]:
    """Forecast for a city.

    Args:
        city: City name.
        days: Days ahead.
        unit: Temperature unit.
        precision: Rounding step.
    """
    return {"temp": 20.0, "days": float(days)}


@tool
def search(
    query: Annotated[str, Field(min_length=1, max_length=50)],
    limit: Annotated[int, Field(ge=1, le=20)] = 5,
    mode: Literal["fast", "exact"] = "fast",
    tags: list[str] | None = None,
) -> list[str]:
    """Search documents."""
    return [query] * min(limit, 2)


@tool
async def place_order(items: list[Item], ship_to: Location, ctx: ToolContext, note: str = "") -> str:
    """Order items."""
    return f"{len(items)} items"


@tool
def draw(shape: Annotated[Union[Circle, Square], Field(discriminator="shape")], filters: Filters) -> float:
    """Area of a shape."""
    return shape.radius**2 * 3.14 if isinstance(shape, Circle) else shape.side**2


@tool
def catalogue(
    root: Category, ids: tuple[int, str], when: dt.datetime | None = None, ref: uuid.UUID | None = None
) -> int:
    """Count categories."""
    return 1 + len(root.children)


@tool
def no_arguments() -> str:
    """Tell the time."""
    return "noon"


ZOO: list[Tool[..., object]] = [get_weather, search, place_order, draw, catalogue, no_arguments]


def zoo_registry() -> Registry:
    """A fresh registry holding every zoo tool under its id."""
    return Registry(ZOO)
