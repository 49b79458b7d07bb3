"""A fast first pass of the draft 2020-12 meta-schema check, for raw JSON Schema dicts.

jsonschema's ``check_schema`` walks the meta-schema through ``$dynamicRef`` look-ups, about 2 ms for a
six-parameter tool: every MCP tool, imported definition and tool-search corpus entry paid it. This
walk answers "certainly valid" in one pass over the schema, keyword by keyword, as the meta-schema's
vocabularies say (core, applicator, unevaluated, validation, meta-data, format-annotation, content,
and the older keywords the meta-schema still describes). Anything it is unsure of (an unusual
keyword value, a float where an integer is expected, a deep schema, a URI that a format checker
would inspect) answers False, and the caller runs jsonschema's own check, which either passes or
gives the exact error. So the verdict is never looser than jsonschema's: `certainly_valid` True
implies ``Draft202012Validator.check_schema`` passes (tests compare the two on generated schemas).
"""

from __future__ import annotations as _annotations

import functools
import math
import re
from typing import Any

from ._jsonish import is_array, is_object

__all__ = ["MAX_FAST_DEPTH", "certainly_valid"]

MAX_FAST_DEPTH = 64
"""Nesting beyond this goes to jsonschema, which reports a schema too deep to be checked."""

_SIMPLE_TYPES = frozenset(("array", "boolean", "integer", "null", "number", "object", "string"))
_SCHEMA = frozenset((
    "items", "contains", "additionalProperties", "propertyNames", "if", "then", "else", "not",
    "unevaluatedItems", "unevaluatedProperties", "contentSchema",
))  # fmt: skip
_SCHEMA_MAP = frozenset(("properties", "$defs", "definitions", "dependentSchemas"))
_SCHEMA_ARRAY = frozenset(("prefixItems", "allOf", "anyOf", "oneOf"))
_STRING = frozenset(("title", "description", "$comment", "format", "contentEncoding", "contentMediaType"))
_BOOLEAN = frozenset(("uniqueItems", "deprecated", "readOnly", "writeOnly"))
_NUMBER = frozenset(("maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"))
_COUNT = frozenset((
    "maxLength", "minLength", "maxItems", "minItems", "maxContains", "minContains", "maxProperties",
    "minProperties",
))  # fmt: skip
_ARRAY = frozenset(("enum", "examples"))
_ANY = frozenset(("const", "default"))
_ANCHOR = re.compile(r"[A-Za-z_][-A-Za-z0-9._]*")
# a same-document reference whose characters are all allowed in a URI fragment (RFC 3986): valid
# whatever uri-reference checker is installed
_LOCAL_REF = re.compile(r"#[A-Za-z0-9\-._~!$&'()*+,;=:@/?]*")


@functools.lru_cache(maxsize=1)
def _uri_formats_checked() -> bool:
    """Whether jsonschema's default format checker inspects URIs (it does once rfc3987 or similar is installed)."""
    from jsonschema import Draft202012Validator

    checkers = Draft202012Validator.FORMAT_CHECKER.checkers
    return any(name in checkers for name in ("uri", "uri-reference", "iri", "iri-reference"))


@functools.lru_cache(maxsize=4096)
def _compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)  # what jsonschema's "regex" format checker does
    except (re.error, RecursionError, OverflowError, ValueError, TypeError):
        return False
    return True


def _number(value: Any) -> bool:
    return type(value) is int or (type(value) is float and math.isfinite(value))


def _count(value: Any) -> bool:
    return type(value) is int and value >= 0


def _strings(value: Any) -> bool:
    return is_array(value) and all(isinstance(s, str) for s in value)


def _string_array(value: Any) -> bool:
    return _strings(value) and len(set(value)) == len(value)


def _types(value: Any) -> bool:
    if isinstance(value, str):
        return value in _SIMPLE_TYPES
    return _string_array(value) and bool(value) and all(t in _SIMPLE_TYPES for t in value)


def _uri(value: Any) -> bool:
    return isinstance(value, str) and (not _uri_formats_checked() or _LOCAL_REF.fullmatch(value) is not None)


def certainly_valid(schema: Any) -> bool:  # noqa: C901 - one flat keyword table, read top to bottom
    """True only when `schema` passes the draft 2020-12 meta-schema check; False means "ask jsonschema"."""
    stack: list[tuple[Any, int]] = [(schema, 0)]
    push = stack.append
    while stack:
        node, depth = stack.pop()
        if isinstance(node, bool):
            continue
        if not is_object(node) or depth > MAX_FAST_DEPTH:
            return False
        below = depth + 1
        for key, value in node.items():
            if key in _SCHEMA:
                push((value, below))
            elif key in _SCHEMA_MAP:
                if not is_object(value):
                    return False
                stack.extend((sub, below) for sub in value.values())
            elif key in _SCHEMA_ARRAY:
                if not is_array(value) or not value:
                    return False
                stack.extend((sub, below) for sub in value)
            elif key == "type":
                if not _types(value):
                    return False
            elif key in _STRING:
                if not isinstance(value, str):
                    return False
            elif key in _ANY:
                continue
            elif key in _ARRAY:
                if not is_array(value):
                    return False
            elif key == "required":
                if not _string_array(value):
                    return False
            elif key in _NUMBER:
                if not _number(value):
                    return False
            elif key in _COUNT:
                if not _count(value):
                    return False
            elif key in _BOOLEAN:
                if type(value) is not bool:
                    return False
            elif key == "pattern":
                if not isinstance(value, str) or not _compiles(value):
                    return False
            elif key == "patternProperties":
                if not is_object(value) or not all(_compiles(p) for p in value):
                    return False
                stack.extend((sub, below) for sub in value.values())
            elif key == "multipleOf":
                if not _number(value) or value <= 0:
                    return False
            elif key == "dependentRequired":
                if not is_object(value) or not all(_string_array(v) for v in value.values()):
                    return False
            elif key == "dependencies":
                if not is_object(value):
                    return False
                for sub in value.values():
                    if is_array(sub):
                        if not _string_array(sub):
                            return False
                    else:
                        push((sub, below))
            elif key in ("$ref", "$dynamicRef", "$recursiveRef"):
                if not _uri(value):
                    return False
            elif key in ("$anchor", "$dynamicAnchor", "$recursiveAnchor"):
                if not isinstance(value, str) or _ANCHOR.fullmatch(value) is None:
                    return False
            elif key in ("$id", "$schema", "$vocabulary"):
                return False  # rare in tool schemas, and checked against URI formats: jsonschema decides
        # any other key is not a keyword of the meta-schema, which allows it
    return True
