"""Mistral's schema dialect: the canonical schema as it is, or the shared strict rewrite.

Mistral validates ``function.parameters`` as a JSON Schema (Draft 7, mistral-common) and publishes no
keyword subset, so non-strict schemas pass through unchanged. ``function.strict`` turns on
constrained decoding; Mistral documents no rules for it, so the shared strict rewrite
(`agentkit.providers._strict.make_strict`: every property required, optional ones nullable,
``additionalProperties: false``) is used with the structural rules every grammar engine needs: every
subschema typed (an untyped "any value" node, an open object or a free-form map cannot be strict), and
patterns a grammar cannot enforce (lookaround, backreferences, ...) moved into the description.
With ``strict=None`` a schema strict cannot express is sent non-strict, the reasons recorded.
"""

from __future__ import annotations as _annotations

from ..._json_schema import JsonSchema
from .._dialect import Dialect, DialectResult, LossLog, fallback, object_root
from .._regex import GRAMMAR_UNSUPPORTED
from .._strict import StrictRules, make_strict

__all__ = ["MistralDialect"]

_RULES = StrictRules(require_type=True, unsupported_patterns=GRAMMAR_UNSUPPORTED)


class MistralDialect(Dialect):
    """Pass-through when not strict; `make_strict` (default rules) when strict."""

    name = "mistral"

    def rewrite(self, schema: JsonSchema, *, strict: bool | None) -> DialectResult:
        """Mistral's schema for `schema`; ``strict=None`` is strict unless the rewrite would be rejected."""
        base = object_root(schema)
        if strict is False:
            return DialectResult(schema=base, strict=False)
        log = LossLog()
        strict_schema = make_strict(base, log, _RULES)
        if strict is None and any(loss.rejected for loss in log.items):
            return fallback(base, log)
        return log.result(strict_schema, True)
