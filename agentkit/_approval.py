"""What an approval policy sees: one shape on every path (agent loop, resume, workflows, MCP, CLI).

A policy (``requires_approval=lambda args: ...``) receives the call's *validated* arguments with defaults
applied, as a dict of argument name -> value:

* for a function's own parameters: the keyword arguments the function is called with (context
  parameters left out), values as validated (a nested model stays a model instance);
* for an explicit ``input_schema`` that is a pydantic model, dataclass or TypedDict: that type's fields
  (for a pydantic model with ``extra="allow"``, its extra keys too), not ``{"req": Req(...)}``;
* for an explicit raw JSON Schema: the arguments as received, plus the ``default`` of every top-level
  property that was left out (JSON Schema validation itself never fills defaults).
"""

from __future__ import annotations as _annotations

import copy
import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ._jsonish import is_mapping

if TYPE_CHECKING:
    from ._schema import FunctionSchema

__all__ = ["policy_arguments"]


def policy_arguments(schema: FunctionSchema, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The policy's view of validated `kwargs` (what `FunctionSchema.validate_arguments` returned)."""
    # The explicit schema is FunctionSchema's private record; this module is its one reader outside.
    explicit = schema._explicit_input  # pyright: ignore[reportPrivateUsage]
    if explicit is None:
        return dict(kwargs)
    value = kwargs[schema.params[0].name]
    if explicit.python_type is None:
        return _with_defaults(value, explicit.json_schema)
    return _fields(value)


def _fields(value: Any) -> dict[str, Any]:
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        fields = {name: getattr(value, name) for name in type(value).model_fields}
        return {**fields, **(value.model_extra or {})}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if is_mapping(value):  # a TypedDict validates to a plain dict
        return dict(value)
    raise TypeError(f"an explicit input schema validated to {type(value).__name__}, not a model, dataclass or dict")


def _with_defaults(value: Mapping[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    arguments = dict(value)
    properties = schema.get("properties")
    if is_mapping(properties):
        for name, prop in properties.items():
            if name not in arguments and is_mapping(prop) and "default" in prop:
                arguments[name] = copy.deepcopy(prop["default"])
    return arguments
