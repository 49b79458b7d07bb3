"""OpenAI's schema dialect, shared by Chat Completions and Responses function tools.

Non-strict, OpenAI takes almost any JSON Schema; only the root must be an object, so a root ``$ref``
is inlined. Strict (``strict: true``, constrained decoding) follows the structured-outputs rules
(``../shared/vendors/specs/constraints.json``, ``dialects.openai_strict``):

* every property required, optional ones nullable with their default moved into the description,
  ``additionalProperties: false`` everywhere (`agentkit.providers._strict.make_strict`);
* ``$ref`` with sibling keywords is not accepted: the target is inlined under the siblings;
* unsupported constraints (``not``, ``if``/``then``/``else``, ``dependentRequired``,
  ``dependentSchemas``, ``minLength``/``maxLength``, ``uniqueItems``, unsupported ``format`` values, ...)
  are moved into the description, where the model still reads them and local validation still applies;
* what strict cannot express at all is recorded as rejected: ``allOf`` with several members,
  free-form objects (``dict[str, X]``, ``patternProperties``), arrays without ``items``, tuples
  (``prefixItems``), a root that is not an object, and the documented size limits.

With ``strict=None`` a schema that strict would reject is sent non-strict (``strict: false``) and
the reasons are recorded as ordinary losses; ``strict=True`` keeps the strict schema and its rejections.
"""

from __future__ import annotations as _annotations

from ..._json_schema import JsonSchema
from .._dialect import Dialect, DialectResult, Loss, LossLog, inline_root_ref, walk_schemas
from .._strict import StrictRules, make_strict

__all__ = ["OPENAI_STRICT_RULES", "OpenAIDialect"]

SUPPORTED_FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"})
"""String formats strict mode accepts (structured-outputs guide, supported schemas)."""

OPENAI_STRICT_RULES = StrictRules(
    describe=frozenset(
        {
            "not",
            "if",
            "then",
            "else",
            "dependentRequired",
            "dependentSchemas",
            "minLength",
            "maxLength",
            "uniqueItems",
            "minProperties",
            "maxProperties",
            "contains",
            "minContains",
            "maxContains",
            "propertyNames",
            "contentEncoding",
            "contentMediaType",
        }
    ),
    # an OpenAPI annotation pydantic adds to tagged unions; the const tags still tell the members apart
    drop=frozenset({"discriminator"}),
    reject=frozenset({"allOf"}),  # make_strict has already merged a single-member allOf
    inline_ref_siblings=True,
)
"""What OpenAI strict mode accepts beyond the common strict core."""

# Documented limits (structured-outputs guide; constraints.json "limits").
_MAX_PROPERTIES = 5000
_MAX_DEPTH = 10
_MAX_ENUM_VALUES = 1000
_MAX_TEXT = 120_000


class OpenAIDialect(Dialect):
    """OpenAI function parameters, strict (structured outputs) or not. Pure; see the module docstring."""

    name = "openai"

    def rewrite(self, schema: JsonSchema, *, strict: bool | None) -> DialectResult:
        """The OpenAI schema for canonical `schema` (`strict` as in `Dialect.rewrite`)."""
        loose = inline_root_ref(schema)
        if strict is False:
            return DialectResult(schema=loose, strict=False)
        log = LossLog()
        moves = _precheck(schema, log)
        out = make_strict(schema, log, OPENAI_STRICT_RULES, moves=moves)
        rejected = [loss for loss in log.items if loss.rejected]
        if strict is None and rejected:
            # Not strict-compatible: send the canonical schema and say why strict was not used.
            notes = tuple(
                Loss(loss.path, loss.keyword, f"{loss.change}; sent non-strict (strict: false)") for loss in rejected
            )
            return DialectResult(schema=loose, strict=False, losses=notes)
        return log.result(out, True)


def _is_object(node: JsonSchema) -> bool:
    kind = node.get("type")
    return kind == "object" or (isinstance(kind, list) and "object" in kind) or "properties" in node


def _precheck(schema: JsonSchema, log: LossLog) -> dict[int, list[str]]:
    """What `make_strict` does not see: free-form objects, arrays, formats, the root, the limits.

    Reads the canonical schema (paths are canonical) without editing it; the unsupported formats it
    records are returned as moves for `make_strict` to make on its copy.
    """
    root = inline_root_ref(schema)
    if not _is_object(root) or "anyOf" in root or "oneOf" in root:
        log.add("", "type", "the root must be an object and not a union in strict mode", rejected=True)
    totals = {"properties": 0, "enum": 0, "text": 0, "depth": 0}
    moves: dict[int, list[str]] = {}

    def visit(node: JsonSchema, path: str) -> None:
        fmt = node.get("format")
        if isinstance(fmt, str) and fmt not in SUPPORTED_FORMATS:
            moves[id(node)] = ["format"]
            log.add(path, "format", "moved into the description")
        if "patternProperties" in node:
            log.add(path, "patternProperties", "free-form keys cannot be expressed in strict mode", rejected=True)
        if node.get("type") == "array" or "prefixItems" in node:
            if "prefixItems" in node:
                log.add(path, "prefixItems", "tuples cannot be expressed in strict mode", rejected=True)
            elif not isinstance(node.get("items"), dict):
                log.add(path, "items", "an array without an items schema cannot be strict", rejected=True)
        props = node.get("properties")
        if isinstance(props, dict):
            totals["properties"] += len(props)
            totals["text"] += sum(len(name) for name in props)
            totals["depth"] = max(totals["depth"], path.count("/properties/") + 1)
        enum = node.get("enum")
        if isinstance(enum, list):
            totals["enum"] += len(enum)
            totals["text"] += sum(len(v) for v in enum if isinstance(v, str))
        if isinstance(node.get("const"), str):
            totals["text"] += len(node["const"])

    walk_schemas(schema, visit)
    totals["text"] += sum(len(n) for key in ("$defs", "definitions") for n in schema.get(key, {}))
    for key, limit, what in (
        ("properties", _MAX_PROPERTIES, "object properties in total"),
        ("depth", _MAX_DEPTH, "levels of object nesting"),
        ("enum", _MAX_ENUM_VALUES, "enum values in total"),
        ("text", _MAX_TEXT, "characters of names, enum values and consts"),
    ):
        if totals[key] > limit:
            log.add("", key, f"{totals[key]} {what} exceeds strict mode's limit of {limit}", rejected=True)
    return moves
