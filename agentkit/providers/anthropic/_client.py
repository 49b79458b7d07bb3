"""Anthropic Messages through the official ``anthropic`` SDK (``AsyncAnthropic``), imported lazily.

```python
from agentkit.providers.anthropic import AnthropicModel

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
import re
from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing
from functools import cache
from typing import TYPE_CHECKING, Any, cast

from ...exceptions import ModelAPIError, ModelHTTPError
from ...messages import Message, ModelResponse
from ...models._base import (
    ModelSettings,
    ModelStreamEvent,
)
from ...models._limits import RequestLimits
from ...registry import Registry
from .._client import SDKModel, capped_retry_after, provider_request
from ._codec import AnthropicProvider

if TYPE_CHECKING:
    from anthropic import APIStatusError  # noqa: TID251 - for annotations only

__all__ = ["DEFAULT_MAX_TOKENS", "AnthropicModel"]

DEFAULT_MAX_TOKENS = 4096
"""``max_tokens`` sent when the settings give none: the Messages API requires the field."""


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


_CLAUDE_VERSION = re.compile(r"claude-(?:opus|sonnet)-(\d+)(?:-(\d{1,2}))?(?![0-9])")


def native_search_model(model_name: str) -> bool:
    """Whether Anthropic documents tool search for this model (Claude Opus / Sonnet 4.5 or later)."""
    match = _CLAUDE_VERSION.search(model_name)
    if match is None:
        return False
    major, minor = int(match[1]), int(match[2] or 0)
    return (major, minor) >= (4, 5)


class AnthropicModel(SDKModel[AnthropicProvider]):
    """A Claude model (or any Messages-compatible server) behind ``anthropic.AsyncAnthropic``.

    Args:
        model_name: the model id, e.g. ``"claude-sonnet-4-6"``.
        client: an ``AsyncAnthropic`` you configured (base URL, retries, headers...); used as it is and
            never closed here.
        api_key: the key for a client built here; default: the ``ANTHROPIC_API_KEY`` environment variable.
        base_url: the endpoint for a client built here (e.g. a local llama.cpp server).
        provider: the `AnthropicProvider` that formats and parses (e.g. one with another dialect).
        limits: agentkit's bounds on each request (`agentkit.models.RequestLimits`).

    Raises:
        ModelSetupError: no client and no key; or a client together with `api_key`/`base_url`.
    """

    vendor = "anthropic"
    label = "Anthropic"
    example = "claude-sonnet-4-6"
    provider_class = AnthropicProvider
    request_id_headers = ("request-id",)

    def __init__(
        self,
        model_name: str,
        *,
        client: Any = None,
        api_key: str | None = None,
        base_url: str | None = None,
        provider: AnthropicProvider | None = None,
        limits: RequestLimits | None = None,
    ) -> None:
        options = {"api_key": api_key, "base_url": base_url}
        self._setup(model_name, client=client, provider=provider, limits=limits, options=options)

    def _build_client(self, *, api_key: str | None, base_url: str | None) -> Any:
        anthropic, limits = _sdk(), self.limits
        return anthropic.AsyncAnthropic(
            api_key=self._api_key(api_key),
            base_url=base_url,
            timeout=anthropic.Timeout(limits.request, connect=limits.connect),
            max_retries=limits.max_retries,
            # the SDK sleeps whatever retry-after says (up to 3600 s and more): capped here
            http_client=anthropic.DefaultAsyncHttpxClient(
                event_hooks={"response": [capped_retry_after(limits.max_retry_wait)]}
            ),
        )

    @property
    def base_url(self) -> str:
        """The endpoint requests go to (the client's base URL)."""
        return str(self.client.base_url)

    def payload(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> dict[str, Any]:
        """The JSON body `request` sends to ``POST /v1/messages`` (`stream` adds ``"stream": true``)."""
        return self._body(messages, tools, settings, shared=False)

    def native_tool_search(self, requested: bool | None = None) -> bool:
        """Whether deferred tools go to Claude in the native form (server-side BM25 tool search).

        By default on the models Anthropic documents it for: Opus and Sonnet 4.5 and later; ``True``
        forces it (a proxy, a newer family), ``False`` keeps agentkit's own search.
        """
        if requested is not None:
            return requested
        return native_search_model(self.model_name)

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
        message = await self._call(lambda: self.client.messages.create(**_sdk_kwargs(body)))
        return self._parsed(message, tools, settings)

    async def stream(
        self, messages: Sequence[Message], tools: Registry, settings: ModelSettings
    ) -> AsyncIterator[ModelStreamEvent]:
        """Stream one request: text and tool-call events, then `ResponseDone` with the whole turn."""
        body = {**self._body(messages, tools, settings), "stream": True}
        opened = self._stream_events(lambda: self.client.messages.create(**_sdk_kwargs(body)), tools, settings)
        async with aclosing(opened) as events:
            async for event in events:
                yield event

    async def _close_client(self) -> None:
        await self.client.close()

    def _map_error(self, error: Exception) -> Exception | None:
        """The agentkit error for an SDK error: HTTP errors keep status, body and headers."""
        anthropic = _sdk()
        if isinstance(error, anthropic.APIStatusError):
            sdk_error = cast("APIStatusError", error)  # the SDK's class, imported lazily (so typed Any)
            status = sdk_error.status_code
            if 200 <= status < 300:  # an error event inside the stream
                status = _STREAM_ERROR_STATUS.get(sdk_error.type or "", 500)
            return ModelHTTPError(self.name, status, sdk_error.body, dict(sdk_error.response.headers))
        if isinstance(error, anthropic.APIConnectionError):
            return ModelAPIError(self.name, f"connection failed: {error}")
        return None


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
