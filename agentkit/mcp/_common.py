"""Shared helpers of the MCP client and server: the lazy import, content conversion, errors."""

from __future__ import annotations as _annotations

import base64
import binascii
import importlib
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

from .._text import clip
from ..exceptions import MCPConnectionError, MCPLoadError, MCPRequestError
from ..messages import ContentPart, ImagePart, TextPart

if TYPE_CHECKING:
    from mcp import types as mcp_types
    from pydantic import ValidationError

__all__ = [
    "MCPConnectionError",
    "MCPLoadError",
    "MCPRequestError",
    "content_to_parts",
    "not_mcp_result",
    "parts_to_content",
    "require_mcp",
]

_INSTALL_HINT = "agentkit's MCP support needs the `mcp` package (2.x): pip install 'agentkit-tools[mcp]'"


def require_mcp() -> ModuleType:
    """Import and return the `mcp` package, or raise `ImportError` with the install command."""
    try:
        return importlib.import_module("mcp")
    except ImportError as exc:
        raise ImportError(f"{_INSTALL_HINT} ({exc})") from exc


def _decode(data: str) -> bytes | None:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def content_to_parts(blocks: Sequence[mcp_types.ContentBlock]) -> list[ContentPart]:
    """MCP content blocks -> agentkit parts: text as text, images as `ImagePart`, the rest described in text."""
    parts: list[ContentPart] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(TextPart(block.text))  # type: ignore[union-attr]
        elif kind == "image":
            raw = _decode(block.data)  # type: ignore[union-attr]
            mime = str(block.mime_type)  # type: ignore[union-attr]
            if raw is None:
                parts.append(TextPart(f"[image content ({mime}) with invalid base64 data]"))
            else:
                parts.append(ImagePart(data=raw, media_type=mime))
        elif kind == "audio":
            parts.append(TextPart(f"[audio content ({block.mime_type}) omitted]"))  # type: ignore[union-attr]
        elif kind == "resource_link":
            parts.append(TextPart(f"[resource {block.name}: {block.uri}]"))  # type: ignore[union-attr]
        elif kind == "resource":
            parts.append(_embedded_resource(block.resource))  # type: ignore[union-attr]
        else:
            parts.append(TextPart(f"[unsupported MCP content of type {kind!r}]"))
    return parts


def _embedded_resource(resource: Any) -> ContentPart:
    text = getattr(resource, "text", None)
    if isinstance(text, str):
        return TextPart(text)
    mime = getattr(resource, "mime_type", None) or "application/octet-stream"
    blob = getattr(resource, "blob", None)
    if isinstance(blob, str) and mime.startswith("image/"):
        raw = _decode(blob)
        if raw is not None:
            return ImagePart(data=raw, media_type=mime)
    return TextPart(f"[binary resource {getattr(resource, 'uri', '')} ({mime}) omitted]")


def parts_to_content(parts: Sequence[ContentPart]) -> list[mcp_types.ContentBlock]:
    """Turn agentkit parts into MCP content blocks (an image given by URL becomes a resource link)."""
    from mcp import types

    blocks: list[mcp_types.ContentBlock] = []
    for part in parts:
        if isinstance(part, TextPart):
            blocks.append(types.TextContent(type="text", text=part.text))
        elif part.data is not None:
            blocks.append(types.ImageContent(type="image", data=part.base64, mime_type=part.media_type))
        else:
            blocks.append(
                types.ResourceLink(type="resource_link", name="image", uri=part.data_url, mime_type=part.media_type)
            )
    return blocks


def leaf_exception(exc: BaseException) -> BaseException:
    """The single exception inside (nested) exception groups, else `exc` itself."""
    while True:
        group = getattr(exc, "exceptions", None)
        if not isinstance(group, tuple):
            return exc
        inner = cast("tuple[BaseException, ...]", group)
        if len(inner) != 1:
            return exc
        exc = inner[0]


def describe(exc: BaseException) -> str:
    """``Type: message`` of the innermost single exception (for one-line error messages)."""
    leaf = leaf_exception(exc)
    text = str(leaf)
    return f"{type(leaf).__name__}: {text}" if text else type(leaf).__name__


def not_mcp_result(server: str, tool: str, error: ValidationError) -> str:
    """What the model is told when a server answers a call with something that is not an MCP result."""
    first = error.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(step) for step in first["loc"])
    found = f"{error.error_count()} problems; the first at {where}: {first['msg']}"
    return clip(
        f"MCP server {server!r} answered the call to {tool!r} with a result that is not valid MCP ({found}); "
        "the call did not complete.",
        600,
    )
