"""The cassette at botocore's transport (Bedrock through boto3).

botocore sends in `Endpoint._do_get_response`: it emits ``before-send`` (a handler may answer instead of
the network, as the test doubles do) and, when no handler answered, sends. `install` wraps that method
so that, while a cassette is active, it runs against a view of the endpoint whose ``before-send`` is
answered by the cassette: replayed from the file, or obtained as usual (a handler's answer, else the
network) and recorded. Parsing, retries and event streams stay botocore's own.
"""

from __future__ import annotations as _annotations

import importlib
from collections.abc import Iterator
from typing import Any

from ._cassette import Cassette, active

__all__ = ["install"]

_INSTALLED: list[bool] = []


def install() -> None:
    """Wrap botocore's send step, if botocore is installed (once per process)."""
    if _INSTALLED:
        return
    try:
        endpoint = importlib.import_module("botocore.endpoint")
    except ImportError:
        return
    _INSTALLED.append(True)
    original = endpoint.Endpoint._do_get_response

    def _do_get_response(self: Any, request: Any, operation_model: Any, context: Any) -> Any:
        cassette = active()
        if cassette is None:
            return original(self, request, operation_model, context)
        return original(_Endpoint(self, cassette), request, operation_model, context)

    endpoint.Endpoint._do_get_response = _do_get_response


class _Endpoint:
    """The endpoint as `_do_get_response` sees it while a cassette is active: its events go through `_Events`."""

    def __init__(self, endpoint: Any, cassette: Cassette) -> None:
        self._endpoint = endpoint
        self._event_emitter = _Events(endpoint, cassette)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._endpoint, name)


class _Events:
    def __init__(self, endpoint: Any, cassette: Cassette) -> None:
        self.endpoint = endpoint
        self.cassette = cassette

    def __getattr__(self, name: str) -> Any:
        return getattr(self.endpoint._event_emitter, name)

    def emit(self, event_name: str, **kwargs: Any) -> Any:
        if not event_name.startswith("before-send."):
            return self.endpoint._event_emitter.emit(event_name, **kwargs)
        from botocore.awsrequest import AWSResponse  # type: ignore[import-untyped]  # botocore has no types
        from botocore.hooks import first_non_none_response  # type: ignore[import-untyped]

        request = kwargs["request"]
        body = request.body if isinstance(request.body, bytes) else (request.body or b"")
        if not isinstance(body, bytes):
            body = body.read() if hasattr(body, "read") else str(body).encode()
        headers = [(str(k), v.decode() if isinstance(v, bytes) else str(v)) for k, v in request.headers.items()]
        kind = {k.lower(): v for k, v in headers}.get("content-type", "")
        fields = self.cassette.request_fields(request.method, request.url, headers, body, kind)
        if not self.cassette.recording:
            status, answer_headers, chunks = self.cassette.answer(fields)
            return [(None, AWSResponse(request.url, status, answer_headers, _Raw(chunks)))]
        response = first_non_none_response(self.endpoint._event_emitter.emit(event_name, **kwargs))
        if response is None:
            response = self.endpoint._send(request)
        chunks = [bytes(chunk) for chunk in response.raw.stream()]
        response_headers = list(response.headers.items())
        kind = {k.lower(): v for k, v in response_headers}.get("content-type", "")
        self.cassette.record(fields, response.status_code, response_headers, chunks, kind)
        return [(None, AWSResponse(request.url, response.status_code, dict(response_headers), _Raw(chunks)))]


class _Raw:
    """A body botocore reads (urllib3's response API), replaying the recorded chunks."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    def stream(self, amt: int = 1024, decode_content: bool = True) -> Iterator[bytes]:
        yield from self.chunks

    def read(self, amt: int | None = None) -> bytes:
        data = b"".join(self.chunks)
        self.chunks = []
        return data

    def close(self) -> None:
        self.chunks = []

    def release_conn(self) -> None:
        return None
