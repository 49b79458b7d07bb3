"""Test setup shared by the provider tests: fixture loading, a tiny PNG and one realistic tool set.

Vendor-specific setup stays in each test module; this holds only what several of them define alike.
"""

from __future__ import annotations

import base64
import importlib.util
import json
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from tests.spec import LINTER

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def read_fixture(folder: Path, name: str, *, drop_source: bool = False) -> Any:
    """``folder/name.json`` parsed; with `drop_source`, minus the ``_source`` note recorded fixtures carry."""
    data = json.loads((folder / f"{name}.json").read_text())
    if drop_source:
        data.pop("_source", None)
    return data


@cache
def lint_module() -> Any:
    """The vendor-rule schema linter (tests/data/tools/lint_schema.py), loaded once."""
    spec = importlib.util.spec_from_file_location("lint_schema", LINTER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def function_of(payload: dict[str, Any], name: str) -> dict[str, Any]:
    """The ``function`` of the OpenAI-style tool entry called `name`."""
    found: dict[str, Any] = next(t["function"] for t in payload["tools"] if t["function"]["name"] == name)
    return found


# ---- a realistic tool set (Cohere, Mistral and Ollama tests) ----------------------------------------


class Address(BaseModel):
    street: str
    city: str = Field(description="City name", min_length=1)


class Item(BaseModel):
    sku: str
    qty: int = Field(ge=1, le=100)


def get_weather(city: str, unit: Literal["c", "f"] = "c") -> dict[str, Any]:
    """Get the current weather for a city.

    Args:
        city: City name.
        unit: Temperature unit.
    """
    return {"city": city, "unit": unit}


def place_order(
    customer: str,
    address: Address,
    items: list[Item],
    priority: Literal["low", "high"] = "low",
    note: str | None = None,
    gift: bool = False,
) -> str:
    """Place an order.

    Args:
        customer: Customer name.
        address: Where to ship.
        items: What to ship.
        priority: Shipping priority.
        note: Free text for the courier.
        gift: Wrap it.
    """
    return "ok"


def ping() -> str:
    """Check the service is up."""
    return "pong"


def httpx_module() -> Any:
    """The httpx the installed vendor SDKs are built on (``httpx2`` in newer SDKs)."""
    try:
        import httpx2
    except ImportError:  # pragma: no cover - older SDKs use httpx
        import httpx as httpx2  # type: ignore[no-redef]
    return httpx2
