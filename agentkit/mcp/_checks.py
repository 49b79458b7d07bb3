"""Data checked against a JSON Schema that came from an MCP peer, never blocking the event loop.

A peer's schema is outside data: its ``pattern`` could make Python's `re` backtrack for minutes. The
check uses agentkit's raw-schema validator (`agentkit._raw_schema`): linear-time patterns where the
pattern allows, otherwise the `regex` module on a worker thread, stopped after a budget.
"""

from __future__ import annotations as _annotations

import asyncio
import functools
import json
from collections.abc import Mapping
from typing import Any

from .._raw_schema import RawSchema, pattern_budget
from .._text import clip
from ..exceptions import ToolDefinitionError

__all__ = ["PATTERN_SECONDS", "schema_problems"]

PATTERN_SECONDS = 2.0
"""Seconds a backtracking pattern of a peer's schema may take to match one value."""


@functools.lru_cache(maxsize=256)
def _checker(text: str) -> RawSchema | str:
    try:
        return RawSchema(json.loads(text), qualname="the MCP peer's schema", role="schema")
    except ToolDefinitionError as exc:
        return "; ".join(exc.problems) if exc.problems else str(exc)


async def schema_problems(schema: Mapping[str, Any], data: Any) -> list[str]:
    """The ways `data` breaks `schema` (empty when it fits), each with its JSON path.

    A schema that is not valid JSON Schema is one problem (nothing fits it).
    """
    try:
        checker = _checker(json.dumps(schema, sort_keys=True))
    except (TypeError, ValueError, RecursionError):
        return ["the schema asked with is not JSON"]
    if isinstance(checker, str):
        return [f"the schema asked with cannot be used: {clip(checker, 300)}"]
    if checker.needs_thread:
        with pattern_budget(PATTERN_SECONDS):  # asyncio.to_thread copies the context, budget included
            errors = await asyncio.to_thread(checker.errors, data)
    else:
        errors = checker.errors(data)
    return [f"{e.path}: {clip(e.message, 300)}" for e in errors]
