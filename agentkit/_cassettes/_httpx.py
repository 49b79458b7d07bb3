"""The cassette at httpx's transport: every httpx (and httpx2) client, sync or async, whatever its transport.

`install` wraps ``Client._transport_for_url`` and ``AsyncClient._transport_for_url`` (the one place a
client picks the transport of a request, a MockTransport included) of each httpx module the vendor SDKs
use; the wrapper steps aside unless a cassette is active. So the client's own
machinery (auth, event hooks, timeouts, the SDK's retries) runs as always; only the exchange itself is
recorded from, or answered by, the cassette.
"""

from __future__ import annotations as _annotations

import importlib
import sys
from collections.abc import AsyncIterator
from typing import Any

from ._cassette import Cassette, active
from ._format import DROPPED_HEADERS

__all__ = ["install"]

_INSTALLED: set[str] = set()
_MODULES = ("httpx", "httpx2")


def install() -> None:
    """Wrap the transport choice of the httpx modules that are installed (once per process)."""
    for name in _MODULES:
        if name in _INSTALLED:
            continue
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        _INSTALLED.add(name)
        for cls, wrapper in ((module.Client, _SyncTransport), (module.AsyncClient, _AsyncTransport)):
            original = cls._transport_for_url
            cls._transport_for_url = _chooser(original, wrapper)


def _chooser(original: Any, wrapper: Any) -> Any:
    def transport_for_url(self: Any, url: Any) -> Any:
        transport = original(self, url)
        cassette = active()
        return transport if cassette is None else wrapper(transport, cassette)

    return transport_for_url


def _module(request: Any) -> Any:
    """The httpx module `request` belongs to (httpx or httpx2), for making its responses."""
    return sys.modules[type(request).__module__.split(".")[0]]


def _fields(cassette: Cassette, request: Any, body: bytes) -> dict[str, Any]:
    return cassette.request_fields(
        request.method, str(request.url), request.headers.multi_items(), body, request.headers.get("content-type", "")
    )


class _AsyncTransport:
    def __init__(self, inner: Any, cassette: Cassette) -> None:
        self.inner = inner
        self.cassette = cassette

    async def handle_async_request(self, request: Any) -> Any:
        fields = _fields(self.cassette, request, await request.aread())
        http = _module(request)
        if not self.cassette.recording:
            status, headers, chunks = self.cassette.answer(fields)
            return _replayed(http, status, headers, chunks, request, sync=False)
        response = await self.inner.handle_async_request(request)
        try:
            chunks = [chunk async for chunk in response.aiter_bytes()]  # decoded, in the pieces the wire gave
        finally:
            await response.aclose()
        self.cassette.record(fields, response.status_code, response.headers.multi_items(), chunks, _kind(response))
        return _replayed(http, response.status_code, _whole(response), chunks, request, sync=False)


class _SyncTransport:
    def __init__(self, inner: Any, cassette: Cassette) -> None:
        self.inner = inner
        self.cassette = cassette

    def handle_request(self, request: Any) -> Any:
        fields = _fields(self.cassette, request, request.read())
        http = _module(request)
        if not self.cassette.recording:
            status, headers, chunks = self.cassette.answer(fields)
            return _replayed(http, status, headers, chunks, request, sync=True)
        response = self.inner.handle_request(request)
        try:
            chunks = list(response.iter_bytes())
        finally:
            response.close()
        self.cassette.record(fields, response.status_code, response.headers.multi_items(), chunks, _kind(response))
        return _replayed(http, response.status_code, _whole(response), chunks, request, sync=True)


def _kind(response: Any) -> str:
    return str(response.headers.get("content-type", ""))


def _whole(response: Any) -> list[tuple[str, str]]:
    """The response's headers for a body handed on whole and decoded (no length or encoding of the wire)."""
    return [(k, v) for k, v in response.headers.multi_items() if k.lower() not in DROPPED_HEADERS]


async def _async_chunks(chunks: list[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk


def _replayed(http: Any, status: int, headers: Any, chunks: list[bytes], request: Any, *, sync: bool) -> Any:
    """A response of the httpx module `http` whose body streams `chunks`, one by one, as the wire gave them."""
    content: Any = iter(chunks) if sync else _async_chunks(chunks)
    return http.Response(status, headers=headers, content=content, request=request)
