"""Provider-neutral tool calls, results and their content parts.

These are what flows between the registry, the providers and the agent loop. `name` is always the
registry key, the name the model sees; a tool's `id` never appears here.
"""

from __future__ import annotations as _annotations

import base64
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Union

__all__ = ["ContentPart", "ImagePart", "TextPart", "ToolCall", "ToolResult"]


@dataclass(slots=True)
class TextPart:
    """Text given to the model."""

    text: str
    kind: Literal["text"] = "text"


@dataclass(slots=True)
class ImagePart:
    """An image given to the model, either by URL or as bytes with a media type."""

    url: str | None = None
    data: bytes | None = None
    media_type: str = "image/png"
    kind: Literal["image"] = "image"

    def __post_init__(self) -> None:
        if (self.url is None) == (self.data is None):
            raise ValueError("ImagePart needs exactly one of url= or data=")

    @property
    def base64(self) -> str:
        """The image bytes as base64 text (empty for a URL image)."""
        return base64.b64encode(self.data).decode("ascii") if self.data is not None else ""

    @property
    def data_url(self) -> str:
        """The image as a URL: its own URL, or a ``data:`` URL built from its bytes."""
        return self.url if self.url is not None else f"data:{self.media_type};base64,{self.base64}"


ContentPart = Union[TextPart, ImagePart]


@dataclass(slots=True)
class ToolCall:
    """A model's request to call the tool registered under `name`.

    `arguments` is what the vendor sent: JSON text (OpenAI, Mistral) or an already parsed object
    (Anthropic, Gemini, Bedrock, Ollama). Both are accepted everywhere.
    """

    id: str
    name: str
    arguments: str | Mapping[str, Any] = field(default_factory=dict)
    provider_details: Mapping[str, Any] | None = None
    """Vendor extras that must travel with the call (e.g. Gemini thought signatures)."""

    def arguments_dict(self) -> dict[str, Any]:
        """The arguments as a dict; raises `ValueError` for text that is not a JSON object."""
        if isinstance(self.arguments, Mapping):
            return dict(self.arguments)
        parsed = json.loads(self.arguments) if self.arguments.strip() else {}
        if not isinstance(parsed, dict):
            raise ValueError(f"tool call arguments must be a JSON object, got {type(parsed).__name__}")
        return parsed


@dataclass(slots=True)
class ToolResult:
    """The answer to one `ToolCall`.

    `output` is the tool's validated return value for the application; `content` is what the model
    receives. `is_error` marks failures the model should react to (bad arguments, an exception in
    the tool, a timeout, ...), with `content` explaining what went wrong.
    """

    call_id: str
    name: str
    content: Sequence[ContentPart]
    output: Any = None
    is_error: bool = False
    error_kind: str | None = None
    """For errors: ``unknown_tool``, ``invalid_arguments``, ``retry``, ``tool_error``, ``exception``,
    ``invalid_output``, ``timeout`` or ``denied``."""

    @property
    def text(self) -> str:
        """The text parts of `content`, joined by newlines."""
        return "\n".join(p.text for p in self.content if isinstance(p, TextPart))

    @classmethod
    def error(cls, call: ToolCall, message: str, kind: str) -> ToolResult:
        """An error result for `call` whose content is `message`."""
        return cls(call_id=call.id, name=call.name, content=(TextPart(message),), is_error=True, error_kind=kind)
