"""BFCL v4's single-turn questions as `EvalCase`s, from the copy shipped in this package.

The data is Berkeley's Function Calling Leaderboard v4 (``bfcl-eval`` 2026.3.23 on PyPI, Apache-2.0;
``data/bfcl/SOURCE.txt`` and ``data/bfcl/LICENSE`` beside it): each category's questions merged with
their expected answers, one JSON object per line, gzipped. ``python -m dev.bfcl copy`` rebuilds it.

A function document uses BFCL's own types (``dict``, ``float``, ``tuple``, ``any``); `json_schema`
turns it into standard JSON Schema (``object``, ``number``, ``array``, and ``string`` for ``any``, the
type BFCL itself sends and checks). The tools keep BFCL's names as registry keys, dots included
(``math.factorial``): agentkit's aliases send a name each vendor accepts and map calls back, so the
checker scores on the original names.
"""

from __future__ import annotations as _annotations

import functools
import gzip
import json
from collections.abc import Iterator, Mapping, Sequence
from importlib import resources
from typing import Any

from .._jsonish import is_array, is_object
from ..messages import Message, SystemMessage, UserMessage
from ..registry import Registry
from ..tools import Tool
from ._cases import EvalCase, EvalDataError
from ._checker import CheckMode, function_spec

__all__ = ["BFCL_CATEGORIES", "BFCL_VERSION", "bfcl_cases", "bfcl_registry", "json_schema", "parse_bfcl_spec"]

BFCL_VERSION = "bfcl-eval 2026.3.23"
"""Where the shipped questions and answers come from."""

BFCL_CATEGORIES: Mapping[str, CheckMode] = {
    "simple_python": "simple",
    "multiple": "multiple",
    "parallel": "parallel",
    "parallel_multiple": "parallel",
    "live_simple": "simple",
    "live_multiple": "multiple",
    "irrelevance": "irrelevance",
}
"""The shipped categories and the rule set that judges each (BFCL picks it from the category's name)."""

_SHORT = {"simple": "simple_python", "parallel-multiple": "parallel_multiple"}

_TYPES = {
    "string": "string",
    "integer": "integer",
    "float": "number",
    "number": "number",
    "boolean": "boolean",
    "array": "array",
    "tuple": "array",
    "dict": "object",
    "object": "object",
    "any": "string",
}
# keywords kept as they are; BFCL's "optional" and a boolean "required" on a property are not JSON Schema
_KEPT = ("description", "enum", "default", "format", "minimum", "maximum", "minItems", "maxItems")


def json_schema(parameters: Mapping[str, Any]) -> dict[str, Any]:
    """A BFCL parameter (or parameters object) as standard JSON Schema."""
    out: dict[str, Any] = {}
    kind = parameters.get("type")
    if isinstance(kind, str):
        out["type"] = _TYPES.get(kind, "string")
    for key in _KEPT:
        if key in parameters:
            out[key] = parameters[key]
    properties = parameters.get("properties")
    if is_object(properties):
        out["properties"] = {str(name): json_schema(body) for name, body in properties.items() if is_object(body)}
        if "type" not in out:
            out["type"] = "object"
    required = parameters.get("required")
    if is_array(required) and out.get("type") == "object":
        out["required"] = [str(r) for r in required]
    items = parameters.get("items")
    if is_object(items) and out.get("type") == "array":
        out["items"] = json_schema(items)
    return out


def _placeholder(arguments: dict[str, Any]) -> str:
    """What a BFCL tool returns when a run calls it: the questions judge the calls, not the results."""
    return "done"


def bfcl_registry(functions: Sequence[Mapping[str, Any]]) -> Registry:
    """The tools of one question, under their BFCL names (a call returns ``"done"``)."""
    tools: dict[str, Tool[..., Any]] = {}
    for function in functions:
        name = str(function["name"])
        schema = json_schema(function.get("parameters") or {"type": "dict", "properties": {}})
        schema["type"] = "object"
        schema.setdefault("properties", {})
        tools[name] = Tool.from_json_schema(
            name, schema, description=str(function.get("description", "")), fn=_placeholder
        )
    return Registry(tools)


def _messages(question: Any, where: str) -> list[Message]:
    # BFCL v4 single-turn: question = [[{"role", "content"}, ...]] (one turn)
    turns = question[0] if is_array(question) and question and is_array(question[0]) else question
    messages: list[Message] = []
    for message in turns:
        role, content = message.get("role"), message.get("content")
        if role == "system":
            messages.append(SystemMessage(str(content)))
        elif role == "user":
            messages.append(UserMessage(str(content)))
        else:
            raise EvalDataError(f"{where}: a single-turn question has a {role!r} message; only system and user")
    return messages


def _lines(category: str) -> Iterator[dict[str, Any]]:
    source = (
        resources.files(__name__.rpartition(".")[0]).joinpath("data").joinpath("bfcl").joinpath(f"{category}.jsonl.gz")
    )
    with source.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as text:
        for line in text:
            if line.strip():
                yield json.loads(line)


def parse_bfcl_spec(spec: str) -> list[str]:
    """The categories named by ``bfcl`` (all) or ``bfcl:cat1,cat2`` (``simple`` = ``simple_python``).

    Raises:
        EvalDataError: an unknown category (naming the known ones).
    """
    _, _, wanted = spec.partition(":")
    if not wanted or wanted == "all":
        return list(BFCL_CATEGORIES)
    categories: list[str] = []
    for name in wanted.split(","):
        name = _SHORT.get(name.strip(), name.strip())
        if name not in BFCL_CATEGORIES:
            known = ", ".join(BFCL_CATEGORIES)
            raise EvalDataError(f"unknown BFCL category {name!r}: pick from {known} (or 'simple', 'parallel-multiple')")
        categories.append(name)
    return categories


def bfcl_cases(categories: Sequence[str] | str = "bfcl") -> list[EvalCase]:
    """The shipped BFCL v4 questions of `categories` (names, or a ``bfcl:...`` spec), as `EvalCase`s.

    Each case keeps BFCL's id, its category and its function documents (`EvalCase.source`); its tools
    are made when a run first asks for them.
    """
    names = parse_bfcl_spec(categories) if isinstance(categories, str) else list(categories)
    cases: list[EvalCase] = []
    for category in names:
        if category not in BFCL_CATEGORIES:
            parse_bfcl_spec(f"bfcl:{category}")  # raises, naming the known ones
        mode = BFCL_CATEGORIES[category]
        for entry in _lines(category):
            functions = entry["function"]
            where = f"BFCL {entry['id']}"
            cases.append(
                EvalCase(
                    id=str(entry["id"]),
                    category=category,
                    messages=tuple(_messages(entry["question"], where)),
                    expected=tuple(entry.get("ground_truth") or ()),
                    mode=mode,
                    functions=tuple(function_spec(f) for f in functions),
                    tools=functools.partial(bfcl_registry, functions),
                    source=tuple(functions),
                )
            )
    return cases
