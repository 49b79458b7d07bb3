"""Cohere v2 chat through the official ``cohere`` SDK (``pip install 'agentkit-tools[cohere]'``).

`CohereModel` builds the request body with `agentkit.providers.cohere.CohereProvider` (messages, tools,
``tool_choice``, ``strict_tools``), sends it with ``AsyncClientV2.chat`` / ``AsyncClientV2.chat_stream``
and reads the answer back with the same provider.

The SDK passes the body's dicts through unchanged; on the wire the only addition is ``"stream"``
(``false``/``true``). Fields the SDK has no parameter for (e.g. a newer API field in
`ModelSettings.extra`) travel in ``request_options["additional_body_parameters"]``, so they are sent too.
"""

from __future__ import annotations as _annotations

import inspect
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from ...exceptions import ModelAPIError, ModelHTTPError
from ...messages import Message, ModelResponse
from ...models._base import (
    ModelSettings,
    ModelStreamEvent,
)
from ...models._limits import RequestLimits
from ...registry import Registry
from .._client import SDKModel, capped_retry_after, error_body, provider_request, with_settings
from .._codec import as_dict
from ._codec import CohereProvider

if TYPE_CHECKING:
    from cohere import AsyncClientV2

__all__ = ["CohereModel"]


def _sdk() -> Any:
    """The ``cohere`` module, imported on first use so ``import agentkit`` never loads the SDK."""
    try:
        import cohere
    except ImportError as error:
        raise ImportError("CohereModel needs the official Cohere SDK: pip install 'agentkit-tools[cohere]'") from error
    return cohere


class CohereModel(SDKModel[CohereProvider]):
    """A Cohere chat model (``"cohere:<model>"``) behind the official ``cohere`` SDK's v2 client.

    Args:
        model_name: the Cohere model id, e.g. ``"command-a-03-2025"``.
        client: a configured ``cohere.AsyncClientV2``, used as it is and never closed here.
        api_key: the key for the client built here (default: ``CO_API_KEY``, else ``COHERE_API_KEY``).
        base_url: the API URL for the client built here (default: the SDK's, ``https://api.cohere.com``).
        provider: the `CohereProvider` that formats and parses.
        limits: agentkit's bounds on each request (`agentkit.models.RequestLimits`).
    """

    vendor = "cohere"
    label = "Cohere"
    example = "command-a-03-2025"
    provider_class = CohereProvider

    def __init__(
        self,
        model_name: str,
        *,
        client: AsyncClientV2 | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        provider: CohereProvider | None = None,
        limits: RequestLimits | None = None,
    ) -> None:
        options = {"api_key": api_key, "base_url": base_url}
        self._setup(model_name, client=client, provider=provider, limits=limits, options=options)
        self.client: AsyncClientV2

    def _build_client(self, *, api_key: str | None, base_url: str | None) -> Any:
        import httpx  # the SDK's transport; loaded with it

        sdk, limits = _sdk(), self.limits
        # base_url only when given: the SDK's own default also honours CO_API_URL
        options: dict[str, Any] = {"base_url": base_url} if base_url is not None else {}
        http = httpx.AsyncClient(
            timeout=httpx.Timeout(limits.request, connect=limits.connect),
            event_hooks={"response": [capped_retry_after(limits.max_retry_wait)]},
        )
        return sdk.AsyncClientV2(
            api_key=self._api_key(api_key),
            timeout=limits.request,
            max_retries=limits.max_retries,
            httpx_client=http,
            **options,
        )

    @property
    def base_url(self) -> str | None:
        """The API URL the client sends to (None if it cannot be read from the client)."""
        wrapper = getattr(self.client, "_client_wrapper", None)
        try:
            url = wrapper.get_base_url()  # type: ignore[union-attr]
        except (AttributeError, TypeError, ValueError):
            return None
        return url if isinstance(url, str) and url else None

    def payload(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> dict[str, Any]:
        """The request body built from `messages`, `tools` and `settings` (the SDK adds only ``stream``)."""
        return self._body(messages, tools, settings, shared=False)

    def _body(
        self, messages: Sequence[Message], tools: Registry, settings: ModelSettings, *, shared: bool = True
    ) -> dict[str, Any]:
        body = {"model": self.model_name, **provider_request(self.provider, messages, tools, settings, shared=shared)}
        return with_settings(body, settings, "max_tokens")

    async def request(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> ModelResponse:
        """One v2 chat request (``chat``), parsed into a `ModelResponse`."""
        body = self._body(messages, tools, settings)
        arguments = _arguments(self.client, "chat", body)
        response = await self._call(lambda: self.client.chat(**arguments))
        return self._parsed(response, tools, settings)  # Cohere's response does not name the model

    async def stream(
        self, messages: Sequence[Message], tools: Registry, settings: ModelSettings
    ) -> AsyncIterator[ModelStreamEvent]:
        """One streamed v2 chat request (``chat_stream``): text and tool-call events, then `ResponseDone`."""
        body = self._body(messages, tools, settings)
        arguments = _arguments(self.client, "chat_stream", body)

        async def open_stream() -> Any:
            return self.client.chat_stream(**arguments)  # an async generator: nothing is sent until it is read

        async with aclosing(self._stream_events(open_stream, tools, settings)) as events:
            async for event in events:
                yield event

    async def _close_client(self) -> None:
        """Close the HTTP client of the SDK client built here."""
        client: Any = self.client  # the SDK leaves its context-manager methods untyped
        await client.__aexit__(None, None, None)

    def _map_error(self, error: Exception) -> Exception | None:
        """The agentkit error for an SDK/transport error (None when it is not one of those)."""
        from cohere.core.api_error import ApiError  # every HTTP error class of the SDK derives from it

        if isinstance(error, ApiError):
            status = getattr(error, "status_code", None)
            body = as_dict(error_body(getattr(error, "body", None)))
            if isinstance(status, int):
                return ModelHTTPError(self.name, status, body, dict(getattr(error, "headers", None) or {}))
            return ModelAPIError(self.name, f"request failed: {body}")
        import httpx  # the SDK's transport; already loaded with the SDK

        if isinstance(error, httpx.HTTPError):
            return ModelAPIError(self.name, f"request failed: {type(error).__name__}: {error}")
        return None


def _arguments(client: Any, method: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """Keyword arguments for the SDK method: its own parameters, the rest as additional body parameters."""
    accepted = _parameters(client, method)
    if accepted is None:  # a client whose signature cannot be read: pass the body as it is
        return dict(body)
    known = {k: v for k, v in body.items() if k in accepted and k not in ("request_options", "stream")}
    extra = {k: v for k, v in body.items() if k not in known}
    if extra:
        known["request_options"] = {"additional_body_parameters": extra}
    return known


def _parameters(client: object, method: str) -> set[str] | None:
    # The SDK wraps the instance's chat methods in decorators that hide the signature (*args, **kwargs);
    # the class attribute keeps the generated one.
    named = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    for function in (getattr(client, method, None), getattr(type(client), method, None)):
        try:
            parameters = inspect.signature(function).parameters.values()  # type: ignore[arg-type]
        except (TypeError, ValueError):
            continue
        names = {p.name for p in parameters if p.kind in named} - {"self"}
        if names:
            return names
    return None
