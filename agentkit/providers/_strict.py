"""The strict-mode rewrite that OpenAI, Anthropic, Mistral, Cohere and Bedrock strict modes share.

Strict (constrained-decoding) modes want every property listed in ``required`` and
``additionalProperties: false`` on every object. Making an optional parameter required would change
its meaning, so each optional property is made *nullable* instead and its default is moved into the
description; when the model sends ``null`` back, `agentkit.providers._nulls.restore_defaults` drops it
so the Python default applies again.

Vendors differ in which other keywords strict mode accepts; `StrictRules` says, per vendor, what to
move into the description, what to drop, and what makes the vendor reject the schema.
"""

from __future__ import annotations as _annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._json_schema import JsonSchema
from .._jsonish import is_array, is_object
from ._dialect import (
    _CHILDREN,  # pyright: ignore[reportPrivateUsage]  # the dialect base's own schema walk
    _LIST_KEYS,  # pyright: ignore[reportPrivateUsage]  # the dialect base's own schema walk
    _MAP_KEYS,  # pyright: ignore[reportPrivateUsage]  # the dialect base's own schema walk
    LossLog,
    _children_of,  # pyright: ignore[reportPrivateUsage]  # the dialect base's own schema walk
    _escape,  # pyright: ignore[reportPrivateUsage]  # the dialect base's own schema walk
    describe,
    drop_keyword,
    inline_root_ref,
    is_recursive,
    move_to_description,
)
from ._regex import unsupported_features

__all__ = ["Moves", "StrictRules", "inline_ref_siblings", "is_annotation_only", "make_nullable", "make_strict"]


@dataclass(frozen=True)
class StrictRules:
    """What one vendor's strict mode accepts beyond the common core."""

    describe: frozenset[str] = frozenset()
    """Keywords moved into the description (the model still reads them; the grammar does not enforce them)."""
    drop: frozenset[str] = frozenset()
    """Keywords removed (recorded as lost)."""
    reject: frozenset[str] = frozenset()
    """Keywords that make the vendor reject a strict schema."""
    one_of_to_any_of: bool = True
    """Rewrite ``oneOf`` as ``anyOf`` (exclusivity is lost, recorded)."""
    allow_recursion: bool = True
    """Whether recursive ``$defs`` are accepted."""
    keep_default: bool = False
    """Whether ``default`` may stay in the schema (else it is moved into the description)."""
    inline_ref_siblings: bool = False
    """Whether a ``$ref`` beside other keywords is rewritten so that no ``$ref`` has siblings (OpenAI refuses
    them): see `inline_ref_siblings`."""
    require_type: bool = False
    """Whether every subschema must say what it is (``type``, ``anyOf`` or ``$ref``), as OpenAI's strict mode
    demands ("schema must have a 'type' key"). A type that follows from the node is added (``enum``/``const``
    values, ``properties`` -> object, ``items`` -> array, a typed parent of ``anyOf`` members); an untyped
    ("any value") subschema cannot be strict and is recorded as rejected."""
    type_members: bool = False
    """Give the untyped members of a typed parent's ``anyOf``/``allOf`` its type (the same meaning), as
    `require_type` does, without requiring a type anywhere else: Anthropic's SDK normaliser refuses a member
    that does not say what it is."""
    unsupported_patterns: frozenset[str] = frozenset()
    """`agentkit.providers._regex` features the strict engine cannot take: such a ``pattern`` moves into
    the description."""

    special: frozenset[str] = field(init=False, repr=False, compare=False)
    """Every keyword the three sets above name (computed once: most subschemas hold none of them)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "special", self.describe | self.drop | self.reject)


_TYPED = ("type", "anyOf", "$ref")
_ANNOTATIONS = ("description", "title", "examples", "deprecated", "readOnly", "writeOnly", "$comment")


def is_annotation_only(node: Any) -> bool:
    """Whether `node` is a subschema of annotations only (a description, a title): it accepts any value."""
    return is_object(node) and bool(node) and all(key in _ANNOTATIONS for key in node)


def _type_members(node: JsonSchema) -> None:
    """Members of a typed parent's ``anyOf``/``allOf`` that only add constraints take its type: same meaning."""
    kind = node.get("type")
    if kind is None:
        return
    for combinator in ("anyOf", "allOf"):
        members = node.get(combinator)
        if is_array(members):
            node[combinator] = [
                {**m, "type": kind} if is_object(m) and not any(k in m for k in _TYPED) else m for m in members
            ]


def _json_type(value: Any) -> str | None:
    """The JSON type of an ``enum``/``const`` value (None for objects and arrays, which need more than a type)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return None


def _value_types(values: list[Any]) -> str | list[str] | None:
    """``type`` for a node holding only these enum values (None when one is an object or an array)."""
    kinds = list(dict.fromkeys(_json_type(v) for v in values))
    if not kinds or None in kinds:
        return None
    if "integer" in kinds and "number" in kinds:
        kinds.remove("integer")  # a JSON number covers both
    names = [k for k in kinds if k is not None]
    return names[0] if len(names) == 1 else names


def _accepts_null(node: JsonSchema) -> bool:
    kind = node.get("type")
    if kind == "null" or (is_array(kind) and "null" in kind):
        return True
    if not node or (set(node) <= {"description", "default", "examples"}):
        return True  # an "any" schema
    return any(is_object(s) and _accepts_null(s) for s in node.get("anyOf", ()))


def make_nullable(node: JsonSchema) -> JsonSchema:
    """`node` (a property schema) also accepting ``null``, in the form strict vendors understand."""
    if _accepts_null(node):
        return node
    if "anyOf" in node:
        return {**node, "anyOf": [*node["anyOf"], {"type": "null"}]}
    kind = node.get("type")
    if isinstance(kind, str) and "$ref" not in node:
        out = {**node, "type": [kind, "null"]}
        if "enum" in out and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
        return out
    if is_array(kind):
        return {**node, "type": [*kind, "null"]}
    # $ref, const, enum without type, allOf...: wrap, keeping the annotations on the outside (so that
    # a wrapped $ref has no siblings left)
    annotations = {k: node[k] for k in _ANNOTATIONS if k in node}
    inner = {k: v for k, v in node.items() if k not in annotations}
    return {"anyOf": [inner, {"type": "null"}], **annotations}


def make_strict(
    schema: JsonSchema,
    log: LossLog,
    rules: StrictRules | None = None,
    *,
    moves: Moves | None = None,
    share: bool = True,
) -> JsonSchema:
    """A strict-mode copy of `schema`; what strict cannot express is recorded in `log`.

    One walk that builds new dicts as it goes (the input is never edited, and nothing is deep-copied):
    each subschema is copied, rewritten, then its children are rewritten in turn, parents before
    children as `walk_schemas` visits them. Values that are not subschemas (``enum``, ``default``,
    ``required`` ...) are shared with the input, as read-only data. `moves` names keywords a vendor's
    precheck already recorded as moved into the description, by the identity of the input subschema
    they belong to; they are moved on the way, before anything else is done to that subschema.
    With `share`, subschemas the rewrite leaves as they are (most leaves) are shared with the input
    rather than copied, so a vendor keeps one copy of what it did not change; a caller that edits the
    result in place passes ``share=False``.

    Losses recorded as ``rejected`` mean the vendor would refuse the schema in strict mode: a caller
    with ``strict=None`` then falls back to the non-strict schema.
    """
    rules = rules or StrictRules()
    root = inline_root_ref(schema)
    if not rules.allow_recursion and is_recursive(root):
        log.add("", "$ref", "recursive schema not supported in strict mode", rejected=True)
    builder = _Builder(log, rules, moves or {}, share)
    out: JsonSchema = builder.build(root, "")
    if builder.ref_siblings or (rules.inline_ref_siblings and ("$defs" in out or "definitions" in out)):
        out = inline_ref_siblings(out, log, alone=rules.inline_ref_siblings)
    return out


Moves = Mapping[int, Sequence[str]]
"""Input subschema identity -> keywords to move into its description (already recorded as losses)."""


class _Builder:
    __slots__ = ("fresh", "log", "moves", "ref_siblings", "rules", "share", "special")

    def __init__(self, log: LossLog, rules: StrictRules, moves: Moves, share: bool) -> None:
        self.log = log
        self.rules = rules
        self.moves = moves
        self.share = share
        self.fresh: set[int] = set()  # copies strict_object already made (no need to copy them again)
        self.special = rules.special
        self.ref_siblings = False

    def prepared(self, node: JsonSchema) -> JsonSchema:
        """`node` itself, or a copy with the precheck's moves applied."""
        keywords = self.moves.get(id(node)) if self.moves else None
        if not keywords:
            return node
        node = dict(node)
        for keyword in keywords:
            if keyword in node:
                describe(node, keyword)
        return node

    def build(self, original: Any, path: str) -> Any:
        if not is_object(original):
            return original
        node = self.prepared(original)
        if node is original and id(node) not in self.fresh:
            if self.share and self.untouched(node):
                if "$ref" in node and len(node) > 1:
                    self.ref_siblings = True
                return node
            node = dict(node)
        self.visit(node, path)
        if "$ref" in node and len(node) > 1:
            self.ref_siblings = True
        for key in _children_of(node):
            sub = node[key]
            if key in _MAP_KEYS:
                if is_object(sub):
                    node[key] = {
                        name: self.build(child, f"{path}/{key}/{_escape(name)}") for name, child in sub.items()
                    }
            elif key in _LIST_KEYS:
                if is_array(sub):
                    node[key] = [self.build(child, f"{path}/{key}/{i}") for i, child in enumerate(sub)]
            elif is_object(sub):
                node[key] = self.build(sub, f"{path}/{key}")
        return node

    def untouched(self, node: JsonSchema) -> bool:
        """Whether `visit` would leave `node` as it is: a leaf with nothing strict mode rewrites."""
        if not _CHILDREN.isdisjoint(node) or not self.special.isdisjoint(node) or "unevaluatedItems" in node:
            return False
        kind = node.get("type")
        if kind is None and self.rules.require_type and "$ref" not in node:
            return False
        if self.rules.unsupported_patterns and "pattern" in node:
            return False
        return not (kind == "object" or (is_array(kind) and "object" in kind))

    def visit(self, node: JsonSchema, path: str) -> None:
        rules, log = self.rules, self.log
        if rules.one_of_to_any_of and "oneOf" in node:
            node["anyOf"] = node.pop("oneOf")
            log.add(path, "oneOf", "turned into anyOf (exclusivity not enforced)")
        if is_array(node.get("allOf")):
            self.flatten_all_of(node)
        if not self.special.isdisjoint(node):
            for keyword in sorted(rules.describe & node.keys()):
                move_to_description(node, keyword, path, log)
            for keyword in sorted(rules.drop & node.keys()):
                drop_keyword(node, keyword, path, log)
            for keyword in sorted(rules.reject & node.keys()):
                log.add(path, keyword, "not supported in strict mode", rejected=True)
        pattern = node.get("pattern")
        if rules.unsupported_patterns and isinstance(pattern, str):
            lacking = unsupported_features(pattern, rules.unsupported_patterns)
            if lacking:
                describe(node, "pattern")
                log.add(
                    path, "pattern", f"moved into the description (strict mode cannot enforce {', '.join(lacking)})"
                )
        if rules.require_type:
            self.typed(node, path)
        elif rules.type_members:
            _type_members(node)
        kind = node.get("type")
        if kind == "object" or (is_array(kind) and "object" in kind) or "properties" in node:
            self.strict_object(node, path)
        if "unevaluatedItems" in node:
            self.unevaluated_items(node, path)

    def unevaluated_items(self, node: JsonSchema, path: str) -> None:
        """Drop ``unevaluatedItems`` beside ``items`` (every item is evaluated: it says nothing).

        Otherwise (tuple items, an empty array) it has no strict form: no strict vendor documents the keyword.
        """
        if "items" in node:
            del node["unevaluatedItems"]
        else:
            self.log.add(path, "unevaluatedItems", "not supported in strict mode", rejected=True)

    def flatten_all_of(self, node: JsonSchema) -> None:
        """Merge into `node` its ``allOf`` members that hold only annotations, then a lone member (lossless)."""
        parts: list[Any] = node["allOf"]
        if len(parts) > 1:  # an annotations-only member constrains nothing: its words go to the parent
            for member in [m for m in parts if is_annotation_only(m)]:
                parts.remove(member)
                for key, value in member.items():
                    node.setdefault(key, value)
        if len(parts) == 1 and isinstance(parts[0], dict):
            only = self.prepared(node.pop("allOf")[0])
            for key, value in only.items():
                node.setdefault(key, value)

    def typed(self, node: JsonSchema, path: str) -> None:
        """Give `node` the type that follows from it, or record that strict mode cannot express it."""
        kind = node.get("type")
        _type_members(node)
        if kind is not None or "anyOf" in node or "$ref" in node:
            return
        if "enum" in node or "const" in node:
            values = node["enum"] if "enum" in node else [node["const"]]
            inferred = _value_types(values) if is_array(values) and values else None
            if inferred is None:
                keyword = "enum" if "enum" in node else "const"
                self.log.add(path, keyword, "values that are objects or arrays cannot be strict", rejected=True)
            else:
                node["type"] = inferred  # what the values are anyway: nothing lost
            return
        if "properties" in node or "items" in node or "prefixItems" in node:
            node["type"] = "object" if "properties" in node else "array"
            self.log.add(path, "type", f"{node['type']!r} added (strict mode needs a type on every subschema)")
            return
        self.log.add(path, "type", "an untyped (any value) schema cannot be expressed in strict mode", rejected=True)

    def strict_object(self, node: JsonSchema, path: str) -> None:
        rules, log = self.rules, self.log
        raw = node.get("properties")
        extra = node.get("additionalProperties")
        if is_object(extra) and extra:
            log.add(
                path, "additionalProperties", "free-form map values cannot be expressed in strict mode", rejected=True
            )
        elif extra is True or extra == {}:
            # closing it would let the model send only the listed keys (only {} when there are none)
            log.add(path, "additionalProperties", "an open object (any extra keys) cannot be strict", rejected=True)
        elif not raw and extra is None and path:
            # (the root `{"type": "object"}` of a tool means "no arguments", not a free-form object)
            log.add(
                path, "additionalProperties", "a free-form object cannot be expressed in strict mode", rejected=True
            )
        unevaluated = node.pop("unevaluatedProperties", False)
        if unevaluated is not False:
            log.add(path, "unevaluatedProperties", "an open object (any extra keys) cannot be strict", rejected=True)
        # False is what additionalProperties: false already says of a strict object (every key listed, no
        # allOf merging properties in): no strict vendor documents the keyword (OpenAI's "Supported schemas",
        # Anthropic's "JSON Schema limitations"), so it goes, losing nothing
        node["additionalProperties"] = False
        props: dict[str, Any]
        if is_object(raw):
            props = node["properties"] = dict(raw)
        else:
            props = raw or {}
            node.setdefault("properties", props)
        required = set(node.get("required", ()))
        props_before = raw if is_object(raw) else {}
        for name, sub in list(props.items()):
            if not is_object(sub):
                continue
            sub = self.prepared(sub)
            where = f"{path}/properties/{name}"
            if name not in required:
                if sub.get("default", 0) is None:
                    sub = {k: v for k, v in sub.items() if k != "default"}  # null already means the default
                if "default" in sub and not rules.keep_default:
                    sub = dict(sub)
                    move_to_description(sub, "default", where, log, label="default")
                props[name] = nullable = make_nullable(sub)  # meaning kept: a null coming back restores the default
                if nullable is not sub or sub is not props_before.get(name):
                    self.fresh.add(id(nullable))
            elif "default" in sub and not rules.keep_default:
                sub = dict(sub)
                move_to_description(sub, "default", where, log, label="default")
                props[name] = sub
                self.fresh.add(id(sub))
            else:
                props[name] = sub
        node["required"] = list(props)


def inline_ref_siblings(schema: JsonSchema, log: LossLog | None = None, *, alone: bool = True) -> JsonSchema:
    """Rewrite each ``$ref`` that has keywords beside it, in linear size, for strict mode.

    With `alone` (OpenAI refuses ``$ref`` next to other keywords), siblings that only annotate
    (``description``, ``title``, ...) stay where they are and the reference moves into a one-member
    ``anyOf`` (``{"anyOf": [{"$ref": ...}], "description": ...}``): the same meaning, and the definition
    is not copied; without it they stay beside the ``$ref``. Inlining every target instead, as openai-python's
    ``to_strict_json_schema`` does, copies a definition once per use and each of its own references in
    turn: 12 levels of a model used twice per level came to 2.6 MB. Siblings that constrain
    (``properties``, ``required``, ``type`` ...) apply together with the target, so the target's keywords
    are merged with them: properties side by side, ``required`` joined (the target's required fields stay
    required). The merged copy is shallow: the target's own subschemas, references included, are shared,
    not expanded again. Pure: changed nodes are new dicts, unchanged ones are returned as they are.
    """
    sections = [key for key in ("$defs", "definitions") if is_object(schema.get(key))]
    defs: dict[str, Any] = {name: body for key in sections for name, body in schema[key].items()}
    fixed: dict[str, Any] = {}
    active: set[str] = set()

    def target(name: str) -> Any:
        # a definition with its own references fixed, once; None while it is being fixed (a cycle)
        if name in fixed:
            return fixed[name]
        if name in active or not is_object(defs.get(name)):
            return None
        active.add(name)
        fixed[name] = fix(defs[name], f"/$defs/{name}")
        active.discard(name)
        return fixed[name]

    def fix(node: Any, path: str) -> Any:
        if not is_object(node):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and len(node) > 1:
            rest = {k: v for k, v in node.items() if k != "$ref"}
            siblings = _fix_children(rest, path, fix)
            constraints = [k for k in siblings if k not in _ANNOTATIONS]
            local = ref.startswith(("#/$defs/", "#/definitions/"))
            body = target(ref.rsplit("/", 1)[-1]) if constraints and local else None
            if body is not None:
                return _merged(body, siblings, path, log)
            if alone:
                return {"anyOf": [{"$ref": ref}], **siblings}
            return node if siblings is rest else {"$ref": ref, **siblings}
        return _fix_children(node, path, fix)

    out: JsonSchema = {}
    for key, value in schema.items():
        if key in sections:
            out[key] = {
                name: fixed_body if (fixed_body := target(name)) is not None else body for name, body in value.items()
            }
        else:
            out[key] = _fix_children({key: value}, "", fix)[key]
    return out if any(out[k] is not schema[k] for k in schema) else schema


def _fix_children(node: JsonSchema, path: str, fix: Any) -> JsonSchema:
    """`node` with `fix` applied to each subschema it holds (copied only when one changed)."""
    changed: dict[str, Any] | None = None
    for key in _CHILDREN.intersection(node):
        value = node[key]
        new: Any = value
        if key in _MAP_KEYS:
            if is_object(value):
                items = {name: fix(sub, f"{path}/{key}/{_escape(name)}") for name, sub in value.items()}
                new = items if any(items[n] is not value[n] for n in value) else value
        elif key in _LIST_KEYS:
            if is_array(value):
                members = [fix(sub, f"{path}/{key}/{i}") for i, sub in enumerate(value)]
                new = members if any(a is not b for a, b in zip(members, value, strict=True)) else value
        else:
            new = fix(value, f"{path}/{key}")
        if new is not value:
            if changed is None:
                changed = {}
            changed[key] = new
    if not changed:
        return node
    return {**node, **changed}


def _merged(body: JsonSchema, siblings: JsonSchema, path: str, log: LossLog | None) -> JsonSchema:
    """A ``$ref`` target and the constraints beside it as one node (both apply, as JSON Schema says)."""
    out = dict(body)
    for key, value in siblings.items():
        mine = out.get(key)
        if key == "properties" and is_object(mine) and is_object(value):
            both = [name for name in value if name in mine and mine[name] != value[name]]
            if both and log is not None:
                log.add(path, "properties", f"{both!r} of the $ref target replaced by the ones beside it")
            out[key] = {**mine, **value}
        elif key == "required" and is_array(mine) and is_array(value):
            out[key] = list(dict.fromkeys([*mine, *value]))  # the target's required fields stay required
        else:
            out[key] = value
    if is_object(out.get("properties")) and out.get("additionalProperties") is False:
        out["required"] = list(out["properties"])  # strict: every property listed (optional ones are nullable)
    return out


_DATA_KEYWORDS = frozenset({"enum", "const", "default", "examples", "description", "required"})
