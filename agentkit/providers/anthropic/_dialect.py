"""Anthropic's schema dialect: plain pass-through, or the subset that ``strict: true`` accepts.

Non-strict: the canonical schema goes out as it is; only the root is given ``type: "object"`` when it
lacks one (the SDK's ``InputSchemaTyped`` requires it). Nothing is lost.

Strict (``strict: true`` on the tool; rules in ``shared/vendors/specs/constraints.json`` under
``anthropic_strict`` and platform.claude.com "JSON Schema limitations"):

* the shared strict core (`agentkit.providers._strict.make_strict`): every property required, optional
  ones nullable with their default moved into the description, ``additionalProperties: false`` on
  every object (Anthropic requires it), ``oneOf`` turned into ``anyOf``;
* keywords strict does not support (numeric bounds, string lengths, array constraints beyond
  ``minItems`` 0/1, unsupported ``format`` values, regexes with backreferences, lookaround or word
  boundaries, ...) move into the description, as Anthropic's own SDK normaliser (``transform_schema``) does;
* ``allOf`` next to ``$ref`` is not accepted: the (non-recursive) definitions are inlined, losslessly.

Some schemas have no strict form: recursive ones, external ``$ref`` targets, enums of objects, free-form
objects (``dict[str, X]``, ``patternProperties``, an object without properties), tuples, untyped
("any value") subschemas, a root that is not an object. With ``strict=None`` those are sent non-strict
and the reasons recorded as ordinary losses; ``strict=True`` keeps the strict schema and records them as
rejected. The per-request budgets (20 strict tools, 24 optional and 16 union-typed parameters) span
several tools, so the provider applies them (`strict_budget_counts` counts one schema).
"""

from __future__ import annotations as _annotations

from dataclasses import dataclass

from ..._json_schema import JsonSchema
from ..._jsonish import is_array, is_object
from .._dialect import (
    Dialect,
    DialectResult,
    Loss,
    LossLog,
    is_recursive,
    try_inline_refs,
    walk_schemas,
)
from .._regex import ATOMIC, BACKREFERENCE, INLINE_FLAGS, LOOKAROUND, WORD_BOUNDARY
from .._strict import StrictRules, is_annotation_only, make_strict

__all__ = [
    "ANTHROPIC_STRICT_FORMATS",
    "ANTHROPIC_STRICT_RULES",
    "AnthropicDialect",
    "StrictCounts",
    "anthropic_strict",
    "ensure_object_root",
    "strict_budget_counts",
]

ANTHROPIC_STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)
"""String formats strict mode accepts; any other ``format`` moves into the description."""

ANTHROPIC_STRICT_RULES = StrictRules(
    describe=frozenset(
        {
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "multipleOf",
            "minLength",
            "maxLength",
            "maxItems",
            "uniqueItems",
            "contains",
            "minContains",
            "maxContains",
            "minProperties",
            "maxProperties",
            "propertyNames",
            "dependentRequired",
            "dependentSchemas",
            "not",
            "if",
            "then",
            "else",
            "contentEncoding",
            "contentMediaType",
        }
    ),
    # an OpenAPI annotation pydantic adds to tagged unions; the const tags still tell the members apart
    drop=frozenset({"discriminator"}),
    allow_recursion=False,
    # {"type": "string", "anyOf": [{"format": "ipv4"}, ...]}: the SDK's transform_schema refuses untyped members
    type_members=True,
    # "regex with backreferences, lookahead/lookbehind or word boundaries" (JSON Schema limitations)
    unsupported_patterns=frozenset({BACKREFERENCE, LOOKAROUND, WORD_BOUNDARY, INLINE_FLAGS, ATOMIC}),
)
"""What Anthropic strict mode accepts beyond the common strict core."""

_TYPED = ("type", "anyOf", "oneOf", "allOf", "enum", "const", "$ref", "properties", "items")
_COMBINATORS = ("anyOf", "oneOf", "allOf")


def ensure_object_root(schema: JsonSchema, log: LossLog) -> JsonSchema:
    """`schema` with ``type: "object"`` at the root (a new dict when one was added).

    A root that declares another type is recorded as rejected: tool inputs are always objects.
    """
    kind = schema.get("type")
    if kind == "object":
        return schema
    if kind is None:
        return {"type": "object", **schema}
    log.add("", "type", f"{kind!r} at the root: tool input must be an object", rejected=True)
    return schema


def _is_object(node: JsonSchema) -> bool:
    kind = node.get("type")
    return kind == "object" or (is_array(kind) and "object" in kind) or "properties" in node


def _members_made_typed(node: JsonSchema) -> list[int]:
    """Ids of `node`'s combinator members that make_strict types (a typed parent's) or merges (annotations only)."""
    found: list[int] = []
    for combinator in _COMBINATORS:
        members = node.get(combinator)
        if is_array(members):
            if "type" in node:
                found.extend(id(m) for m in members if is_object(m))
            elif combinator == "allOf" and len(members) > 1:
                found.extend(id(m) for m in members if is_annotation_only(m))
    return found


def _precheck(
    node: JsonSchema, path: str, log: LossLog, moves: dict[int, list[str]], typed_by_parent: set[int]
) -> None:
    """What `make_strict` does not see; unsupported string/array keywords are to move into the description.

    `typed_by_parent` collects the untyped members of a typed parent's combinator (make_strict gives them
    the parent's type: `StrictRules.type_members`); parents are visited before their members.
    """
    typed_by_parent.update(_members_made_typed(node))
    ref = node.get("$ref")
    if isinstance(ref, str) and not ref.startswith("#"):
        log.add(path, "$ref", f"external reference {ref!r} is not supported in strict mode", rejected=True)
    enum = node.get("enum")
    if is_array(enum) and any(isinstance(v, (dict, list)) for v in enum):
        log.add(path, "enum", "values that are objects or arrays are not supported in strict mode", rejected=True)
    if "patternProperties" in node:
        log.add(path, "patternProperties", "free-form keys cannot be expressed in strict mode", rejected=True)
    elif _is_object(node):
        extra = node.get("additionalProperties")
        # an empty root means "no arguments", not "any keys" (MCP tools send {"properties": {}})
        if not node.get("properties") and extra is not False and (path or extra is not None):
            log.add(
                path, "additionalProperties", "a free-form object cannot be expressed in strict mode", rejected=True
            )
        # (an open object with properties is recorded by make_strict, which never closes one silently)
    elif not any(key in node for key in _TYPED) and id(node) not in typed_by_parent:
        # Anthropic's own normaliser refuses these (an anyOf member too): a grammar needs to know what it makes.
        log.add(path, "type", "an untyped (any value) schema cannot be expressed in strict mode", rejected=True)
    if "prefixItems" in node:
        log.add(path, "prefixItems", "tuples cannot be expressed in strict mode", rejected=True)
    moved: list[str] = []
    if node.get("minItems") not in (None, 0, 1):
        moved.append("minItems")
    fmt = node.get("format")
    if isinstance(fmt, str) and fmt not in ANTHROPIC_STRICT_FORMATS:
        moved.append("format")
    for keyword in moved:
        log.add(path, keyword, "moved into the description")
    if moved:
        moves[id(node)] = moved  # made by make_strict on its copy: the input is only read here


def _allof_with_ref(schema: JsonSchema) -> bool:
    found: list[str] = []

    def visit(node: JsonSchema, path: str) -> None:
        parts = node.get("allOf")
        if is_array(parts) and any(is_object(p) and "$ref" in p for p in parts):
            found.append(path)

    walk_schemas(schema, visit)
    return bool(found)


def anthropic_strict(schema: JsonSchema, log: LossLog) -> JsonSchema:
    """`schema` rewritten into Anthropic's strict subset (input untouched); losses go to `log`.

    Losses recorded as rejected mean strict mode would refuse the schema.
    """
    work = schema
    if _allof_with_ref(work) and not is_recursive(work):  # (recursion is rejected by make_strict)
        inlined = try_inline_refs(work)  # strict refuses allOf next to $ref; inlining loses nothing
        if inlined is None:
            why = "next to $ref cannot be strict, and inlining the references would multiply the schema"
            log.add("", "allOf", why, rejected=True)
        else:
            work = inlined
    work = ensure_object_root(work, log)
    moves: dict[int, list[str]] = {}
    typed_by_parent: set[int] = set()
    walk_schemas(work, lambda node, path: _precheck(node, path, log, moves, typed_by_parent))
    out = make_strict(work, log, ANTHROPIC_STRICT_RULES, moves=moves)
    _dedupe(log)
    return out


def _dedupe(log: LossLog) -> None:
    # the precheck and make_strict may both record the same object problem
    seen: set[tuple[str, str, bool]] = set()
    unique: list[Loss] = []
    for loss in log.items:
        key = (loss.path, loss.keyword, loss.rejected)
        if key not in seen:
            seen.add(key)
            unique.append(loss)
    log.items[:] = unique


class AnthropicDialect(Dialect):
    """Anthropic Messages ``input_schema``: pass-through, or the strict subset (see the module docs)."""

    name = "anthropic"

    def rewrite(self, schema: JsonSchema, *, strict: bool | None) -> DialectResult:
        """The ``input_schema`` for `schema`; strict when forced (True) or possible (None)."""
        if strict is False:
            return plain_result(schema)
        log = LossLog()
        out = anthropic_strict(schema, log)
        rejected = [loss for loss in log.items if loss.rejected]
        if strict is None and rejected:
            return plain_result(schema, because=rejected)
        return log.result(out, True)


def plain_result(schema: JsonSchema, *, because: list[Loss] | None = None) -> DialectResult:
    """The non-strict pass-through; `because` lists why strict was not used (kept as plain notes)."""
    log = LossLog()
    for loss in because or ():
        log.add(loss.path, loss.keyword, f"{loss.change}; sent without strict")
    return log.result(ensure_object_root(schema, log), False)


@dataclass(frozen=True)
class StrictCounts:
    """What one strict schema uses of Anthropic's per-request budget."""

    optional: int
    """Optional properties (not in their object's ``required``), across the whole schema."""
    unions: int
    """Union-typed subschemas (``anyOf`` or a list of types)."""


def strict_budget_counts(schema: JsonSchema) -> StrictCounts:
    """Count `schema`'s optional and union-typed parameters as the per-request limits do.

    Counted statically over every subschema, ``$defs`` included, once each: the same approximation
    as ``shared/vendors/tools/lint_schema.py`` (the API's own way of counting is not published).
    """
    optional = unions = 0

    def visit(node: JsonSchema, path: str) -> None:
        nonlocal optional, unions
        props = node.get("properties")
        if is_object(props):
            optional += len(set(props) - set(node.get("required", ())))
        if "anyOf" in node or is_array(node.get("type")):
            unions += 1

    walk_schemas(schema, visit)
    return StrictCounts(optional=optional, unions=unions)
