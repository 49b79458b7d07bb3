"""Mistral chat completions, in one folder.

* `_dialect.py`: the schema dialect (pass-through, or the shared strict rewrite);
* `_codec.py`: the wire codec (tools, calls, nine-character call ids, results, conversations) and its
  stream decoder;
* `_client.py`: the model client over the official ``mistralai`` SDK (imported on first use).
"""

from __future__ import annotations as _annotations

from ._client import MistralModel
from ._codec import MistralProvider
from ._dialect import MistralDialect

__all__ = ["MistralDialect", "MistralModel", "MistralProvider"]
