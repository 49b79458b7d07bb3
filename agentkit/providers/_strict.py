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

import copy
from dataclasses import dataclass
from typing import Any

from .._json_schema import JsonSchema
from ._dialect import LossLog, drop_keyword, is_recursive, move_to_description, walk_schemas

__all__ = ["StrictRules", "make_nullable", "make_strict"]


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


def _inline_root_ref(schema: JsonSchema) -> JsonSchema:
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith(("#/$defs/", "#/definitions/")):
        return schema
    section, name = ref[2:].split("/", 1)
    target = schema.get(section, {}).get(name)
    if not isinstance(target, dict):
        return schema
    merged = {k: v for k, v in schema.items() if k != "$ref"}
    merged.update(copy.deepcopy(target))
    return merged


def make_strict(schema: JsonSchema, log: LossLog, rules: StrictRules | None = None) -> JsonSchema:
    """A strict-mode copy of `schema`; what strict cannot express is recorded in `log`.

    Losses recorded as ``rejected`` mean the vendor would refuse the schema in strict mode: a caller
    with ``strict=None`` then falls back to the non-strict schema.
    """
    rules = rules or StrictRules()
    out = _inline_root_ref(copy.deepcopy(schema))
    if not rules.allow_recursion and is_recursive(out):
        log.add("", "$ref", "recursive schema not supported in strict mode", rejected=True)

    def visit(node: JsonSchema, path: str) -> None:
        if rules.one_of_to_any_of and "oneOf" in node:
            node["anyOf"] = node.pop("oneOf")
            log.add(path, "oneOf", "turned into anyOf (exclusivity not enforced)")
        if isinstance(node.get("allOf"), list) and len(node["allOf"]) == 1 and isinstance(node["allOf"][0], dict):
            only = node.pop("allOf")[0]
            for key, value in only.items():
                node.setdefault(key, value)
        for keyword in sorted(rules.describe & node.keys()):
            move_to_description(node, keyword, path, log)
        for keyword in sorted(rules.drop & node.keys()):
            drop_keyword(node, keyword, path, log)
        for keyword in sorted(rules.reject & node.keys()):
            log.add(path, keyword, "not supported in strict mode", rejected=True)
        kind = node.get("type")
        if kind == "object" or (isinstance(kind, list) and "object" in kind) or "properties" in node:
            _strict_object(node, path, log, rules)

    walk_schemas(out, visit)
    return out


def _strict_object(node: JsonSchema, path: str, log: LossLog, rules: StrictRules) -> None:
    props: dict[str, Any] = node.get("properties") or {}
    extra = node.get("additionalProperties")
    if isinstance(extra, dict) and extra:
        log.add(path, "additionalProperties", "free-form map values cannot be expressed in strict mode", rejected=True)
    elif "properties" not in node and extra is not False and path:
        # (the root `{"type": "object"}` of a tool means "no arguments", not a free-form object)
        log.add(path, "additionalProperties", "a free-form object cannot be expressed in strict mode", rejected=True)
    elif extra is True or extra == {}:
        log.add(path, "additionalProperties", "extra keys no longer accepted (strict mode forbids them)")
    node["additionalProperties"] = False
    node.setdefault("properties", props)
    required = set(node.get("required", ()))
    for name, sub in list(props.items()):
        if not isinstance(sub, dict):
            continue
        if name not in required:
            if sub.get("default", 0) is None:
                sub = {k: v for k, v in sub.items() if k != "default"}  # null already means the default
            if "default" in sub and not rules.keep_default:
                move_to_description(sub, "default", f"{path}/properties/{name}", log, label="default")
            props[name] = make_nullable(sub)  # meaning kept: a null coming back restores the default
        elif "default" in sub and not rules.keep_default:
            move_to_description(sub, "default", f"{path}/properties/{name}", log, label="default")
    node["required"] = list(props)
