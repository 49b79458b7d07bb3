"""Small, pure helpers over JSON Schema dicts shared by the schema builder and the dialects."""

from __future__ import annotations as _annotations

from typing import Any

__all__ = ["JsonSchema", "strip_titles"]

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
    if isinstance(schema, list):
        return [strip_titles(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: JsonSchema = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: strip_titles(sub) for name, sub in value.items()}
        elif key in _SCHEMA_VALUES:
            out[key] = strip_titles(value)
        else:
            out[key] = value
    return out
