"""The vendor-neutral `Model` contract, and `infer_model` for ``"vendor:model-name"`` strings.

``"vendor:model-name"`` strings name a model: ``openai:``, ``openai-responses:``, ``anthropic:``,
``gemini:``, ``bedrock:``, ``mistral:``, ``cohere:``, ``ollama:``, or ``test`` (`agentkit.testing.TestModel`).
The vendors' model clients live with the rest of each vendor in ``agentkit.providers.<vendor>``
(e.g. `agentkit.providers.openai.OpenAIChatModel`); which name maps to which class is one table that
`infer_model` and `agentkit.providers.get_provider` both read.
"""

from __future__ import annotations as _annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Union

from .._text import closest, shorten
from .._vendors import VENDORS, load
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
from ._limits import DEFAULT_LIMITS, RequestLimits
from ._output import OutputMode, OutputPlan, OutputRequest, ResolvedMode

__all__ = [
    "DEFAULT_LIMITS",
    "KNOWN_VENDORS",
    "Model",
    "ModelLike",
    "ModelSettings",
    "ModelStreamEvent",
    "OutputMode",
    "OutputPlan",
    "OutputRequest",
    "RequestLimits",
    "ResolvedMode",
    "ResponseDone",
    "TextDelta",
    "ToolCallArgsDelta",
    "ToolCallStart",
    "allow_model_requests",
    "check_request_allowed",
    "infer_model",
    "set_allow_model_requests",
]

KNOWN_VENDORS: Mapping[str, str] = MappingProxyType(
    {name: row.model for name, row in VENDORS.items() if row.provider is not None}
)
"""Vendor prefix -> ``"module:Class"`` of its model client: a read-only view of the vendor table."""

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
    if not isinstance(model, str):  # pyright: ignore[reportUnnecessaryIsInstance]  # untyped callers
        raise ModelSetupError(f"model must be a 'vendor:model-name' string or a Model instance, got {model!r}")
    vendor, sep, name = model.partition(":")
    row = VENDORS.get(vendor)
    if row is None:
        close = closest(vendor, list(VENDORS), n=2, cutoff=0.7)
        hint = f" Did you mean {' or '.join(repr(c + ':') for c in close)}?" if close else ""
        raise ModelSetupError(
            f"Unknown model vendor {shorten(vendor, 80)} in {shorten(model, 120)}.{hint} Known prefixes: "
            f"{', '.join(v + ':' for v in KNOWN_VENDORS)} and "
            + ", ".join(repr(v) for v, r in VENDORS.items() if not r.needs_model_name)
            + "."
        )
    if not row.needs_model_name:
        if sep:
            raise ModelSetupError(f"{model!r}: the {vendor!r} model takes no model name; write it as {vendor!r}.")
        test_model: Model = load(row.model)()
        return test_model
    if not sep or not name:
        raise ModelSetupError(f"{model!r} names no model; write it as '{vendor}:<model-name>'.")
    instance: Model = load(row.model)(name)
    return instance
