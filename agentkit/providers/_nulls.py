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
from .._jsonish import is_array, is_object

__all__ = ["restore_defaults"]


def _resolve(schema: Any, root: JsonSchema) -> Any:
    seen = 0
    while is_object(schema) and isinstance(schema.get("$ref"), str) and seen < 32:
        ref: str = schema["$ref"]
        if not ref.startswith("#/"):
            return schema
        node: Any = root
        for part in ref[2:].split("/"):
            node = node.get(part.replace("~1", "/").replace("~0", "~")) if is_object(node) else None
        if node is None:
            return schema
        schema = node
        seen += 1
    return schema


def _accepts_null(schema: Any, root: JsonSchema) -> bool:
    schema = _resolve(schema, root)
    if not is_object(schema) or not schema:
        return True  # `{}` accepts anything
    kind = schema.get("type")
    if kind == "null" or (is_array(kind) and "null" in kind):
        return True
    if "const" in schema and schema["const"] is None:
        return True
    if None in schema.get("enum", ()):
        return True
    return any(_accepts_null(s, root) for key in ("anyOf", "oneOf") for s in schema.get(key, ()))


def _object_options(schema: JsonSchema, root: JsonSchema, depth: int = 0) -> list[JsonSchema]:
    """The object members of a union, nested unions (``Optional[A | B]``) flattened."""
    found: list[JsonSchema] = []
    for key in ("anyOf", "oneOf"):
        for member in schema.get(key, ()):
            option = _resolve(member, root)
            if not is_object(option):
                continue
            if option.get("type") == "object" or "properties" in option:
                found.append(option)
            elif depth < 8:
                found.extend(_object_options(option, root, depth + 1))
    return found


def _matching_option(value: dict[str, Any], options: list[JsonSchema]) -> JsonSchema | None:
    """The union member `value` belongs to: the only object member, or the one whose ``const`` tags match."""
    if len(options) == 1:
        return options[0]
    for option in options:
        props: dict[str, Any] = option.get("properties") or {}
        tags = {k: p["const"] for k, p in props.items() if is_object(p) and "const" in p}
        if tags and all(value.get(k) == v for k, v in tags.items()):
            return option
    return None


def _restore_object(value: dict[str, Any], schema: JsonSchema, root: JsonSchema) -> dict[str, Any]:
    props = schema.get("properties")
    extra = schema.get("additionalProperties")
    if not is_object(props):
        if is_object(extra) and extra:  # dict[str, Model]: every value has that schema
            restored = {k: _restore(v, extra, root) for k, v in value.items()}
            return restored if any(restored[k] is not value[k] for k in value) else value
        option = _matching_option(value, _object_options(schema, root))
        return _restore_object(value, option, root) if option is not None else value
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


def _restore(value: Any, schema: Any, root: JsonSchema) -> Any:
    schema = _resolve(schema, root)
    if not is_object(schema):
        return value
    if is_object(value):
        return _restore_object(value, schema, root)
    if is_array(value):
        if is_object(schema.get("items")):
            items = [_restore(v, schema["items"], root) for v in value]
        elif is_array(schema.get("prefixItems")):
            member = schema["prefixItems"]
            items = [_restore(v, member[i], root) if i < len(member) else v for i, v in enumerate(value)]
        else:
            arrays = [_resolve(s, root) for key in ("anyOf", "oneOf") for s in schema.get(key, ())]
            arrays = [a for a in arrays if is_object(a) and a.get("type") == "array"]
            return _restore(value, arrays[0], root) if len(arrays) == 1 else value
        return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
    return value


def restore_defaults(arguments: str | Mapping[str, Any], schema: JsonSchema) -> str | Mapping[str, Any]:
    """`arguments` without the nulls that stand for "use the default"; unchanged (same object) otherwise.

    JSON text is parsed only when it contains ``null``; text that is not valid JSON is returned as is,
    for validation to report.
    """
    try:
        if isinstance(arguments, str):
            if "null" not in arguments:
                return arguments
            try:
                parsed = json.loads(arguments)
            except ValueError:
                return arguments
            restored = _restore(parsed, schema, schema)
            return arguments if restored is parsed else restored
        copied = dict(arguments)
        restored = _restore(copied, schema, schema)
        return arguments if restored is copied else restored  # `_restore` returns what it did not change
    except RecursionError:  # nested deeper than Python recurses: left as sent, validation refuses it
        return arguments
