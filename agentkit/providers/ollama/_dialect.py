"""Ollama's schema dialect: what survives the server's Go structs, with the rest folded into descriptions.

Ollama decodes ``function.parameters`` into Go structs (api/types.go ``ToolFunctionParameters`` and
``ToolProperty``) and renders them into the chat template; nothing constrains decoding. Whatever the
structs lack is silently dropped, so this dialect makes the loss explicit and keeps the meaning where it
can (WIRE-FORMATS §8, constraints.json ``ollama``):

* ``$ref``s are inlined and ``$defs`` removed (property-level ``$ref`` is dropped by the server);
  recursive references are cut and recorded;
* the root keeps ``type``, ``properties``, ``required`` and ``items``; other root keywords are dropped;
* every subschema keeps ``type``, ``description``, ``enum``, ``anyOf``, ``items``, ``properties`` and
  ``required``; ``const`` becomes a one-value ``enum``, ``oneOf`` becomes ``anyOf``, ``title`` and
  ``$comment`` are dropped, and every other keyword (``default``, ``format``, ``minimum``, ``pattern``,
  ``additionalProperties``, ...) is moved into the description, where the model still reads it.

There is no strict mode: ``strict=True`` is recorded as a loss and the result is never strict.
"""

from __future__ import annotations as _annotations

from ..._json_schema import JsonSchema
from .._dialect import Dialect, DialectResult, LossLog, drop_keyword, inline_refs, move_to_description, walk_schemas

_SAYS_WHAT_IT_IS = ("type", "anyOf", "oneOf", "allOf", "enum", "const", "$ref", "properties", "items", "prefixItems")

__all__ = ["PROPERTY_KEYS", "ROOT_KEYS", "OllamaDialect", "format_schema"]

ROOT_KEYS = frozenset({"type", "items", "required", "properties"})
"""Root keywords the server keeps (``$defs`` too, but it is inlined here)."""
PROPERTY_KEYS = frozenset({"anyOf", "type", "items", "description", "enum", "properties", "required"})
"""Subschema keywords the server keeps (api/types.go ``ToolProperty``)."""
_DROP = frozenset({"title", "$comment", "$schema", "$id"})


def _visit(node: JsonSchema, path: str, log: LossLog) -> None:
    if path == "":
        for keyword in sorted(set(node) - ROOT_KEYS):
            drop_keyword(node, keyword, path, log)
        return
    if "const" in node and "enum" not in node:
        node["enum"] = [node.pop("const")]  # same meaning, in a keyword the server keeps
    if "oneOf" in node and "anyOf" not in node:
        node["anyOf"] = node.pop("oneOf")
        log.add(path, "oneOf", "turned into anyOf (exclusivity not enforced)")
    for keyword in sorted(set(node) - PROPERTY_KEYS):
        if keyword in _DROP:
            drop_keyword(node, keyword, path, log)
        else:
            move_to_description(node, keyword, path, log)


class OllamaDialect(Dialect):
    """Inline ``$ref``s, keep what Ollama's structs keep, fold the rest into descriptions."""

    name = "ollama"

    def rewrite(self, schema: JsonSchema, *, strict: bool | None) -> DialectResult:
        """Ollama's schema for `schema` (never strict)."""
        log = LossLog()
        if strict:
            log.add("", "strict", "not supported: Ollama does not constrain decoding to the schema")
        out = inline_refs(schema, log)  # a deep copy: safe to edit in place
        out.setdefault("type", "object")
        if out.get("type") == "object":
            out.setdefault("properties", {})
        walk_schemas(out, lambda node, path: _visit(node, path, log))
        return log.result(out, False)


def format_schema(schema: JsonSchema) -> DialectResult:
    """The output schema as ``format`` sends it: the canonical one, with every node Ollama refuses recorded.

    The server turns ``format`` into a grammar, and its converter refuses a subschema that does not say what
    it is (``Any``, ``{}``, a lone description): HTTP 500 "invalid JSON schema in format" on every request.
    Such a schema is recorded as rejected, so the output is asked for with the output tool instead.
    """
    log = LossLog()

    def visit(node: JsonSchema, path: str) -> None:
        if path and not any(key in node for key in _SAYS_WHAT_IT_IS):
            log.add(path, "type", "an untyped (any value) schema: Ollama's format grammar refuses it", rejected=True)

    walk_schemas(schema, visit)
    return log.result(schema, True)
