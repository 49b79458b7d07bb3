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

from typing import TYPE_CHECKING, Any

from ..._json_schema import JsonSchema
from ..._jsonish import is_array, is_object
from .._dialect import (
    Dialect,
    DialectResult,
    Loss,
    LossLog,
    _children_of,  # pyright: ignore[reportPrivateUsage]  # the dialect base's own schema walk
    inline_root_ref,
    walk_schemas,
)
from .._regex import GRAMMAR_UNSUPPORTED
from .._strict import StrictRules, make_strict

if TYPE_CHECKING:
    from ...definitions import ToolDefinition

__all__ = ["OPENAI_STRICT_RULES", "OpenAIDialect", "check_limits", "nesting_depth"]

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
    require_type=True,  # 400 "schema must have a 'type' key" otherwise
    unsupported_patterns=GRAMMAR_UNSUPPORTED,  # 400 "regex lookaround is not supported"
)
"""What OpenAI strict mode accepts beyond the common strict core."""

# Documented limits (structured-outputs guide, "Objects have limitations for nesting depth and size";
# constraints.json "limits").
MAX_PROPERTIES = 5000
"""Object properties in total."""
MAX_DEPTH = 10
"""Levels of object nesting, counted through ``$ref``."""
MAX_ENUM_VALUES = 1000
"""Enum values across all enums."""
MAX_TEXT = 120_000
"""Characters of all property names, definition names, enum values and const values."""
MAX_LARGE_ENUM_TEXT = 15_000
"""Characters of one string enum's values once it has more than `LARGE_ENUM` values."""
LARGE_ENUM = 250


class OpenAIDialect(Dialect):
    """OpenAI function parameters, strict (structured outputs) or not. Pure; see the module docstring."""

    name = "openai"

    def result(self, definition: ToolDefinition, strict: bool | None) -> DialectResult:
        """`rewrite`, cached per definition where it does work: a non-strict schema is the canonical one."""
        if strict is False:  # made cheaper than a cache is looked up and filled (a first strict=False payload)
            return DialectResult(schema=inline_root_ref(definition.input_schema), strict=False)
        return super().result(definition, strict)

    def rewrite(self, schema: JsonSchema, *, strict: bool | None) -> DialectResult:
        """The OpenAI schema for canonical `schema` (`strict` as in `Dialect.rewrite`)."""
        loose = inline_root_ref(schema)
        if strict is False:
            return DialectResult(schema=loose, strict=False)
        log = LossLog()
        moves = _precheck(schema, log)
        out = make_strict(schema, log, OPENAI_STRICT_RULES, moves=moves)
        check_limits(out, log)
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
    return kind == "object" or (is_array(kind) and "object" in kind) or "properties" in node


def _precheck(schema: JsonSchema, log: LossLog) -> dict[int, list[str]]:
    """What `make_strict` does not see: free-form keys, arrays, formats, the root.

    Reads the canonical schema (paths are canonical) without editing it; the unsupported formats it
    records are returned as moves for `make_strict` to make on its copy.
    """
    root = inline_root_ref(schema)
    if not _is_object(root) or "anyOf" in root or "oneOf" in root:
        log.add("", "type", "the root must be an object and not a union in strict mode", rejected=True)
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
            elif not is_object(node.get("items")):
                log.add(path, "items", "an array without an items schema cannot be strict", rejected=True)

    walk_schemas(schema, visit)
    return moves


def check_limits(schema: JsonSchema, log: LossLog) -> None:
    """Record as rejected what exceeds the documented size limits, measured on the schema that is sent.

    Nesting depth follows ``$ref`` into its definition (a recursive reference is counted once); totals
    count each subschema as written, definitions once. One pass without paths (this runs on every strict
    rewrite, so on a registry's first payload); paths are looked for only when a large enum is over.
    """
    properties = enums = text = depth = 0
    large = False
    stack: list[tuple[JsonSchema, int]] = [(schema, 0)]
    while stack:
        node, level = stack.pop()
        for key in _children_of(node):
            sub = node[key]
            if key == "properties" and is_object(sub):
                properties += len(sub)
                text += sum(map(len, sub))
                depth = max(depth, level + 1)
                stack.extend((child, level + 1) for child in sub.values() if is_object(child))
            elif is_object(sub):
                if key in _MAP_KEYWORDS:
                    stack.extend((child, level) for child in sub.values() if is_object(child))
                else:
                    stack.append((sub, level))
            elif is_array(sub):
                stack.extend((child, level) for child in sub if is_object(child))
        enum = node.get("enum")
        if is_array(enum):
            enums += len(enum)
            chars = sum(len(v) for v in enum if isinstance(v, str))
            text += chars
            large = large or (len(enum) > LARGE_ENUM and chars > MAX_LARGE_ENUM_TEXT)
        const = node.get("const")
        if isinstance(const, str):
            text += len(const)
    if large:
        walk_schemas(schema, lambda node, path: _check_large_enum(node, path, log))
    defs = [key for key in ("$defs", "definitions") if is_object(schema.get(key))]
    text += sum(len(name) for key in defs for name in schema[key])
    if defs:
        depth = nesting_depth(schema)  # through $ref (without definitions, the paths are the nesting)
    for keyword, value, limit, what in (
        ("properties", properties, MAX_PROPERTIES, "object properties in total"),
        ("depth", depth, MAX_DEPTH, "levels of object nesting (through $ref)"),
        ("enum", enums, MAX_ENUM_VALUES, "enum values in total"),
        ("text", text, MAX_TEXT, "characters of names, enum values and consts"),
    ):
        if value > limit:
            log.add("", keyword, f"{value} {what} exceeds strict mode's limit of {limit}", rejected=True)


_MAP_KEYWORDS = frozenset({"$defs", "definitions", "patternProperties"})


def _check_large_enum(node: JsonSchema, path: str, log: LossLog) -> None:
    enum = node.get("enum")
    if not is_array(enum) or len(enum) <= LARGE_ENUM:
        return
    chars = sum(len(v) for v in enum if isinstance(v, str))
    if chars > MAX_LARGE_ENUM_TEXT:
        log.add(
            path,
            "enum",
            f"{len(enum)} values of {chars} characters exceed strict mode's limit of {MAX_LARGE_ENUM_TEXT} "
            f"characters for an enum of more than {LARGE_ENUM} values",
            rejected=True,
        )


def nesting_depth(schema: JsonSchema) -> int:
    """The most ``properties`` levels on any path from the root, following local ``$ref``s.

    A leaf property of the root object is at depth 1. Each definition is measured once (memoised), and a
    reference back into a definition being measured adds nothing, so recursion is finite and the cost
    linear in the schema's size.
    """
    defs = {**schema.get("definitions", {}), **schema.get("$defs", {})}
    memo: dict[str, int] = {}
    active: set[str] = set()

    def below(node: Any, top: bool = False) -> int:
        if not is_object(node):
            return 0
        best = 0
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(("#/$defs/", "#/definitions/")):
            name = ref.rsplit("/", 1)[-1]
            if name in memo:
                best = memo[name]
            elif name not in active and is_object(defs.get(name)):
                active.add(name)
                best = memo[name] = below(defs[name])
                active.discard(name)
        for key in _children_of(node):
            if top and key in ("$defs", "definitions"):
                continue  # reached through the references that use them
            sub = node[key]
            if key == "properties" and is_object(sub):
                best = max(best, *(1 + below(child) for child in sub.values()), 0)
            elif is_object(sub) and key in ("$defs", "definitions", "patternProperties"):
                best = max(best, *(below(child) for child in sub.values()), 0)
            elif is_array(sub):
                best = max(best, *(below(child) for child in sub), 0)
            else:
                best = max(best, below(sub))
        return best

    return below(schema, top=True)
