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
from ._dialect import (
    _CHILDREN,
    _LIST_KEYS,
    _MAP_KEYS,
    LossLog,
    _children_of,
    _escape,
    describe,
    drop_keyword,
    inline_root_ref,
    is_recursive,
    move_to_description,
)

__all__ = ["Moves", "StrictRules", "inline_ref_siblings", "make_nullable", "make_strict"]


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
    """Whether a ``$ref`` beside other keywords is replaced by its (strict) target (OpenAI refuses it)."""

    special: frozenset[str] = field(init=False, repr=False, compare=False)
    """Every keyword the three sets above name (computed once: most subschemas hold none of them)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "special", self.describe | self.drop | self.reject)


def _accepts_null(node: JsonSchema) -> bool:
    kind = node.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if not node or (set(node) <= {"description", "default", "examples"}):
        return True  # an "any" schema
    return any(isinstance(s, dict) and _accepts_null(s) for s in node.get("anyOf", ()))


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
    if isinstance(kind, list):
        return {**node, "type": [*kind, "null"]}
    # $ref, const, enum without type, allOf...: wrap, keeping the description on the outside
    annotations = {k: node[k] for k in ("description",) if k in node}
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
    if rules.inline_ref_siblings and (builder.ref_siblings or "$defs" in out or "definitions" in out):
        out = inline_ref_siblings(out)
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
        if not isinstance(original, dict):
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
                if isinstance(sub, dict):
                    node[key] = {
                        name: self.build(child, f"{path}/{key}/{_escape(name)}") for name, child in sub.items()
                    }
            elif key in _LIST_KEYS:
                if isinstance(sub, list):
                    node[key] = [self.build(child, f"{path}/{key}/{i}") for i, child in enumerate(sub)]
            elif isinstance(sub, dict):
                node[key] = self.build(sub, f"{path}/{key}")
        return node

    def untouched(self, node: JsonSchema) -> bool:
        """Whether `visit` would leave `node` as it is: a leaf with nothing strict mode rewrites."""
        if not _CHILDREN.isdisjoint(node) or not self.special.isdisjoint(node):
            return False
        kind = node.get("type")
        return not (kind == "object" or (isinstance(kind, list) and "object" in kind))

    def visit(self, node: JsonSchema, path: str) -> None:
        rules, log = self.rules, self.log
        if rules.one_of_to_any_of and "oneOf" in node:
            node["anyOf"] = node.pop("oneOf")
            log.add(path, "oneOf", "turned into anyOf (exclusivity not enforced)")
        if isinstance(node.get("allOf"), list) and len(node["allOf"]) == 1 and isinstance(node["allOf"][0], dict):
            only = self.prepared(node.pop("allOf")[0])
            for key, value in only.items():
                node.setdefault(key, value)
        if not self.special.isdisjoint(node):
            for keyword in sorted(rules.describe & node.keys()):
                move_to_description(node, keyword, path, log)
            for keyword in sorted(rules.drop & node.keys()):
                drop_keyword(node, keyword, path, log)
            for keyword in sorted(rules.reject & node.keys()):
                log.add(path, keyword, "not supported in strict mode", rejected=True)
        kind = node.get("type")
        if kind == "object" or (isinstance(kind, list) and "object" in kind) or "properties" in node:
            self.strict_object(node, path)

    def strict_object(self, node: JsonSchema, path: str) -> None:
        rules, log = self.rules, self.log
        raw = node.get("properties")
        extra = node.get("additionalProperties")
        if isinstance(extra, dict) and extra:
            log.add(
                path, "additionalProperties", "free-form map values cannot be expressed in strict mode", rejected=True
            )
        elif "properties" not in node and extra is not False and path:
            # (the root `{"type": "object"}` of a tool means "no arguments", not a free-form object)
            log.add(
                path, "additionalProperties", "a free-form object cannot be expressed in strict mode", rejected=True
            )
        elif extra is True or extra == {}:
            log.add(path, "additionalProperties", "extra keys no longer accepted (strict mode forbids them)")
        node["additionalProperties"] = False
        props: dict[str, Any]
        if isinstance(raw, dict):
            props = node["properties"] = dict(raw)
        else:
            props = raw or {}
            node.setdefault("properties", props)
        required = set(node.get("required", ()))
        props_before = raw if isinstance(raw, dict) else {}
        for name, sub in list(props.items()):
            if not isinstance(sub, dict):
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


def inline_ref_siblings(schema: JsonSchema) -> JsonSchema:
    """Strict mode refuses ``$ref`` next to other keywords: put the target's keywords in its place.

    Done as openai-python's ``to_strict_json_schema`` does (the target is already strict, since
    ``$defs`` were rewritten too). A reference back into a definition being inlined is wrapped as
    ``{"anyOf": [{"$ref": ...}], ...siblings}`` instead, so recursion stays finite. Nothing is lost.
    Pure: changed nodes are new dicts, unchanged ones are returned as they are.
    """
    # the definitions as make_strict left them: they may refer to themselves
    defs = {**schema.get("definitions", {}), **schema.get("$defs", {})}

    def fix(node: Any, stack: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            items = [fix(item, stack) for item in node]
            return items if any(a is not b for a, b in zip(items, node, strict=True)) else node
        if not isinstance(node, dict):
            return node
        out = node
        ref = node.get("$ref")
        if isinstance(ref, str) and len(node) > 1 and ref.startswith(("#/$defs/", "#/definitions/")):
            name = ref.rsplit("/", 1)[-1]
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            if name in stack or not isinstance(defs.get(name), dict):
                out = {"anyOf": [{"$ref": ref}]}
            else:
                out = dict(defs[name])
                stack = (*stack, name)
            out.update(siblings)
        changed: dict[str, Any] | None = None
        for key, value in out.items():
            if key in _DATA_KEYWORDS:
                continue
            new = fix(value, stack)
            if new is not value:
                if changed is None:
                    changed = {}
                changed[key] = new
        if changed:
            if out is node:
                out = dict(node)  # copy on write: the node may be shared with the input
            out.update(changed)
        return out

    result: JsonSchema = fix(schema, ())
    return result


_DATA_KEYWORDS = frozenset({"enum", "const", "default", "examples", "description", "required"})
