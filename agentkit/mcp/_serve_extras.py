"""The resource and prompt handlers of a served registry (``resources/*``, ``prompts/*``).

A bad URI, an unknown prompt, or arguments that do not fit are protocol errors (``-32602``) naming the
culprit; a function that raises is an internal error (``-32603``) with its message. The server stays up.
"""

from __future__ import annotations as _annotations

import base64
from collections.abc import Sequence
from typing import Any

from .._text import clip
from ..exceptions import ToolInputError
from ..messages import AssistantMessage, UserMessage
from ._common import describe, parts_to_content
from ._definitions import Prompt, Resource, argument_error

__all__ = ["RESOURCE_NOT_FOUND", "extra_handlers"]

RESOURCE_NOT_FOUND = -32002
"""The error code MCP gives a ``resources/read`` of a URI the server does not have."""


def _unique(kind: str, names: Sequence[str]) -> None:
    seen: set[str] = set()
    twice: set[str] = set()
    for name in names:
        (twice if name in seen else seen).add(name)
    if twice:
        raise ValueError(f"two {kind}s have the same name or URI: {sorted(twice)}; give each its own (name=...)")


def extra_handlers(resources: Sequence[Resource], prompts: Sequence[Prompt], deps: Any) -> dict[str, Any]:
    """The ``on_*`` keyword arguments of mcp's low-level `Server` for `resources` and `prompts`.

    Raises:
        ValueError: two resources share a URI, two prompts a name, or a URI template mcp cannot parse.
    """
    handlers: dict[str, Any] = {}
    if resources:
        handlers.update(_resource_handlers(resources, deps))
    if prompts:
        handlers.update(_prompt_handlers(prompts, deps))
    return handlers


def _resource_handlers(resources: Sequence[Resource], deps: Any) -> dict[str, Any]:
    from mcp import MCPError, types
    from mcp.shared.uri_template import InvalidUriTemplate, UriTemplate

    _unique("resource", [r.uri for r in resources])
    statics = {r.uri: r for r in resources if not r.is_template}
    templates: list[tuple[Any, Resource]] = []
    for item in resources:
        if item.is_template:
            try:
                templates.append((UriTemplate.parse(item.uri), item))
            except InvalidUriTemplate as exc:
                raise ValueError(
                    f"resource {item.name!r}: {item.uri!r} is not a URI template mcp can match: {exc}"
                ) from None

    def find(uri: str) -> tuple[Resource, dict[str, Any]]:
        if uri in statics:
            return statics[uri], {}
        for template, item in templates:
            found = template.match(uri)
            if found is not None:
                return item, dict(found)
        raise MCPError(RESOURCE_NOT_FOUND, f"Resource not found: {clip(uri, 200)}")

    async def list_resources(ctx: Any, params: Any) -> Any:
        listed = [
            types.Resource(
                uri=r.uri, name=r.name, title=r.title, description=r.description or None, mime_type=r.mime_type
            )
            for r in statics.values()
        ]
        return types.ListResourcesResult(resources=listed)

    async def list_templates(ctx: Any, params: Any) -> Any:
        listed = [
            types.ResourceTemplate(
                uri_template=r.uri, name=r.name, title=r.title, description=r.description or None, mime_type=r.mime_type
            )
            for _, r in templates
        ]
        return types.ListResourceTemplatesResult(resource_templates=listed)

    async def read_resource(ctx: Any, params: Any) -> Any:
        uri = str(params.uri)
        item, variables = find(uri)
        try:
            served = await item.read(uri, variables, deps=deps)
        except ToolInputError as exc:
            raise MCPError(types.INVALID_PARAMS, f"Resource {clip(uri, 200)}: {argument_error(exc)}") from None
        except Exception as exc:  # noqa: BLE001 - the function's failure is the client's error, not the server's end
            raise MCPError(types.INTERNAL_ERROR, f"Reading {clip(uri, 200)} failed: {describe(exc)}") from None
        if served.data is not None:
            blob = base64.b64encode(served.data).decode()
            contents: Any = types.BlobResourceContents(uri=uri, mime_type=served.mime_type, blob=blob)
        else:
            contents = types.TextResourceContents(uri=uri, mime_type=served.mime_type, text=served.text or "")
        return types.ReadResourceResult(contents=[contents])

    return {
        "on_list_resources": list_resources,
        "on_list_resource_templates": list_templates,
        "on_read_resource": read_resource,
    }


def _prompt_handlers(prompts: Sequence[Prompt], deps: Any) -> dict[str, Any]:
    from mcp import MCPError, types

    _unique("prompt", [p.name for p in prompts])
    by_name = {p.name: p for p in prompts}

    async def list_prompts(ctx: Any, params: Any) -> Any:
        listed = [
            types.Prompt(
                name=p.name,
                title=p.title,
                description=p.description or None,
                arguments=[
                    types.PromptArgument(name=a.name, description=a.description, required=a.required)
                    for a in p.arguments
                ],
            )
            for p in prompts
        ]
        return types.ListPromptsResult(prompts=listed)

    async def get_prompt(ctx: Any, params: Any) -> Any:
        item = by_name.get(params.name)
        if item is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown prompt: {clip(params.name, 100)}")
        try:
            messages = await item.render(params.arguments or {}, deps=deps)
        except ToolInputError as exc:
            raise MCPError(types.INVALID_PARAMS, f"Prompt {item.name!r}: {argument_error(exc)}") from None
        except Exception as exc:  # noqa: BLE001 - the function's failure is the client's error, not the server's end
            raise MCPError(types.INTERNAL_ERROR, f"Prompt {item.name!r} failed: {describe(exc)}") from None
        wire: list[Any] = []
        for message in messages:
            for block in _blocks(message):
                wire.append(types.PromptMessage(role=message.role, content=block))
        return types.GetPromptResult(description=item.description or None, messages=wire)

    return {"on_list_prompts": list_prompts, "on_get_prompt": get_prompt}


def _blocks(message: UserMessage | AssistantMessage) -> list[Any]:
    """A message's content as MCP content blocks (one prompt message per block, as MCP has it)."""
    from mcp import types

    if isinstance(message, AssistantMessage):
        return [types.TextContent(type="text", text=message.text)]
    if isinstance(message.content, str):
        return [types.TextContent(type="text", text=message.content)]
    return list(parts_to_content(message.content))
