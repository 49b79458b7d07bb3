"""Strict dialects force every property to be required, so optional parameters become nullable.

A ``null`` coming back for a parameter whose canonical schema does not accept null (the model had
no way to leave it out) means "use the default": the key is dropped before validation, so the Python
default applies. No other peer does this; openai-agents makes such fields required and pydantic-ai
drops defaults.
"""

from __future__ import annotations as _annotations

import json
from collections.abc import Mapping
from typing import Any

from .._json_schema import JsonSchema

__all__ = ["restore_defaults"]


def _resolve(schema: Any, root: JsonSchema) -> Any:
    seen = 0
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and seen < 32:
        ref: str = schema["$ref"]
        if not ref.startswith("#/"):
            return schema
        node: Any = root
        for part in ref[2:].split("/"):
            node = node.get(part.replace("~1", "/").replace("~0", "~")) if isinstance(node, dict) else None
        if node is None:
            return schema
        schema = node
        seen += 1
    return schema


def _accepts_null(schema: Any, root: JsonSchema) -> bool:
    schema = _resolve(schema, root)
    if not isinstance(schema, dict) or not schema:
        return True  # `{}` accepts anything
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if "const" in schema and schema["const"] is None:
        return True
    if None in schema.get("enum", ()):
        return True
    return any(_accepts_null(s, root) for key in ("anyOf", "oneOf") for s in schema.get(key, ()))


def _restore(value: Any, schema: Any, root: JsonSchema) -> Any:
    schema = _resolve(schema, root)
    if not isinstance(schema, dict):
        return value
    if isinstance(value, dict):
        props = schema.get("properties")
        if not isinstance(props, dict):
            return value
        required = set(schema.get("required", ()))
        out: dict[str, Any] = {}
        changed = False
        for key, item in value.items():
            sub = props.get(key)
            if item is None and sub is not None and key not in required and not _accepts_null(sub, root):
                changed = True
                continue
            new = _restore(item, sub, root) if sub is not None else item
            changed = changed or new is not item
            out[key] = new
        return out if changed else value
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        items = [_restore(v, schema["items"], root) for v in value]
        return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
    for key in ("anyOf", "oneOf"):
        options = [s for s in schema.get(key, ()) if _resolve(s, root).get("type") == "object"]
        if len(options) == 1 and isinstance(value, dict):
            return _restore(value, options[0], root)
    return value


def restore_defaults(arguments: str | Mapping[str, Any], schema: JsonSchema) -> str | Mapping[str, Any]:
    """`arguments` without the nulls that stand for "use the default"; unchanged (same object) otherwise.

    JSON text is parsed only when it contains ``null``; text that is not valid JSON is returned as is,
    for validation to report.
    """
    if isinstance(arguments, str):
        if "null" not in arguments:
            return arguments
        try:
            parsed = json.loads(arguments)
        except ValueError:
            return arguments
        restored = _restore(parsed, schema, schema)
        return arguments if restored is parsed else restored
    restored = _restore(dict(arguments), schema, schema)
    return restored if restored != arguments else arguments
