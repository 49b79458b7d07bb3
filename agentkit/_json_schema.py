"""Small, pure helpers over JSON Schema dicts shared by the schema builder and the dialects."""

from __future__ import annotations as _annotations

from typing import Any

from ._jsonish import is_array, is_object

__all__ = ["JsonSchema", "inline_root_ref", "strip_titles"]

JsonSchema = dict[str, Any]

# Keywords whose value is a map of name -> subschema (the names themselves are data, not keywords).
_SCHEMA_MAPS = frozenset({"properties", "$defs", "definitions", "patternProperties", "dependentSchemas"})
# Keywords whose value is a subschema or a list of subschemas.
_SCHEMA_VALUES = frozenset(
    {
        "items",
        "prefixItems",
        "additionalProperties",
        "unevaluatedProperties",
        "anyOf",
        "oneOf",
        "allOf",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
    }
)


def strip_titles(schema: Any) -> Any:
    """Return `schema` without ``title`` keywords (token noise for a model); property names stay."""
    if is_array(schema):
        return [strip_titles(s) for s in schema]
    if not is_object(schema):
        return schema
    out: JsonSchema = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in _SCHEMA_MAPS and is_object(value):
            out[key] = {name: strip_titles(sub) for name, sub in value.items()}
        elif key in _SCHEMA_VALUES:
            out[key] = strip_titles(value)
        else:
            out[key] = value
    return out


def inline_root_ref(schema: JsonSchema) -> JsonSchema:
    """A root ``{"$ref": "#/$defs/X", "$defs": {...}}`` with X's own keywords at the root, ``$defs`` kept.

    That root is pydantic's form for a recursive model; the references inside still point into ``$defs``.

    So a recursive model's schema has ``type: object`` at its root like any other model's: one rule for
    tool inputs, outputs and MCP ``outputSchema``.
    """
    ref = schema.get("$ref")
    defs = schema.get("$defs")
    if not (isinstance(ref, str) and ref.startswith("#/$defs/") and is_object(defs)):
        return schema
    if set(schema) - {"$ref", "$defs", "description", "title"}:
        return schema  # the $ref has siblings: not a plain alias of one definition
    target = defs.get(ref[len("#/$defs/") :])
    if not is_object(target):
        return schema
    extra = {k: v for k, v in schema.items() if k not in ("$ref", "$defs")}
    return {**target, **extra, "$defs": defs}
