"""An MCP server's resources and prompts, typed: what `MCPServer` lists, reads and gets.

* `MCPResource` / `MCPResourceTemplate`: what ``resources/list`` and ``resources/templates/list`` said;
  a template `expand`s its variables into a URI.
* `ResourceContents`: one read result, text or bytes; `parts` and `as_message` give it to a model as
  context the application chose.
* `MCPPrompt`: a listed prompt with its `PromptArgument`s; `MCPServer.get_prompt` returns agentkit
  messages, ready to start or continue a run.
"""

from __future__ import annotations as _annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Union, cast

from ..messages import AssistantMessage, ContentPart, ImagePart, TextPart, UserMessage
from ._common import content_to_parts

if TYPE_CHECKING:
    from mcp import types as mcp_types

__all__ = [
    "MCPPrompt",
    "MCPResource",
    "MCPResourceTemplate",
    "PromptArgument",
    "ResourceContents",
    "prompt_messages",
]


@dataclass(frozen=True)
class MCPResource:
    """A resource an MCP server listed (``resources/list``)."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    """Its size in bytes, when the server said."""

    @classmethod
    def from_mcp(cls, item: mcp_types.Resource) -> MCPResource:
        """From the mcp model."""
        return cls(str(item.uri), item.name, item.title, item.description, item.mime_type, item.size)


@dataclass(frozen=True)
class MCPResourceTemplate:
    """A resource template an MCP server listed (``resources/templates/list``): URIs with variables."""

    uri_template: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None

    @property
    def variables(self) -> list[str]:
        """The template's variable names, in order."""
        from mcp.shared.uri_template import UriTemplate

        return UriTemplate.parse(self.uri_template).variable_names

    def expand(self, **arguments: Any) -> str:
        """The URI for `arguments` (RFC 6570 expansion; values are encoded as the template says).

        Raises:
            ValueError: a variable of the template is missing.
        """
        from mcp.shared.uri_template import UriTemplate

        template = UriTemplate.parse(self.uri_template)
        missing = [v for v in template.variable_names if v not in arguments]
        if missing:
            raise ValueError(f"resource template {self.uri_template!r} needs {missing}; got {sorted(arguments)}")
        values = {k: _wire_value(v) for k, v in arguments.items()}
        return template.expand(values)

    @classmethod
    def from_mcp(cls, item: mcp_types.ResourceTemplate) -> MCPResourceTemplate:
        """From the mcp model."""
        return cls(item.uri_template, item.name, item.title, item.description, item.mime_type)


def _wire_value(value: object) -> str | list[str]:
    if isinstance(value, (list, tuple)):
        return [str(x) for x in cast("Sequence[object]", value)]
    return str(value)


@dataclass(frozen=True)
class ResourceContents:
    """One part of what ``resources/read`` returned: `text`, or `data` (bytes), with its MIME type."""

    uri: str
    mime_type: str | None = None
    text: str | None = None
    data: bytes | None = None

    @property
    def parts(self) -> list[ContentPart]:
        """For a model: text as text, an image as an `ImagePart`, other bytes described in text."""
        if self.text is not None:
            return [TextPart(self.text)]
        mime = self.mime_type or "application/octet-stream"
        if self.data is not None and mime.startswith("image/"):
            return [ImagePart(data=self.data, media_type=mime)]
        size = len(self.data or b"")
        return [TextPart(f"[binary resource {self.uri} ({mime}, {size:,} bytes) omitted]")]

    def as_message(self) -> UserMessage:
        """A user message carrying this resource, for a run's history (the context the application chose)."""
        return UserMessage([TextPart(f"Resource {self.uri}:"), *self.parts])

    @classmethod
    def from_mcp(cls, item: Any) -> ResourceContents:
        """From an mcp ``TextResourceContents`` or ``BlobResourceContents`` (bad base64: no data)."""
        text = getattr(item, "text", None)
        if isinstance(text, str):
            return cls(str(item.uri), item.mime_type, text=text)
        try:
            data = base64.b64decode(getattr(item, "blob", ""), validate=True)
        except (binascii.Error, ValueError):
            data = None
        return cls(str(item.uri), item.mime_type, data=data)


@dataclass(frozen=True)
class PromptArgument:
    """An argument of a listed prompt."""

    name: str
    description: str | None = None
    required: bool = False


@dataclass(frozen=True)
class MCPPrompt:
    """A prompt an MCP server listed (``prompts/list``)."""

    name: str
    title: str | None = None
    description: str | None = None
    arguments: Sequence[PromptArgument] = field(default_factory=lambda: ())

    @classmethod
    def from_mcp(cls, item: mcp_types.Prompt) -> MCPPrompt:
        """From the mcp model."""
        arguments = tuple(PromptArgument(a.name, a.description, bool(a.required)) for a in (item.arguments or []))
        return cls(item.name, item.title, item.description, arguments)

    def wire_arguments(self, arguments: Mapping[str, Any]) -> dict[str, str]:
        """`arguments` as MCP sends them (strings; other values as JSON), checked against the listing.

        Raises:
            ValueError: a required argument is missing, or one is not an argument of the prompt.
        """
        import json

        known = {a.name for a in self.arguments}
        unknown = sorted(set(arguments) - known)
        missing = [a.name for a in self.arguments if a.required and a.name not in arguments]
        if unknown or missing:
            raise ValueError(
                f"prompt {self.name!r} takes {sorted(known)}"
                + (f"; missing {missing}" if missing else "")
                + (f"; unknown {unknown}" if unknown else "")
            )
        return {k: v if isinstance(v, str) else json.dumps(v) for k, v in arguments.items()}


PromptMessage = Union[UserMessage, AssistantMessage]


def prompt_messages(result: mcp_types.GetPromptResult) -> list[PromptMessage]:
    """A ``prompts/get`` result as agentkit messages; consecutive blocks of one role make one message.

    A user message keeps images as `ImagePart`s; an assistant message carries text only (other blocks
    are described in text).
    """
    messages: list[PromptMessage] = []
    for item in result.messages:
        parts = content_to_parts([item.content])
        if item.role == "assistant":
            text = "\n".join(p.text if isinstance(p, TextPart) else f"[{p.media_type} image]" for p in parts)
            last = messages[-1] if messages else None
            if isinstance(last, AssistantMessage):
                messages[-1] = AssistantMessage(text=f"{last.text}\n{text}")
            else:
                messages.append(AssistantMessage(text=text))
            continue
        last = messages[-1] if messages else None
        if isinstance(last, UserMessage):
            before = [TextPart(last.content)] if isinstance(last.content, str) else list(last.content)
            messages[-1] = UserMessage([*before, *parts])
        elif len(parts) == 1 and isinstance(parts[0], TextPart):
            messages.append(UserMessage(parts[0].text))
        else:
            messages.append(UserMessage(parts))
    return messages
