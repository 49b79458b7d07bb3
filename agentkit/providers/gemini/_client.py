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
from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, cast

from ..._jsonish import is_mapping, is_object
from ...exceptions import ModelAPIError, ModelHTTPError
from ...messages import Message, ModelResponse
from ...models._base import (
    ModelSettings,
    ModelStreamEvent,
)
from ...models._limits import RequestLimits
from ...registry import Registry
from .._client import SDKModel, deep_merge, header_dict, provider_request, sampling_options
from ._codec import GeminiProvider

if TYPE_CHECKING:
    from google.genai.errors import APIError

__all__ = ["GeminiModel"]

_INSTALL_HINT = "GeminiModel needs google-genai: pip install 'agentkit-tools[gemini]'"


def _genai() -> Any:
    try:
        return importlib.import_module("google.genai")
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc


class GeminiModel(SDKModel[GeminiProvider]):
    """A Gemini model, e.g. ``GeminiModel("gemini-2.5-flash")`` or ``infer_model("gemini:gemini-2.5-flash")``.

    Args:
        model_name: the Gemini model id.
        client: a ``google.genai.Client`` built by the caller (Vertex AI, custom ``http_options``, ...); used as
            it is and never closed here.
        api_key: the key for a client built here; default: ``GEMINI_API_KEY``, else ``GOOGLE_API_KEY``.
        base_url: the endpoint for a client built here (e.g. a local proxy).
        provider: the `GeminiProvider` formatting the requests (e.g. ``GeminiProvider(schema_format="openapi")``).
        limits: agentkit's bounds on each request (`agentkit.models.RequestLimits`); google-genai retries
            nothing by default, and agentkit does not add retries to it.

    Raises:
        ImportError: google-genai is not installed (the message says what to install).
        ModelSetupError: no API key was found (the message names the variables); or a client together
            with `api_key`/`base_url`.
    """

    vendor = "gemini"
    label = "Gemini"
    example = "gemini-2.5-flash"
    provider_class = GeminiProvider

    def __init__(
        self,
        model_name: str,
        *,
        client: Any = None,
        api_key: str | None = None,
        base_url: str | None = None,
        provider: GeminiProvider | None = None,
        limits: RequestLimits | None = None,
    ) -> None:
        options = {"api_key": api_key, "base_url": base_url}
        self._setup(model_name, client=client, provider=provider, limits=limits, options=options)

    def _build_client(self, *, api_key: str | None, base_url: str | None) -> Any:
        genai, limits = _genai(), self.limits
        timeout = int(limits.request * 1000) if limits.request is not None else None  # milliseconds
        http_options = genai.types.HttpOptions(base_url=base_url, timeout=timeout)
        return genai.Client(api_key=self._api_key(api_key), http_options=http_options)

    def _http_options(self) -> Any:
        # google-genai keeps the client's resolved options here; there is no public accessor
        return getattr(getattr(self.client, "_api_client", None), "_http_options", None)

    @property
    def base_url(self) -> str | None:
        """The endpoint the client sends to (None when it cannot be read)."""
        url = getattr(self._http_options(), "base_url", None)
        return url if isinstance(url, str) else None

    def payload(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> dict[str, Any]:
        """The exact ``generateContent`` body (the model id goes in the URL, not the body).

        The provider's request, ``generationConfig`` from the settings, then the client's own
        ``http_options.extra_body`` (if it has one) and ``settings.extra``, merged in that order.
        """
        return self._body(messages, tools, settings, shared=False)

    def _body(
        self, messages: Sequence[Message], tools: Registry, settings: ModelSettings, *, shared: bool = True
    ) -> dict[str, Any]:
        body = provider_request(self.provider, messages, tools, settings, shared=shared)
        # google-genai always sends a generationConfig (empty when nothing is set), so it is part of the body
        config = body.get("generationConfig")  # the structured-output fields, when asked for
        sampling = sampling_options(settings, "maxOutputTokens")
        body["generationConfig"] = {**config, **sampling} if is_object(config) else sampling
        # our extra_body replaces the client's own, so what the caller's client would add is merged here
        client_extra = getattr(self._http_options(), "extra_body", None)
        if is_mapping(client_extra):
            deep_merge(body, client_extra)
        deep_merge(body, settings.extra)
        return body

    def _call_args(self, body: dict[str, Any]) -> dict[str, Any]:
        # extra_body makes the wire body exactly `body`; the SDK still validates the contents it is given.
        return {
            "model": self.model_name,
            "contents": body.get("contents", []),
            "config": {"http_options": {"extra_body": body}},
        }

    async def request(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> ModelResponse:
        """Send one ``generateContent`` request and return the model's turn."""
        args = self._call_args(self._body(messages, tools, settings))
        response = await self._call(lambda: self.client.aio.models.generate_content(**args))
        return self._parsed(response, tools, settings)

    async def stream(
        self, messages: Sequence[Message], tools: Registry, settings: ModelSettings
    ) -> AsyncIterator[ModelStreamEvent]:
        """Stream one ``streamGenerateContent`` (SSE) request.

        Text parts become `TextDelta`s; each ``functionCall`` part (Gemini sends them whole) becomes a
        `ToolCallStart` and one `ToolCallArgsDelta` holding all its arguments. `ResponseDone` carries the
        chunks merged into one response and parsed like `request`'s (``raw`` is that merged dict).
        """
        args = self._call_args(self._body(messages, tools, settings))
        async with aclosing(
            self._stream_events(lambda: self.client.aio.models.generate_content_stream(**args), tools, settings)
        ) as events:
            async for event in events:
                yield event

    async def _close_client(self) -> None:
        await self.client.aio.aclose()
        self.client.close()

    def _map_error(self, exc: Exception) -> Exception | None:
        """The agentkit error for a google-genai / transport exception."""
        errors = importlib.import_module("google.genai.errors")
        if isinstance(exc, errors.APIError):
            api_error = cast("APIError", exc)  # the SDK's class, imported at run time (so typed Any)
            response = getattr(exc, "response", None)
            headers = header_dict(getattr(response, "headers", None))
            status = getattr(response, "status_code", None) or api_error.code
            details: Any = api_error.details  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]  # google-genai leaves it partly untyped
            return ModelHTTPError(self.name, int(status or 0), details, headers)
        if isinstance(exc, _transport_errors()):
            return ModelAPIError(self.name, f"could not reach Gemini ({type(exc).__name__}: {exc})")
        if isinstance(exc, ValueError):  # pydantic validation of the contents, an unreadable response, ...
            return ModelAPIError(
                self.name, f"google-genai refused the request or response ({type(exc).__name__}: {exc})"
            )
        return None


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
