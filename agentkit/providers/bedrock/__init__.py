"""AWS Bedrock Converse / ConverseStream, in one folder.

* `_dialect.py`: the ``inputSchema.json`` dialect (strict only when forced, in Claude's strict subset);
* `_codec.py`: the wire codec (``toolConfig``, calls, results, conversations) and its stream decoder;
* `_client.py`: the model client over boto3's ``bedrock-runtime`` client (imported on first use).
"""

from __future__ import annotations as _annotations

from ._client import BedrockModel
from ._codec import BedrockProvider
from ._dialect import BedrockDialect

__all__ = ["BedrockDialect", "BedrockModel", "BedrockProvider"]
