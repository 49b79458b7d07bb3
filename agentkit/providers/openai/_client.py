"""OpenAI models: Chat Completions and Responses over the official ``openai`` SDK (``AsyncOpenAI``).

```python
from agentkit.providers.openai import OpenAIChatModel, OpenAIResponsesModel

chat = OpenAIChatModel("gpt-4.1")                      # OPENAI_API_KEY from the environment
responses = OpenAIResponsesModel("gpt-5")
local = OpenAIChatModel("local", client=AsyncOpenAI(base_url="http://127.0.0.1:8080/v1", api_key="x"))
```

The request body is built by the provider (`agentkit.providers.openai._chat` / `._responses`) and
sent as it is through the SDK's own ``client.post(path, content=..., cast_to=..., stream_cls=...)``,
the documented way to make a request the SDK does not transform. The SDK still does the rest: auth,
retries with backoff, timeouts, error mapping, SSE decoding and parsing the response into its types.
What it skips is its per-call walk of the parameters (``transform``), which for 1,000 tools costs
more than the whole rest of a step; the tool list that the provider caches is serialised once and its
JSON reused while it is unchanged.

Third-party instrumentation that patches the SDK's ``create()`` methods (OpenTelemetry's OpenAI
instrumentation, for one) does not see requests sent through ``post``; agentkit's own ``chat`` spans
(`agentkit.instrument`) cover them. ``use_sdk_create=True`` sends through ``chat.completions.create`` /
``responses.create`` instead, for such instrumentation, at the price of that parameter walk (measured on
the benchmarks page). The body is the same either way.
"""

from __future__ import annotations as _annotations

import inspect
import json
import os
import re
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from contextlib import aclosing
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, cast
from urllib.parse import urlparse

from pydantic_core import to_json

from ..._jsonish import is_array
from ...exceptions import ModelAPIError, ModelHTTPError
from ...messages import Message, ModelResponse
from ...models._base import (
    ModelSettings,
    ModelStreamEvent,
)
from ...models._limits import RequestLimits
from ...registry import Registry
from .._client import SDKModel, capped_retry_after, provider_request, with_settings
from .._codec import Provider
from ._chat import OpenAIChatProvider
from ._responses import OpenAIResponsesProvider, failed, failure

if TYPE_CHECKING:
    from openai import APIError, APIStatusError, AsyncOpenAI  # noqa: TID251 - for annotations only

__all__ = ["OpenAIChatModel", "OpenAIResponsesModel"]


_NO_KEY = "api-key-not-set"  # OpenAI-compatible local servers (llama.cpp, vLLM) need none; the SDK needs one
_OFFICIAL_HOST = "api.openai.com"

P = TypeVar("P", bound=Provider)


def _import_openai() -> Any:
    try:
        import openai  # noqa: TID251 - the one lazy import point, on first use
    except ImportError as error:  # pragma: no cover - openai is a dependency of agentkit
        raise ImportError(
            "The OpenAI models need the openai package: pip install 'agentkit-tools[openai]' (or pip install openai)"
        ) from error
    return openai


# ---- request bodies ------------------------------------------------------------------------------------


def _json_default(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):  # a pydantic object in ModelSettings.extra, serialised as the SDK would
        return dump(mode="json", by_alias=True, exclude_unset=True)
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _dumps(value: Any) -> bytes:
    # the SDK's own settings (openapi_dumps): compact, UTF-8, no NaN
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=_json_default).encode()


_HISTORY_KEYS = ("messages", "input")  # Chat's and Responses' conversation
_NOT_JSON = (b"NaN", b"Infinity")


def _history_json(history: list[Any]) -> bytes:
    """The conversation's JSON, with pydantic-core's encoder (about 3x ``json.dumps`` on such lists).

    The codec builds the conversation from text, ids and parsed vendor JSON only, so both encoders give
    the same JSON; pydantic-core writes NaN where ``json.dumps(allow_nan=False)`` raises, so a body
    that may hold one (the words appear anywhere) is encoded again the strict way.
    """
    encoded = to_json(history, fallback=_json_default)
    if _NOT_JSON[0] in encoded or _NOT_JSON[1] in encoded:
        return _dumps(history)
    return encoded


class _BodyEncoder:
    """Request bodies as JSON bytes, reusing the text of an unchanged ``tools`` list.

    Model clients get the provider's cached tool list itself (`provider_request`): the same list object
    while the registry and the options stay the same. Its JSON is kept while the body holds that very
    list (held here, so its identity cannot be reused) and joined into each body in one copy. The
    conversation is encoded on its own (`_history_json`). Key order differs from ``json.dumps(body)``
    only in the conversation and ``tools`` coming last, which JSON objects do not care about.
    """

    __slots__ = ("_tools",)

    def __init__(self) -> None:
        self._tools: tuple[list[Any], bytes] | None = None

    def encode(self, body: Mapping[str, Any]) -> bytes:
        parts: list[bytes] = []
        rest = dict(body)
        for key in _HISTORY_KEYS:
            history = rest.get(key)
            if is_array(history):
                del rest[key]
                parts += (b',"', key.encode(), b'":', _history_json(history))
        tools = rest.pop("tools", None)
        if is_array(tools) and tools:
            cached = self._tools
            if cached is None or cached[0] is not tools:
                cached = self._tools = (tools, _dumps(tools))
            parts += (b',"tools":', cached[1])
        elif tools is not None:
            rest["tools"] = tools
        head = _dumps(rest)
        if not parts:
            return head
        if len(head) == 2:  # "{}": the first part's comma goes
            parts[0] = parts[0][1:]
        return b"".join((head[:-1], *parts, b"}"))


_SUPPORT: dict[type, tuple[bool, Any]] = {}


def _sdk_support(client_class: type) -> tuple[bool, Any]:
    """What this SDK's ``post`` takes: ready bytes (``content=``, newer SDKs) and request ``security``.

    Older SDKs get the body as a dict (serialised by the SDK, still without its parameter walk) and
    no ``security`` option (they always sent the bearer key).
    """
    hit = _SUPPORT.get(client_class)
    if hit is None:
        openai = _import_openai()
        takes_bytes = "content" in inspect.signature(getattr(client_class, "post")).parameters  # noqa: B009 - any client class
        known = getattr(getattr(openai, "RequestOptions", None), "__annotations__", {})
        # what the SDK's own create() methods pass: the bearer key only
        options = {"security": {"bearer_auth": True}} if "security" in known else {}
        hit = _SUPPORT[client_class] = (takes_bytes, options)
    return hit


# ---- the shared client -----------------------------------------------------------------------------------


class _OpenAIModel(SDKModel[P]):
    """What both OpenAI APIs share: the client, sending a body through the SDK, errors."""

    label = "OpenAI"
    example = "gpt-4.1"
    request_id_headers = ("x-request-id",)
    _path: ClassVar[str]

    def __init__(
        self,
        model_name: str,
        *,
        client: AsyncOpenAI | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        provider: P | None = None,
        limits: RequestLimits | None = None,
        use_sdk_create: bool = False,
    ) -> None:
        self._encoder = _BodyEncoder()
        self.use_sdk_create = use_sdk_create
        """Send through the SDK's ``create()`` (seen by instrumentation that patches it) instead of ``post``."""
        self._setup(
            model_name,
            client=client,
            provider=provider,
            limits=limits,
            options={"api_key": api_key, "base_url": base_url},
        )
        self.client: AsyncOpenAI

    def _build_client(self, *, api_key: str | None, base_url: str | None) -> Any:
        openai = _import_openai()
        if api_key is None:
            custom_url = base_url or os.environ.get("OPENAI_BASE_URL")
            # a custom endpoint (a local llama.cpp or vLLM server) usually needs no key
            api_key = os.environ.get("OPENAI_API_KEY") or (_NO_KEY if custom_url else None) or self._api_key(None)
        limits = self.limits
        return openai.AsyncOpenAI(
            api_key=api_key,
            base_url=base_url,
            timeout=openai.Timeout(limits.request, connect=limits.connect),
            max_retries=limits.max_retries,
            http_client=openai.DefaultAsyncHttpxClient(
                event_hooks={"response": [capped_retry_after(limits.max_retry_wait)]}
            ),
        )

    @property
    def base_url(self) -> str:
        """The endpoint requests go to (the client's base URL)."""
        return str(self.client.base_url)

    def _official(self) -> bool:
        return urlparse(self.base_url).hostname == _OFFICIAL_HOST

    def payload(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> dict[str, Any]:
        """The request body `request` sends (`stream` adds ``"stream": true``, and Chat's ``stream_options``)."""
        return self._body(messages, tools, settings, stream=False, shared=False)

    def _body(
        self,
        messages: Sequence[Message],
        tools: Registry,
        settings: ModelSettings,
        *,
        stream: bool,
        shared: bool = True,
    ) -> dict[str, Any]:
        # OpenAI's own limits (128 tools on Chat) bind api.openai.com; compatible servers (vLLM, llama.cpp) take more
        fragment = provider_request(
            self.provider, messages, tools, settings, shared=shared, count_limit=self._official()
        )
        body = {"model": self.model_name, **fragment}
        if stream:
            body.update(self._stream_fields())
        return with_settings(body, settings, self._max_tokens_key())

    def _stream_fields(self) -> dict[str, Any]:
        """What a streamed request adds to the body."""
        return {"stream": True}

    def _max_tokens_key(self) -> str:
        """The body field `ModelSettings.max_tokens` is sent as."""
        raise NotImplementedError

    def _send_args(self, body: Mapping[str, Any]) -> dict[str, Any]:
        takes_bytes, options = _sdk_support(type(self.client))
        if takes_bytes:
            return {"content": self._encoder.encode(body), "options": options}
        return {"body": dict(body), "options": options}

    def _create(self) -> Any:
        """The SDK's typed ``create()`` for this API (``use_sdk_create``)."""
        raise NotImplementedError

    def _create_args(self, body: Mapping[str, Any]) -> dict[str, Any]:
        # create() takes the fields it knows as keywords; the rest travel as they are in extra_body
        known = _create_parameters(self._create())
        kwargs = {k: v for k, v in body.items() if k in known}
        extra = {k: v for k, v in body.items() if k not in known}
        if extra:
            kwargs["extra_body"] = extra
        return kwargs

    async def _post(self, body: Mapping[str, Any], cast_to: type[Any]) -> Any:
        if self.use_sdk_create:
            return await self._call(lambda: self._create()(**self._create_args(body)))
        return await self._call(lambda: self.client.post(self._path, cast_to=cast_to, **self._send_args(body)))

    def _events(
        self, body: Mapping[str, Any], cast_to: type[Any], stream_cls: Any, tools: Registry, settings: ModelSettings
    ) -> AsyncGenerator[ModelStreamEvent, None]:
        def open_stream() -> Any:
            if self.use_sdk_create:
                return self._create()(**self._create_args(body))
            return self.client.post(
                self._path, cast_to=cast_to, stream=True, stream_cls=stream_cls, **self._send_args(body)
            )

        return self._stream_events(open_stream, tools, settings)

    def _map_error(self, error: Exception) -> Exception | None:
        openai = _import_openai()
        if isinstance(error, openai.APIStatusError):
            status = cast("APIStatusError", error)  # the SDK's class, imported lazily (so typed Any)
            return ModelHTTPError(self.name, status.status_code, _http_body(status), dict(status.response.headers))
        if isinstance(error, openai.APITimeoutError):
            return ModelAPIError(self.name, f"request timed out: {error}")
        if isinstance(error, openai.APIConnectionError):
            return ModelAPIError(self.name, f"connection failed: {error.__cause__ or error}")
        if isinstance(error, openai.APIError):  # an error event inside a stream, an unparseable response
            body = f" {cast('APIError', error).body}" if getattr(error, "body", None) is not None else ""
            return ModelAPIError(self.name, f"{error}{body}")
        if isinstance(error, _transport_errors()):  # raised unwrapped while a stream is read
            return ModelAPIError(self.name, f"connection failed while streaming: {error!r}")
        if isinstance(error, ValueError):  # a 200 whose JSON body does not parse
            return ModelAPIError(self.name, f"unreadable response ({type(error).__name__}: {error})")
        return None

    async def _close_client(self) -> None:
        await self.client.close()


_CREATE_PARAMETERS: dict[Any, frozenset[str]] = {}


def _create_parameters(create: Any) -> frozenset[str]:
    """The keyword arguments a ``create()`` method takes (read once per method)."""
    function = getattr(create, "__func__", create)
    found = _CREATE_PARAMETERS.get(function)
    if found is None:
        found = _CREATE_PARAMETERS[function] = frozenset(inspect.signature(create).parameters) - {"extra_body"}
    return found


def _transport_errors() -> tuple[type[BaseException], ...]:
    """The HTTP library's transport errors (raised unwrapped while a stream is being read)."""
    errors: list[type[BaseException]] = []
    for name in ("httpx2", "httpx"):  # newer SDKs are built on httpx2, older ones on httpx
        try:
            module = __import__(name)
        except ImportError:
            continue
        errors.append(module.TransportError)
    return tuple(errors)


def _http_body(error: Any) -> Any:
    """The whole error body as the server sent it (JSON when it is JSON), not the SDK's inner ``error``."""
    try:
        return error.response.json()
    except Exception:  # noqa: BLE001 - not JSON, or not read: fall back to what the SDK kept
        try:
            return error.response.text or error.body
        except Exception:  # noqa: BLE001
            return error.body


# ---- Chat Completions ---------------------------------------------------------------------------------------


class OpenAIChatModel(_OpenAIModel[OpenAIChatProvider]):
    """OpenAI Chat Completions (``POST /chat/completions``), or any server that speaks it.

    Args:
        model_name: e.g. ``"gpt-4.1"`` (for a local server, the name it serves).
        client: an ``openai.AsyncOpenAI`` you configured (``base_url=`` for llama.cpp, vLLM, Ollama ...);
            used as it is and never closed by agentkit.
        api_key: the key for a client built here; default: ``OPENAI_API_KEY`` (none is needed with a
            custom ``base_url``).
        base_url: the endpoint for a client built here; default: the SDK's (``OPENAI_BASE_URL`` or OpenAI).
        provider: the `OpenAIChatProvider` that formats and parses (e.g. one with another dialect).
        limits: agentkit's bounds on each request (`agentkit.models.RequestLimits`).
        use_sdk_create: send through ``client.chat.completions.create`` instead of the SDK's low-level
            ``post`` (same body), so instrumentation that patches ``create()`` sees the requests; costs
            the SDK's parameter walk on every request (see the tracing guide).

    ``max_tokens`` is sent as ``max_completion_tokens`` to OpenAI itself (reasoning models reject
    ``max_tokens``) and as ``max_tokens`` elsewhere, which is what compatible servers read.
    """

    vendor = "openai"
    provider_class = OpenAIChatProvider
    _path = "/chat/completions"

    def _create(self) -> Any:
        return self.client.chat.completions.create

    def _stream_fields(self) -> dict[str, Any]:
        return {"stream": True, "stream_options": {"include_usage": True}}  # usage comes in a last, choice-less chunk

    def _max_tokens_key(self) -> str:
        return "max_completion_tokens" if self._official() else "max_tokens"

    async def request(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> ModelResponse:
        """Send one chat completion request and return the model's turn."""
        from openai.types.chat import ChatCompletion  # noqa: TID251 - lazy, on first request

        completion = await self._post(self._body(messages, tools, settings, stream=False), ChatCompletion)
        return self._parsed(completion, tools, settings)

    async def stream(
        self, messages: Sequence[Message], tools: Registry, settings: ModelSettings
    ) -> AsyncIterator[ModelStreamEvent]:
        """Stream one request: text deltas, tool call starts and argument deltas, then `ResponseDone`."""
        from openai import AsyncStream  # noqa: TID251 - lazy, on first request
        from openai.types.chat import ChatCompletion, ChatCompletionChunk  # noqa: TID251 - lazy, on first request

        body = self._body(messages, tools, settings, stream=True)
        async with aclosing(
            self._events(body, ChatCompletion, AsyncStream[ChatCompletionChunk], tools, settings)
        ) as events:
            async for event in events:
                yield event


# ---- Responses ------------------------------------------------------------------------------------------------


_GPT_VERSION = re.compile(r"(?:^|[^a-z])gpt-(\d+)(?:\.(\d+))?")


def native_search_model(model_name: str) -> bool:
    """Whether OpenAI documents ``tool_search`` for this model (gpt-5.4 or later, Responses API)."""
    match = _GPT_VERSION.search(model_name)
    if match is None:
        return False
    return (int(match[1]), int(match[2] or 0)) >= (5, 4)


class OpenAIResponsesModel(_OpenAIModel[OpenAIResponsesProvider]):
    """OpenAI Responses (``POST /responses``).

    System messages become ``instructions``; reasoning items returned by the model are kept in
    ``AssistantMessage.provider_details["openai-responses"]`` and replayed in the next request, as
    reasoning models need. Arguments are as for `OpenAIChatModel`; ``max_tokens`` is sent as
    ``max_output_tokens``. Requests are stateless (no ``previous_response_id``): the history is sent
    each time.
    """

    vendor = "openai-responses"
    provider_class = OpenAIResponsesProvider
    _path = "/responses"

    def native_tool_search(self, requested: bool | None = None) -> bool:
        """Whether deferred tools go to the model in the native form (the hosted ``tool_search``).

        By default on the models OpenAI documents it for: gpt-5.4 and later; ``True`` forces it,
        ``False`` keeps agentkit's own search.
        """
        if requested is not None:
            return requested
        return native_search_model(self.model_name)

    def _create(self) -> Any:
        return self.client.responses.create

    def _max_tokens_key(self) -> str:
        return "max_output_tokens"

    async def request(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> ModelResponse:
        """Send one Responses request and return the model's turn."""
        from openai.types.responses import Response  # noqa: TID251 - lazy, on first request

        response = await self._post(self._body(messages, tools, settings, stream=False), Response)
        return self._finish(response, tools, settings)

    def _finish(self, response: Any, tools: Registry, settings: ModelSettings) -> ModelResponse:
        """The turn of a whole response (SDK object or dict); a failed response raises `ModelAPIError`."""
        self._not_json(response)
        if failed(response):
            raise ModelAPIError(self.name, f"response failed: {failure(response)}")
        return self._parsed(response, tools, settings)

    async def stream(
        self, messages: Sequence[Message], tools: Registry, settings: ModelSettings
    ) -> AsyncIterator[ModelStreamEvent]:
        """Stream one request: text deltas, tool call starts and argument deltas, then `ResponseDone`."""
        from openai import AsyncStream  # noqa: TID251 - lazy, on first request
        from openai.types.responses import Response, ResponseStreamEvent  # noqa: TID251 - lazy, on first request

        body = self._body(messages, tools, settings, stream=True)
        async with aclosing(self._events(body, Response, AsyncStream[ResponseStreamEvent], tools, settings)) as events:
            async for event in events:
                yield event
