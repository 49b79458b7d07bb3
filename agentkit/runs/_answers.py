"""The schemas a paused call asks its answer to fit, and the check of an answer against one.

A suspension's schema travels in the snapshot as JSON Schema (a Python type given to `ToolContext.suspend`
is converted once, when the tool suspends), so any process can check an answer without the tool's code.
"""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, cast

from typing_extensions import is_typeddict

from .._json_schema import JsonSchema, strip_titles

__all__ = ["check_answer", "json_schema_of"]


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


def check_answer(schema: Mapping[str, Any] | None, data: Any) -> list[str]:
    """The problems of `data` against `schema` (empty when it fits, or when there is no schema)."""
    if schema is None:
        return []
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(dict(schema))
    # jsonschema ships no types for iter_errors' ValidationError fields
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))  # pyright: ignore[reportUnknownMemberType]
    return [f"{_path(e.absolute_path)}: {e.message}" for e in errors]


def _path(parts: Any) -> str:
    path = "$"
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path
