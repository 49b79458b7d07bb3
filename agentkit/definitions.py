"""`ToolDefinition`: a tool as a model is told about it, the only thing the vendor layer receives."""

from __future__ import annotations as _annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from ._json_schema import JsonSchema

__all__ = ["ToolDefinition"]


@dataclass(frozen=True)
class ToolDefinition:
    """One tool as models see it: what `Registry.definitions` hands to providers, dialects and test models.

    Plain, frozen data: dialects and codecs are pure functions of definitions and options, so they may
    cache by definition. A `Tool` keeps its definition per key while its options stay the same, and a
    `Registry` its tuple of definitions while it is unchanged; changing a tool's `description` or
    `strict` makes new ones. Two definitions compare equal when their fields do; hashing is by identity
    (the schemas are dicts), which is what the caches need.

    Example:
        ```python
        definition = registry.definitions()[0]
        definition.key, definition.input_schema
        ```
    """

    key: str
    """The registry key: the name the model sees (vendors may send an alias of it)."""
    description: str
    """What the model is told the tool does."""
    input_schema: JsonSchema
    """JSON Schema (draft 2020-12) of the arguments, ``type: object`` at the root."""
    output_schema: JsonSchema | None = None
    """JSON Schema of the result (``{"type": "null"}`` for ``-> None``), None when unknown."""
    strict: bool | None = None
    """The tool's own strict wish: True, False, or None (strict where the vendor and schema allow)."""
    output_json: bool = True
    """Whether the model receives the result as the JSON of `output_schema` (False when the tool's
    ``to_model_output`` shapes what the model sees), e.g. for OpenAI Responses' ``output_schema``."""

    __hash__ = object.__hash__

    def __eq__(self, other: object) -> bool:
        # the caches look definitions up in weak dicts, which compare keys: a definition is itself at
        # once, without reading (or building) its schemas
        if self is other:
            return True
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in _FIELDS)


_FIELDS = tuple(f.name for f in fields(ToolDefinition))


class _Deferred:
    """An `output_schema` not built yet: most payloads never read it (no OpenAI tool entry carries one).

    ``ToolDefinition(..., output_schema=_Deferred(build))`` (what `Tool.definition` makes) builds it on
    first read.
    """

    __slots__ = ("build",)

    def __init__(self, build: Callable[[], JsonSchema | None]) -> None:
        self.build = build


class _OutputSchemaField:
    """`ToolDefinition.output_schema`, built on first read when the definition was made with a `_Deferred`.

    A data descriptor, so the dataclass's own ``__init__`` stores through it; equality, ``repr``,
    ``dataclasses.replace`` and pickling read the built value like any other field.
    """

    def __get__(self, instance: object, owner: type[Any] | None = None) -> Any:
        if instance is None:
            return None  # the field's default, as the dataclass recorded it
        stored = instance.__dict__["output_schema"]
        if type(stored) is _Deferred:
            stored = instance.__dict__["output_schema"] = stored.build()
        return stored

    def __set__(self, instance: object, value: Any) -> None:
        instance.__dict__["output_schema"] = value


setattr(ToolDefinition, "output_schema", _OutputSchemaField())  # noqa: B010 - after @dataclass read the default


def _deferred_definition(  # pyright: ignore[reportUnusedFunction]  # used by Tool.definition
    key: str,
    description: str,
    input_schema: JsonSchema,
    output_schema: Callable[[], JsonSchema | None],
    strict: bool | None,
    output_json: bool,
) -> ToolDefinition:
    """``ToolDefinition(...)`` with its output schema built on first read (`_Deferred`), made without ``__init__``.

    What `Tool.definition` makes for every tool of a first payload: a frozen dataclass's ``__init__`` sets
    each field through ``object.__setattr__`` (and the output schema through its descriptor), a third of a
    1,000-tool ``strict=False`` build. The fields land in the instance's ``__dict__`` exactly as ``__init__``
    would put them (a test compares the two).
    """
    made = object.__new__(ToolDefinition)
    vars(made).update(
        key=key,
        description=description,
        input_schema=input_schema,
        output_schema=_Deferred(output_schema),
        strict=strict,
        output_json=output_json,
    )
    return made


def _getstate(self: ToolDefinition) -> dict[str, Any]:
    return {**self.__dict__, "output_schema": self.output_schema}


setattr(ToolDefinition, "__getstate__", _getstate)  # noqa: B010 - the built schema is pickled, never the builder
