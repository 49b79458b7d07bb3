"""Gemini's two schema dialects: ``parametersJsonSchema`` (the default) and the OpenAPI-subset ``parameters``.

`GeminiJsonSchemaDialect` (``functionDeclarations[].parametersJsonSchema``) is nearly pass-through.
Gemini takes standard JSON Schema there and *ignores* what it does not support (it does not reject it),
so nothing is removed; every keyword outside the documented subset is recorded as a loss so a
compatibility report shows what the model will not see enforced. Two loss-free rewrites help the model:
``const`` becomes a one-value ``enum`` and ``oneOf`` becomes ``anyOf`` (``anyOf`` is what Gemini's own
SDK emits; the exclusivity of ``oneOf`` is recorded as lost).

`GeminiOpenAPIDialect` (``functionDeclarations[].parameters``, the `types.Schema` object) converts to the
OpenAPI 3.0 subset Gemini has always accepted: upper-case type names, ``nullable`` instead of type arrays
and ``anyOf [.., {type: null}]``, ``$ref``/``$defs`` inlined (recursive ones, and those
whose inlining would multiply the payload past `agentkit.providers._dialect.inline_limit`, converted to
Gemini's ``ref``/``defs``), ``const`` -> ``enum``, enum values turned into strings, unsupported keywords moved into
the description or dropped, and property names checked against Gemini's parameter-name rule.

Gemini has no per-tool strict flag: schema-adherent decoding is the request-level function-calling mode
``VALIDATED`` (``ANY`` already guarantees it). ``strict=True`` therefore returns the same schema marked
strict (the provider then asks for ``VALIDATED``); optional parameters can stay optional, so nothing is
made required or nullable. ``strict=None`` is not strict, because ``VALIDATED`` is a preview mode.

Sources: ai.google.dev/gemini-api/docs/structured-output (JSON Schema support), google-genai
``types.Schema`` / ``FunctionDeclaration`` docstrings, ``_transformers.process_schema``; see
``shared/vendors/WIRE-FORMATS.md`` section 4c.
"""

from __future__ import annotations as _annotations

import copy
import json
import re
from typing import Any

from ..._json_schema import JsonSchema
from ..._jsonish import is_array, is_object
from .._dialect import (
    Dialect,
    DialectResult,
    LossLog,
    inline_root_ref,
    is_recursive,
    move_to_description,
    try_inline_refs,
    walk_schemas,
)

__all__ = [
    "DOCUMENTED_IGNORED",
    "DOCUMENTED_JSON_SCHEMA",
    "PARAMETER_NAME",
    "GeminiJsonSchemaDialect",
    "GeminiOpenAPIDialect",
]

# ---- parametersJsonSchema -------------------------------------------------------------------------

DOCUMENTED_JSON_SCHEMA = frozenset(
    {
        # the structured-output page's list
        "type",
        "title",
        "description",
        "properties",
        "required",
        "additionalProperties",
        "enum",
        "format",
        "minimum",
        "maximum",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "propertyOrdering",
        # what google-genai's own generator sends (parse_function_declaration_json_schema)
        "$defs",
        "definitions",
        "$ref",
        "anyOf",
        "default",
        # annotations without meaning for the model
        "$schema",
        "$id",
        "$comment",
    }
)
"""Keywords Gemini documents (or its SDK sends) in ``parametersJsonSchema``."""

DOCUMENTED_IGNORED = frozenset(
    {
        "minLength",
        "maxLength",
        "minProperties",
        "maxProperties",
        "uniqueItems",
        "contains",
        "minContains",
        "maxContains",
    }
)
"""Keywords Gemini documents as ignored (google-genai Interactions API ``Function.parameters`` docstring)."""

_DOCUMENTED_FORMATS = frozenset({"date-time", "date", "time"})


class GeminiJsonSchemaDialect(Dialect):
    """``parametersJsonSchema``: the canonical schema, with what Gemini ignores recorded (not removed)."""

    name = "gemini"

    def rewrite(self, schema: JsonSchema, *, strict: bool | None) -> DialectResult:
        """Gemini's ``parametersJsonSchema`` for `schema` (strict only when asked: see the module docstring)."""
        log = LossLog()
        out = copy.deepcopy(schema)
        if out.get("type") != "object":
            log.add("", "type", "root is not type object: Gemini requires an object schema", rejected=True)

        def visit(node: JsonSchema, path: str) -> None:
            if "const" in node and "enum" not in node:
                node["enum"] = [node.pop("const")]  # same meaning, in the documented keyword
            if is_array(node.get("oneOf")) and "anyOf" not in node:
                node["anyOf"] = node.pop("oneOf")
                log.add(path, "oneOf", "turned into anyOf (exclusivity not enforced)")
            for keyword in node:
                if keyword in DOCUMENTED_JSON_SCHEMA:
                    continue
                if keyword in DOCUMENTED_IGNORED:
                    log.add(path, keyword, "sent, but documented as ignored by Gemini")
                else:
                    log.add(path, keyword, "sent, but not in Gemini's documented subset (may be ignored)")
            fmt = node.get("format")
            if isinstance(fmt, str) and fmt not in _DOCUMENTED_FORMATS:
                log.add(path, "format", f"{fmt!r} sent, but not a documented format (may be ignored)")

        walk_schemas(out, visit)
        return log.result(out, strict is True)


# ---- OpenAPI-subset `parameters` ------------------------------------------------------------------

PARAMETER_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
"""Property names Gemini accepts in ``parameters`` (``FunctionDeclaration.parameters`` docstring)."""

_TYPES = {
    "string": "STRING",
    "number": "NUMBER",
    "integer": "INTEGER",
    "boolean": "BOOLEAN",
    "array": "ARRAY",
    "object": "OBJECT",
    "null": "NULL",
}
# Copied as they are (fields of google-genai `types.Schema`).
_KEEP = frozenset(
    {
        "title",
        "description",
        "default",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
        "required",
        "propertyOrdering",
    }
)
# Scalar constraints the Schema object lacks: the model still reads them in the description.
_DESCRIBE = frozenset(
    {
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "uniqueItems",
        "minContains",
        "maxContains",
        "dependentRequired",
        "contentEncoding",
        "contentMediaType",
    }
)
_SILENT = frozenset({"$schema", "$id", "$comment", "$anchor"})
# Formats the Gemini API accepts per type (it has rejected others for STRING with a 400).
_FORMATS = {"STRING": {"enum", "date-time"}, "NUMBER": {"float", "double"}, "INTEGER": {"int32", "int64", "enum"}}
_HANDLED = frozenset(
    {
        "type",
        "enum",
        "const",
        "anyOf",
        "oneOf",
        "allOf",
        "properties",
        "items",
        "prefixItems",
        "additionalProperties",
        "format",
        "examples",
        "example",
        "$ref",
        "$defs",
        "definitions",
        "nullable",
    }
)


def _is_null(node: Any) -> bool:
    """Whether a converted member only says "null" (it becomes ``nullable`` on the parent)."""
    return is_object(node) and node.get("type") == "NULL" and set(node) <= {"type", "description", "title"}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


class _OpenAPIConverter:
    """One conversion: JSON Schema node -> Gemini `Schema` node, recording losses."""

    def __init__(self, log: LossLog, keep_refs: bool) -> None:
        self.log = log
        self.keep_refs = keep_refs  # recursive schemas keep references, as Gemini's `ref`/`defs`

    def convert(self, node: Any, path: str) -> JsonSchema:
        if node is True or node == {}:
            return {}
        if not is_object(node):
            self.log.add(path, "false", "schema `false` cannot be expressed (any value accepted)")
            return {}
        out: JsonSchema = {}
        nullable = bool(node.get("nullable"))
        nullable |= self._type(node, out, path)
        nullable |= self._enum(node, out, path)
        nullable |= self._unions(node, out, path)
        self._all_of(node, out, path)
        self._children(node, out, path)
        self._reference(node, out, path)
        for key, value in node.items():
            if key in _KEEP:
                out[key] = copy.deepcopy(value)
        # after the description is in place, so what is moved is appended to it
        for key, value in node.items():
            if key in _DESCRIBE:
                out[key] = value
                move_to_description(out, key, path, self.log)
            elif key not in _KEEP and key not in _HANDLED and key not in _SILENT:
                self.log.add(path, key, "dropped (not a field of Gemini's Schema)")
        self._extra_properties(node, out, path)
        self._format(node, out, path)
        self._examples(node, out, path)
        if nullable:
            out["nullable"] = True
        return out

    def _type(self, node: JsonSchema, out: JsonSchema, path: str) -> bool:
        kind = node.get("type")
        if isinstance(kind, str):
            out["type"] = _TYPES.get(kind, kind.upper())
            return False
        if not is_array(kind):
            return False
        others = [_TYPES.get(k, str(k).upper()) for k in kind if k != "null"]
        if len(others) == 1:
            out["type"] = others[0]
        elif len(others) > 1:
            out["anyOf"] = [{"type": k} for k in others]
        else:
            out["type"] = "NULL"
        return "null" in kind and bool(others)

    def _enum(self, node: JsonSchema, out: JsonSchema, path: str) -> bool:
        if "enum" in node:
            values, keyword = list(node["enum"]), "enum"
        elif "const" in node:
            values, keyword = [node["const"]], "const"
        else:
            return False
        nullable = None in values
        values = [v for v in values if v is not None]
        if not values:
            out["type"] = "NULL"
            return False
        if not all(isinstance(v, str) for v in values):
            self.log.add(path, keyword, "values turned into strings (Gemini enums hold strings only)")
            values = [_text(v) for v in values]
            if out.get("type") not in (None, "STRING") and "format" not in node:
                out["format"] = "enum"  # the documented way to mark a non-string enum
        out["enum"] = values
        return nullable

    def _unions(self, node: JsonSchema, out: JsonSchema, path: str) -> bool:
        nullable = False
        for keyword in ("anyOf", "oneOf"):
            options = node.get(keyword)
            if not is_array(options):
                continue
            if keyword == "oneOf" and "anyOf" in out:
                self.log.add(path, "oneOf", "dropped (anyOf already present)")
                continue
            converted = [self.convert(o, f"{path}/{keyword}/{i}") for i, o in enumerate(options)]
            kept = [c for c in converted if not _is_null(c)]
            nullable |= len(kept) < len(converted)
            if len(kept) == 1:
                for key, value in kept[0].items():
                    out.setdefault(key, value)  # the outer description/default win over the member's
            elif kept:
                out["anyOf"] = kept
                if keyword == "oneOf":
                    self.log.add(path, "oneOf", "turned into anyOf (exclusivity not enforced)")
        return nullable

    def _all_of(self, node: JsonSchema, out: JsonSchema, path: str) -> None:
        members = node.get("allOf")
        if not is_array(members):
            return
        conflict = False
        for i, member in enumerate(members):
            for key, value in self.convert(member, f"{path}/allOf/{i}").items():
                if key == "properties" and is_object(out.get(key)):
                    out[key] = {**value, **out[key]}
                elif key == "required" and is_array(out.get(key)):
                    out[key] = [*out[key], *(r for r in value if r not in out[key])]
                elif key in out and out[key] != value:
                    conflict = True
                else:
                    out.setdefault(key, value)
        if conflict:
            self.log.add(path, "allOf", "merged into one schema (conflicting keywords keep the first value)")

    def _children(self, node: JsonSchema, out: JsonSchema, path: str) -> None:
        props = node.get("properties")
        if is_object(props):
            out["properties"] = {}
            for name, sub in props.items():
                where = f"{path}/properties/{name.replace('~', '~0').replace('/', '~1')}"
                if not PARAMETER_NAME.fullmatch(name):
                    self.log.add(where, "properties", f"name {name!r} breaks {PARAMETER_NAME.pattern}", rejected=True)
                out["properties"][name] = self.convert(sub, where)
        items = node.get("items")
        prefix = node.get("prefixItems")
        if is_array(prefix) and prefix:
            members = [self.convert(p, f"{path}/prefixItems/{i}") for i, p in enumerate(prefix)]
            if is_object(items):
                members.append(self.convert(items, f"{path}/items"))
            unique = [m for i, m in enumerate(members) if m not in members[:i]]
            out["items"] = unique[0] if len(unique) == 1 else {"anyOf": unique}
            self.log.add(path, "prefixItems", "turned into items (each position's own type is lost)")
        elif is_object(items) or items is True:
            out["items"] = self.convert(items, f"{path}/items")

    def _extra_properties(self, node: JsonSchema, out: JsonSchema, path: str) -> None:
        extra = node.get("additionalProperties")
        if extra is False:
            self.log.add(path, "additionalProperties", "dropped (the Gemini API rejects it in `parameters`)")
        elif extra is True or extra == {}:
            # Schema has no "any extra keys": the model is told only the listed ones (an extra="allow" model)
            self.log.add(path, "additionalProperties", "dropped: `parameters` cannot say extra keys are allowed")
        elif is_object(extra) and extra:
            out["additionalProperties"] = extra
            move_to_description(out, "additionalProperties", path, self.log, label="values")

    def _reference(self, node: JsonSchema, out: JsonSchema, path: str) -> None:
        ref = node.get("$ref")
        if isinstance(ref, str) and self.keep_refs and ref.startswith(("#/$defs/", "#/definitions/")):
            out["ref"] = re.sub(r"^#/(\$defs|definitions)/", "#/defs/", ref)
        elif isinstance(ref, str):
            self.log.add(path, "$ref", f"to {ref!r} dropped (only local $defs references can be resolved)")
        defs = {**node.get("definitions", {}), **node.get("$defs", {})}
        if defs and self.keep_refs:
            section = "$defs" if "$defs" in node else "definitions"
            out["defs"] = {name: self.convert(sub, f"/{section}/{name}") for name, sub in defs.items()}

    def _format(self, node: JsonSchema, out: JsonSchema, path: str) -> None:
        fmt = node.get("format")
        if not isinstance(fmt, str):
            return
        out["format"] = fmt
        if fmt not in _FORMATS.get(str(out.get("type")), set()):
            move_to_description(out, "format", path, self.log)

    def _examples(self, node: JsonSchema, out: JsonSchema, path: str) -> None:
        if "example" in node:
            out["example"] = copy.deepcopy(node["example"])
        examples = node.get("examples")
        if is_array(examples) and examples:
            out.setdefault("example", copy.deepcopy(examples[0]))
            if len(examples) > 1:
                self.log.add(path, "examples", "only the first kept (as `example`)")


class GeminiOpenAPIDialect(Dialect):
    """``parameters``: the OpenAPI 3.0 subset of google-genai's `types.Schema` (see the module docstring)."""

    name = "gemini-openapi"

    def rewrite(self, schema: JsonSchema, *, strict: bool | None) -> DialectResult:
        """Gemini's ``parameters`` Schema for `schema`; every lossy change is recorded."""
        log = LossLog()
        inlined = None if is_recursive(schema) else try_inline_refs(schema, log)
        # recursive, or inlining would multiply the definitions: send them as `defs`, once each
        keep_refs = inlined is None
        source = inline_root_ref(schema) if inlined is None else inlined
        out = _OpenAPIConverter(log, keep_refs=keep_refs).convert(source, "")
        if out.get("type") != "OBJECT":
            log.add("", "type", "root is not type object: Gemini requires an object schema", rejected=True)
        return log.result(out, strict is True)
