"""AWS Bedrock Converse's schema dialect (``toolSpec.inputSchema.json``).

Converse takes the tool's JSON Schema as a JSON document whose root must be ``type: "object"``
(service-2.json ``ToolInputSchema``); it publishes no subset, and what a model makes of the schema
depends on the model. Non-strict, the canonical schema is sent as it is (root type added if missing).

``toolSpec.strict: true`` (constrained decoding) is only available on some models (Claude 4.5+ and a
list of open-weight models, docs.aws.amazon.com/bedrock/latest/userguide/structured-output.html), and
the payload does not know which model it is for. So:

* ``strict=None`` means **non-strict**: a strict flag sent to a model without structured outputs
  would fail the request, and that cannot be ruled out here;
* ``strict=True`` produces the portable strict form: the shared core (every property required,
  optional ones nullable, ``additionalProperties: false``) plus Anthropic's strict subset, which is
  what Claude models on Bedrock enforce (`agentkit.providers.anthropic._dialect.anthropic_strict`). What that
  subset cannot express is recorded, as rejected where Claude's strict mode would refuse it.
"""

from __future__ import annotations as _annotations

from ..._json_schema import JsonSchema
from .._dialect import Dialect, DialectResult, LossLog
from ..anthropic._dialect import anthropic_strict, plain_result

__all__ = ["BedrockDialect"]


class BedrockDialect(Dialect):
    """Bedrock Converse ``inputSchema.json``: pass-through, strict only when forced (see the module docs)."""

    name = "bedrock"

    def rewrite(self, schema: JsonSchema, *, strict: bool | None) -> DialectResult:
        """The ``inputSchema.json`` document for `schema`; strict only for ``strict=True``."""
        if strict is not True:
            return plain_result(schema)
        log = LossLog()
        out = anthropic_strict(schema, log)
        return log.result(out, True)
