"""Google Gemini ``generateContent``, in one folder.

* `_dialect.py`: the two schema dialects (``parametersJsonSchema`` and the OpenAPI-subset ``parameters``);
* `_codec.py`: the wire codec (declarations, function-calling config, calls, results, conversations) and
  its stream decoder;
* `_client.py`: the model client over the official google-genai SDK (imported on first use).
"""

from __future__ import annotations as _annotations

from ._client import GeminiModel
from ._codec import GeminiProvider, SchemaFormat
from ._dialect import GeminiJsonSchemaDialect, GeminiOpenAPIDialect

__all__ = ["GeminiJsonSchemaDialect", "GeminiModel", "GeminiOpenAPIDialect", "GeminiProvider", "SchemaFormat"]
