"""Mistral chat completions through the official ``mistralai`` SDK (``pip install 'agentkit-tools[mistral]'``).

`MistralModel` builds the request body with `agentkit.providers.mistral.MistralProvider` (messages,
tools, ``tool_choice``, ``parallel_tool_calls``), sends it with ``Mistral.chat.complete_async`` /
``Mistral.chat.stream_async`` and reads the answer back with the same provider.

The SDK re-validates the body into its own pydantic models before sending it. On the wire the body is the
one `MistralModel.payload` returns, plus three fields the SDK always fills in with the defaults Mistral's
spec gives them: ``"stream": false`` (``true`` when streaming), ``"prefix": false`` on assistant messages
and ``"index": 0`` on each replayed tool call (also on the second call of a parallel turn: the SDK does not
number them). Everything else, tool schemas included, arrives as built. The SDK has no pass-through for
fields it does not model, so `ModelSettings.extra` naming one raises `ModelSetupError` before sending.
"""

from __future__ import annotations as _annotations

import inspect
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, cast

from ...exceptions import ModelAPIError, ModelHTTPError, ModelSetupError
from ...messages import Message, ModelResponse
from ...models._base import (
    ModelSettings,
    ModelStreamEvent,
)
from ...models._limits import RequestLimits
from ...registry import Registry
from .._client import SDKModel, error_body, provider_request, with_settings
from ._codec import MistralProvider

if TYPE_CHECKING:
    from mistralai.client import Mistral

__all__ = ["MistralModel"]


def _sdk_client_class() -> Any:
    """The SDK's ``Mistral`` class, imported on first use so ``import agentkit`` never loads the SDK."""
    try:
        from mistralai.client import Mistral
    except ImportError:
        try:  # mistralai 1.x exports it at the top level
            from mistralai import Mistral  # type: ignore[attr-defined, no-redef, unused-ignore]
        except ImportError as error:
            raise ImportError(
                "MistralModel needs the official Mistral SDK: pip install 'agentkit-tools[mistral]'"
            ) from error
    return cast(Any, Mistral)  # the mistralai 1.x fallback import above is untyped


class MistralModel(SDKModel[MistralProvider]):
    """A Mistral chat model (``"mistral:<model>"``) behind the official ``mistralai`` SDK.

    Args:
        model_name: the Mistral model id, e.g. ``"mistral-large-latest"``.
        client: a configured ``mistralai`` ``Mistral`` client, used as it is and never closed here.
        api_key: the key for the client built here (default: the ``MISTRAL_API_KEY`` environment variable).
        base_url: the server URL for the client built here (default: Mistral's API).
        provider: the `MistralProvider` that formats and parses (e.g. ``MistralProvider(tool_result_images=True)``).
        limits: agentkit's bounds on each request (`agentkit.models.RequestLimits`); the SDK retries
            nothing by default, and agentkit does not add retries to it.
    """

    vendor = "mistral"
    label = "Mistral"
    example = "mistral-large-latest"
    provider_class = MistralProvider

    def __init__(
        self,
        model_name: str,
        *,
        client: Mistral | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        provider: MistralProvider | None = None,
        limits: RequestLimits | None = None,
    ) -> None:
        options = {"api_key": api_key, "base_url": base_url}
        self._setup(model_name, client=client, provider=provider, limits=limits, options=options)
        self.client: Mistral

    def _build_client(self, *, api_key: str | None, base_url: str | None) -> Any:
        request = self.limits.request
        timeout_ms = int(request * 1000) if request is not None else None
        return _sdk_client_class()(api_key=self._api_key(api_key), server_url=base_url, timeout_ms=timeout_ms)

    @property
    def base_url(self) -> str | None:
        """The server URL the client sends to (None if it cannot be read from the client)."""
        config = getattr(self.client, "sdk_configuration", None)
        try:
            url = config.get_server_details()[0]  # type: ignore[union-attr]
        except (AttributeError, TypeError, IndexError, ValueError):
            return None
        return url if isinstance(url, str) and url else None

    def payload(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> dict[str, Any]:
        """The request body built from `messages`, `tools` and `settings` (before the SDK's defaults)."""
        return self._body(messages, tools, settings, shared=False)

    def _body(
        self, messages: Sequence[Message], tools: Registry, settings: ModelSettings, *, shared: bool = True
    ) -> dict[str, Any]:
        body = {"model": self.model_name, **provider_request(self.provider, messages, tools, settings, shared=shared)}
        return with_settings(body, settings, "max_tokens")

    async def request(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> ModelResponse:
        """One chat completion (``chat.complete_async``), parsed into a `ModelResponse`."""
        body = self._body(messages, tools, settings)
        method = self.client.chat.complete_async
        arguments = self._arguments(method, body)
        response = await self._call(lambda: method(**arguments))
        return self._parsed(response, tools, settings)

    async def stream(
        self, messages: Sequence[Message], tools: Registry, settings: ModelSettings
    ) -> AsyncIterator[ModelStreamEvent]:
        """One streamed chat completion (``chat.stream_async``): text and tool-call events, then `ResponseDone`."""
        body = self._body(messages, tools, settings)
        method = self.client.chat.stream_async
        arguments = self._arguments(method, body)
        async with aclosing(self._stream_events(lambda: method(**arguments), tools, settings)) as events:
            async for event in events:
                yield event

    async def _close_client(self) -> None:
        """Close the HTTP clients of the SDK client built here."""
        client: Any = self.client  # the SDK leaves its context-manager methods untyped
        client.__exit__(None, None, None)
        await client.__aexit__(None, None, None)

    # ---- helpers ---------------------------------------------------------------------------------

    def _arguments(self, method: Callable[..., Any], body: Mapping[str, Any]) -> dict[str, Any]:
        # The SDK takes the body as keyword arguments and has no pass-through for other fields, so a
        # field it does not know would be dropped or rejected: say so before anything is sent.
        accepted = inspect.signature(method).parameters
        unknown = sorted(key for key in body if key not in accepted or key in _SDK_OPTIONS)
        if unknown:
            raise ModelSetupError(
                f"{self.name}: the installed mistralai SDK cannot send the request field(s) {unknown}; "
                "remove them from ModelSettings.extra"
            )
        return dict(body)

    def _map_error(self, error: Exception) -> Exception | None:
        """The agentkit error for an SDK/transport error (None when it is not one of those)."""
        status = getattr(error, "status_code", None)
        raw_response = getattr(error, "raw_response", None)
        if isinstance(status, int) and raw_response is not None:
            if status >= 400:  # MistralError / SDKError / HTTPValidationError: the API said no
                headers: Mapping[str, Any] = (
                    getattr(error, "headers", None) or getattr(raw_response, "headers", None) or {}
                )
                return ModelHTTPError(self.name, status, error_body(getattr(error, "body", None)), dict(headers))
            # ResponseValidationError: a 2xx the SDK could not read
            return ModelAPIError(self.name, f"unexpected response: {error}")
        if type(error).__name__ == "NoResponseError" or _is_transport_error(error):
            return ModelAPIError(self.name, f"request failed: {type(error).__name__}: {error}")
        return None


# keyword arguments of the SDK's chat methods that are client options, not request fields
_SDK_OPTIONS = frozenset({"stream", "retries", "server_url", "timeout_ms", "http_headers"})


def _is_transport_error(error: Exception) -> bool:
    # mistralai 3.x sends with httpx2, 1.x with httpx; both are imported only if already loaded by the SDK.
    import sys

    for module_name in ("httpx2", "httpx"):
        module = sys.modules.get(module_name)
        http_error = getattr(module, "HTTPError", None) if module is not None else None
        if isinstance(http_error, type) and isinstance(error, http_error):
            return True
    return False
