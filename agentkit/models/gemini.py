"""Gemini (``generateContent`` / ``streamGenerateContent``) through the official google-genai SDK.

The request body is built by `GeminiProvider` (REST form, camelCase) and sent through
``google.genai.Client(...).aio.models.generate_content`` / ``generate_content_stream``. google-genai
re-models whatever it is given as ``contents`` / ``config`` (it renames some keys to snake_case, re-encodes
thought signatures, rewrites ``parameters`` schemas and rejects some of them for the Gemini API), so the body
also rides along in the per-request ``http_options.extra_body``, which the SDK merges over its own body with
lists taken as they are: what goes on the wire is exactly `GeminiModel.payload`. The contents are still
given to the SDK as well, so it validates them (a malformed part fails before any request).

google-genai is imported only when a `GeminiModel` is created (``pip install 'agentkit-tools[gemini]'``).
"""

from __future__ import annotations as _annotations

import importlib
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..exceptions import ModelAPIError, ModelHTTPError, ModelSetupError
from ..messages import Message, ModelResponse
from ..providers._base import as_dict
from ..providers.gemini import GeminiProvider
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
from ._sdk import OwnedClient, deep_merge, header_dict, provider_request, sampling_options

__all__ = ["API_KEY_ENV_VARS", "GeminiModel"]

API_KEY_ENV_VARS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
"""Where the API key is looked up, in this order, when neither `client` nor `api_key` is given."""

_INSTALL_HINT = "GeminiModel needs google-genai: pip install 'agentkit-tools[gemini]'"


def _genai() -> Any:
    try:
        return importlib.import_module("google.genai")
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc


def _api_key_from_env() -> str:
    for var in API_KEY_ENV_VARS:
        key = os.environ.get(var)
        if key:
            return key
    raise missing_api_key("Gemini", " (or ".join(API_KEY_ENV_VARS) + ")")


class GeminiModel(OwnedClient, Model):
    """A Gemini model, e.g. ``GeminiModel("gemini-2.5-flash")`` or ``infer_model("gemini:gemini-2.5-flash")``.

    Args:
        model_name: the Gemini model id.
        client: a ``google.genai.Client`` built by the caller (Vertex AI, custom ``http_options``, ...); used as
            it is and never closed here.
        api_key: the key for a client built here; default: ``GEMINI_API_KEY``, else ``GOOGLE_API_KEY``.
        base_url: the endpoint for a client built here (e.g. a local proxy).
        provider: the `GeminiProvider` formatting the requests (e.g. ``GeminiProvider(schema_format="openapi")``).

    Raises:
        ImportError: google-genai is not installed (the message says what to install).
        ModelSetupError: no API key was found (the message names the variables).
    """

    def __init__(
        self,
        model_name: str,
        *,
        client: Any = None,
        api_key: str | None = None,
        base_url: str | None = None,
        provider: GeminiProvider | None = None,
    ) -> None:
        self.model_name = model_name
        """The Gemini model id, as sent in the request path."""
        self.provider = provider if provider is not None else GeminiProvider()
        """The provider that builds the request body and reads the response."""
        self._owns_client = client is None
        if client is None:
            genai = _genai()
            key = api_key or _api_key_from_env()
            http_options = genai.types.HttpOptions(base_url=base_url) if base_url else None
            client = genai.Client(api_key=key, http_options=http_options)
        self.client: Any = client
        """The ``google.genai.Client`` requests go through."""

    @property
    def name(self) -> str:
        """``"gemini:<model id>"``."""
        return f"gemini:{self.model_name}"

    def __repr__(self) -> str:
        return f"GeminiModel({self.model_name!r})"

    def _http_options(self) -> Any:
        # google-genai keeps the client's resolved options here; there is no public accessor
        return getattr(getattr(self.client, "_api_client", None), "_http_options", None)

    def base_url(self) -> str | None:
        """The endpoint the client sends to (None when it cannot be read)."""
        url = getattr(self._http_options(), "base_url", None)
        return url if isinstance(url, str) else None

    def payload(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> dict[str, Any]:
        """The exact ``generateContent`` body (the model id goes in the URL, not the body).

        The provider's request, ``generationConfig`` from the settings, then the client's own
        ``http_options.extra_body`` (if it has one) and ``settings.extra``, merged in that order.
        """
        body = provider_request(self.provider, messages, tools, settings)
        # google-genai always sends a generationConfig (empty when nothing is set), so it is part of the body
        body["generationConfig"] = sampling_options(settings, "maxOutputTokens")
        # our extra_body replaces the client's own, so what the caller's client would add is merged here
        client_extra = getattr(self._http_options(), "extra_body", None)
        if isinstance(client_extra, Mapping):
            deep_merge(body, client_extra)
        deep_merge(body, settings.extra)
        return body

    def _call_args(self, body: dict[str, Any]) -> dict[str, Any]:
        check_request_allowed(self.name, self.base_url())
        # extra_body makes the wire body exactly `body`; the SDK still validates the contents it is given.
        return {
            "model": self.model_name,
            "contents": body.get("contents", []),
            "config": {"http_options": {"extra_body": body}},
        }

    async def request(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> ModelResponse:
        """Send one ``generateContent`` request and return the model's turn."""
        args = self._call_args(self.payload(messages, tools, settings))
        try:
            response = await self.client.aio.models.generate_content(**args)
        except Exception as exc:
            raise self._error(exc) from exc
        return self.provider.parse_response(response, registry=tools, aliases=settings.aliases)

    async def stream(
        self, messages: Sequence[Message], tools: Registry, settings: ModelSettings
    ) -> AsyncIterator[ModelStreamEvent]:
        """Stream one ``streamGenerateContent`` (SSE) request.

        Text parts become `TextDelta`s; each ``functionCall`` part (Gemini sends them whole) becomes a
        `ToolCallStart` and one `ToolCallArgsDelta` holding all its arguments. `ResponseDone` carries the
        chunks merged into one response and parsed like `request`'s (``raw`` is that merged dict).
        """
        args = self._call_args(self.payload(messages, tools, settings))
        accumulator = self.provider.stream(registry=tools, aliases=settings.aliases)
        merged = _MergedResponse()
        try:
            chunks = await self.client.aio.models.generate_content_stream(**args)
            async for chunk in chunks:
                data = as_dict(chunk)
                if not isinstance(data, Mapping):
                    continue
                for text in merged.add(data):
                    yield TextDelta(text)
                for delta in accumulator.feed(data):
                    yield ToolCallStart(delta.index, delta.id, delta.name or "")
                    yield ToolCallArgsDelta(delta.index, delta.arguments_delta, delta.arguments_so_far)
        except (ModelAPIError, ModelSetupError):
            raise
        except Exception as exc:
            raise self._error(exc) from exc
        response = self.provider.parse_response(merged.data(), registry=tools, aliases=settings.aliases)
        yield ResponseDone(replace(response, raw=merged.data()))

    async def _close_client(self) -> None:
        await self.client.aio.aclose()
        self.client.close()

    def _error(self, exc: Exception) -> Exception:
        """The agentkit error for a google-genai / transport exception."""
        errors = importlib.import_module("google.genai.errors")
        if isinstance(exc, errors.APIError):
            response = getattr(exc, "response", None)
            headers = header_dict(getattr(response, "headers", None))
            status = getattr(response, "status_code", None) or exc.code
            return ModelHTTPError(self.name, int(status or 0), exc.details, headers)
        if isinstance(exc, _transport_errors()):
            return ModelAPIError(self.name, f"could not reach Gemini ({type(exc).__name__}: {exc})")
        if isinstance(exc, ValueError):  # pydantic validation of the contents, an unreadable response, ...
            return ModelAPIError(
                self.name, f"google-genai refused the request or response ({type(exc).__name__}: {exc})"
            )
        return exc


def _transport_errors() -> tuple[type[BaseException], ...]:
    """Connection and timeout errors of whichever HTTP libraries google-genai may use."""
    found: list[type[BaseException]] = [ConnectionError, TimeoutError]
    for module in ("httpx2", "httpx", "aiohttp"):
        try:
            lib = importlib.import_module(module)
        except ImportError:
            continue
        error = getattr(lib, "TransportError", None) or getattr(lib, "ClientError", None)
        if isinstance(error, type) and issubclass(error, BaseException):
            found.append(error)
    return tuple(found)


class _MergedResponse:
    """Stream chunks folded into one ``GenerateContentResponse`` dict.

    Parts are kept in order; consecutive plain text parts (same ``thought`` flag, no signature on
    either) are joined, so the result looks like the non-streamed response. A part carrying a
    ``thoughtSignature`` stays whole, as Gemini asks for replays. The last ``finishReason``,
    ``usageMetadata``, ``modelVersion`` and ``responseId`` win.
    """

    def __init__(self) -> None:
        self._parts: list[dict[str, Any]] = []
        self._top: dict[str, Any] = {}
        self._candidate: dict[str, Any] = {}

    def add(self, chunk: Mapping[str, Any]) -> list[str]:
        """Fold one chunk in; return its visible (non-thought) text pieces."""
        for key in ("usageMetadata", "modelVersion", "responseId", "promptFeedback"):
            if chunk.get(key) is not None:
                self._top[key] = chunk[key]
        candidates = chunk.get("candidates")
        if not isinstance(candidates, list) or not candidates or not isinstance(candidates[0], Mapping):
            return []
        first = candidates[0]
        for key, value in first.items():
            if key != "content" and value is not None:
                self._candidate[key] = value
        content = first.get("content")
        parts = content.get("parts") if isinstance(content, Mapping) else None
        texts = []
        for part in parts if isinstance(parts, list) else ():
            if not isinstance(part, Mapping):
                continue
            text = part.get("text")
            if isinstance(text, str) and text and not part.get("thought"):
                texts.append(text)
            self._fold(dict(part))
        return texts

    def _fold(self, part: dict[str, Any]) -> None:
        last = self._parts[-1] if self._parts else None
        plain = set(part) <= {"text", "thought"} and isinstance(part.get("text"), str)
        if (
            plain
            and last is not None
            and set(last) <= {"text", "thought"}
            and isinstance(last.get("text"), str)
            and bool(last.get("thought")) == bool(part.get("thought"))
        ):
            last["text"] += part["text"]
            return
        self._parts.append(part)

    def data(self) -> dict[str, Any]:
        """The merged response."""
        candidate = {**self._candidate, "content": {"role": "model", "parts": [dict(p) for p in self._parts]}}
        return {"candidates": [candidate], **self._top}
