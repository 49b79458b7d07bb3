"""Ollama (native ``POST /api/chat``) through the official ollama-python SDK.

The request body is built by `OllamaProvider` and sent through ``ollama.AsyncClient``: its httpx client
(host parsing, ``OLLAMA_HOST``, ``OLLAMA_API_KEY`` bearer auth, headers), its error handling
(``ResponseError``, the "Failed to connect" ``ConnectionError``) and its NDJSON stream reader. The public
``AsyncClient.chat()`` is not used for the body: it re-validates messages and tools into its own pydantic
models, which drop call ids and ``tool_call_id`` (so results lose their link to calls), ``anyOf`` in tool
parameters, and rename ``$defs`` to ``defs``. The body therefore goes through the client's request method
(``AsyncClient._request``) with ``dict`` as the response type, so that neither direction is re-modelled:
what goes on the wire is exactly `OllamaModel.payload`, and responses are read as the server sent them.

ollama is imported only when an `OllamaModel` is created (``pip install 'agentkit-tools[ollama]'``).
"""

from __future__ import annotations as _annotations

import importlib
import json
from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing
from typing import Any, cast

from ...exceptions import ModelAPIError, ModelHTTPError, ModelSetupError
from ...messages import Message, ModelResponse
from ...models._base import (
    ModelSettings,
    ModelStreamEvent,
)
from ...models._limits import RequestLimits
from ...registry import Registry
from .._client import SDKModel, deep_merge, header_dict, provider_request, sampling_options
from ._codec import OllamaProvider

__all__ = ["DEFAULT_HOST", "OllamaModel"]

DEFAULT_HOST = "http://127.0.0.1:11434"
"""Where a client built here connects when neither `base_url` nor ``OLLAMA_HOST`` says otherwise."""

_INSTALL_HINT = "OllamaModel needs the ollama package: pip install 'agentkit-tools[ollama]'"


def _ollama() -> Any:
    try:
        return importlib.import_module("ollama")
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc


class OllamaModel(SDKModel[OllamaProvider]):
    """An Ollama model, e.g. ``OllamaModel("qwen3:8b")`` or ``infer_model("ollama:qwen3:8b")``.

    Args:
        model_name: the model tag as Ollama knows it (``ollama list``).
        client: an ``ollama.AsyncClient`` built by the caller; used as it is and never closed here.
        api_key: a bearer token for a client built here (Ollama's cloud, an authenticating proxy). Not
            needed for a local server; ollama-python also reads ``OLLAMA_API_KEY`` by itself.
        base_url: the server for a client built here; default ``OLLAMA_HOST``, else `DEFAULT_HOST`.
        provider: the `OllamaProvider` formatting the requests.
        limits: agentkit's bounds on each request (`agentkit.models.RequestLimits`); ollama-python retries
            nothing.

    Raises:
        ImportError: the ollama package is not installed (the message says what to install).
        ModelSetupError: a client together with `api_key`/`base_url`.
    """

    vendor = "ollama"
    label = "Ollama"
    example = "qwen3:8b"
    provider_class = OllamaProvider

    def __init__(
        self,
        model_name: str,
        *,
        client: Any = None,
        api_key: str | None = None,
        base_url: str | None = None,
        provider: OllamaProvider | None = None,
        limits: RequestLimits | None = None,
    ) -> None:
        options = {"api_key": api_key, "base_url": base_url}
        self._setup(model_name, client=client, provider=provider, limits=limits, options=options)

    def _build_client(self, *, api_key: str | None, base_url: str | None) -> Any:
        ollama, limits = _ollama(), self.limits
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else None
        timeout = importlib.import_module("httpx").Timeout(limits.request, connect=limits.connect)
        # host=None lets ollama-python read OLLAMA_HOST and fall back to 127.0.0.1:11434 itself.
        return ollama.AsyncClient(host=base_url, headers=headers, timeout=timeout)

    @property
    def base_url(self) -> str | None:
        """The server the client sends to (None when it cannot be read)."""
        http = getattr(self.client, "_client", None)
        url = getattr(http, "base_url", None)
        return str(url) if url is not None else None

    def payload(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> dict[str, Any]:
        """The exact ``/api/chat`` body of a non-streamed `request` (`stream` sends ``"stream": true``)."""
        return self._body(messages, tools, settings, shared=False)

    def _body(
        self, messages: Sequence[Message], tools: Registry, settings: ModelSettings, *, shared: bool = True
    ) -> dict[str, Any]:
        body = {"model": self.model_name, **provider_request(self.provider, messages, tools, settings, shared=shared)}
        body["stream"] = False
        options = sampling_options(settings, "num_predict")
        if options:
            body["options"] = options
        deep_merge(body, settings.extra)
        return body

    def _send(self, body: dict[str, Any], *, stream: bool) -> Any:
        send = getattr(self.client, "_request", None)
        if send is None:
            raise ModelSetupError(
                f"{type(self.client).__name__} has no _request method: OllamaModel needs an ollama.AsyncClient "
                "from ollama-python 0.4 or later"
            )
        return send(dict, "POST", "/api/chat", json=body, stream=stream)

    async def request(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> ModelResponse:
        """Send one ``/api/chat`` request and return the model's turn."""
        body = self._body(messages, tools, settings)
        response = await self._call(lambda: self._send(body, stream=False))
        return self._parsed(response, tools, settings)

    async def stream(
        self, messages: Sequence[Message], tools: Registry, settings: ModelSettings
    ) -> AsyncIterator[ModelStreamEvent]:
        """Stream one ``/api/chat`` request (NDJSON chunks).

        ``message.content`` pieces become `TextDelta`s; each call (Ollama sends them whole) becomes a
        `ToolCallStart` and one `ToolCallArgsDelta` with all its arguments. `ResponseDone` carries the
        chunks merged into one response (content, thinking and calls gathered; counts and
        ``done_reason`` from the last chunk), parsed like `request`'s; ``raw`` is that merged dict.
        """
        body = self._body(messages, tools, settings)
        body["stream"] = True
        async with aclosing(self._stream_events(lambda: self._send(body, stream=True), tools, settings)) as events:
            async for event in events:
                yield event

    async def _close_client(self) -> None:
        await self.client.close()

    def _map_error(self, error: Exception) -> Exception | None:
        """The agentkit error for an ollama-python / httpx exception."""
        exc = error
        ollama = importlib.import_module("ollama")
        if isinstance(exc, ollama.ResponseError):
            # ollama is imported lazily, so ResponseError is Any here and does not narrow `exc`
            message: Any = cast(Any, exc).error
            status = getattr(exc, "status_code", -1)
            if not isinstance(status, int) or status < 400:
                # an {"error": ...} line inside a 200 stream: the server failed after it started answering
                return ModelAPIError(self.name, f"Ollama reported an error: {message}")
            # ResponseError keeps only the message; the httpx error it replaced has the full response
            response = getattr(exc.__context__, "response", None)
            body: Any = {"error": message}
            headers: dict[str, str] = {}
            if response is not None:
                headers = header_dict(response.headers)
                try:
                    body = json.loads(response.text)
                except ValueError:
                    body = response.text or body
            return ModelHTTPError(self.name, status, body, headers)
        httpx = importlib.import_module("httpx")
        if isinstance(exc, (ConnectionError, TimeoutError, httpx.TransportError)):
            return ModelAPIError(self.name, f"could not reach Ollama at {self.base_url} ({type(exc).__name__}: {exc})")
        if isinstance(exc, ValueError):  # a line of the stream that is not JSON
            return ModelAPIError(self.name, f"unreadable response from Ollama ({type(exc).__name__}: {exc})")
        return None
