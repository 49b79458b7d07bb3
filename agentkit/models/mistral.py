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
from typing import TYPE_CHECKING, Any

from ..exceptions import ModelAPIError, ModelHTTPError, ModelSetupError
from ..messages import AssistantMessage, Message, ModelResponse, Usage
from ..providers._base import ToolCallDelta, as_dict
from ..providers.mistral import MistralProvider, content_text, normalise_finish_reason, usage_of
from ..registry import Registry
from . import api_key_from_env
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
    from mistralai.client import Mistral

__all__ = ["ENV_VAR", "MistralModel"]

ENV_VAR = "MISTRAL_API_KEY"
"""Where `MistralModel` looks for an API key when it builds its own client."""


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
    return Mistral


class MistralModel(OwnedClient, Model):
    """A Mistral chat model (``"mistral:<model>"``) behind the official ``mistralai`` SDK.

    Args:
        model_name: the Mistral model id, e.g. ``"mistral-large-latest"``.
        client: a configured ``mistralai`` ``Mistral`` client, used as it is and never closed here.
        api_key: the key for the client built here (default: the ``MISTRAL_API_KEY`` environment variable).
        base_url: the server URL for the client built here (default: Mistral's API).
        provider: the `MistralProvider` that formats and parses (e.g. ``MistralProvider(tool_result_images=True)``).
    """

    def __init__(
        self,
        model_name: str,
        *,
        client: Mistral | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        provider: MistralProvider | None = None,
    ) -> None:
        check_client_options("MistralModel", client, api_key, base_url)
        if provider is not None and not isinstance(provider, MistralProvider):
            raise ModelSetupError(f"MistralModel needs a MistralProvider, got {type(provider).__name__}")
        self.model_name = model_name
        self.provider = provider if provider is not None else MistralProvider()
        self._owns_client = client is None
        if client is None:
            sdk_class = _sdk_client_class()
            client = sdk_class(api_key=api_key or api_key_from_env("Mistral", ENV_VAR), server_url=base_url)
        self.client: Mistral = client

    @property
    def name(self) -> str:
        """``"mistral:<model>"``."""
        return f"mistral:{self.model_name}"

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
        body = {"model": self.model_name, **provider_request(self.provider, messages, tools, settings)}
        return with_settings(body, settings, "max_tokens")

    async def request(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> ModelResponse:
        """One chat completion (``chat.complete_async``), parsed into a `ModelResponse`."""
        body = self.payload(messages, tools, settings)
        check_request_allowed(self.name, self.base_url)
        method = self.client.chat.complete_async
        with mapped_errors(self._error):
            response = await method(**self._arguments(method, body))
        result = self.provider.parse_response(response, registry=tools, aliases=settings.aliases)
        if result.model_name is None:
            result.model_name = self.model_name
        return result

    async def stream(
        self, messages: Sequence[Message], tools: Registry, settings: ModelSettings
    ) -> AsyncIterator[ModelStreamEvent]:
        """One streamed chat completion (``chat.stream_async``): text and tool-call events, then `ResponseDone`."""
        body = self.payload(messages, tools, settings)
        check_request_allowed(self.name, self.base_url)
        method = self.client.chat.stream_async
        state = _StreamState(self.provider, tools, settings.aliases)
        with mapped_errors(self._error):
            events = await method(**self._arguments(method, body))
            async with events:
                async for event in events:
                    for item in state.feed(event):
                        yield item
        for item in state.unstarted_calls():
            yield item
        yield ResponseDone(state.response(self.model_name))

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

    def _error(self, error: Exception) -> Exception:
        """The agentkit error for an SDK/transport error (the error itself when it is not one of those)."""
        status = getattr(error, "status_code", None)
        raw_response = getattr(error, "raw_response", None)
        if isinstance(status, int) and raw_response is not None:
            if status >= 400:  # MistralError / SDKError / HTTPValidationError: the API said no
                headers = getattr(error, "headers", None) or getattr(raw_response, "headers", None) or {}
                return ModelHTTPError(self.name, status, error_body(getattr(error, "body", None)), dict(headers))
            # ResponseValidationError: a 2xx the SDK could not read
            return ModelAPIError(self.name, f"unexpected response: {error}")
        if type(error).__name__ == "NoResponseError" or _is_transport_error(error):
            return ModelAPIError(self.name, f"request failed: {type(error).__name__}: {error}")
        return error


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


class _StreamState:
    """Turns Mistral stream chunks into events and, at the end, the whole `ModelResponse`."""

    def __init__(self, provider: MistralProvider, tools: Registry, aliases: bool) -> None:
        self.accumulator = provider.stream(registry=tools, aliases=aliases)
        self.text: list[str] = []
        self.thinking: list[str] = []
        self.usage = Usage(requests=1)
        self.finish_reason: str | None = None
        self.model_name: str | None = None
        self.started: dict[int, str | None] = {}

    def feed(self, event: Any) -> list[ModelStreamEvent]:
        chunk = as_dict(event)
        if not isinstance(chunk, Mapping):
            return []
        if isinstance(chunk.get("data"), Mapping) and "choices" not in chunk:  # the SDK's CompletionEvent
            chunk = chunk["data"]
        if isinstance(chunk.get("model"), str):
            self.model_name = chunk["model"]
        if isinstance(chunk.get("usage"), Mapping):
            self.usage = usage_of(chunk["usage"])
        choices = chunk.get("choices") or []
        choice = choices[0] if choices and isinstance(choices[0], Mapping) else {}
        if choice.get("finish_reason"):
            self.finish_reason = choice["finish_reason"]
        out: list[ModelStreamEvent] = []
        content = (choice.get("delta") or {}).get("content")
        text = content_text(content)
        if text:
            self.text.append(text)
            out.append(TextDelta(text))
        if isinstance(content, list):
            self.thinking.extend(_thinking_text(c) for c in content if isinstance(c, Mapping))
        for delta in self.accumulator.feed(chunk):
            out.extend(self._tool_events(delta))
        return out

    def _tool_events(self, delta: ToolCallDelta) -> list[ModelStreamEvent]:
        out: list[ModelStreamEvent] = []
        if delta.index not in self.started and delta.name:
            self.started[delta.index] = delta.id
            out.append(ToolCallStart(delta.index, delta.id, delta.name))
        out.append(ToolCallArgsDelta(delta.index, delta.arguments_delta, delta.arguments_so_far))
        return out

    def unstarted_calls(self) -> list[ModelStreamEvent]:
        """Start events for calls that never streamed an argument (e.g. empty arguments)."""
        calls = self.accumulator.tool_calls()
        indexes = sorted(self.accumulator.partial)
        if len(indexes) != len(calls):  # a call without a name was dropped: fall back to matching ids
            seen = set(self.started.values())
            return [ToolCallStart(i, c.id, c.name) for i, c in enumerate(calls) if c.id not in seen]
        return [
            ToolCallStart(index, call.id, call.name)
            for index, call in zip(indexes, calls, strict=True)
            if index not in self.started
        ]

    def response(self, default_model: str) -> ModelResponse:
        text = "".join(self.text)
        thinking = "".join(self.thinking)
        details = None
        if thinking:  # the same replayable chunks a non-streamed reasoning turn keeps
            chunks: list[dict[str, Any]] = [{"type": "thinking", "thinking": [{"type": "text", "text": thinking}]}]
            if text:
                chunks.append({"type": "text", "text": text})
            details = {"mistral": {"content": chunks}}
        calls = self.accumulator.tool_calls()
        return ModelResponse(
            message=AssistantMessage(text=text, tool_calls=calls, provider_details=details),
            usage=self.usage,
            finish_reason=normalise_finish_reason(self.finish_reason),
            model_name=self.model_name or default_model,
        )


def _thinking_text(chunk: Mapping[str, Any]) -> str:
    if chunk.get("type") != "thinking":
        return ""
    inner = chunk.get("thinking")
    if isinstance(inner, str):
        return inner
    return content_text(inner) if isinstance(inner, list) else ""
