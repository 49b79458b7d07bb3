"""Anthropic Messages through the official ``anthropic`` SDK (``AsyncAnthropic``), imported lazily.

```python
from agentkit.models.anthropic import AnthropicModel

model = AnthropicModel("claude-sonnet-4-6")                  # ANTHROPIC_API_KEY from the environment
local = AnthropicModel("qwen3", client=AsyncAnthropic(base_url="http://127.0.0.1:8080", api_key="x"))
```

All formatting and parsing is `agentkit.providers.anthropic.AnthropicProvider`'s; this module sends
the request, maps SDK errors to `ModelHTTPError` / `ModelAPIError`, and turns the SSE stream into
`ModelStreamEvent`s.
"""

from __future__ import annotations as _annotations

import importlib
import inspect
from collections.abc import AsyncIterator, Sequence
from functools import cache
from typing import Any

from ...exceptions import ModelAPIError, ModelHTTPError, ModelSetupError
from ...messages import Message, ModelResponse
from ...models._base import (
    Model,
    ModelSettings,
    ModelStreamEvent,
    ResponseDone,
    check_request_allowed,
)
from ...registry import Registry
from .._client import OwnedClient, api_key_from_env, provider_request
from ._codec import AnthropicProvider

__all__ = ["DEFAULT_MAX_TOKENS", "ENV_VAR", "AnthropicModel"]

DEFAULT_MAX_TOKENS = 4096
"""``max_tokens`` sent when the settings give none: the Messages API requires the field."""

ENV_VAR = "ANTHROPIC_API_KEY"
"""Where the API key is read from when neither `client` nor `api_key` is given."""

# an ``error`` event inside a 200 stream carries only its type: the status the API gives it otherwise
_STREAM_ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}


def _sdk() -> Any:
    """The ``anthropic`` module, imported on first use so ``import agentkit`` never loads it."""
    try:
        return importlib.import_module("anthropic")
    except ImportError as exc:  # pragma: no cover - the dev install has every SDK
        raise ImportError(
            "AnthropicModel needs the anthropic SDK, an agentkit dependency: pip install anthropic"
        ) from exc


class AnthropicModel(OwnedClient, Model):
    """A Claude model (or any Messages-compatible server) behind ``anthropic.AsyncAnthropic``.

    Args:
        model_name: the model id, e.g. ``"claude-sonnet-4-6"``.
        client: an ``AsyncAnthropic`` you configured (base URL, retries, headers...); used as it is and
            never closed here.
        api_key: the key for a client built here; default: the ``ANTHROPIC_API_KEY`` environment variable.
        base_url: the endpoint for a client built here (e.g. a local llama.cpp server).
        provider: the `AnthropicProvider` that formats and parses (e.g. one with another dialect).

    Raises:
        ModelSetupError: no client and no key; or a client together with `api_key`/`base_url`.
    """

    def __init__(
        self,
        model_name: str,
        *,
        client: Any = None,
        api_key: str | None = None,
        base_url: str | None = None,
        provider: AnthropicProvider | None = None,
    ) -> None:
        self.model_name = model_name
        """The model id, as sent in ``model``."""
        self.provider = provider if provider is not None else AnthropicProvider()
        """The provider that builds the request body and reads the response."""
        if client is not None:
            if api_key is not None or base_url is not None:
                raise ModelSetupError(
                    "AnthropicModel: pass either client= or api_key=/base_url=, not both; "
                    "configure the client you pass instead."
                )
            self._owns_client = False
        else:
            key = api_key or api_key_from_env("Anthropic", ENV_VAR)
            client = _sdk().AsyncAnthropic(api_key=key, base_url=base_url)
            self._owns_client = True
        self.client: Any = client
        """The ``anthropic.AsyncAnthropic`` requests go through."""

    @property
    def name(self) -> str:
        """``anthropic:<model>``."""
        return f"anthropic:{self.model_name}"

    def payload(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> dict[str, Any]:
        """The JSON body `request` sends to ``POST /v1/messages`` (`stream` adds ``"stream": true``)."""
        return self._body(messages, tools, settings, shared=False)

    def _body(
        self, messages: Sequence[Message], tools: Registry, settings: ModelSettings, *, shared: bool = True
    ) -> dict[str, Any]:
        body = provider_request(self.provider, messages, tools, settings, shared=shared)
        out: dict[str, Any] = {"model": self.model_name, "max_tokens": settings.max_tokens or DEFAULT_MAX_TOKENS}
        out.update(body)
        if settings.temperature is not None:
            out["temperature"] = settings.temperature
        out.update(settings.extra)
        return out

    async def request(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> ModelResponse:
        """Send one Messages request and return the model's turn."""
        body = self._body(messages, tools, settings)
        check_request_allowed(self.name, str(self.client.base_url))
        try:
            message = await self.client.messages.create(**_sdk_kwargs(body))
        except _sdk().AnthropicError as exc:
            raise self._error(exc) from exc
        return self.provider.parse_response(message, registry=tools, aliases=settings.aliases)

    async def stream(
        self, messages: Sequence[Message], tools: Registry, settings: ModelSettings
    ) -> AsyncIterator[ModelStreamEvent]:
        """Stream one request: text and tool-call events, then `ResponseDone` with the whole turn."""
        body = {**self._body(messages, tools, settings), "stream": True}
        check_request_allowed(self.name, str(self.client.base_url))
        decoder = self.provider.decoder(registry=tools, aliases=settings.aliases)
        decoder.model_name = self.name
        try:
            events = await self.client.messages.create(**_sdk_kwargs(body))
            try:
                async for event in events:
                    for item in decoder.decode(event):
                        yield item
            finally:
                await events.close()
        except _sdk().AnthropicError as exc:
            raise self._error(exc) from exc
        yield ResponseDone(decoder.response())

    async def _close_client(self) -> None:
        await self.client.close()

    def _error(self, exc: Exception) -> ModelAPIError:
        """The agentkit error for an SDK error: HTTP errors keep status, body and headers."""
        anthropic = _sdk()
        if isinstance(exc, anthropic.APIStatusError):
            status = exc.status_code
            if 200 <= status < 300:  # an error event inside the stream
                status = _STREAM_ERROR_STATUS.get(exc.type or "", 500)
            return ModelHTTPError(self.name, status, exc.body, dict(exc.response.headers))
        if isinstance(exc, anthropic.APIConnectionError):
            return ModelAPIError(self.name, f"connection failed: {exc}")
        return ModelAPIError(self.name, f"{type(exc).__name__}: {exc}")


@cache
def _create_parameters() -> frozenset[str]:
    """The keyword arguments ``messages.create`` takes (fields it does not know go in ``extra_body``)."""
    messages = _sdk().resources.messages.AsyncMessages
    return frozenset(inspect.signature(messages.create).parameters) - {"self", "extra_body"}


def _sdk_kwargs(body: dict[str, Any]) -> dict[str, Any]:
    """`body` as ``messages.create`` arguments; the SDK sends the same JSON either way."""
    known = _create_parameters()
    kwargs = {k: v for k, v in body.items() if k in known}
    extra = {k: v for k, v in body.items() if k not in known}
    if extra:
        kwargs["extra_body"] = extra
    return kwargs
