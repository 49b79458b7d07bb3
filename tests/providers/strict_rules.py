"""Structural strict-mode rules the shared linter (tests/data/tools/lint_schema.py) does not check.

Each is a documented (or observed 400) rule of a strict engine, written here independently of agentkit's
dialects so that a test can hold a payload against it:

* every subschema says what it is: ``type``, ``anyOf`` or ``$ref`` (OpenAI: 400 "schema must have a
  'type' key", also for ``{}``, ``items: {}`` and an ``enum`` without ``type``);
* no open object: every object has ``additionalProperties: false`` (strict forbids extra keys, so an
  object that means "any keys" cannot be strict: closing it leaves the model only ``{}``);
* no ``$ref`` beside other keywords (OpenAI; openai-python inlines such nodes for that reason);
* no ``pattern`` with lookaround or backreferences (OpenAI: 400 "regex lookaround is not supported";
  Anthropic documents both as unsupported; no regular grammar can enforce them);
* at most 10 levels of object nesting, counted through ``$ref`` (structured-outputs guide).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

_UNSUPPORTED_PATTERN = re.compile(r"(?<!\\)\(\?<?[=!]|(?<!\\)\\[1-9]|\\k<")  # (an escaped "\(" is a literal)


def subschemas(node: Any, path: str = "#") -> Iterator[tuple[str, dict[str, Any]]]:
    """(path, subschema) for every subschema of `node`, definitions included, references not followed."""
    if not isinstance(node, dict):
        return
    yield path, node
    for key in ("properties", "$defs", "definitions", "patternProperties"):
        if isinstance(node.get(key), dict):
            for name, sub in node[key].items():
                yield from subschemas(sub, f"{path}/{key}/{name}")
    for key in ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames"):
        if isinstance(node.get(key), dict):
            yield from subschemas(node[key], f"{path}/{key}")
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        if isinstance(node.get(key), list):
            for i, sub in enumerate(node[key]):
                yield from subschemas(sub, f"{path}/{key}/{i}")


def untyped(schema: dict[str, Any]) -> list[str]:
    """Paths of subschemas with neither ``type``, ``anyOf`` nor ``$ref``."""
    return [path for path, node in subschemas(schema) if not any(k in node for k in ("type", "anyOf", "$ref"))]


def open_objects(schema: dict[str, Any]) -> list[str]:
    """Paths of objects (typed ``object``) whose ``additionalProperties`` is not ``false``."""
    found = []
    for path, node in subschemas(schema):
        kind = node.get("type")
        if (kind == "object" or (isinstance(kind, list) and "object" in kind)) and node.get(
            "additionalProperties"
        ) is not False:
            found.append(path)
    return found


def ref_siblings(schema: dict[str, Any]) -> list[str]:
    """Paths of ``$ref``s with other keywords beside them."""
    return [path for path, node in subschemas(schema) if "$ref" in node and len(node) > 1]


def bad_patterns(schema: dict[str, Any]) -> list[str]:
    """Paths of patterns using lookaround or backreferences."""
    return [
        path
        for path, node in subschemas(schema)
        if isinstance(node.get("pattern"), str) and _UNSUPPORTED_PATTERN.search(node["pattern"])
    ]


def depth_through_refs(schema: dict[str, Any], cap: int = 12) -> int:
    """Levels of ``properties`` nesting, following local references (each reference expanded; capped)."""
    defs = {**schema.get("definitions", {}), **schema.get("$defs", {})}

    def depth(node: Any, level: int) -> int:
        if not isinstance(node, dict) or level > cap:
            return level
        best = level
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.rsplit("/", 1)[-1] in defs:
            best = max(best, depth(defs[ref.rsplit("/", 1)[-1]], level))
        for sub in (node.get("properties") or {}).values():
            best = max(best, depth(sub, level + 1))
        for key in ("items", "additionalProperties"):
            if isinstance(node.get(key), dict):
                best = max(best, depth(node[key], level))
        for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
            for sub in node.get(key) or ():
                best = max(best, depth(sub, level))
        return best

    return depth({k: v for k, v in schema.items() if k not in ("$defs", "definitions")}, 0)


_ANY_OF_MEMBER = re.compile(r"/(?:anyOf|oneOf|allOf)/\d+$")
# What Anthropic's strict grammar takes as saying what a value is (its SDK's transform_schema keeps these)
_ANTHROPIC_TYPED = ("type", "anyOf", "oneOf", "allOf", "enum", "const", "$ref", "properties", "items")


def structural_errors(schema: dict[str, Any], vendor: str = "openai") -> list[str]:
    """Every rule above that `schema` breaks for `vendor`, as ``"rule: path"`` lines (empty: it passes).

    OpenAI (and Mistral and Cohere, which publish no structural rules of their own, checked the same
    way, without the ``$ref`` and depth rules that only OpenAI documents) want a ``type`` on every
    subschema; Anthropic's strict mode also takes an ``enum``/``const`` without ``type`` and members of
    a combinator that only add constraints to a typed parent.
    """
    if vendor in ("anthropic", "bedrock"):
        errors = [
            f"untyped: {path}"
            for path, node in subschemas(schema)
            if not any(k in node for k in _ANTHROPIC_TYPED) and not _ANY_OF_MEMBER.search(path)
        ]
    else:
        errors = [f"untyped: {p}" for p in untyped(schema)]
    errors += [f"open object: {p}" for p in open_objects(schema)]
    errors += [f"pattern: {p}" for p in bad_patterns(schema)]
    if vendor.startswith("openai"):
        errors += [f"$ref with siblings: {p}" for p in ref_siblings(schema)]
        if depth_through_refs(schema) > 10:
            errors.append("nesting: deeper than 10 levels through $ref")
    return errors
