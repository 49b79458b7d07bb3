"""The one table of vendors: a name -> where its provider and model client live, and what they need.

`agentkit.providers.get_provider`, `agentkit.models.infer_model`, ``agentkit.testing.request_payload``, the
CLI, cost estimates (`agentkit.costs`: the price table's provider id) and traces (``gen_ai.provider.name``)
read this table and nothing else, so a new vendor is one folder (``agentkit/providers/<vendor>/``) plus one
row here (docs/contributing/vendors.md lists every file). Classes are named by ``"module:Class"`` strings
and imported on first use, so reading the table loads no vendor code and no SDK.
"""

from __future__ import annotations as _annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

__all__ = ["VENDORS", "Vendor", "load"]


@dataclass(frozen=True)
class Vendor:
    """One row of the vendor table."""

    name: str
    """The name in ``get_provider(name)`` and in ``"name:model"`` strings."""
    model: str
    """``"module:Class"`` of the model client, built as ``Class(model_name)``."""
    provider: str | None = None
    """``"module:Class"`` of the wire codec (None: the vendor sends nothing over a wire, like ``test``)."""
    env_vars: tuple[str, ...] = ()
    """Where the model client reads its API key, in order (empty: it needs none, or its SDK finds it)."""
    extra: str | None = None
    """The pip extra that installs the vendor's SDK (``pip install 'agentkit-tools[<extra>]'``)."""
    offline: Mapping[str, Any] = field(default_factory=lambda: {})
    """Constructor options that build the model client without credentials, to show payloads offline."""
    needs_model_name: bool = True
    """Whether a model string must name a model (``"openai:gpt-4.1"``); ``"test"`` needs none."""
    price_id: str | None = None
    """The vendor's provider id in the ``genai-prices`` table, for requests whose endpoint is not known
    (`agentkit.costs`; None: its requests are priced by their endpoint only, e.g. a local server)."""
    telemetry_name: str | None = None
    """``gen_ai.provider.name`` in traces: the OpenTelemetry GenAI conventions' well-known value (None: the
    vendor's own name, for one the conventions do not list)."""


_PLACEHOLDER = {"api_key": "offline-placeholder"}

VENDORS: Mapping[str, Vendor] = MappingProxyType(
    {
        row.name: row
        for row in (
            Vendor(
                "openai",
                "agentkit.providers.openai:OpenAIChatModel",
                "agentkit.providers.openai:OpenAIChatProvider",
                ("OPENAI_API_KEY",),
                "openai",
                _PLACEHOLDER,
                price_id="openai",
                telemetry_name="openai",
            ),
            Vendor(
                "openai-responses",
                "agentkit.providers.openai:OpenAIResponsesModel",
                "agentkit.providers.openai:OpenAIResponsesProvider",
                ("OPENAI_API_KEY",),
                "openai",
                _PLACEHOLDER,
                price_id="openai",
                telemetry_name="openai",
            ),
            Vendor(
                "anthropic",
                "agentkit.providers.anthropic:AnthropicModel",
                "agentkit.providers.anthropic:AnthropicProvider",
                ("ANTHROPIC_API_KEY",),
                "anthropic",
                _PLACEHOLDER,
                price_id="anthropic",
                telemetry_name="anthropic",
            ),
            Vendor(
                "gemini",
                "agentkit.providers.gemini:GeminiModel",
                "agentkit.providers.gemini:GeminiProvider",
                ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
                "gemini",
                _PLACEHOLDER,
                price_id="google",
                telemetry_name="gcp.gemini",
            ),
            Vendor(
                "bedrock",
                "agentkit.providers.bedrock:BedrockModel",
                "agentkit.providers.bedrock:BedrockProvider",
                (),  # boto3's credential chain (or AWS_BEARER_TOKEN_BEDROCK), read by botocore itself
                "bedrock",
                {**_PLACEHOLDER, "region_name": "us-east-1"},
                price_id="aws",
                telemetry_name="aws.bedrock",
            ),
            Vendor(
                "mistral",
                "agentkit.providers.mistral:MistralModel",
                "agentkit.providers.mistral:MistralProvider",
                ("MISTRAL_API_KEY",),
                "mistral",
                _PLACEHOLDER,
                price_id="mistral",
                telemetry_name="mistral_ai",
            ),
            Vendor(
                "cohere",
                "agentkit.providers.cohere:CohereModel",
                "agentkit.providers.cohere:CohereProvider",
                ("CO_API_KEY", "COHERE_API_KEY"),
                "cohere",
                _PLACEHOLDER,
                price_id="cohere",
                telemetry_name="cohere",
            ),
            Vendor(
                "ollama",
                "agentkit.providers.ollama:OllamaModel",
                "agentkit.providers.ollama:OllamaProvider",
                (),  # a local server needs no key (ollama-python reads OLLAMA_API_KEY itself)
                "ollama",
                price_id=None,  # usually a local server: priced by its endpoint, never guessed
                telemetry_name="ollama",
            ),
            Vendor("test", "agentkit.testing:TestModel", needs_model_name=False),
        )
    }
)
"""Every vendor agentkit knows, in the order lists and reports show them."""


def load(target: str) -> Any:
    """The object a ``"module:attr"`` entry of the table names (its module imported now)."""
    module_name, _, attr = target.partition(":")
    return getattr(importlib.import_module(module_name), attr)
