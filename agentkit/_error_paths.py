"""Validation errors -> `ErrorDetail`s whose paths are JSON paths of the value the model sent.

Pydantic puts the name of a union's branch into an error's location (``('pet', 'Cat', 'meows')``,
``('weight', 'int')``, ``('fa', 'function-after[check(), int]')``): those are not fields, and a model
told to fix ``$.pet.Cat.meows`` would add a ``Cat`` key. Locations are therefore walked along the
value itself: a part that names a key (or index) that is there, or the missing field an error is
about, is a path step; anything else is a branch label.

Errors of a union whose branches all failed become one error at the union's path, listing what each
branch needed ("as Cat: $.pet.meows: Field required; as Dog: ..."), so the model fixes one shape
instead of adding every branch's fields. When only one branch reported (a tagged union, which
checks only the branch its tag names), its errors are given at their own paths.
"""

from __future__ import annotations as _annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any, cast

from ._jsonish import is_array, is_object
from ._text import clip, shorten
from .exceptions import ErrorDetail

__all__ = ["details_from_jsonschema", "details_from_pydantic", "json_path", "real_path"]

UNEXPECTED_ARGUMENT = "Unexpected argument: the tool has no parameter of this name"
_MISSING_KINDS = frozenset(
    {"missing", "missing_argument", "missing_keyword_only_argument", "missing_positional_only_argument"}
)
_TAG_KINDS = frozenset({"literal_error", "enum"})
"""A value that contradicts a branch's constant: what tells the branches of an untagged union apart."""
_ABSENT = object()
_WRAPPED_LABEL = re.compile(r"^(?:function-(?:after|before|wrap|plain)|lax-or-strict|json-or-python)\[(.*)\]$")
_JSON_NAMES = {
    "int": "integer",
    "float": "number",
    "str": "string",
    "bool": "boolean",
    "none": "null",
    "NoneType": "null",
    "constrained-str": "string",
    "constrained-int": "integer",
    "constrained-float": "number",
    "list": "array",
    "tuple": "array",
    "set": "array",
    "frozenset": "array",
    "dict": "object",
}


def json_path(parts: Iterable[Any]) -> str:
    """``$.a[0]["b c"]`` for the path parts ``('a', 0, 'b c')``."""
    path = "$"
    for part in parts:
        if isinstance(part, int):
            path += f"[{part}]"
        elif isinstance(part, str) and part.isidentifier():
            path += f".{part}"
        else:
            path += f"[{json.dumps(str(part))}]"
    return path


def _child(value: object, part: Any) -> Any:
    """The member `part` of `value` (a key, an index, or a validated object's attribute), else `_ABSENT`."""
    if is_object(value):
        return value.get(part, _ABSENT) if isinstance(part, str) else _ABSENT
    if isinstance(value, (list, tuple)):
        items = cast("Sequence[Any]", value)
        return (
            items[part] if isinstance(part, int) and not isinstance(part, bool) and 0 <= part < len(items) else _ABSENT
        )
    cls = type(value)
    if isinstance(part, str) and part.isidentifier() and hasattr(cls, "__dataclass_fields__"):
        return getattr(value, part, _ABSENT)
    fields = getattr(cls, "model_fields", None)
    if isinstance(part, str) and is_object(fields) and part in fields:
        return getattr(value, part, _ABSENT)
    return _ABSENT


def _label(text: Any) -> str:
    """A branch label as a model reads it: ``int`` -> ``integer``, ``function-after[f(), int]`` -> ``integer``."""
    label = str(text)
    while True:
        match = _WRAPPED_LABEL.match(label)
        if match is None:
            break
        inner = match.group(1)
        label = inner.split(", ", 1)[1] if inner.count("(") and ", " in inner else inner
    base = label.split("[", 1)[0]
    return _JSON_NAMES.get(label, _JSON_NAMES.get(base, label))


class _Entry:
    """One error: its real path, the union branches chosen on the way, and pydantic's words."""

    __slots__ = ("branches", "kind", "message", "path", "value")

    def __init__(self, path: list[Any], branches: list[tuple[int, Any]], message: str, kind: str, value: Any):
        self.path = path
        self.branches = branches  # (index into path where the union sits, branch label)
        self.message = message
        self.kind = kind
        self.value = value


def _split(loc: Sequence[Any], root: Any, kind: str) -> tuple[list[Any], list[tuple[int, Any]]]:
    path: list[Any] = []
    branches: list[tuple[int, Any]] = []
    current = root
    for position, part in enumerate(loc):
        child = _child(current, part) if current is not _ABSENT else _ABSENT
        if child is not _ABSENT:
            path.append(part)
            current = child
        elif position == len(loc) - 1 and kind in _MISSING_KINDS and isinstance(part, str):
            path.append(part)  # the field that is missing
        elif part == "[key]":
            continue  # pydantic's marker for "the key itself is wrong": the path already names the key
        elif current is _ABSENT:
            path.append(part)  # below a value we could not follow (should not happen): keep what pydantic says
        else:
            branches.append((len(path), part))
    return path, branches


def real_path(loc: Sequence[Any], root: Any, kind: str) -> list[Any]:
    """The JSON path parts of a pydantic error location (branch labels left out)."""
    return _split(loc, root, kind)[0]


def _entries(errors: Iterable[dict[str, Any]], root: Any) -> list[_Entry]:
    entries: list[_Entry] = []
    for err in errors:
        kind = str(err.get("type", "invalid"))
        message = str(err.get("msg", ""))
        if kind in ("unexpected_keyword_argument", "extra_forbidden") and len(err.get("loc", ())) == 1:
            kind, message = "unexpected_argument", UNEXPECTED_ARGUMENT
        path, branches = _split(tuple(err.get("loc", ())), root, kind)
        if kind in _MISSING_KINDS and len(path) == 1 and not branches:
            # pydantic says "Missing required keyword only argument": a model (or a person) needs the name
            message = f"Missing required argument {str(path[0])!r}"
        entries.append(_Entry(path, branches, message, kind, err.get("input")))
    return entries


def _value_at(root: Any, path: Sequence[Any]) -> Any:
    current = root
    for part in path:
        current = _child(current, part)
        if current is _ABSENT:
            return None
    return current


def _collapse(entries: list[_Entry], root: Any) -> list[ErrorDetail]:
    """Entries -> details; a union whose branches all failed becomes one detail at the union's path."""
    details: list[ErrorDetail] = []
    groups: dict[tuple[Any, ...], list[_Entry]] = {}
    for entry in entries:
        if not entry.branches:
            details.append(ErrorDetail(json_path(entry.path), entry.message, entry.value, entry.kind))
        else:
            at = entry.branches[0][0]
            groups.setdefault(tuple(entry.path[:at]), []).append(entry)
    for union_path, members in groups.items():
        by_branch: dict[str, list[_Entry]] = {}
        for entry in members:
            rest = _Entry(entry.path, entry.branches[1:], entry.message, entry.kind, entry.value)
            by_branch.setdefault(_label(entry.branches[0][1]), []).append(rest)
        # a branch whose constant (a `kind: Literal["dog"]` tag) the value contradicts is not the one meant:
        # when others remain, leave it out, so {"kind": "cat", "meows": "loud"} is told $.pet.meows
        meant = {label: found for label, found in by_branch.items() if not any(e.kind in _TAG_KINDS for e in found)}
        if meant:
            by_branch = meant
        if len(by_branch) == 1:  # one branch reported (a tagged union) or meant: its errors, at their own paths
            details.extend(_collapse(next(iter(by_branch.values())), root))
            continue
        where = json_path(union_path)
        parts: list[str] = []
        for label, branch_entries in by_branch.items():
            problems = "; ".join(
                d.message if d.path == where else f"{d.path}: {d.message}" for d in _collapse(branch_entries, root)
            )
            parts.append(f"as {label}: {problems}")
        message = "Matches none of the allowed shapes (" + "; ".join(parts) + "). Send a value of one of them."
        details.append(ErrorDetail(where, message, _value_at(root, union_path), "union"))
    return details


def details_from_pydantic(exc: Any, value: Any = _ABSENT) -> list[ErrorDetail]:
    """Pydantic's errors for `value` (the arguments as parsed, or the result) as `ErrorDetail`s."""
    errors = exc.errors(include_url=False)
    return _collapse(_entries(errors, value), value)


def _branch_label(schema: Any, index: int) -> str:
    if is_object(schema):
        ref = schema.get("$ref")
        if isinstance(ref, str):
            return ref.rsplit("/", 1)[-1]
        for key in ("title", "type"):
            if isinstance(schema.get(key), (str, list)):
                return str(schema[key]) if isinstance(schema[key], str) else " or ".join(map(str, schema[key]))
        if "const" in schema:
            return shorten(schema["const"], 40)
    return f"option {index + 1}"


_TAG_VALIDATORS = frozenset({"const", "enum"})
_MESSAGE_LIMIT = 300
"""Characters kept of one jsonschema message (which embeds the offending value's repr)."""


def details_from_jsonschema(errors: Iterable[Any]) -> list[ErrorDetail]:
    """`jsonschema` errors as `ErrorDetail`s; an ``anyOf``/``oneOf`` miss lists what each branch needed."""
    details: list[ErrorDetail] = []
    for error in sorted(errors, key=lambda e: [str(p) for p in e.absolute_path]):
        # jsonschema's messages quote the value whole (its repr); the value is shown, bounded, beside it
        message = clip(error.message, _MESSAGE_LIMIT)
        if error.validator in ("anyOf", "oneOf") and error.context:
            by_branch: dict[int, list[Any]] = {}
            for sub in error.context:
                index = sub.relative_schema_path[0] if sub.relative_schema_path else 0
                by_branch.setdefault(int(index), []).append(sub)
            # as for pydantic's unions: a branch whose const/enum (a tag) the value contradicts is not the one meant
            meant = {i: subs for i, subs in by_branch.items() if not any(s.validator in _TAG_VALIDATORS for s in subs)}
            if len(meant) == 1:
                details.extend(details_from_jsonschema(next(iter(meant.values()))))
                continue
            branches: dict[int, list[str]] = {}
            for index, subs in (meant or by_branch).items():
                for sub in subs:
                    sub_message = clip(sub.message, _MESSAGE_LIMIT)
                    text = sub_message if sub.json_path == error.json_path else f"{sub.json_path}: {sub_message}"
                    branches.setdefault(index, []).append(text)
            options: list[Any] = error.validator_value if is_array(error.validator_value) else []
            parts = [
                f"as {_branch_label(options[i] if i < len(options) else None, i)}: {'; '.join(texts)}"
                for i, texts in sorted(branches.items())
            ]
            message = "Matches none of the allowed shapes (" + "; ".join(parts) + "). Send a value of one of them."
        details.append(ErrorDetail(error.json_path, message, error.instance, str(error.validator)))
    return details
