"""Raw JSON Schema dicts (`input_schema=`/`output_schema=` dicts, `Tool.from_json_schema`, interop).

Checked when the tool is defined: against the draft 2020-12 meta-schema, and every ``$ref`` must
resolve inside the document (remote references are never fetched: no network at validation time).

Validated with `jsonschema`, except that ``pattern`` and ``patternProperties`` (and the
``additionalProperties`` that depends on them) are matched by a linear-time engine, the Rust
``regex`` crate inside pydantic-core, as pydantic itself does: ``^(a+)+$`` cannot make a call
backtrack for seconds. A pattern that engine cannot compile (look-arounds, backreferences) is
matched by Python's `re`; such a schema is marked `needs_thread`, and callers validate it on a
worker thread, bounded by the tool's timeout, never on the event loop.
"""

from __future__ import annotations as _annotations

import functools
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ._error_paths import details_from_jsonschema
from ._text import clip
from .exceptions import ErrorDetail, ToolDefinitionError

__all__ = ["RawSchema", "linear_pattern"]

# Keywords whose value is a map of name -> subschema, a subschema, or a list of subschemas (draft 2020-12
# and the draft-7 forms still met in the wild).
_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies")
_ONE = (
    "additionalProperties", "unevaluatedProperties", "unevaluatedItems", "additionalItems", "items", "not", "if",
    "then", "else", "contains", "propertyNames", "contentSchema",
)  # fmt: skip
_MANY = ("allOf", "anyOf", "oneOf", "prefixItems", "items")


@functools.lru_cache(maxsize=4096)
def _linear_matcher(pattern: str) -> Callable[[str], bool] | None:
    """A linear-time `search` for `pattern` (Rust regex via pydantic-core), or None if it cannot compile it."""
    from pydantic_core import SchemaError, SchemaValidator, core_schema

    try:
        validator = SchemaValidator(core_schema.str_schema(pattern=pattern, strict=True))
    except SchemaError:
        return None
    return validator.isinstance_python


def linear_pattern(pattern: str) -> bool:
    """Whether `pattern` can be matched in linear time (the engine has no look-around or backreferences)."""
    return _linear_matcher(pattern) is not None


@functools.lru_cache(maxsize=4096)
def _python_matcher(pattern: str) -> Callable[[str], bool]:
    compiled = re.compile(pattern)
    return lambda text: compiled.search(text) is not None


def search(pattern: str, text: str) -> bool:
    """``re.search(pattern, text)`` semantics, in linear time whenever the pattern allows it."""
    matcher = _linear_matcher(pattern)
    return (matcher or _python_matcher(pattern))(text)


def _subschemas(schema: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    for key in _MAPS:
        value = schema.get(key)
        if isinstance(value, Mapping):
            for name, sub in value.items():
                if isinstance(sub, (Mapping, bool)):
                    yield f"{key}/{name}", sub
    for key in _ONE:
        value = schema.get(key)
        if isinstance(value, (Mapping, bool)):
            yield key, value
    for key in _MANY:
        value = schema.get(key)
        if isinstance(value, list):
            for index, sub in enumerate(value):
                yield f"{key}/{index}", sub


def _walk(schema: Any, pointer: str = "") -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every subschema with its JSON pointer (iteratively: a schema may be nested very deeply)."""
    stack = [(pointer, schema)]
    while stack:
        where, node = stack.pop()
        if not isinstance(node, Mapping):
            continue
        yield where, node
        stack.extend((f"{where}/{key}", sub) for key, sub in _subschemas(node))


@functools.lru_cache(maxsize=1)
def _linear_validator_class() -> Any:
    from jsonschema import Draft202012Validator, validators
    from jsonschema.exceptions import ValidationError

    def pattern(validator: Any, patrn: str, instance: Any, schema: Any) -> Iterator[Any]:
        if validator.is_type(instance, "string") and not search(patrn, instance):
            yield ValidationError(f"{clip(repr(instance), 80)} does not match {patrn!r}")

    def pattern_properties(validator: Any, value: Mapping[str, Any], instance: Any, schema: Any) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        for patrn, subschema in value.items():
            for key, item in instance.items():
                if search(patrn, key):
                    yield from validator.descend(item, subschema, path=key, schema_path=patrn)

    def additional_properties(validator: Any, extra: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        properties = schema.get("properties", {})
        patterns = list(schema.get("patternProperties", {}))
        extras = [k for k in instance if k not in properties and not any(search(p, k) for p in patterns)]
        if validator.is_type(extra, "object"):
            for key in extras:
                yield from validator.descend(instance[key], extra, path=key)
        elif not extra and extras:
            names = ", ".join(repr(k) for k in sorted(extras, key=str)[:20])
            if patterns:
                yield ValidationError(f"{names} do not match any of the regexes: {', '.join(map(repr, patterns))}")
            else:
                yield ValidationError(f"Additional properties are not allowed ({names} unexpected)")

    return validators.extend(
        Draft202012Validator,
        {"pattern": pattern, "patternProperties": pattern_properties, "additionalProperties": additional_properties},
    )


class RawSchema:
    """A raw JSON Schema, checked when the tool is defined, validated without blocking on a regex."""

    def __init__(self, schema: Mapping[str, Any], *, qualname: str, role: str) -> None:
        from jsonschema import Draft202012Validator
        from jsonschema.exceptions import SchemaError

        self.schema = dict(schema)
        try:
            Draft202012Validator.check_schema(self.schema)
        except SchemaError as exc:
            raise ToolDefinitionError(
                qualname, [f"{role}= is not a valid JSON Schema (draft 2020-12): {clip(exc.message, 300)}"]
            ) from None
        except RecursionError:
            raise ToolDefinitionError(qualname, [f"{role}= is nested too deeply to be checked"]) from None
        registry, resolver = self._resolver()
        problems = list(self._unresolved(resolver, role))
        if problems:
            raise ToolDefinitionError(qualname, problems)
        patterns = [p for _, node in _walk(self.schema) for p in _patterns_of(node)]
        unevaluated = any("unevaluatedProperties" in node for _, node in _walk(self.schema))
        self.needs_thread = any(not linear_pattern(p) for p in patterns) or (unevaluated and bool(patterns))
        """Validation may run Python's backtracking `re` (or jsonschema's own pattern matching): run it on a
        worker thread, bounded by the tool's timeout."""
        self.validator: Any = _linear_validator_class()(self.schema, registry=registry)

    def _resolver(self) -> tuple[Any, Any]:
        from referencing import Registry
        from referencing.jsonschema import DRAFT202012

        resource = DRAFT202012.create_resource(self.schema)
        base = resource.id() or ""
        registry: Any = Registry().with_resource(base, resource).crawl()
        return registry, registry.resolver(base_uri=base)

    def _unresolved(self, resolver: Any, role: str) -> Iterator[str]:
        from referencing.exceptions import Unresolvable
        from referencing.jsonschema import DRAFT202012

        stack: list[tuple[str, Any, Any]] = [("", self.schema, resolver)]
        while stack:
            where, node, scope = stack.pop()
            if not isinstance(node, Mapping):
                continue
            if isinstance(node.get("$id"), str) and where:
                scope = scope.in_subresource(DRAFT202012.create_resource(node))
            for keyword in ("$ref", "$dynamicRef"):
                ref = node.get(keyword)
                if isinstance(ref, str):
                    try:
                        scope.lookup(ref)
                    except Unresolvable:
                        yield (
                            f"{role}= has a {keyword} that does not resolve: {ref!r} at {where or '/'}. Define the "
                            "target in the schema (under $defs) or inline it; remote references are never fetched"
                        )
            stack.extend((f"{where}/{key}", sub, scope) for key, sub in _subschemas(node))

    def errors(self, instance: Any) -> list[ErrorDetail]:
        """Every way `instance` breaks the schema (empty when it fits)."""
        try:
            return details_from_jsonschema(self.validator.iter_errors(instance))
        except RecursionError:
            return [ErrorDetail("$", "The value is nested too deeply to be validated", instance, "too_deep")]


def _patterns_of(node: Mapping[str, Any]) -> list[str]:
    found = [node["pattern"]] if isinstance(node.get("pattern"), str) else []
    properties = node.get("patternProperties")
    if isinstance(properties, Mapping):
        found.extend(p for p in properties if isinstance(p, str))
    return found
