"""OpenAI models: Chat Completions and Responses over the official ``openai`` SDK (``AsyncOpenAI``).

```python
from agentkit.models.openai import OpenAIChatModel, OpenAIResponsesModel

chat = OpenAIChatModel("gpt-4.1")                      # OPENAI_API_KEY from the environment
responses = OpenAIResponsesModel("gpt-5")
local = OpenAIChatModel("local", client=AsyncOpenAI(base_url="http://127.0.0.1:8080/v1", api_key="x"))
```

The request body is built by the provider (`agentkit.providers.openai_chat` / `openai_responses`) and
sent as it is through the SDK's own ``client.post(path, content=..., cast_to=..., stream_cls=...)``,
the documented way to make a request the SDK does not transform. The SDK still does the rest: auth,
retries with backoff, timeouts, error mapping, SSE decoding and parsing the response into its types.
What it skips is its per-call walk of the parameters (``transform``), which for 1,000 tools costs
more than the whole rest of a step; the tool list that the provider caches is serialised once and its
JSON reused while it is unchanged.
"""

from __future__ import annotations as _annotations

import inspect
import json
import os
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from contextlib import aclosing
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar
from urllib.parse import urlparse

from ..exceptions import ModelAPIError, ModelHTTPError, ModelSetupError
from ..messages import AssistantMessage, Message, ModelResponse, Usage
from ..providers._base import Provider, StreamAccumulator, as_dict
from ..providers._messages import chat_usage
from ..providers.openai_chat import OpenAIChatProvider, normalise_finish_reason
from ..providers.openai_responses import OpenAIResponsesProvider
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
from ._sdk import OwnedClient, provider_request, with_settings

if TYPE_CHECKING:
    from openai import AsyncOpenAI  # noqa: TID251 - for annotations only

__all__ = ["ENV_VAR", "OpenAIChatModel", "OpenAIResponsesModel"]

ENV_VAR = "OPENAI_API_KEY"
"""Where the API key is read from when neither `client` nor `api_key` is given."""

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


class _BodyEncoder:
    """Request bodies as JSON bytes, reusing the text of an unchanged ``tools`` list.

    `Provider.format_tools` hands out a fresh list of the same cached, read-only tool entries while the
    registry and the options stay the same, so the list's JSON is kept while its entries are the same
    objects (held here, so their identities cannot be reused) and spliced into each body. Key order
    differs from ``json.dumps(body)`` only in ``tools`` coming last, which JSON objects do not care about.
    """

    __slots__ = ("_tools",)

    def __init__(self) -> None:
        self._tools: tuple[list[Any], bytes] | None = None

    def encode(self, body: Mapping[str, Any]) -> bytes:
        tools = body.get("tools")
        if not isinstance(tools, list) or not tools:
            return _dumps(body)
        cached = self._tools
        if (
            cached is None
            or len(cached[0]) != len(tools)
            or any(a is not b for a, b in zip(cached[0], tools, strict=True))
        ):
            cached = self._tools = (list(tools), _dumps(tools))
        rest = _dumps({k: v for k, v in body.items() if k != "tools"})
        separator = b',"tools":' if len(rest) > 2 else b'"tools":'
        return rest[:-1] + separator + cached[1] + b"}"


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


# ---- errors ----------------------------------------------------------------------------------------------


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


def _map_error(model_name: str, error: Exception) -> ModelAPIError:
    openai = _import_openai()
    if isinstance(error, openai.APIStatusError):
        return ModelHTTPError(model_name, error.status_code, _http_body(error), dict(error.response.headers))
    if isinstance(error, openai.APITimeoutError):
        return ModelAPIError(model_name, f"request timed out: {error}")
    if isinstance(error, openai.APIConnectionError):
        return ModelAPIError(model_name, f"connection failed: {error.__cause__ or error}")
    if isinstance(error, openai.APIError):  # an error event inside a stream, an unparseable response
        body = f" {error.body}" if getattr(error, "body", None) is not None else ""
        return ModelAPIError(model_name, f"{error}{body}")
    return ModelAPIError(model_name, f"connection failed while streaming: {error!r}")


# ---- the shared client -----------------------------------------------------------------------------------


class _OpenAIModel(OwnedClient, Model, Generic[P]):
    """What both OpenAI APIs share: the client, sending a body through the SDK, errors."""

    _vendor: ClassVar[str]
    _path: ClassVar[str]

    def __init__(
        self,
        model_name: str,
        *,
        client: AsyncOpenAI | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        provider: P,
    ) -> None:
        if not model_name:
            raise ModelSetupError(f"{type(self).__name__} needs a model name, e.g. 'gpt-4.1'")
        self.model_name = model_name
        self.provider: P = provider
        self._encoder = _BodyEncoder()
        self._owns_client = client is None
        if client is None:
            openai = _import_openai()
            if api_key is None:
                custom_url = base_url or os.environ.get("OPENAI_BASE_URL")
                # a custom endpoint (a local llama.cpp or vLLM server) usually needs no key
                api_key = os.environ.get(ENV_VAR) or (_NO_KEY if custom_url else None)
                if api_key is None:
                    api_key = api_key_from_env("OpenAI", ENV_VAR)
            client = openai.AsyncOpenAI(api_key=api_key, base_url=base_url)
        elif api_key is not None or base_url is not None:
            raise ModelSetupError(
                "Pass either client= or api_key=/base_url=, not both: a client you build is used as it is."
            )
        self.client: AsyncOpenAI = client

    @property
    def name(self) -> str:
        """``openai:<model>`` or ``openai-responses:<model>``."""
        return f"{self._vendor}:{self.model_name}"

    @property
    def base_url(self) -> str:
        """The endpoint requests go to (the client's base URL)."""
        return str(self.client.base_url)

    def _official(self) -> bool:
        return urlparse(self.base_url).hostname == _OFFICIAL_HOST

    def _common(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> dict[str, Any]:
        return {"model": self.model_name, **provider_request(self.provider, messages, tools, settings)}

    def _send_args(self, body: Mapping[str, Any]) -> dict[str, Any]:
        takes_bytes, options = _sdk_support(type(self.client))
        if takes_bytes:
            return {"content": self._encoder.encode(body), "options": options}
        return {"body": dict(body), "options": options}

    async def _post(self, body: Mapping[str, Any], cast_to: type[Any]) -> Any:
        openai = _import_openai()
        check_request_allowed(self.name, self.base_url)
        try:
            return await self.client.post(self._path, cast_to=cast_to, **self._send_args(body))
        except openai.APIError as error:
            raise _map_error(self.name, error) from error

    async def _open_stream(self, body: Mapping[str, Any], cast_to: type[Any], stream_cls: Any) -> Any:
        openai = _import_openai()
        check_request_allowed(self.name, self.base_url)
        try:
            return await self.client.post(
                self._path, cast_to=cast_to, stream=True, stream_cls=stream_cls, **self._send_args(body)
            )
        except openai.APIError as error:
            raise _map_error(self.name, error) from error

    async def _events(self, stream: Any) -> AsyncGenerator[dict[str, Any], None]:
        """The stream's events as plain dicts; errors mapped, the stream always closed."""
        openai = _import_openai()
        failures = (openai.APIError, *_transport_errors())
        try:
            async for event in stream:
                data = as_dict(event)
                if isinstance(data, dict):
                    yield data
        except failures as error:
            raise _map_error(self.name, error) from error
        finally:
            await stream.close()

    async def _close_client(self) -> None:
        await self.client.close()


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

    ``max_tokens`` is sent as ``max_completion_tokens`` to OpenAI itself (reasoning models reject
    ``max_tokens``) and as ``max_tokens`` elsewhere, which is what compatible servers read.
    """

    _vendor = "openai"
    _path = "/chat/completions"

    def __init__(
        self,
        model_name: str,
        *,
        client: AsyncOpenAI | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        provider: OpenAIChatProvider | None = None,
    ) -> None:
        super().__init__(
            model_name, client=client, api_key=api_key, base_url=base_url, provider=provider or OpenAIChatProvider()
        )

    def payload(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> dict[str, Any]:
        """The request body `request` sends (`stream` adds ``stream`` and ``stream_options``)."""
        return self._body(messages, tools, settings, stream=False)

    def _body(
        self, messages: Sequence[Message], tools: Registry, settings: ModelSettings, *, stream: bool
    ) -> dict[str, Any]:
        body = self._common(messages, tools, settings)
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}  # usage arrives in a last, choice-less chunk
        return with_settings(body, settings, "max_completion_tokens" if self._official() else "max_tokens")

    async def request(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> ModelResponse:
        """Send one chat completion request and return the model's turn."""
        from openai.types.chat import ChatCompletion  # noqa: TID251 - lazy, on first request

        completion = await self._post(self._body(messages, tools, settings, stream=False), ChatCompletion)
        return self.provider.parse_response(completion, registry=tools, aliases=settings.aliases)

    async def stream(
        self, messages: Sequence[Message], tools: Registry, settings: ModelSettings
    ) -> AsyncIterator[ModelStreamEvent]:
        """Stream one request: text deltas, tool call starts and argument deltas, then `ResponseDone`."""
        from openai import AsyncStream  # noqa: TID251 - lazy, on first request
        from openai.types.chat import ChatCompletion, ChatCompletionChunk  # noqa: TID251 - lazy, on first request

        body = self._body(messages, tools, settings, stream=True)
        stream = await self._open_stream(body, ChatCompletion, AsyncStream[ChatCompletionChunk])
        names = self.provider.names(tools, aliases=settings.aliases)
        accumulator = self.provider.stream(registry=tools, aliases=settings.aliases)
        text: list[str] = []
        started: set[int] = set()
        finish: str | None = None
        usage = Usage(requests=1)
        model_name: str | None = None
        async with aclosing(self._events(stream)) as chunks:
            async for chunk in chunks:
                model_name = chunk.get("model") or model_name
                if isinstance(chunk.get("usage"), dict):
                    usage = chat_usage(chunk["usage"])
                for choice in chunk.get("choices") or ():
                    if choice.get("index", 0) != 0:
                        continue  # alternative answers (n > 1) are not merged into the first
                    delta = choice.get("delta") or {}
                    piece = delta.get("content") or delta.get("refusal")
                    if piece:
                        text.append(piece)
                        yield TextDelta(piece)
                    for position, entry in enumerate(delta.get("tool_calls") or ()):
                        index = entry.get("index", position)
                        wire_name = (entry.get("function") or {}).get("name")
                        if wire_name and index not in started:
                            started.add(index)
                            yield ToolCallStart(index, entry.get("id"), names.key_for(wire_name))
                    finish = choice.get("finish_reason") or finish
                for arg in accumulator.feed(chunk):
                    yield ToolCallArgsDelta(arg.index, arg.arguments_delta, arg.arguments_so_far)
        calls = accumulator.tool_calls()
        yield ResponseDone(
            ModelResponse(
                message=AssistantMessage(text="".join(text), tool_calls=calls),
                usage=usage,
                finish_reason=normalise_finish_reason(finish, has_calls=bool(calls)),
                model_name=model_name,
            )
        )


# ---- Responses ------------------------------------------------------------------------------------------------


class OpenAIResponsesModel(_OpenAIModel[OpenAIResponsesProvider]):
    """OpenAI Responses (``POST /responses``).

    System messages become ``instructions``; reasoning items returned by the model are kept in
    ``AssistantMessage.provider_details["openai-responses"]`` and replayed in the next request, as
    reasoning models need. Arguments are as for `OpenAIChatModel`; ``max_tokens`` is sent as
    ``max_output_tokens``. Requests are stateless (no ``previous_response_id``): the history is sent
    each time.
    """

    _vendor = "openai-responses"
    _path = "/responses"

    def __init__(
        self,
        model_name: str,
        *,
        client: AsyncOpenAI | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        provider: OpenAIResponsesProvider | None = None,
    ) -> None:
        super().__init__(
            model_name,
            client=client,
            api_key=api_key,
            base_url=base_url,
            provider=provider or OpenAIResponsesProvider(),
        )

    def payload(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> dict[str, Any]:
        """The request body `request` sends (`stream` adds ``"stream": true``)."""
        return self._body(messages, tools, settings, stream=False)

    def _body(
        self, messages: Sequence[Message], tools: Registry, settings: ModelSettings, *, stream: bool
    ) -> dict[str, Any]:
        body = self._common(messages, tools, settings)
        if stream:
            body["stream"] = True
        return with_settings(body, settings, "max_output_tokens")

    async def request(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> ModelResponse:
        """Send one Responses request and return the model's turn."""
        from openai.types.responses import Response  # noqa: TID251 - lazy, on first request

        response = await self._post(self._body(messages, tools, settings, stream=False), Response)
        return self._finish(response, tools, settings)

    def _finish(self, response: Any, tools: Registry, settings: ModelSettings) -> ModelResponse:
        """The turn of a whole response (SDK object or dict); a failed response raises `ModelAPIError`."""
        if isinstance(response, Mapping):
            status, error = response.get("status"), response.get("error")
        else:
            status, error = getattr(response, "status", None), getattr(response, "error", None)
        if status == "failed":
            raise ModelAPIError(self.name, f"response failed: {as_dict(error)}")
        return self.provider.parse_response(response, registry=tools, aliases=settings.aliases)

    async def stream(
        self, messages: Sequence[Message], tools: Registry, settings: ModelSettings
    ) -> AsyncIterator[ModelStreamEvent]:
        """Stream one request: text deltas, tool call starts and argument deltas, then `ResponseDone`."""
        from openai import AsyncStream  # noqa: TID251 - lazy, on first request
        from openai.types.responses import Response, ResponseStreamEvent  # noqa: TID251 - lazy, on first request

        body = self._body(messages, tools, settings, stream=True)
        stream = await self._open_stream(body, Response, AsyncStream[ResponseStreamEvent])
        names = self.provider.names(tools, aliases=settings.aliases)
        accumulator = self.provider.stream(registry=tools, aliases=settings.aliases)
        announced: set[int] = set()
        announced_ids: set[str] = set()
        text: list[str] = []
        final: ModelResponse | None = None
        async with aclosing(self._events(stream)) as events:
            async for event in events:
                kind = event.get("type")
                if kind in ("response.output_text.delta", "response.refusal.delta") and event.get("delta"):
                    text.append(event["delta"])
                    yield TextDelta(event["delta"])
                    continue
                if kind == "response.failed":
                    error = (event.get("response") or {}).get("error")
                    raise ModelAPIError(self.name, f"response failed: {error}")
                deltas = accumulator.feed(event)
                for start in _new_calls(event, accumulator, announced, announced_ids):
                    yield ToolCallStart(start[0], start[1], names.key_for(start[2]))
                for arg in deltas:
                    yield ToolCallArgsDelta(arg.index, arg.arguments_delta, arg.arguments_so_far)
                if kind in ("response.completed", "response.incomplete") and isinstance(event.get("response"), dict):
                    final = self._finish(event["response"], tools, settings)
        if final is None:  # the stream ended without its closing event: what arrived is the answer
            calls = accumulator.tool_calls()
            final = ModelResponse(
                message=AssistantMessage(text="".join(text), tool_calls=calls),
                usage=Usage(requests=1),
                finish_reason="tool_calls" if calls else None,
            )
        yield ResponseDone(final)


def _new_calls(
    event: dict[str, Any], accumulator: StreamAccumulator, announced: set[int], announced_ids: set[str]
) -> list[tuple[int, str | None, str]]:
    """Calls that the accumulator began numbering with this event: ``(index, call_id, wire name)``.

    The accumulator numbers calls in the order they first appear; the function call items this event
    carries (one for ``output_item.added`` / ``.done``, several for ``response.completed``) name them.
    """
    waiting = sorted(set(accumulator.partial) - announced)
    if not waiting:
        return []
    if event.get("type") == "response.completed":
        items = (event.get("response") or {}).get("output") or ()
    else:
        items = [event.get("item") or {}]
    fresh = [
        item
        for item in items
        if isinstance(item, dict)
        and item.get("type") == "function_call"
        and item.get("name")
        and item.get("call_id") not in announced_ids
    ]
    out = []
    for index, item in zip(waiting, fresh, strict=False):
        announced.add(index)
        announced_ids.add(item.get("call_id") or "")
        out.append((index, item.get("call_id"), item["name"]))
    return out
