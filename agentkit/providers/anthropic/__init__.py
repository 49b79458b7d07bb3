"""Anthropic Messages, in one folder.

* `_dialect.py`: the ``input_schema`` dialect, plain or strict (with the per-schema strict budget counts);
* `_codec.py`: the wire codec (tools, the per-request strict budget, calls, results, conversations) and
  its stream decoder;
* `_client.py`: the model client over the official ``anthropic`` SDK (imported on first use).
"""

from __future__ import annotations as _annotations

from ._client import DEFAULT_MAX_TOKENS, AnthropicModel
from ._codec import STRICT_LIMITS, AnthropicProvider, BudgetFallback, StrictBudget
from ._dialect import AnthropicDialect

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "STRICT_LIMITS",
    "AnthropicDialect",
    "AnthropicModel",
    "AnthropicProvider",
    "BudgetFallback",
    "StrictBudget",
]
