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
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..exceptions import ModelAPIError, ModelHTTPError, ModelSetupError
from ..messages import AssistantMessage, Message, ModelResponse, Usage
from ..providers._base import as_dict
from ..providers.cohere import CohereProvider, CohereStreamAccumulator, normalise_finish_reason, usage_of
from ..registry import Registry
from . import missing_api_key
from ._base import (
    Model,
    ModelSettings,
    ModelStreamEvent,
    ResponseDone,
    TextDelta,
    ToolCallArgsDelta,
    ToolCallStart,
    check_request_allowed,
)
from ._sdk import OwnedClient, check_client_options, error_body, mapped_errors, provider_request, with_settings

if TYPE_CHECKING:
    from cohere import AsyncClientV2

__all__ = ["ENV_VARS", "CohereModel"]

ENV_VARS = ("CO_API_KEY", "COHERE_API_KEY")
"""Where `CohereModel` looks for an API key when it builds its own client, in order (the SDK's own order)."""


def _sdk() -> Any:
    """The ``cohere`` module, imported on first use so ``import agentkit`` never loads the SDK."""
    try:
        import cohere
    except ImportError as error:
        raise ImportError("CohereModel needs the official Cohere SDK: pip install 'agentkit-tools[cohere]'") from error
    return cohere


def _api_key() -> str:
    for name in ENV_VARS:
        key = os.environ.get(name)
        if key:
            return key
    raise missing_api_key("Cohere", f"{ENV_VARS[0]} (or {ENV_VARS[1]})")


class CohereModel(OwnedClient, Model):
    """A Cohere chat model (``"cohere:<model>"``) behind the official ``cohere`` SDK's v2 client.

    Args:
        model_name: the Cohere model id, e.g. ``"command-a-03-2025"``.
        client: a configured ``cohere.AsyncClientV2``, used as it is and never closed here.
        api_key: the key for the client built here (default: ``CO_API_KEY``, else ``COHERE_API_KEY``).
        base_url: the API URL for the client built here (default: the SDK's, ``https://api.cohere.com``).
        provider: the `CohereProvider` that formats and parses.
    """

    def __init__(
        self,
        model_name: str,
        *,
        client: AsyncClientV2 | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        provider: CohereProvider | None = None,
    ) -> None:
        check_client_options("CohereModel", client, api_key, base_url)
        if provider is not None and not isinstance(provider, CohereProvider):
            raise ModelSetupError(f"CohereModel needs a CohereProvider, got {type(provider).__name__}")
        self.model_name = model_name
        self.provider = provider if provider is not None else CohereProvider()
        self._owns_client = client is None
        if client is None:
            sdk = _sdk()
            # base_url only when given: the SDK's own default also honours CO_API_URL
            options: dict[str, Any] = {"base_url": base_url} if base_url is not None else {}
            client = sdk.AsyncClientV2(api_key=api_key or _api_key(), **options)
        self.client: AsyncClientV2 = client

    @property
    def name(self) -> str:
        """``"cohere:<model>"``."""
        return f"cohere:{self.model_name}"

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
        body = {"model": self.model_name, **provider_request(self.provider, messages, tools, settings)}
        return with_settings(body, settings, "max_tokens")

    async def request(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> ModelResponse:
        """One v2 chat request (``chat``), parsed into a `ModelResponse`."""
        body = self.payload(messages, tools, settings)
        check_request_allowed(self.name, self.base_url)
        with mapped_errors(self._error):
            response = await self.client.chat(**_arguments(self.client, "chat", body))
        result = self.provider.parse_response(response, registry=tools, aliases=settings.aliases)
        if result.model_name is None:  # Cohere's response does not name the model
            result.model_name = self.model_name
        return result

    async def stream(
        self, messages: Sequence[Message], tools: Registry, settings: ModelSettings
    ) -> AsyncIterator[ModelStreamEvent]:
        """One streamed v2 chat request (``chat_stream``): text and tool-call events, then `ResponseDone`."""
        body = self.payload(messages, tools, settings)
        check_request_allowed(self.name, self.base_url)
        state = _StreamState(self.provider, tools, settings.aliases)
        with mapped_errors(self._error):
            async for event in self.client.chat_stream(**_arguments(self.client, "chat_stream", body)):
                for item in state.feed(event):
                    yield item
        yield ResponseDone(state.response(self.model_name))

    async def _close_client(self) -> None:
        """Close the HTTP client of the SDK client built here."""
        client: Any = self.client  # the SDK leaves its context-manager methods untyped
        await client.__aexit__(None, None, None)

    def _error(self, error: Exception) -> Exception:
        """The agentkit error for an SDK/transport error (the error itself when it is not one of those)."""
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
        return error


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


def _parameters(client: Any, method: str) -> set[str] | None:
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


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


class _StreamState:
    """Turns Cohere v2 SSE events into stream events and, at the end, the whole `ModelResponse`."""

    def __init__(self, provider: CohereProvider, tools: Registry, aliases: bool) -> None:
        accumulator = provider.stream(registry=tools, aliases=aliases)
        assert isinstance(accumulator, CohereStreamAccumulator)
        self.accumulator = accumulator
        self.names = provider.names(tools, aliases=aliases)
        self.text: list[str] = []
        self.thinking: list[str] = []
        self.usage = Usage(requests=1)
        self.finish_reason: str | None = None

    def feed(self, event: Any) -> list[ModelStreamEvent]:
        data = as_dict(event)
        if not isinstance(data, Mapping):
            return []
        kind = data.get("type")
        delta = _mapping(data.get("delta"))
        message = _mapping(delta.get("message"))
        out: list[ModelStreamEvent] = []
        if kind == "content-delta":
            content = _mapping(message.get("content"))
            thinking, text = content.get("thinking"), content.get("text")
            if isinstance(thinking, str):
                self.thinking.append(thinking)
            if isinstance(text, str) and text:
                self.text.append(text)
                out.append(TextDelta(text))
        elif kind == "tool-call-start":
            # the start event names the call (arguments come in deltas): announce it right away
            raw = _mapping(message.get("tool_calls"))
            name = _mapping(raw.get("function")).get("name")
            index = data.get("index")
            if isinstance(name, str):
                out.append(
                    ToolCallStart(index if isinstance(index, int) else 0, raw.get("id"), self.names.key_for(name))
                )
        elif kind == "message-end":
            if delta.get("finish_reason"):
                self.finish_reason = delta.get("finish_reason")
            if isinstance(delta.get("usage"), Mapping):
                self.usage = usage_of(delta.get("usage"))
        for tool_delta in self.accumulator.feed(data):
            out.append(ToolCallArgsDelta(tool_delta.index, tool_delta.arguments_delta, tool_delta.arguments_so_far))
        return out

    def response(self, model_name: str) -> ModelResponse:
        text = "".join(self.text)
        thinking = "".join(self.thinking)
        details = None
        if thinking:  # the same replayable blocks a non-streamed reasoning turn keeps
            blocks: list[dict[str, Any]] = [{"type": "thinking", "thinking": thinking}]
            if text:
                blocks.append({"type": "text", "text": text})
            details = {"cohere": {"content": blocks}}
        return ModelResponse(
            message=AssistantMessage(text=text, tool_calls=self.accumulator.tool_calls(), provider_details=details),
            usage=self.usage,
            finish_reason=normalise_finish_reason(self.finish_reason),
            model_name=model_name,
        )
