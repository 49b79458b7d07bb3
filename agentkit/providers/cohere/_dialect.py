"""Cohere v2's schema dialect: pass-through, or the ``strict_tools`` rewrite.

Without ``strict_tools`` the canonical schema is sent as it is (Cohere publishes no subset for plain
tool use). With it (constraints.json ``cohere_strict_tools``, Cohere's "Parameter types" and
"Structured outputs" pages):

* the shared strict rewrite applies (every property required, optional ones nullable with the default
  moved into the description, ``additionalProperties: false``);
* ``minimum``/``maximum``, length, item-count and ``multipleOf`` constraints are unsupported: they are moved
  into the description (the model still reads them, nothing enforces them), as are ``uniqueItems``,
  formats other than date-time/uuid/date/time, and patterns using ``^``, ``$``, ``(?=`` or ``(?!``;
* ``oneOf`` becomes ``anyOf``; ``not`` and multi-part ``allOf`` are rejected;
* every object needs at least one required field, so an object without properties (a no-argument
  tool) cannot be strict;
* as on every strict engine, an untyped ("any value") subschema, an open object (``additionalProperties:
  true``, ``dict[str, Any]``) or a free-form map cannot be strict (a type that follows from the node, such
  as an ``enum``'s, is added).

With ``strict=None`` a schema that cannot be strict is sent as it is and the reasons are recorded.

``strict_tools`` is a request-level flag: `agentkit.providers.cohere.CohereProvider` turns it on only
when every tool sent comes out strict.
"""

from __future__ import annotations as _annotations

from ..._json_schema import JsonSchema
from ..._jsonish import is_object
from .._dialect import Dialect, DialectResult, LossLog, fallback, move_to_description, object_root, walk_schemas
from .._regex import ANCHOR, LOOKAROUND
from .._strict import StrictRules, make_strict

__all__ = ["STRICT_FORMATS", "STRICT_RULES", "CohereDialect", "count_fields"]

STRICT_FORMATS = frozenset({"date-time", "uuid", "date", "time"})
"""The string formats Cohere's strict mode accepts."""

STRICT_RULES = StrictRules(
    describe=frozenset(
        {
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "multipleOf",
            "minLength",
            "maxLength",
            "minItems",
            "maxItems",
            "minProperties",
            "maxProperties",
            "uniqueItems",
        }
    ),
    reject=frozenset({"not", "allOf"}),  # single-part allOf is merged before this check
    require_type=True,
    unsupported_patterns=frozenset({ANCHOR, LOOKAROUND}),  # "^", "$", "(?=", "(?!" (and lookbehind)
)
"""What Cohere's ``strict_tools`` does not accept, for `make_strict`."""


def count_fields(schema: JsonSchema) -> int:
    """How many properties `schema` declares in all its objects (Cohere allows 200 across a strict request)."""
    total = 0

    def visit(node: JsonSchema, _path: str) -> None:
        nonlocal total
        props = node.get("properties")
        if is_object(props):
            total += len(props)

    walk_schemas(schema, visit)
    return total


def _strict_extras(schema: JsonSchema, log: LossLog) -> None:
    def visit(node: JsonSchema, path: str) -> None:
        fmt = node.get("format")
        if isinstance(fmt, str) and fmt not in STRICT_FORMATS:
            move_to_description(node, "format", path, log)
        is_object = node.get("type") == "object" or "properties" in node
        if is_object and not node.get("required"):
            log.add(path, "required", "empty: strict_tools needs at least one required field per object", rejected=True)

    walk_schemas(schema, visit)


class CohereDialect(Dialect):
    """Pass-through when not strict; the ``strict_tools`` rewrite when strict."""

    name = "cohere"

    def rewrite(self, schema: JsonSchema, *, strict: bool | None) -> DialectResult:
        """Cohere's schema for `schema`; ``strict=None`` is strict unless the rewrite would be rejected."""
        base = object_root(schema)
        if strict is False:
            return DialectResult(schema=base, strict=False)
        log = LossLog()
        strict_schema = make_strict(base, log, STRICT_RULES, share=False)  # _strict_extras edits it
        _strict_extras(strict_schema, log)
        if count_fields(strict_schema) > 200:
            log.add("", "properties", "more than 200 fields: over strict_tools' per-request limit", rejected=True)
        if strict is None and any(loss.rejected for loss in log.items):
            return fallback(base, log, "sent without strict_tools")
        return log.result(strict_schema, True)
