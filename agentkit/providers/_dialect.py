"""The dialect contract, loss records, and schema-walking helpers every `<vendor>/_dialect.py` shares."""

from __future__ import annotations as _annotations

import copy
import json
import sys
import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from .._json_schema import JsonSchema
from .._jsonish import is_array, is_object

if TYPE_CHECKING:
    from ..definitions import ToolDefinition

__all__ = [
    "Dialect",
    "DialectResult",
    "Loss",
    "LossLog",
    "count_subschemas",
    "describe",
    "fallback",
    "inline_limit",
    "inline_refs",
    "inline_root_ref",
    "move_to_description",
    "object_root",
    "try_inline_refs",
    "walk_schemas",
]


@dataclass(frozen=True, slots=True)
class Loss:
    """One change a dialect made that the vendor's model will not see as the canonical schema says."""

    path: str
    """JSON pointer of the subschema in the canonical schema (``""`` is the root)."""
    keyword: str
    """The keyword concerned, e.g. ``exclusiveMinimum``."""
    change: str
    """What happened, e.g. ``dropped``, ``moved into the description``, ``enum values turned into strings``."""
    rejected: bool = False
    """True when the vendor rejects the schema outright rather than losing meaning."""

    def __str__(self) -> str:
        where = self.path or "/"
        return f"{where}: {self.keyword} {self.change}" + (" (rejected by the vendor)" if self.rejected else "")


@dataclass(frozen=True, slots=True)
class DialectResult:
    """A vendor's version of one schema, whether strict applies, and what was lost on the way."""

    schema: JsonSchema
    strict: bool
    losses: tuple[Loss, ...] = ()

    @property
    def rejected(self) -> tuple[Loss, ...]:
        """The losses that make the vendor reject the schema."""
        return tuple(loss for loss in self.losses if loss.rejected)


class LossLog:
    """Collects `Loss` records while a dialect rewrites a schema."""

    def __init__(self) -> None:
        self.items: list[Loss] = []

    def add(self, path: str, keyword: str, change: str, *, rejected: bool = False) -> None:
        """Record one change."""
        self.items.append(Loss(sys.intern(path), keyword, change, rejected))  # paths repeat across tools

    def result(self, schema: JsonSchema, strict: bool) -> DialectResult:
        """Freeze the log into a `DialectResult`."""
        return DialectResult(schema=schema, strict=strict, losses=tuple(self.items))


class Dialect(ABC):
    """A vendor's JSON Schema dialect. `rewrite` must be pure: same input, same output, input untouched.

    `result` caches `rewrite` per tool definition and strictness on the dialect instance, so providers
    sharing a dialect (OpenAI Chat and Responses) keep one copy of each result.
    """

    name: str = "dialect"

    def result(self, definition: ToolDefinition, strict: bool | None) -> DialectResult:
        """`rewrite` of the definition's input schema, computed once per (definition, strict)."""
        state = vars(self)  # the instance's own attributes
        cache: PerDefinition[bool | None, DialectResult] | None = state.get("_results")
        if cache is None:
            cache = state["_results"] = PerDefinition[bool | None, DialectResult]()
        hit = cache.get(definition, strict)
        if hit is None:
            hit = cache.put(definition, strict, self.rewrite(definition.input_schema, strict=strict))
        return hit

    @abstractmethod
    def rewrite(self, schema: JsonSchema, *, strict: bool | None) -> DialectResult:
        """The vendor's schema for canonical `schema`.

        `strict`: True forces strict (recording what strict cannot express as rejected), False never
        strict, None strict when the schema allows it.
        """


_K = TypeVar("_K")
_V = TypeVar("_V")


class PerDefinition(Generic[_K, _V]):
    """Values per (tool definition, variant), kept while the definition lives.

    Most definitions only ever have one variant, so that one is stored as a pair and a dict is made only
    for a second: per tool, a cache entry is one weak reference and one small tuple. A plain dict keyed by
    weak references (what ``WeakKeyDictionary`` keeps, without its Python-level layers): a first payload
    of 1,000 tools misses and fills two of these per tool.
    """

    __slots__ = ("__weakref__", "_data", "_remove")

    def __init__(self) -> None:
        self._data: dict[weakref.ref[ToolDefinition], tuple[_K, _V] | dict[_K, _V]] = {}
        owner = weakref.ref(self)

        def remove(key: weakref.ref[ToolDefinition]) -> None:  # the definition is gone: so is its entry
            this = owner()
            if this is not None:
                this._data.pop(key, None)

        self._remove = remove

    def get(self, definition: ToolDefinition, variant: _K) -> _V | None:
        """The value for (`definition`, `variant`), or None."""
        found = self._data.get(weakref.ref(definition))
        if found is None:
            return None
        if isinstance(found, tuple):
            return found[1] if found[0] == variant else None
        return found.get(variant)

    def put(self, definition: ToolDefinition, variant: _K, value: _V) -> _V:
        """Store `value` for (`definition`, `variant`) and return it."""
        data = self._data
        found = data.get(weakref.ref(definition))
        if found is None:
            data[weakref.ref(definition, self._remove)] = (variant, value)
        elif isinstance(found, tuple):
            data[weakref.ref(definition, self._remove)] = {found[0]: found[1], variant: value}
        else:
            found[variant] = value
        return value


_T = TypeVar("_T")


def per_result(measure: Callable[[JsonSchema], _T]) -> Callable[[DialectResult], _T]:
    """`measure` of a dialect result's schema, computed once per (cached, immutable) result.

    For per-request rules that sum a measure over every tool sent (Anthropic's strict budget, Cohere's
    field limit): a new registry of the same tools then costs a lookup per tool, not a schema walk.
    """
    memo: dict[int, tuple[DialectResult, _T]] = {}

    def measured(result: DialectResult) -> _T:
        hit = memo.get(id(result))
        if hit is not None and hit[0] is result:
            return hit[1]
        if len(memo) > 8192:
            memo.clear()
        value = measure(result.schema)
        memo[id(result)] = (result, value)  # the result is kept alive, so its id cannot be reused
        return value

    return measured


# ---- helpers ---------------------------------------------------------------------------------------

_MAPS = ("properties", "$defs", "definitions", "patternProperties")
_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SINGLES = ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames")
_CHILDREN = frozenset((*_MAPS, *_LISTS, *_SINGLES))
_RANK = {key: i for i, key in enumerate((*_MAPS, *_LISTS, *_SINGLES))}
_MAP_KEYS = frozenset(_MAPS)
_LIST_KEYS = frozenset(_LISTS)


def walk_schemas(schema: Any, visit: Callable[[JsonSchema, str], None], path: str = "") -> None:
    """Call ``visit(subschema, json_pointer)`` on every subschema, parents before children.

    `visit` may modify the subschema in place (work on a copy: see `copy.deepcopy`).
    """
    if not is_object(schema):
        return
    visit(schema, path)
    for key in _children_of(schema):
        sub = schema.get(key)
        if key in _MAP_KEYS:
            if is_object(sub):
                for name, child in sub.items():
                    walk_schemas(child, visit, f"{path}/{key}/{_escape(name)}")
        elif key in _LIST_KEYS:
            if is_array(sub):
                for i, child in enumerate(sub):
                    walk_schemas(child, visit, f"{path}/{key}/{i}")
        elif is_object(sub):
            walk_schemas(sub, visit, f"{path}/{key}")


def _children_of(schema: JsonSchema) -> list[str] | tuple[()]:
    """The keywords of `schema` that hold subschemas, in walking order (maps, lists, singles)."""
    present = _CHILDREN.intersection(schema)
    if not present:
        return ()  # a leaf, as most subschemas are
    return sorted(present, key=_RANK.__getitem__) if len(present) > 1 else list(present)


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1") if ("~" in name or "/" in name) else name


def fallback(schema: JsonSchema, log: LossLog, note: str = "sent non-strict") -> DialectResult:
    """The non-strict `schema`, reporting why strict was not used: `log`'s rejections, each with `note`.

    What ``strict=None`` gives when the strict rewrite would be refused: the tool still works, and a
    compatibility report says which subschema kept it from being strict.
    """
    notes = tuple(Loss(loss.path, loss.keyword, f"{loss.change}; {note}") for loss in log.items if loss.rejected)
    return DialectResult(schema=schema, strict=False, losses=notes)


def move_to_description(node: JsonSchema, keyword: str, path: str, log: LossLog, *, label: str | None = None) -> None:
    """Remove `keyword` from `node`, append it to the node's description, and record the loss."""
    if keyword in node:
        describe(node, keyword, label)
        log.add(path, keyword, "moved into the description")


def describe(node: JsonSchema, keyword: str, label: str | None = None) -> None:
    """Remove `keyword` from `node` and append it to the node's description (`move_to_description` unlogged)."""
    value = node.pop(keyword)
    text = f"{label or keyword}: {json.dumps(value, ensure_ascii=False)}"
    description = node.get("description")
    node["description"] = f"{description} ({text})" if description else text


def inline_root_ref(schema: JsonSchema) -> JsonSchema:
    """`schema` with a root ``$ref`` replaced by its target (for vendors that want an object at the root).

    The target's keywords come last. It is not copied: read the result, or copy it before editing.
    """
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith(("#/$defs/", "#/definitions/")):
        return schema
    section, name = ref[2:].split("/", 1)
    target = schema.get(section, {}).get(name)
    if not is_object(target):
        return schema
    merged = {k: v for k, v in schema.items() if k != "$ref"}
    merged.update(target)
    return merged


def object_root(schema: JsonSchema) -> JsonSchema:
    """`schema` with ``type: object`` and ``properties`` at the root (both required by the OpenAI-shaped vendors).

    A no-argument tool is sent as ``{"type": "object", "properties": {}}``. Returns `schema` itself when
    nothing is missing, so cached canonical schemas are not copied needlessly.
    """
    if schema.get("type") == "object" and is_object(schema.get("properties")):
        return schema
    fixed = dict(schema)
    if "$ref" not in fixed and "anyOf" not in fixed:
        fixed.setdefault("type", "object")
    if fixed.get("type") == "object":
        fixed.setdefault("properties", {})
    return fixed


def drop_keyword(node: JsonSchema, keyword: str, path: str, log: LossLog, *, rejected: bool = False) -> None:
    """Remove `keyword` from `node` and record the loss."""
    if keyword in node:
        node.pop(keyword)
        log.add(path, keyword, "dropped", rejected=rejected)


def is_recursive(schema: JsonSchema) -> bool:
    """Whether a ``$defs`` entry refers (directly or indirectly) to itself."""
    defs = {**schema.get("definitions", {}), **schema.get("$defs", {})}

    def refs_of(node: Any) -> set[str]:
        found: set[str] = set()
        if is_object(node):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith(("#/$defs/", "#/definitions/")):
                found.add(ref.rsplit("/", 1)[-1])
            for value in node.values():
                found |= refs_of(value)
        elif is_array(node):
            for value in node:
                found |= refs_of(value)
        return found

    graph = {name: refs_of(body) for name, body in defs.items()}
    for start in graph:
        stack, seen = list(graph[start]), set[str]()
        while stack:
            name = stack.pop()
            if name == start:
                return True
            if name not in seen:
                seen.add(name)
                stack.extend(graph.get(name, ()))
    return False


class _OverLimitError(Exception):
    """Inlining would grow the schema past its limit (control flow of `try_inline_refs`)."""


def count_subschemas(schema: Any) -> int:
    """How many dicts `schema` holds, itself included (a cheap size measure, references not followed)."""
    total, stack = 0, [schema]
    while stack:
        node = stack.pop()
        if is_object(node):
            total += 1
            stack.extend(v for v in node.values() if is_object(v) or is_array(v))
        elif is_array(node):
            stack.extend(v for v in node if is_object(v) or is_array(v))
    return total


def inline_limit(schema: JsonSchema) -> int:
    """How many subschemas inlining `schema`'s references may produce: ten times its own size, at least 1,000.

    Definitions used once or twice inline well within it; a model used twice at each of twelve levels
    would make 8,000 copies of the deepest one (a 2.6 MB payload), which is what the limit stops.
    """
    return 10 * count_subschemas(schema) + 1000


def try_inline_refs(schema: JsonSchema, log: LossLog | None = None) -> JsonSchema | None:
    """`inline_refs`, or None when inlining would grow the schema past `inline_limit` (keep the references)."""
    try:
        return inline_refs(schema, log, on_limit="stop")
    except _OverLimitError:
        return None


def inline_refs(
    schema: JsonSchema, log: LossLog | None = None, *, limit: int | None = None, on_limit: str = "cut"
) -> JsonSchema:
    """A copy of `schema` with local ``$ref``s replaced by their targets and ``$defs`` removed.

    Recursive references cannot be inlined: they are cut at the second visit (replaced by ``{}``, an
    "any" schema) and recorded in `log` as a loss. Inlining copies a definition once per use, so a
    definition used several times at several levels multiplies: at most `limit` subschemas are made
    (default `inline_limit`). Past it, the remaining references are cut as recursive ones are
    (recorded); `try_inline_refs` gives up instead, for a caller that can keep the references.
    """
    budget = inline_limit(schema) if limit is None else limit
    made = 0
    root = copy.deepcopy(schema)
    defs = {**root.pop("definitions", {}), **root.pop("$defs", {})}

    def expand(node: Any, stack: tuple[str, ...], path: str) -> Any:
        nonlocal made
        if is_array(node):
            return [expand(v, stack, f"{path}/{i}") for i, v in enumerate(node)]
        if not is_object(node):
            return node
        made += 1
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(("#/$defs/", "#/definitions/")):
            name = ref.rsplit("/", 1)[-1]
            over = made > budget
            if over and on_limit == "stop":
                raise _OverLimitError
            if name in stack or name not in defs or over:
                if log is not None:
                    why = (
                        f"to {name!r} cut (any value accepted there): inlining every use would make the schema "
                        f"grow past {budget} subschemas"
                        if over and name not in stack and name in defs
                        else f"to recursive {name!r} cut (any value accepted there)"
                    )
                    log.add(path, "$ref", why)
                rest = {k: v for k, v in node.items() if k != "$ref"}
                return expand(rest, stack, path)
            target = expand(copy.deepcopy(defs[name]), (*stack, name), path)
            extra = {k: expand(v, stack, f"{path}/{k}") for k, v in node.items() if k != "$ref"}
            return {**target, **extra}
        return {
            k: expand(v, stack, f"{path}/{k}") if k not in ("enum", "const", "default") else v for k, v in node.items()
        }

    result: JsonSchema = expand(root, (), "")
    return result
