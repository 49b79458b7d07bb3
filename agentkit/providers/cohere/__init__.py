"""Cohere v2 chat, in one folder.

* `_dialect.py`: the schema dialect (pass-through, or the ``strict_tools`` rewrite);
* `_codec.py`: the wire codec (tools, the request-wide ``strict_tools``, calls with their ``tool_plan``,
  results as documents, conversations) and its stream decoder;
* `_client.py`: the model client over the official ``cohere`` SDK (imported on first use).
"""

from __future__ import annotations as _annotations

from ._client import CohereModel
from ._codec import CohereProvider
from ._dialect import CohereDialect

__all__ = ["CohereDialect", "CohereModel", "CohereProvider"]
