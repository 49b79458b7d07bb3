"""Estimated prices of model requests and runs, from the ``genai-prices`` table (no hand-written prices here).

```python
result = await agent.generate("...")
result.cost()                      # Decimal("0.00231") in USD, or None when a request's price is unknown
result.steps[0].response.cost()    # one request
estimate_cost(Usage(input_tokens=1000, output_tokens=200), "openai:gpt-4.1")
```

Prices come from `genai-prices <https://pypi.org/project/genai-prices/>`_, a maintained table that ships
its data in the package, so an estimate needs no network. It is looked up on first use only (importing
it takes a few tenths of a second), never while a run is going on. The table is matched by the model's
name as the vendor answered it (``gpt-4.1-2025-04-14``) and by the endpoint the request went to, so an
OpenAI-compatible server elsewhere (Groq, Together, ...) is priced as that provider, and a local server
(llama.cpp, Ollama on 127.0.0.1) is unknown: None, never a guess.

Cached input is priced at the cache's rates (reads and writes), reasoning as output. An estimate is
what the table says today; the vendor's invoice is the authority.
"""

from __future__ import annotations as _annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from types import MappingProxyType
from typing import Any

from ._vendors import VENDORS
from .messages import ModelResponse, Usage

__all__ = ["PRICED_PROVIDERS", "estimate_cost", "response_cost", "total_cost"]

PRICED_PROVIDERS: Mapping[str, str] = MappingProxyType(
    {name: row.price_id for name, row in VENDORS.items() if row.price_id is not None}
)
"""agentkit vendor -> ``genai-prices`` provider id, used when a request's endpoint is not known: the vendor
table's ``price_id`` column (Ollama, usually local, has none: its requests are unknown)."""


def estimate_cost(
    usage: Usage, model: str, *, provider: str | None = None, provider_url: str | None = None
) -> Decimal | None:
    """The estimated price in USD of `usage` on `model`; None when the table does not know it.

    Args:
        usage: token counts (cache reads and writes are priced at the cache's rates).
        model: the model's name, ``"vendor:model-name"`` (``"openai:gpt-4.1"``) or the vendor's name alone
            with `provider`.
        provider: the agentkit vendor (``"openai"``, ``"anthropic"``, ...); taken from `model`'s prefix
            when it has one.
        provider_url: the endpoint the request went to; when given, it decides the provider (a local or
            unknown endpoint gives None).
    """
    vendor, sep, name = model.partition(":")
    if sep and provider is None and vendor in PRICED_PROVIDERS:
        provider, model = vendor, name
    return _price(usage, model, provider, provider_url)


def response_cost(response: ModelResponse) -> Decimal | None:
    """The estimated price of one response (`ModelResponse.cost`); None when unknown."""
    if response.model_name is None or response.provider_name is None:
        return None
    return _price(response.usage, response.model_name, response.provider_name, response.provider_url)


def total_cost(responses: Iterable[ModelResponse]) -> Decimal | None:
    """The estimated price of all `responses`; None when any of them is unknown (a sum would understate)."""
    total = Decimal(0)
    for response in responses:
        cost = response_cost(response)
        if cost is None:
            return None
        total += cost
    return total


def _price(usage: Usage, model: str, provider: str | None, provider_url: str | None) -> Decimal | None:
    if provider_url is None and (provider is None or provider not in PRICED_PROVIDERS):
        return None
    table = _table()
    if table is None:
        return None
    values: dict[str, Any] = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
    if usage.cache_read_tokens:
        values["cache_read_tokens"] = usage.cache_read_tokens
    if usage.cache_write_tokens:
        values["cache_write_tokens"] = usage.cache_write_tokens
    try:
        if provider_url is not None:
            found = table.calc_price(table.Usage(**values), model, provider_api_url=provider_url)
        else:
            found = table.calc_price(table.Usage(**values), model, provider_id=PRICED_PROVIDERS[provider or ""])
    except (LookupError, ValueError):  # a model or an endpoint the table does not know; counts it cannot price
        return None
    price: Decimal = found.total_price
    return price


def _table() -> Any:
    try:
        import genai_prices
    except ImportError:  # pragma: no cover - a dependency of agentkit; None rather than a crash if removed
        return None
    return genai_prices
