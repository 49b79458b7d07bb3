"""Ollama native chat (``/api/chat``), in one folder.

* `_dialect.py`: what survives Ollama's Go structs, the rest folded into descriptions;
* `_codec.py`: the wire codec (tools, calls, results, conversations) and its stream decoder;
* `_client.py`: the model client over the official ollama-python SDK (imported on first use).
"""

from __future__ import annotations as _annotations

from ._client import DEFAULT_HOST, OllamaModel
from ._codec import OllamaProvider
from ._dialect import OllamaDialect

__all__ = ["DEFAULT_HOST", "OllamaDialect", "OllamaModel", "OllamaProvider"]
