"""Explicit `input_schema=` / `output_schema=`: a pydantic model, TypedDict or dataclass, or a raw dict.

One policy for unknown arguments, whatever the schema's source: at the root of a tool's arguments,
an unknown key is refused, and the schema says so (``additionalProperties: false``), exactly as for
schemas inferred from a signature. A class that sets ``extra`` itself (``ConfigDict(extra="allow")``,
or ``"ignore"`` said explicitly) keeps its choice, and its schema says what it does. A raw JSON Schema
dict is taken as written: what it advertises is what is validated. Nested objects follow their own
class's configuration (pydantic's default ignores unknown keys there, and its schema allows them).
"""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import Callable, Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any, Union, cast

from typing_extensions import is_typeddict

from ._attribute_docs import json_schema_of
from ._error_paths import UNEXPECTED_ARGUMENT as _UNEXPECTED
from ._error_paths import json_path
from ._json_schema import JsonSchema, inline_root_ref, strip_titles
from ._jsonish import is_mapping, is_object
from ._raw_schema import RawSchema
from ._validation import parse_json
from .exceptions import ErrorDetail, ToolDefinitionError

if TYPE_CHECKING:
    from pydantic import TypeAdapter

__all__ = ["ExplicitSchema", "SchemaSource"]

SchemaSource = Union[type[Any], Mapping[str, Any]]
"""An explicit schema: a pydantic model, TypedDict or dataclass class, or a raw JSON Schema dict."""


def _configures_extra(cls: type[Any]) -> bool:
    """Whether the class chose its own policy for unknown keys."""
    config = getattr(cls, "model_config", None)
    if not isinstance(config, dict):
        config = getattr(cls, "__pydantic_config__", None)
    return isinstance(config, dict) and "extra" in config


class ExplicitSchema:
    """An explicit schema, checked when the tool is defined."""

    def __init__(self, source: SchemaSource, *, qualname: str, role: str) -> None:
        self.source = source
        self.role = role
        self.python_type: type[Any] | None = None
        self.raw: RawSchema | None = None
        if isinstance(source, Mapping):
            self.raw = RawSchema(source, qualname=qualname, role=role)
            if role == "input_schema" and source.get("type") != "object":
                raise ToolDefinitionError(
                    qualname,
                    ["input_schema= must describe an object (`type: object` at its root): models send named arguments"],
                )
        elif isinstance(source, type):  # pyright: ignore[reportUnnecessaryIsInstance]  # untyped callers
            from pydantic import BaseModel

            if not (issubclass(source, BaseModel) or dataclasses.is_dataclass(source) or is_typeddict(source)):
                raise ToolDefinitionError(
                    qualname,
                    [
                        f"{role}={source.__qualname__} is not a pydantic model, TypedDict, dataclass or JSON "
                        "Schema dict; pass one of those"
                    ],
                )
            self.python_type = source
        else:
            raise ToolDefinitionError(
                qualname,
                [f"{role}= must be a pydantic model, TypedDict, dataclass or JSON Schema dict, got {source!r}"],
            )

    @cached_property
    def adapter(self) -> TypeAdapter[Any]:
        """The pydantic validator of the Python type."""
        from pydantic import TypeAdapter

        return TypeAdapter[Any](self.python_type)  # type: ignore[arg-type]

    @cached_property
    def _known_root_keys(self) -> frozenset[str] | None:
        """The root keys an input may have, when unknown ones are refused (None: no check)."""
        if self.role != "input_schema" or self.python_type is None or _configures_extra(self.python_type):
            return None
        schema = inline_root_ref(strip_titles(json_schema_of(self.adapter, "validation")))
        properties = schema.get("properties")
        if schema.get("type") != "object" or not is_object(properties):
            return None
        known: set[str] = set(properties)
        # names pydantic also accepts: field names (populate_by_name), other alias choices
        for name, field in getattr(self.python_type, "model_fields", {}).items():
            known.add(name)
            choices = getattr(field.validation_alias, "choices", None) or ()
            known.update(c for c in choices if isinstance(c, str))
        return frozenset(known)

    def unknown_keys(self, tool_name: str, arguments: Any) -> list[ErrorDetail]:
        """An ``unexpected_argument`` error for each root key of `arguments` the schema does not have."""
        known = self._known_root_keys
        if known is None:
            return []
        if isinstance(arguments, (str, bytes, bytearray)):
            try:
                arguments = parse_json(arguments)
            except ValueError:
                return []  # reported by validation
        mapping: Mapping[str, Any]
        if type(arguments) is dict:  # what a parse gives: no ABC check, and the usual answer in one C call
            mapping = cast("dict[str, Any]", arguments)
            if known.issuperset(mapping):
                return []
        elif is_mapping(arguments):
            mapping = arguments
        else:
            return []
        return [
            ErrorDetail(json_path([key]), _UNEXPECTED, value, "unexpected_argument")
            for key, value in mapping.items()
            if key not in known
        ]

    @cached_property
    def validate_json(self) -> Callable[..., Any]:
        """``validate_json(data, strict=...)`` of the Python type."""
        return self.adapter.validator.validate_json

    @cached_property
    def json_schema(self) -> JsonSchema:
        """The JSON Schema models are shown."""
        if self.raw is not None:
            return self.raw.schema
        assert self.python_type is not None
        schema: JsonSchema = inline_root_ref(strip_titles(json_schema_of(self.adapter, "validation")))
        if self._known_root_keys is not None:
            schema = {**schema, "additionalProperties": False}
        return schema
