"""`MCPServer`'s resources and prompts: listed at connection, read and got on demand, subscribed to.

Three ways to give them to an agent:

* **context the application chooses**: ``await server.read_resource(uri)`` returns `ResourceContents`;
  ``contents.as_message()`` is a user message for the run's history;
* **a tool the model may call**: ``MCPServer(..., resource_tool=True)`` adds ``read_resource`` (with the
  `prefix`) to the registry, its description listing the server's resources and templates;
* **a prompt as messages**: ``await server.get_prompt(name, arguments)`` returns agentkit messages.
"""

from __future__ import annotations as _annotations

import asyncio
import contextlib
import warnings
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..context import ToolContext
from ..exceptions import ToolError
from ..messages import ContentPart
from ..tools import Tool
from ._common import MCPConnectionError, MCPRequestError
from ._remote import (
    MCPPrompt,
    MCPResource,
    MCPResourceTemplate,
    PromptMessage,
    ResourceContents,
    prompt_messages,
)

if TYPE_CHECKING:
    from mcp import ClientSession

__all__ = ["ResourcesAndPrompts", "list_all"]

_LISTED_IN_DESCRIPTION = 40  # resources and templates named in the read_resource tool's description


async def list_all(fetch: Callable[[Any], Awaitable[Any]], attribute: str) -> list[Any]:
    """Every item of a paginated listing (a server whose cursors never end cannot hang the connection)."""
    from mcp import types

    items: list[Any] = []
    cursor: str | None = None
    for _ in range(1000):
        page = await fetch(types.PaginatedRequestParams(cursor=cursor) if cursor is not None else None)
        items.extend(getattr(page, attribute))
        cursor = page.next_cursor
        if cursor is None:
            break
    return items


class ResourcesAndPrompts:
    """The resource and prompt half of `MCPServer` (a mixin: it reads the session and name of the server)."""

    name: str
    max_result_bytes: int | None
    _session: ClientSession | None
    resources: list[MCPResource]
    resource_templates: list[MCPResourceTemplate]
    prompts: list[MCPPrompt]
    _updates: dict[str, list[asyncio.Queue[str]]]

    def _init_extras(self) -> None:
        self.resources = []
        """The server's resources, listed when the session opened (empty if it has none)."""
        self.resource_templates = []
        """The server's resource templates, listed when the session opened."""
        self.prompts = []
        """The server's prompts, listed when the session opened."""
        self._updates = {}

    async def _list_extras(self, session: ClientSession) -> None:
        """List resources, templates and prompts, for the capabilities the server announced."""
        capabilities = session.server_capabilities
        resources = getattr(capabilities, "resources", None)
        prompts = getattr(capabilities, "prompts", None)
        self.resources = (
            [MCPResource.from_mcp(r) for r in await list_all(self._call(session.list_resources), "resources")]
            if resources is not None
            else []
        )
        self.resource_templates = (
            [
                MCPResourceTemplate.from_mcp(t)
                for t in await list_all(self._call(session.list_resource_templates), "resource_templates")
            ]
            if resources is not None
            else []
        )
        self.prompts = (
            [MCPPrompt.from_mcp(p) for p in await list_all(self._call(session.list_prompts), "prompts")]
            if prompts is not None
            else []
        )

    @staticmethod
    def _call(method: Callable[..., Awaitable[Any]]) -> Callable[[Any], Awaitable[Any]]:
        return lambda params: method(params=params)

    def _open_session(self, request: str) -> ClientSession:
        session = self._session
        if session is None:
            raise MCPConnectionError(f"MCP server {self.name!r} is not connected: {request} needs `async with server:`")
        return session

    async def _request(self, request: str, send: Callable[[], Awaitable[Any]]) -> Any:
        from mcp import MCPError

        try:
            return await send()
        except MCPError as exc:
            raise MCPRequestError(self.name, request, exc.code, exc.message) from None

    # ---- resources ------------------------------------------------------------------------------------

    async def read_resource(self, uri: str) -> list[ResourceContents]:
        """Read a resource (``resources/read``): its contents, text or bytes (one resource may have several).

        A template's URI comes from `MCPResourceTemplate.expand`.

        Raises:
            MCPConnectionError: the session is not open.
            MCPRequestError: the server refused (no such resource: code ``-32002``).
            ValueError: the contents are larger than `max_result_bytes`.
        """
        session = self._open_session(f"read_resource({uri!r})")
        result = await self._request(f"resources/read {uri!r}", lambda: session.read_resource(uri))
        contents = [ResourceContents.from_mcp(item) for item in result.contents]
        size = sum(len(c.text.encode()) if c.text is not None else len(c.data or b"") for c in contents)
        limit = self.max_result_bytes
        if limit is not None and size > limit:
            raise ValueError(f"resource {uri!r} is {size:,} bytes, over max_result_bytes ({limit:,})")
        return contents

    @contextlib.asynccontextmanager
    async def subscribe(self, uri: str) -> AsyncGenerator[AsyncIterator[str], None]:
        """Follow a resource's updates: yields an async iterator of the URIs the server says changed.

        Uses ``resources/subscribe`` (and ``unsubscribe`` when the block ends) on handshake-era
        connections, a ``subscriptions/listen`` stream on 2026-07-28 ones. Read the resource again on
        each update.

        Raises:
            MCPRequestError: the server does not offer subscriptions, or refused this one.
        """
        session = self._open_session(f"subscribe({uri!r})")
        capabilities = getattr(session.server_capabilities, "resources", None)
        if not getattr(capabilities, "subscribe", False):
            raise MCPRequestError(self.name, f"subscribe {uri!r}", -32601, "the server does not offer subscriptions")
        if _modern(session):
            from mcp.client.subscriptions import listen

            async with listen(session, resource_subscriptions=[uri]) as stream:
                yield _uris_of(stream)
            return
        queue: asyncio.Queue[str] = asyncio.Queue()
        self._updates.setdefault(uri, []).append(queue)
        try:
            with warnings.catch_warnings():  # deprecated by the 2026-07-28 protocol, which this era predates
                warnings.simplefilter("ignore")
                await self._request(f"resources/subscribe {uri!r}", lambda: session.subscribe_resource(uri))  # pyright: ignore[reportDeprecated]
            yield _drain(queue)
        finally:
            self._updates[uri].remove(queue)
            if not self._updates[uri]:
                del self._updates[uri]
                if self._session is not None:
                    with warnings.catch_warnings(), contextlib.suppress(Exception):
                        warnings.simplefilter("ignore")
                        await session.unsubscribe_resource(uri)  # pyright: ignore[reportDeprecated]

    async def _on_message(self, message: Any) -> None:
        """The session's message handler: resource updates go to their subscribers."""
        root = getattr(message, "root", message)
        if getattr(root, "method", None) == "notifications/resources/updated":
            uri = str(root.params.uri)
            for queue in self._updates.get(uri, []):
                queue.put_nowait(uri)

    def _resource_tool(self) -> Tool[..., Any]:
        """The ``read_resource`` tool: a model reads a listed resource, or a template's URI, by URI."""
        listed = [f"- {r.uri}: {r.description or r.title or r.name}" for r in self.resources]
        listed += [
            f"- {t.uri_template} (template): {t.description or t.title or t.name}" for t in self.resource_templates
        ]
        shown = listed[:_LISTED_IN_DESCRIPTION]
        more = len(listed) - len(shown)
        description = (
            f"Read a resource of the MCP server {self.name!r} by its URI. Resources:\n"
            + "\n".join(shown)
            + (f"\n(and {more} more)" if more > 0 else "")
        )
        server = self

        async def read_resource(ctx: ToolContext[Any], uri: str) -> list[ContentPart]:
            try:
                contents = await server.read_resource(uri)
            except (MCPRequestError, MCPConnectionError, ValueError) as exc:
                raise ToolError(str(exc)) from None
            return [part for item in contents for part in item.parts]

        return Tool.from_function(read_resource, id="read_resource", description=description)

    # ---- prompts --------------------------------------------------------------------------------------

    async def get_prompt(self, name: str, arguments: Mapping[str, Any] | None = None) -> list[PromptMessage]:
        """Get a prompt (``prompts/get``) as agentkit messages, ready for `Agent.generate`.

        Arguments are checked against the listing first (required ones present, no unknown ones);
        values that are not strings are sent as JSON text.

        Raises:
            MCPConnectionError: the session is not open.
            ValueError: an argument is missing or unknown (the server was not asked).
            MCPRequestError: the server refused (an unknown prompt, arguments that do not fit).
        """
        session = self._open_session(f"get_prompt({name!r})")
        listed = next((p for p in self.prompts if p.name == name), None)
        wire = (
            listed.wire_arguments(arguments or {})
            if listed is not None
            else {k: v if isinstance(v, str) else str(v) for k, v in (arguments or {}).items()}
        )
        result = await self._request(f"prompts/get {name!r}", lambda: session.get_prompt(name, wire))
        return prompt_messages(result)


def _modern(session: ClientSession) -> bool:
    from mcp.types.version import MODERN_PROTOCOL_VERSIONS

    return session.protocol_version in MODERN_PROTOCOL_VERSIONS


async def _drain(queue: asyncio.Queue[str]) -> AsyncIterator[str]:
    while True:
        yield await queue.get()


async def _uris_of(stream: Any) -> AsyncIterator[str]:
    async for event in stream:
        uri = getattr(event, "uri", None)
        if isinstance(uri, str):
            yield uri
