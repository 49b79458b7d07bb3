"""Raw JSON Schema dicts (`input_schema=`/`output_schema=` dicts, `Tool.from_json_schema`, interop).

Checked when the tool is defined: against the draft 2020-12 meta-schema, and every ``$ref`` must
resolve inside the document (remote references are never fetched: no network at validation time).

Validated with `jsonschema`, except that ``pattern`` and ``patternProperties`` (and the
``additionalProperties``/``unevaluatedProperties`` that depend on them) are matched by a
linear-time engine, the Rust ``regex`` crate inside pydantic-core, as pydantic itself does:
``^(a+)+$`` cannot make a call backtrack for seconds. A pattern that engine cannot compile
(look-arounds, backreferences) is matched by the `regex` module, which releases the GIL and stops
after a budget (the tool's timeout, else `PATTERN_TIMEOUT`); such a schema is marked
`needs_thread`, and callers validate it on a worker thread, never on the event loop. (Python's own
`re` holds the GIL while it matches, so a worker thread alone would not free the loop.)
"""

from __future__ import annotations as _annotations

import contextlib
import contextvars
import functools
import re
from collections.abc import Callable, Generator, Iterator, Mapping
from typing import Any

from ._error_paths import details_from_jsonschema
from ._jsonish import is_array, is_mapping
from ._meta_schema import certainly_valid
from ._text import clip
from .exceptions import ErrorDetail, ToolDefinitionError

__all__ = ["PATTERN_TIMEOUT", "RawSchema", "linear_pattern", "pattern_budget", "search"]

# Keywords whose value is a map of name -> subschema, a subschema, or a list of subschemas (draft 2020-12
# and the draft-7 forms still met in the wild).
_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies")
_ONE = (
    "additionalProperties", "unevaluatedProperties", "unevaluatedItems", "additionalItems", "items", "not", "if",
    "then", "else", "contains", "propertyNames", "contentSchema",
)  # fmt: skip
_MANY = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
_MAP_KEYS = frozenset(_MAPS)
_SCHEMA_KEYS = frozenset((*_ONE, *_MANY))


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


PATTERN_TIMEOUT = 5.0
"""Seconds one backtracking pattern match may take when the tool sets no `timeout` of its own."""

_BUDGET: contextvars.ContextVar[float] = contextvars.ContextVar("agentkit_pattern_budget", default=PATTERN_TIMEOUT)


class _PatternTimeout(Exception):  # noqa: N818 - never leaves agentkit: it becomes an ErrorDetail
    """A backtracking pattern did not finish matching within its budget."""

    def __init__(self, pattern: str, seconds: float) -> None:
        self.pattern = pattern
        self.seconds = seconds
        super().__init__(pattern, seconds)

    def __str__(self) -> str:
        return f"the value could not be matched against pattern {self.pattern!r} within {self.seconds:g} s"


@contextlib.contextmanager
def pattern_budget(seconds: float | None) -> Generator[None, None, None]:
    """Let backtracking pattern matches in this context take at most `seconds` (None: the default)."""
    token = _BUDGET.set(seconds if seconds is not None else PATTERN_TIMEOUT)
    try:
        yield
    finally:
        _BUDGET.reset(token)


@functools.lru_cache(maxsize=4096)
def _backtracking_matcher(pattern: str) -> Any:
    import regex  # the `regex` module: look-arounds, backreferences, a timeout, and it releases the GIL

    return regex.compile(pattern)


def search(pattern: str, text: str) -> bool:
    """``re.search(pattern, text)`` semantics, in linear time whenever the pattern allows it.

    Other patterns are matched by the `regex` module, which releases the GIL while it matches (so a
    worker thread really is off the event loop) and stops after the current budget.

    Raises:
        _PatternTimeout: a backtracking match ran past its budget (`pattern_budget`).
    """
    matcher = _linear_matcher(pattern)
    if matcher is not None:
        return matcher(text)
    seconds = _BUDGET.get()
    try:
        return _backtracking_matcher(pattern).search(text, concurrent=True, timeout=seconds) is not None
    except TimeoutError:
        raise _PatternTimeout(pattern, seconds) from None


def _subschemas(schema: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    for key in _MAPS:
        value = schema.get(key)
        if is_mapping(value):
            for name, sub in value.items():
                if isinstance(sub, (Mapping, bool)):
                    yield f"{key}/{name}", sub
    for key in _ONE:
        value = schema.get(key)
        if isinstance(value, (Mapping, bool)):
            yield key, value
    for key in _MANY:
        value = schema.get(key)
        if is_array(value):
            for index, sub in enumerate(value):
                yield f"{key}/{index}", sub


def _survey(schema: Any) -> tuple[list[str] | None, list[str]]:
    """Every ``$ref``/``$dynamicRef`` and every pattern, in one iterative walk.

    The references are None when an ``$id`` or an anchor may change what they mean.
    """
    refs: list[str] | None = []
    patterns: list[str] = []
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if not is_mapping(node):
            continue
        for key, value in node.items():
            if key in _MAP_KEYS:
                if is_mapping(value):
                    stack.extend(value.values())
                    if key == "patternProperties":
                        patterns.extend(p for p in value if isinstance(p, str))  # pyright: ignore[reportUnnecessaryIsInstance]  # any key
            elif key in _SCHEMA_KEYS:
                if is_array(value):
                    stack.extend(value)
                else:
                    stack.append(value)
            elif key == "pattern":
                if isinstance(value, str):
                    patterns.append(value)
            elif key in _REF_KEYS:
                if isinstance(value, str) and refs is not None:
                    refs.append(value)
            elif key in _SCOPE_KEYS:
                refs = None
    return refs, patterns


_REF_KEYS = frozenset(("$ref", "$dynamicRef"))
_SCOPE_KEYS = frozenset(("$id", "$anchor", "$dynamicAnchor", "$recursiveAnchor", "$recursiveRef"))
_PLAIN_POINTER = re.compile(r"#(?:/[A-Za-z0-9_.$-]*)*")


def _local_target(schema: Mapping[str, Any], ref: str) -> bool:
    """Whether `ref` is a same-document JSON pointer without escapes that reaches a subschema of `schema`."""
    if _PLAIN_POINTER.fullmatch(ref) is None:
        return False
    node: Any = schema
    for part in ref[2:].split("/") if len(ref) > 1 else ():
        if is_mapping(node) and part in node:
            node = node[part]
        elif is_array(node) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False
    return isinstance(node, (Mapping, bool))


def _error(message: str) -> Any:
    from jsonschema.exceptions import ValidationError

    return ValidationError(message)


def _pattern(validator: Any, patrn: str, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "string") and not search(patrn, instance):
        yield _error(f"{clip(repr(instance), 80)} does not match {patrn!r}")


def _pattern_properties(validator: Any, value: Mapping[str, Any], instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for patrn, subschema in value.items():
        for key, item in instance.items():
            if search(patrn, key):
                yield from validator.descend(item, subschema, path=key, schema_path=patrn)


def _additional_properties(validator: Any, extra: Any, instance: Any, schema: Any) -> Iterator[Any]:
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
            yield _error(f"{names} do not match any of the regexes: {', '.join(map(repr, patterns))}")
        else:
            yield _error(f"Additional properties are not allowed ({names} unexpected)")


def _unevaluated_properties(validator: Any, unevaluated: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    evaluated = set(_evaluated_keys(validator, instance, schema))
    failing = [
        key
        for key in instance
        if key not in evaluated
        and next(validator.descend(instance[key], unevaluated, path=key, schema_path=key), None) is not None
    ]
    if failing:
        names = ", ".join(repr(k) for k in sorted(failing, key=str)[:20])
        what = "are not allowed" if unevaluated is False else "are not valid under the given schema"
        yield _error(f"Unevaluated properties {what} ({names} unexpected)")


@functools.lru_cache(maxsize=1)
def linear_validator_class() -> Any:
    """Draft 2020-12 with every pattern matched by `search`."""
    from jsonschema import Draft202012Validator, validators

    # typeshed's jsonschema stub leaves extend's validator-callable types unknown
    return validators.extend(  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        Draft202012Validator,
        {
            "pattern": _pattern,
            "patternProperties": _pattern_properties,
            "additionalProperties": _additional_properties,
            "unevaluatedProperties": _unevaluated_properties,
        },
    )


def _evaluated_keys(validator: Any, instance: Mapping[str, Any], schema: Any) -> Iterator[str]:
    """The keys `schema` evaluates (jsonschema's rule for ``unevaluatedProperties``, with linear-time patterns)."""
    if not is_mapping(schema):
        return
    for keyword in ("$ref", "$dynamicRef"):
        ref = schema.get(keyword)
        if isinstance(ref, str):
            resolved = validator._resolver.lookup(ref)
            inner = validator.evolve(schema=resolved.contents, _resolver=resolved.resolver)
            yield from _evaluated_keys(inner, instance, resolved.contents)
    properties = schema.get("properties")
    if is_mapping(properties):
        yield from (k for k in instance if k in properties)
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        sub = schema.get(keyword)
        if sub is not None:
            yield from (k for k, v in instance.items() if next(validator.descend(v, sub), None) is None)
    patterns: Mapping[str, Any] = schema.get("patternProperties") or {}
    for patrn in patterns:
        yield from (k for k in instance if search(patrn, k))
    dependent: Mapping[str, Any] = schema.get("dependentSchemas") or {}
    for key, sub in dependent.items():
        if key in instance:
            yield from _evaluated_keys(validator, instance, sub)
    for keyword in ("allOf", "oneOf", "anyOf"):
        subs: list[Any] = schema.get(keyword) or []
        for sub in subs:
            if next(validator.descend(instance, sub), None) is None:
                yield from _evaluated_keys(validator, instance, sub)
    if "if" in schema:
        if validator.evolve(schema=schema["if"]).is_valid(instance):
            yield from _evaluated_keys(validator, instance, schema["if"])
            yield from _evaluated_keys(validator, instance, schema.get("then"))
        else:
            yield from _evaluated_keys(validator, instance, schema.get("else"))


def _check_schema(schema: dict[str, Any], qualname: str, role: str) -> None:
    """The draft 2020-12 meta-schema check by jsonschema, its first error as a definition error."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise ToolDefinitionError(
            qualname, [f"{role}= is not a valid JSON Schema (draft 2020-12): {clip(exc.message, 300)}"]
        ) from None
    except RecursionError:
        raise ToolDefinitionError(qualname, [f"{role}= is nested too deeply to be checked"]) from None


class RawSchema:
    """A raw JSON Schema, checked when the tool is defined, validated without blocking on a regex."""

    def __init__(self, schema: Mapping[str, Any], *, qualname: str, role: str) -> None:
        self.schema = dict(schema)
        if not certainly_valid(self.schema):  # the cheap pass; jsonschema decides what it is unsure of
            _check_schema(self.schema, qualname, role)
        refs, patterns = _survey(self.schema)
        self._registry: Any = None
        if refs is None or not all(_local_target(self.schema, ref) for ref in refs):
            # references are resolved now (a dangling one is a definition error); plain same-document
            # pointers were followed above, anything else ($id scopes, anchors, escapes) by `referencing`
            self._registry, resolver = self._resolver()
            problems = list(self._unresolved(resolver, role))
            if problems:
                raise ToolDefinitionError(qualname, problems)
        self.needs_thread = any(not linear_pattern(p) for p in patterns)
        """Validation may run a backtracking pattern match: run it on a worker thread, bounded by the
        tool's timeout (`pattern_budget`)."""

    @functools.cached_property
    def validator(self) -> Any:
        """The jsonschema validator (patterns in linear time), made on first use: many tools are never called."""
        registry = self._registry if self._registry is not None else self._resolver()[0]
        return linear_validator_class()(self.schema, registry=registry)

    def _resolver(self) -> tuple[Any, Any]:
        from referencing import Registry
        from referencing.jsonschema import DRAFT202012

        resource = DRAFT202012.create_resource(self.schema)
        base = resource.id() or ""
        empty: Registry[Any] = Registry()
        registry: Any = empty.with_resource(base, resource).crawl()
        return registry, registry.resolver(base_uri=base)

    def _unresolved(self, resolver: Any, role: str) -> Iterator[str]:
        from referencing.exceptions import Unresolvable
        from referencing.jsonschema import DRAFT202012

        stack: list[tuple[str, Any, Any]] = [("", self.schema, resolver)]
        while stack:
            where, node, scope = stack.pop()
            if not is_mapping(node):
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
        except _PatternTimeout as exc:
            return [ErrorDetail("$", f"{exc}; send a simpler value", instance, "pattern_timeout")]
