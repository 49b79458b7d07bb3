"""The SDK-client base every vendor's ``_client.py`` builds on, and the plumbing those clients share.

`SDKModel` holds what every model client over an official SDK does alike: the constructor rules (a
caller's client or the options for one built here, never both; the key from the vendor table's
environment variables), client ownership (`aclose` closes only a client built here), the base URL and
request blocking, agentkit's `RequestLimits` (a request deadline, a stream-idle timeout), every SDK
error mapped in one place per vendor (`SDKModel._map_error`), and the stream loop through the vendor's
one `StreamDecoder`. Each vendor supplies only what differs: building its client, sending a body,
opening a stream, and what its SDK's errors mean.

No vendor SDK is imported here; each vendor module keeps its own lazy import.
"""

from __future__ import annotations as _annotations

import asyncio
import email.utils
import inspect
import json
import os
import time
from abc import abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, ClassVar, Generic, TypeVar

from .._jsonish import is_mapping, is_object
from ..definitions import ToolDefinition
from ..exceptions import ModelAPIError, ModelHTTPError, ModelSetupError, PayloadRejectedError
from ..messages import Message, ModelResponse
from ..models._base import Model, ModelSettings, ModelStreamEvent, ResponseDone, check_request_allowed
from ..models._limits import DEFAULT_LIMITS, RequestLimits
from ..models._output import OutputMode, OutputPlan
from ..registry import Registry
from ._codec import FormatOptions, Provider

__all__ = [
    "OwnedClient",
    "ProviderT",
    "SDKModel",
    "capped_retry_after",
    "deep_merge",
    "error_body",
    "header_dict",
    "missing_api_key",
    "provider_request",
    "sampling_options",
    "with_settings",
]


def provider_request(
    provider: Provider,
    messages: Sequence[Message],
    tools: Registry,
    settings: ModelSettings,
    *,
    shared: bool = True,
    count_limit: bool = True,
) -> dict[str, Any]:
    """`Provider.build_request` with the tool options of `settings` (no model name, no sampling).

    With `shared`, the tool fragment's containers are the provider's cached ones, for a body that is sent
    and never edited; `Model.payload` (which callers may edit) passes False for fresh ones. With
    `count_limit` (a client of the vendor's own endpoint), more tools than `Provider.max_tools` raise.

    Raises:
        PayloadRejectedError: a request the vendor documents it refuses, nothing sent.
    """
    problems = provider.count_problems(len(tools)) if count_limit else []
    if problems:
        raise PayloadRejectedError(provider.name, problems, provider.refusal_fix(problems))
    options = FormatOptions(
        tool_choice=settings.tool_choice,
        active_tools=settings.active_tools,
        strict=settings.strict,
        parallel_tool_calls=settings.parallel_tool_calls,
        aliases=settings.aliases,
        deferred=settings.deferred_tools,
        programmatic=settings.programmatic_tools,
        programmatic_direct=settings.programmatic_direct,
    )
    return provider._request(  # pyright: ignore[reportPrivateUsage]  # the client is the provider's own caller
        messages, tools, options, shared=shared, output=settings.output
    )


def sampling_options(settings: ModelSettings, max_tokens_key: str) -> dict[str, Any]:
    """The set sampling settings: ``max_tokens`` under the vendor's `max_tokens_key`, then ``temperature``."""
    options: dict[str, Any] = {}
    if settings.max_tokens is not None:
        options[max_tokens_key] = settings.max_tokens
    if settings.temperature is not None:
        options["temperature"] = settings.temperature
    return options


def with_settings(body: dict[str, Any], settings: ModelSettings, max_tokens_key: str) -> dict[str, Any]:
    """`body` with the sampling settings at its top level, then `settings.extra` (last: the caller's word wins)."""
    body.update(sampling_options(settings, max_tokens_key))
    body.update(settings.extra)
    return body


def deep_merge(target: dict[str, Any], extra: Mapping[str, Any]) -> None:
    """Merge `extra` into `target`: nested objects key by key, anything else replaced.

    So ``{"options": {"top_p": 0.9}}`` keeps the ``num_predict`` set from the settings.
    """
    for key, value in extra.items():
        current = target.get(key)
        if is_object(current) and is_mapping(value):
            merged = dict(current)
            deep_merge(merged, value)
            target[key] = merged
        else:
            target[key] = value


def error_body(body: Any) -> Any:
    """An error body as JSON data when it is JSON text, else as it came."""
    if isinstance(body, (str, bytes)):
        try:
            return json.loads(body)
        except ValueError:
            return body.decode(errors="replace") if isinstance(body, bytes) else body
    return body


def header_dict(headers: Any) -> dict[str, str]:
    """Response headers as a plain ``str -> str`` dict (none: empty)."""
    return {str(k): str(v) for k, v in headers.items()} if headers is not None else {}


class OwnedClient:
    """Client ownership for a `Model`: `aclose` closes the SDK client only when the model built it.

    Subclasses set ``_owns_client`` (True for a client built here, never for one the caller passed)
    and implement `_close_client`.
    """

    _owns_client: bool = False

    async def aclose(self) -> None:
        """Close the SDK client if this model built it (a client passed in is left open)."""
        if self._owns_client:
            await self._close_client()

    async def _close_client(self) -> None:
        raise NotImplementedError


def missing_api_key(vendor: str, env_var: str) -> ModelSetupError:
    """The error for a vendor model created without a key: names the variable and the offline option."""
    return ModelSetupError(
        f"No API key for {vendor}: set the {env_var} environment variable, or pass a configured SDK client "
        f"(client=...). To run without any key, use model='test' (agentkit.testing.TestModel) or a "
        "FunctionModel."
    )


_T = TypeVar("_T")
ProviderT = TypeVar("ProviderT", bound=Provider)
"""The `Provider` class of a vendor's client (`SDKModel[AnthropicProvider]`): types ``provider=`` and `provider`."""


class SDKModel(OwnedClient, Model, Generic[ProviderT]):
    """A `Model` over a vendor's official SDK: the skeleton every vendor client shares.

    Subclasses name their provider class twice, as the type parameter (``SDKModel[AnthropicProvider]``, so
    ``provider=`` and `provider` are typed by it without an override) and as `provider_class` (the default
    one, and the run-time check); set `vendor` (the row of the vendor table: name, key variables) and
    `label`, call `_setup` from their constructor, and implement `_build_client`, `base_url`, `_map_error`
    and `_close_client`; `_call` and `_stream_events` run their SDK calls.
    """

    vendor: ClassVar[str]
    """The vendor's name in the vendor table, e.g. ``"openai"``."""
    label: ClassVar[str]
    """How errors name the vendor, e.g. ``"OpenAI"``."""
    provider_class: type[ProviderT]
    """The vendor's `Provider` class: the default provider, and the check of a ``provider=`` passed in."""
    example: ClassVar[str] = "model-name"
    """A model name for the "needs a model name" error."""

    model_name: str
    """The vendor's model id, as sent."""
    provider: ProviderT
    """The `Provider` that builds the request body and reads the response."""
    client: Any
    """The SDK client requests go through."""
    limits: RequestLimits
    """The bounds agentkit puts on each request (see `RequestLimits`)."""

    def _setup(
        self,
        model_name: str,
        *,
        client: Any,
        provider: ProviderT | None,
        limits: RequestLimits | None,
        options: Mapping[str, Any],
    ) -> None:
        """The constructor every vendor shares; `options` are those of a client built here (``api_key=`` ...).

        Raises:
            ModelSetupError: no model name; a client together with options for one built here (they would
                be ignored); a provider of another vendor; bad limits.
        """
        name = type(self).__name__
        if not isinstance(model_name, str) or not model_name:  # pyright: ignore[reportUnnecessaryIsInstance]  # untyped callers
            raise ModelSetupError(f"{name} needs a model name, e.g. {name}({self.example!r})")
        given = [key for key, value in options.items() if value is not None]
        if client is not None and given:
            wanted = "/".join(f"{key}=" for key in options)
            raise ModelSetupError(
                f"{name}: pass either client= (used as it is, with its own settings) or {wanted} (for a client "
                f"built here), not both; got client= and {', '.join(k + '=' for k in given)}. Configure the "
                "client you pass instead."
            )
        if provider is not None and not isinstance(provider, self.provider_class):
            raise ModelSetupError(
                f"{name} needs a {self.provider_class.__name__}, got {type(provider).__name__}: the body must be "
                f"in {self.label}'s wire format"
            )
        if limits is not None and not isinstance(limits, RequestLimits):  # pyright: ignore[reportUnnecessaryIsInstance]  # untyped callers
            raise ModelSetupError(f"{name}(limits=...) takes a RequestLimits, got {limits!r}")
        self.model_name = model_name
        self.provider = provider if provider is not None else self.provider_class()
        self._explicit_limits = limits is not None
        self.limits = limits if limits is not None else DEFAULT_LIMITS
        self._owns_client = client is None
        self.client = client if client is not None else self._build_client(**options)

    _build_client: Callable[..., Any]
    """The SDK client built here from the constructor's `options` (keywords), configured with `limits`."""

    @property
    def name(self) -> str:
        """``<vendor>:<model>``, e.g. ``"openai:gpt-4.1"``."""
        return f"{self.vendor}:{self.model_name}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model_name!r})"

    @property
    @abstractmethod
    def base_url(self) -> str | None:
        """The endpoint requests go to (None when the client does not say)."""

    def _api_key(self, api_key: str | None) -> str:
        """`api_key`, else the first of the vendor's key variables (the vendor table) that is set."""
        if api_key:
            return api_key
        from .._vendors import VENDORS

        env_vars = VENDORS[self.vendor].env_vars
        for var in env_vars:
            key = os.environ.get(var)
            if key:
                return key
        raise missing_api_key(self.label, env_vars[0] + "".join(f" (or {var})" for var in env_vars[1:]))

    # ---- errors: one place per vendor ----------------------------------------------------------------

    def _map_error(self, error: Exception, /) -> Exception | None:
        """The agentkit error for an SDK or transport error, or None when the vendor does not know it.

        Subclasses map their SDK's errors (HTTP status, body and headers kept); whatever they leave
        unmapped still becomes a `ModelAPIError`, never a raw SDK exception.
        """
        return None

    def _failure(self, error: Exception) -> Exception:
        if isinstance(error, (ModelAPIError, ModelSetupError)):
            return error
        mapped = self._map_error(error)
        if isinstance(mapped, ModelHTTPError):
            _server_retry_after(mapped.headers)
        if mapped is not None:
            return mapped
        return ModelAPIError(self.name, f"{type(error).__name__}: {error}")

    def _not_json(self, raw: Any) -> None:
        """Raise for an answer that is text rather than the vendor's JSON (an HTTP 200 with an HTML page)."""
        if isinstance(raw, (str, bytes)):
            text = raw.decode(errors="replace") if isinstance(raw, bytes) else raw
            raise ModelAPIError(self.name, f"the server answered with a body that is not JSON: {text[:200]!r}")

    # ---- running SDK calls within the limits ------------------------------------------------------------

    def _deadline(self) -> float | None:
        # a caller's client keeps its own timeouts unless the caller asked for agentkit's too
        return self.limits.request if (self._owns_client or self._explicit_limits) else None

    async def _call(self, send: Callable[[], Awaitable[_T]]) -> _T:
        """One SDK call (request blocking checked first) under the request deadline, errors mapped."""
        check_request_allowed(self.name, self.base_url)
        deadline = self._deadline()
        try:
            if deadline is None:
                return await send()
            return await asyncio.wait_for(send(), deadline)
        except asyncio.TimeoutError as error:
            if deadline is not None:
                raise ModelAPIError(
                    self.name, f"request timed out after {deadline:g} s (RequestLimits.request)"
                ) from error
            raise self._failure(error) from error
        except Exception as error:
            raise self._failure(error) from error

    async def _stream_events(
        self, open_stream: Callable[[], Awaitable[Any]], tools: Any, settings: ModelSettings
    ) -> AsyncGenerator[ModelStreamEvent, None]:
        """Open a stream, read it through the provider's decoder, end with `ResponseDone`.

        Opening counts against the request deadline; each event must come within `RequestLimits.stream_idle`.
        The stream is closed however the loop ends (finished, failed, or left early by the consumer).
        """
        decoder = self.provider.decoder(registry=tools, aliases=settings.aliases)
        decoder.model_name = self.name
        stream = await self._call(open_stream)
        request_id = self._stream_request_id(stream)
        iterator = self._iterate(stream)
        try:
            while True:
                try:
                    event = await self._next(iterator)
                except StopAsyncIteration:
                    break
                for item in decoder.decode(event):
                    yield item
        finally:
            await self._close_stream(stream, iterator)
        for item in decoder.flush():
            yield item
        yield ResponseDone(self._finished(decoder.response(), request_id))

    def _iterate(self, stream: Any) -> AsyncIterator[Any]:
        """The stream's events as an async iterator (a vendor with a blocking SDK wraps it here)."""
        iterator: AsyncIterator[Any] = stream.__aiter__()
        return iterator

    async def _next(self, iterator: AsyncIterator[Any]) -> Any:
        idle = self.limits.stream_idle
        try:
            if idle is None:
                return await iterator.__anext__()
            return await asyncio.wait_for(iterator.__anext__(), idle)
        except StopAsyncIteration:
            raise
        except asyncio.TimeoutError as error:
            if idle is not None:
                why = f"no stream event for {idle:g} s: the server stalled (RequestLimits.stream_idle)"
                raise ModelAPIError(self.name, why) from error
            raise self._failure(error) from error
        except Exception as error:
            raise self._failure(error) from error

    async def _close_stream(self, stream: Any, iterator: AsyncIterator[Any]) -> None:
        """Release the stream's connection (every SDK stream has ``close`` or ``aclose``)."""
        for target in (stream, iterator):
            close = getattr(target, "close", None) or getattr(target, "aclose", None)
            if close is None:
                continue
            done = close()
            if inspect.isawaitable(done):
                await done
            return

    def output_plan(self, definition: ToolDefinition, mode: OutputMode, *, with_tools: bool) -> OutputPlan:
        """How this model is asked for structured output: as its provider decides for it (`Provider.output_plan`)."""
        return self.provider.output_plan(definition, mode=mode, with_tools=with_tools, model_name=self.model_name)

    def _finished(self, response: ModelResponse, request_id: str | None = None) -> ModelResponse:
        """A parsed turn as the model returns it: named by vendor and endpoint, with the request id found.

        A response that names no model gets the requested one.
        """
        if response.model_name is None:
            response.model_name = self.model_name
        response.provider_name = self.vendor
        response.provider_url = self.base_url
        if response.request_id is None:
            response.request_id = request_id
        return response

    def _parsed(self, raw: Any, tools: Any, settings: ModelSettings) -> ModelResponse:
        """A whole response parsed by the provider (after the not-JSON check)."""
        self._not_json(raw)
        try:
            parsed = self.provider.parse_response(raw, registry=tools, aliases=settings.aliases)
        except ModelAPIError as error:  # the provider names itself; the model's errors name the model
            if type(error) is ModelAPIError and error.model_name == self.provider.name:
                raise ModelAPIError(self.name, error.message) from error
            raise
        return self._finished(parsed, self._request_id(raw))

    # ---- request ids -----------------------------------------------------------------------------------

    request_id_headers: ClassVar[tuple[str, ...]] = ()
    """The response headers that carry the vendor's request id, in order of preference."""

    def _request_id(self, raw: Any) -> str | None:
        """The request id of a whole response, else None.

        The SDK object's ``_request_id``: the accessor the OpenAI and Anthropic SDKs document for their id
        header (vendors with the id in the body read it in their codec).
        """
        found = getattr(raw, "_request_id", None)
        return found if isinstance(found, str) and found else None

    def _stream_request_id(self, stream: Any) -> str | None:
        """The request id of an opened stream, from the headers of its HTTP response (``stream.response``)."""
        headers = getattr(getattr(stream, "response", None), "headers", None)
        if headers is None:
            return None
        for name in self.request_id_headers:
            value = headers.get(name)
            if isinstance(value, str) and value:
                return value
        return None


_SERVER_SAID = "x-agentkit-server-"
"""Prefix of the header keeping a ``retry-after`` the hook lowered, as the server sent it."""


def _server_retry_after(headers: dict[str, str]) -> None:
    """Put back the server's ``retry-after`` (``-ms``) that `capped_retry_after` lowered: an app sees what it said."""
    for key in [k for k in headers if k.lower().startswith(_SERVER_SAID)]:
        headers[key[len(_SERVER_SAID) :]] = headers.pop(key)


def capped_retry_after(limit: float | None) -> Callable[[Any], Awaitable[None]]:
    """An httpx response hook that lowers a ``retry-after`` (or ``retry-after-ms``) above `limit` seconds.

    SDKs that honour the header (Anthropic's sleeps whatever it says) then wait at most `limit`. The server's
    value is kept beside it, and `ModelHTTPError.headers` carries it again: the cap bounds agentkit's own
    waiting, never what an application is told to wait.
    """

    async def hook(response: Any) -> None:
        if limit is None:
            return
        headers = response.headers
        wait_ms = headers.get("retry-after-ms")
        if wait_ms is not None:
            try:
                if float(wait_ms) / 1000 > limit:
                    headers[_SERVER_SAID + "retry-after-ms"] = wait_ms
                    headers["retry-after-ms"] = str(int(limit * 1000))
            except ValueError:
                pass
        wait = headers.get("retry-after")
        if wait is None:
            return
        try:
            seconds = float(wait)
        except ValueError:
            try:
                seconds = email.utils.parsedate_to_datetime(wait).timestamp() - time.time()
            except (TypeError, ValueError):
                return
        if seconds > limit:
            headers[_SERVER_SAID + "retry-after"] = wait
            headers["retry-after"] = f"{limit:g}"

    return hook
