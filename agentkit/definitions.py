"""`ToolDefinition`: a tool as a model is told about it, the only thing the vendor layer receives."""

from __future__ import annotations as _annotations

from dataclasses import dataclass

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
