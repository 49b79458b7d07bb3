"""Test setup shared by the model tests: in-process mock-transport servers, the checks every client test
makes (`send`, `assert_blocked`) and the tool sets several use.

Vendor-specific setup (the SDK client, the spec checks) stays in each test module.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar, Literal

import pytest

from agentkit import ImagePart, Registry, TextPart, ToolCall, ToolResult
from agentkit.exceptions import ModelSetupError
from agentkit.messages import AssistantMessage, Message, ModelResponse, SystemMessage, ToolResultsMessage, UserMessage
from agentkit.models import Model, ModelSettings, allow_model_requests
from tests.providers.claude_common import get_weather as get_claude_weather
from tests.providers.common import Address, Item, ping

__all__ = [
    "FixtureServer",
    "QueueServer",
    "assert_blocked",
    "get_weather",
    "history",
    "make_registry",
    "ping",
    "place_order",
    "send",
]


# ---- in-process servers (handlers for an httpx/httpx2 MockTransport) ---------------------------------


class FixtureServer:
    """A transport handler: records each request, answers with one fixture file.

    Subclasses say where the fixtures are (`folder`) and which httpx module the SDK uses (`http`).
    """

    folder: ClassVar[Path]
    http: ClassVar[Any]

    def __init__(self, fixture: str, status: int = 200, headers: dict[str, str] | None = None) -> None:
        self.body = (self.folder / fixture).read_bytes()
        self.status = status
        kind = "text/event-stream" if fixture.endswith(".sse") else "application/json"
        self.headers = {"content-type": kind, **(headers or {})}
        self.requests: list[Any] = []

    def __call__(self, request: Any) -> Any:
        self.requests.append(request)
        return self.http.Response(self.status, headers=self.headers, content=self.body)

    @property
    def sent(self) -> dict[str, Any]:
        """The JSON body of the only request."""
        assert len(self.requests) == 1
        body: dict[str, Any] = json.loads(self.requests[0].content)
        return body


class QueueServer:
    """A transport handler: records each request, answers from a queue of responses.

    An exception in the queue is raised instead (a transport failure, e.g. ``httpx.ConnectError``).
    Subclasses add ``client(...)``: the vendor's SDK client over a MockTransport of this handler.
    """

    def __init__(self, *responses: Any) -> None:
        self.responses = list(responses)
        self.requests: list[Any] = []

    def __call__(self, request: Any) -> Any:
        self.requests.append(request)
        reply = self.responses.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply

    def body(self, index: int = -1) -> Any:
        """The JSON body of request `index` (default: the last)."""
        return json.loads(self.requests[index].content)

    @property
    def bodies(self) -> list[dict[str, Any]]:
        """The JSON bodies of every request, in order."""
        return [json.loads(r.content) for r in self.requests]


# ---- checks every client test makes -----------------------------------------------------------------


async def send(model: Model, registry: Registry, *, streaming: bool) -> None:
    """One ``"hi"`` turn through `model`, streamed (read to the end) or not: for errors both paths raise."""
    if streaming:
        async for _ in model.stream([UserMessage("hi")], registry, ModelSettings()):
            pass
    else:
        await model.request([UserMessage("hi")], registry, ModelSettings())


async def assert_blocked(model: Model, registry: Registry, requests: list[Any]) -> ModelResponse:
    """`model` (pointed at a non-local endpoint) refuses both paths while requests are blocked, sending
    nothing (`requests` stays empty); once allowed, its ``"hi"`` turn, for the caller to check."""
    with allow_model_requests(False):
        for streaming in (False, True):
            with pytest.raises(ModelSetupError, match="blocked"):
                await send(model, registry, streaming=streaming)
    assert requests == []  # nothing left the process
    with allow_model_requests(True):
        return await model.request([UserMessage("hi")], registry, ModelSettings())


# ---- the tools of the OpenAI-style vendors (Cohere, Mistral) ---------------------------------------


def get_weather(city: str, unit: Literal["c", "f"] = "c") -> dict[str, Any]:
    """Get the current weather for a city.

    Args:
        city: City name.
        unit: Temperature unit.
    """
    return {"city": city, "temp": 21, "unit": unit}


def place_order(customer: str, address: Address, items: list[Item], note: str | None = None) -> str:
    """Place an order.

    Args:
        customer: Customer name.
        address: Where to ship.
        items: What to ship.
        note: Free text for the courier.
    """
    return "ok"


def history(call_ids: tuple[str, str], image: ImagePart) -> list[Message]:
    """A conversation with calls made under another vendor's ids, a JSON result, an error result and `image`."""
    calls = [
        ToolCall(id=call_ids[0], name="get_weather", arguments={"city": "Paris"}),
        ToolCall(id=call_ids[1], name="get_weather", arguments='{"city": "Oslo", "unit": "f"}'),
    ]
    return [
        SystemMessage("You are terse."),
        UserMessage([TextPart("Weather in Paris and Oslo? And this picture:"), image]),
        AssistantMessage(text="Checking both.", tool_calls=calls),
        ToolResultsMessage(
            [
                ToolResult(call_id=call_ids[0], name="get_weather", content=[TextPart('{"temp": 21}')]),
                ToolResult.error(calls[1], "weather service down", "tool_error"),
            ]
        ),
        AssistantMessage(text="Paris is 21 C; Oslo is unavailable."),
        UserMessage("Thanks."),
    ]


# ---- the Claude registry (Anthropic, Bedrock) -------------------------------------------------------


def make_registry() -> Registry:
    """get_weather and a flat place_order, as the Anthropic and Bedrock model tests send them."""
    registry = Registry()
    registry.tool(get_claude_weather)  # the provider tests' get_weather

    @registry.tool
    def place_order(sku: str, qty: int = 1) -> str:
        """Order an item.

        Args:
            sku: Stock keeping unit.
            qty: How many.
        """
        return f"{qty} x {sku}"

    return registry


def cut_before(data: bytes, marker: bytes, separator: bytes = b"\n\n") -> bytes:
    """A recorded stream cut just before the first event holding `marker` (a connection that dropped)."""
    events = data.split(separator)
    index = next(i for i, event in enumerate(events) if marker in event)
    assert index > 0, "the cut would leave no event"
    return separator.join(events[:index]) + separator


class LocalServer:
    """A real HTTP server on 127.0.0.1 that misbehaves on purpose, for timeouts and retries.

    `replies` are served in order, one per request: ``"silent"`` accepts and never answers; ``("stall",
    content_type, first_bytes)`` sends headers and a first piece, then nothing more; ``(status, headers,
    body)`` answers normally. Each connection is closed after its reply.
    """

    def __init__(self, *replies: Any) -> None:
        self.replies = list(replies)
        self.requests = 0
        self.bodies: list[bytes] = []
        """The body of each request, in order."""
        self._server: Any = None
        self._tasks: set[Any] = set()

    @property
    def url(self) -> str:
        host, port = self._server.sockets[0].getsockname()[:2]
        return f"http://{host}:{port}"

    async def __aenter__(self) -> LocalServer:
        import asyncio

        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        for task in self._tasks:
            task.cancel()
        self._server.close()

    async def _handle(self, reader: Any, writer: Any) -> None:
        import asyncio

        self._tasks.add(asyncio.current_task())
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                (
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                ),
                0,
            )
            self.bodies.append(await reader.readexactly(length) if length else b"")
            self.requests += 1
            reply = self.replies.pop(0) if self.replies else "silent"
            if reply == "silent":
                await asyncio.sleep(3600)
            if reply[0] == "stall":
                _, kind, first = reply
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: " + kind.encode() + b"\r\nconnection: close\r\n\r\n" + first
                )
                await writer.drain()
                await asyncio.sleep(3600)
            status, headers, body = reply
            lines = [f"HTTP/1.1 {status} X", f"content-length: {len(body)}", "connection: close"]
            lines += [f"{k}: {v}" for k, v in headers.items()]
            writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
            await writer.drain()
        except (asyncio.CancelledError, ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
