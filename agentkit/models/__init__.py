"""Models: vendor APIs behind their official SDKs (imported lazily), and `infer_model`.

``"vendor:model-name"`` strings name a model: ``openai:``, ``openai-responses:``, ``anthropic:``,
``gemini:``, ``bedrock:``, ``mistral:``, ``cohere:``, ``ollama:``, or ``test`` (`agentkit.testing.TestModel`).
"""

from __future__ import annotations as _annotations

import importlib
import os
from typing import Any, Union

from .._text import closest, shorten
from ..exceptions import ModelSetupError
from ._base import (
    Model,
    ModelSettings,
    ModelStreamEvent,
    ResponseDone,
    TextDelta,
    ToolCallArgsDelta,
    ToolCallStart,
    allow_model_requests,
    check_request_allowed,
    set_allow_model_requests,
)

__all__ = [
    "KNOWN_VENDORS",
    "Model",
    "ModelLike",
    "ModelSettings",
    "ModelStreamEvent",
    "ResponseDone",
    "TextDelta",
    "ToolCallArgsDelta",
    "ToolCallStart",
    "allow_model_requests",
    "check_request_allowed",
    "infer_model",
    "missing_api_key",
    "set_allow_model_requests",
]

# vendor prefix -> "module:Class", imported on first use so no SDK loads before it is needed
KNOWN_VENDORS: dict[str, str] = {
    "openai": "agentkit.models.openai:OpenAIChatModel",
    "openai-responses": "agentkit.models.openai:OpenAIResponsesModel",
    "anthropic": "agentkit.models.anthropic:AnthropicModel",
    "gemini": "agentkit.models.gemini:GeminiModel",
    "bedrock": "agentkit.models.bedrock:BedrockModel",
    "mistral": "agentkit.models.mistral:MistralModel",
    "cohere": "agentkit.models.cohere:CohereModel",
    "ollama": "agentkit.models.ollama:OllamaModel",
}

ModelLike = Union[str, Model]
"""A ``"vendor:model-name"`` string or a `Model` instance."""


def infer_model(model: ModelLike) -> Model:
    """The `Model` for ``"vendor:model-name"`` (an instance is returned as it is).

    Raises:
        ModelSetupError: an unknown vendor prefix (with a "did you mean"), a missing model name, or a
            missing API key (naming the environment variable and pointing to the test model).
    """
    if isinstance(model, Model):
        return model
    if not isinstance(model, str):
        raise ModelSetupError(f"model must be a 'vendor:model-name' string or a Model instance, got {model!r}")
    if model == "test":
        testing = importlib.import_module("agentkit.testing")  # written alongside the agent loop
        test_model: Model = testing.TestModel()
        return test_model
    vendor, sep, name = model.partition(":")
    target = KNOWN_VENDORS.get(vendor)
    if target is None:
        close = closest(vendor, [*KNOWN_VENDORS, "test"], n=2, cutoff=0.7)
        hint = f" Did you mean {' or '.join(repr(c + ':') for c in close)}?" if close else ""
        raise ModelSetupError(
            f"Unknown model vendor {shorten(vendor, 80)} in {shorten(model, 120)}.{hint} Known prefixes: "
            f"{', '.join(v + ':' for v in KNOWN_VENDORS)} and 'test'."
        )
    if not sep or not name:
        raise ModelSetupError(f"{model!r} names no model; write it as '{vendor}:<model-name>'.")
    module_name, class_name = target.split(":")
    cls: Any = getattr(importlib.import_module(module_name), class_name)
    instance: Model = cls(name)
    return instance


def missing_api_key(vendor: str, env_var: str) -> ModelSetupError:
    """The error for a vendor model created without a key: names the variable and the offline option."""
    return ModelSetupError(
        f"No API key for {vendor}: set the {env_var} environment variable, or pass a configured SDK client "
        f"(client=...). To run without any key, use model='test' (agentkit.testing.TestModel) or a "
        "FunctionModel."
    )


def api_key_from_env(vendor: str, env_var: str) -> str:
    """The API key in `env_var`, or the `missing_api_key` error."""
    key = os.environ.get(env_var)
    if not key:
        raise missing_api_key(vendor, env_var)
    return key
