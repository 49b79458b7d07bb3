"""What a paused run accepts as an answer: approval decisions, and data checked against a schema.

Every place an answer enters (`Agent.resume`, the Temporal update, the UI adapters, the playground)
goes through these two checks, so an answer means the same everywhere:

* `check_approval`: a decision is ``True``, ``False`` or an `Approval` holding a real bool. Nothing is
  read by truthiness: ``"false"``, ``{"approved": False}`` or a `ToolError` would otherwise approve.
* `check_answer` / `check_answer_async`: data for a suspended call against the JSON Schema it asked
  for. That schema may come from outside (an MCP server's elicitation), so its ``pattern``s are matched
  by the same bounded engine as tool inputs (`agentkit._raw_schema`): linear time where the pattern
  allows it, else a backtracking match with a time budget, run off the event loop by the async form.

A suspension's schema travels in the snapshot as JSON Schema (a Python type given to `ToolContext.suspend`
is converted once, when the tool suspends), so any process can check an answer without the tool's code.
"""

from __future__ import annotations as _annotations

import asyncio
import dataclasses
import functools
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from typing_extensions import is_typeddict

from .._json_schema import JsonSchema, strip_titles
from .._text import shorten
from ..exceptions import ApprovalError, ToolDefinitionError

if TYPE_CHECKING:
    from .._agent.results import Approval
    from .._raw_schema import RawSchema

__all__ = ["check_answer", "check_answer_async", "check_approval", "decision", "json_schema_of", "needs_thread"]


def json_schema_of(source: type[Any] | Mapping[str, Any]) -> JsonSchema:
    """The JSON Schema of a pydantic model, dataclass or TypedDict, or a JSON Schema dict (checked) as it is.

    Raises:
        TypeError: `source` is none of those, or not a valid JSON Schema (draft 2020-12).
    """
    if isinstance(source, Mapping):
        from jsonschema import Draft202012Validator
        from jsonschema.exceptions import SchemaError

        try:
            Draft202012Validator.check_schema(dict(source))
        except SchemaError as exc:
            raise TypeError(f"schema= is not a valid JSON Schema (draft 2020-12): {exc.message}") from None
        return dict(source)
    from pydantic import BaseModel, TypeAdapter

    if isinstance(source, type) and (  # pyright: ignore[reportUnnecessaryIsInstance]  # untyped callers
        issubclass(source, BaseModel) or dataclasses.is_dataclass(source) or is_typeddict(source)
    ):
        return cast(JsonSchema, strip_titles(TypeAdapter(source).json_schema(mode="validation")))
    raise TypeError(f"schema= must be a pydantic model, dataclass, TypedDict or JSON Schema dict, got {source!r}")


def check_approval(call_id: str, value: object) -> Approval:
    """`value` as an `Approval`: only ``True``, ``False`` or an `Approval` whose `approved` is a bool.

    Raises:
        ApprovalError: anything else, naming the call and what was given (nothing is read by truthiness).
    """
    from .._agent.results import Approval

    if value is True or value is False:
        return Approval(value)
    if isinstance(value, Approval):
        return decision(call_id, value.approved, value.reason)
    raise ApprovalError(
        f"the decision for call {call_id!r} must be True, False or an Approval, got {shorten(value, 80)} "
        f"({type(value).__name__}); nothing is read by truthiness, so nothing ran"
    )


def decision(call_id: str, approved: object, reason: object = None) -> Approval:
    """An `Approval` from its parts as received (a UI's JSON, an update): `approved` a bool, `reason` text or None.

    Raises:
        ApprovalError: either part is anything else, naming the call and what was given.
    """
    from .._agent.results import Approval

    if isinstance(approved, bool) and (reason is None or isinstance(reason, str)):
        return Approval(approved, reason)
    raise ApprovalError(
        f"the decision for call {call_id!r} needs approved=True or False and a text reason (or none), got "
        f"approved={shorten(approved, 60)} ({type(approved).__name__}), reason={shorten(reason, 60)}; nothing "
        "is read by truthiness, so nothing ran"
    )


def check_answer(schema: Mapping[str, Any] | None, data: Any) -> list[str]:
    """The problems of `data` against `schema` (empty when it fits, or when there is no schema).

    Patterns are matched in linear time where possible; a backtracking one (look-around, backreference)
    stops after its budget (`agentkit._raw_schema.pattern_budget`) and counts as a problem. Prefer
    `check_answer_async` on an event loop: it matches those off the loop.
    """
    if schema is None:
        return []
    checked = _validator(schema)
    if isinstance(checked, str):
        return [checked]
    return [str(detail) for detail in checked.errors(data)]


async def check_answer_async(schema: Mapping[str, Any] | None, data: Any) -> list[str]:
    """`check_answer`, on a worker thread when the schema has a pattern only a backtracking engine matches."""
    if schema is None:
        return []
    checked = _validator(schema)
    if not isinstance(checked, str) and checked.needs_thread:
        return await asyncio.to_thread(check_answer, schema, data)
    return check_answer(schema, data)


def needs_thread(schema: Mapping[str, Any] | None) -> bool:
    """Whether checking an answer against `schema` may run a backtracking pattern match."""
    if schema is None:
        return False
    checked = _validator(schema)
    return not isinstance(checked, str) and checked.needs_thread


def _validator(schema: Mapping[str, Any]) -> RawSchema | str:
    """The bounded validator of `schema`, or a problem text when it is not a usable JSON Schema."""
    try:
        text = json.dumps(schema, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return "the schema the answer must fit is not JSON: no answer can be checked against it"
    return _compiled(text)


@functools.lru_cache(maxsize=256)
def _compiled(text: str) -> RawSchema | str:
    from .._raw_schema import RawSchema
    from .._validation import parse_json

    try:
        return RawSchema(parse_json(text), qualname="the paused call's schema", role="schema")
    except ToolDefinitionError as exc:
        return f"the schema the answer must fit is unusable: {'; '.join(exc.problems)}"
    except (ValueError, RecursionError):  # nested deeper than the JSON parser (or the checker) goes
        return "the schema the answer must fit is nested too deeply to be checked"
