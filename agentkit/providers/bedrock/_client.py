"""AWS Bedrock Runtime Converse / ConverseStream through boto3's ``bedrock-runtime`` client, imported lazily.

```python
from agentkit.providers.bedrock import BedrockModel

model = BedrockModel("anthropic.claude-3-5-sonnet-20241022-v2:0")   # boto3's credential chain and region
model = BedrockModel("amazon.nova-pro-v1:0", client=boto3.client("bedrock-runtime", region_name="eu-west-1"))
```

All formatting and parsing is `agentkit.providers.bedrock.BedrockProvider`'s, in the service's JSON form
(blobs as base64 text); this module converts blobs to and from the bytes boto3 takes and returns. boto3 is
synchronous: every call, and every read of a ConverseStream event, runs in a worker thread
(`asyncio.to_thread`) so the event loop never blocks on the network.
"""

from __future__ import annotations as _annotations

import asyncio
import base64
import importlib
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import aclosing
from dataclasses import replace
from functools import partial
from typing import Any, cast

from ..._jsonish import is_array, is_object
from ...exceptions import ModelAPIError, ModelHTTPError, ModelSetupError
from ...messages import Message, ModelResponse
from ...models._base import (
    ModelSettings,
    ModelStreamEvent,
)
from ...models._limits import RequestLimits
from ...registry import Registry
from .._client import SDKModel, provider_request, sampling_options
from ._codec import BedrockProvider, json_form

__all__ = ["BEARER_ENV_VAR", "BedrockModel"]

BEARER_ENV_VAR = "AWS_BEARER_TOKEN_BEDROCK"
"""Where botocore itself reads a Bedrock API key from (used instead of SigV4 credentials when set)."""

_NO_CREDENTIALS = (
    "No AWS credentials for Bedrock: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE, or a "
    f"Bedrock API key in {BEARER_ENV_VAR}), use any other source of boto3's credential chain, or pass a "
    "configured boto3 client (client=...). To run without any key, use model='test' "
    "(agentkit.testing.TestModel) or a FunctionModel."
)
_NO_REGION = (
    "No AWS region for Bedrock: set AWS_REGION or AWS_DEFAULT_REGION (or a region in your AWS profile), "
    "pass region_name=..., or pass a configured boto3 client (client=...)."
)

# Converse members that hold JSON documents: a "bytes" key inside them is data, not a blob
_DOCUMENT_KEYS = frozenset({"json", "input", "inputSchema", "additionalModelRequestFields"})
_BLOB_KEYS = frozenset({"bytes", "redactedContent"})

# errors raised inside an event stream carry no HTTP status: the one the service gives them otherwise
_STATUS_BY_CODE = {
    "validationexception": 400,
    "accessdeniedexception": 403,
    "resourcenotfoundexception": 404,
    "modeltimeoutexception": 408,
    "modelstreamerrorexception": 424,
    "throttlingexception": 429,
    "modelnotreadyexception": 429,
    "servicequotaexceededexception": 429,
    "internalserverexception": 500,
    "serviceunavailableexception": 503,
}

_END = object()


def _boto3() -> Any:
    """The ``boto3`` module, imported on first use so ``import agentkit`` never loads it."""
    try:
        return importlib.import_module("boto3")
    except ImportError as exc:
        raise ImportError("BedrockModel needs boto3: pip install 'agentkit-tools[bedrock]'") from exc


def _botocore_errors() -> Any:
    return importlib.import_module("botocore.exceptions")


class BedrockModel(SDKModel[BedrockProvider]):
    """A model behind the Bedrock Converse API, e.g. ``BedrockModel("amazon.nova-pro-v1:0")``.

    Args:
        model_name: the model id, inference profile id or ARN sent as ``modelId``.
        client: a boto3 ``bedrock-runtime`` client you configured; used as it is (never closed here).
        api_key: a Bedrock API key for a client built here, sent as a bearer token instead of SigV4
            signing (botocore reads one from ``AWS_BEARER_TOKEN_BEDROCK`` by itself).
        base_url: the endpoint URL for a client built here (e.g. a VPC endpoint or a local stand-in).
        provider: the `BedrockProvider` that formats and parses.
        region_name: the AWS region for a client built here; default: ``AWS_REGION``, else boto3's
            (``AWS_DEFAULT_REGION``, the profile's ``region``).

    Raises:
        ModelSetupError: no client and no credentials (naming ``AWS_ACCESS_KEY_ID``/``AWS_PROFILE``) or no
            region; or a client together with `api_key`/`base_url`/`region_name`.
    """

    vendor = "bedrock"
    label = "Bedrock"
    example = "amazon.nova-pro-v1:0"
    provider_class = BedrockProvider

    def __init__(
        self,
        model_name: str,
        *,
        client: Any = None,
        api_key: str | None = None,
        base_url: str | None = None,
        provider: BedrockProvider | None = None,
        region_name: str | None = None,
        limits: RequestLimits | None = None,
    ) -> None:
        options = {"api_key": api_key, "base_url": base_url, "region_name": region_name}
        self._setup(model_name, client=client, provider=provider, limits=limits, options=options)

    def _build_client(self, *, api_key: str | None, base_url: str | None, region_name: str | None) -> Any:
        return _build_client(api_key, base_url, region_name, self.limits)

    @property
    def base_url(self) -> str | None:
        """The endpoint requests go to (the client's endpoint URL)."""
        url = getattr(getattr(self.client, "meta", None), "endpoint_url", None)
        return url if isinstance(url, str) else None

    def payload(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> dict[str, Any]:
        """The JSON body `request` sends to ``POST /model/{modelId}/converse`` (blobs as base64 text).

        ``modelId`` travels in the URL, not in the body. `settings.extra` is merged last, key by key
        (an ``inferenceConfig`` there replaces the one built from `max_tokens`/`temperature`).
        """
        return self._body(messages, tools, settings, shared=False)

    def _body(
        self, messages: Sequence[Message], tools: Registry, settings: ModelSettings, *, shared: bool = True
    ) -> dict[str, Any]:
        body = provider_request(self.provider, messages, tools, settings, shared=shared)
        inference = sampling_options(settings, "maxTokens")
        if inference:
            body["inferenceConfig"] = inference
        body.update(settings.extra)
        return body

    async def request(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> ModelResponse:
        """Send one Converse request (in a worker thread) and return the model's turn."""
        kwargs = self._kwargs(messages, tools, settings)
        response = await self._call(lambda: asyncio.to_thread(partial(self.client.converse, **kwargs)))
        self._not_json(response)
        parsed = self._parsed(json_form(response), tools, settings)
        return replace(parsed, raw=response, request_id=self._stream_request_id(response))

    async def stream(
        self, messages: Sequence[Message], tools: Registry, settings: ModelSettings
    ) -> AsyncIterator[ModelStreamEvent]:
        """Stream one ConverseStream request: text and tool-call events, then `ResponseDone`.

        Each event is read from boto3's blocking ``EventStream`` in a worker thread.
        """
        kwargs = self._kwargs(messages, tools, settings)

        async def open_stream() -> Any:
            # the whole answer: its ResponseMetadata carries the request id, its "stream" the events
            return await asyncio.to_thread(partial(self.client.converse_stream, **kwargs))

        async with aclosing(self._stream_events(open_stream, tools, settings)) as events:
            async for event in events:
                yield event

    def _not_json(self, raw: Any) -> None:
        # botocore reads a body that is not JSON as an empty answer: a Converse response always has output
        super()._not_json(raw)
        if is_object(raw) and "output" not in raw:
            meta: Mapping[str, Any] = raw.get("ResponseMetadata") or {}
            status = meta.get("HTTPStatusCode")
            raise ModelAPIError(self.name, f"unreadable Converse response (HTTP {status}, no output): {raw!r:.200}")

    def _iterate(self, stream: Any) -> AsyncIterator[Any]:
        return _threaded(iter(stream["stream"]))

    async def _close_stream(self, stream: Any, iterator: AsyncIterator[Any]) -> None:
        stream["stream"].close()  # releases the connection (and a worker thread blocked reading it)

    def _stream_request_id(self, stream: Any) -> str | None:
        # boto3 puts the x-amzn-requestid header in the answer's ResponseMetadata (streamed or not)
        metadata = stream.get("ResponseMetadata") if is_object(stream) else None
        found = metadata.get("RequestId") if is_object(metadata) else None
        return found if isinstance(found, str) and found else None

    async def _close_client(self) -> None:
        self.client.close()

    def _kwargs(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> dict[str, Any]:
        """boto3 ``converse`` arguments: the payload with blobs as bytes, plus ``modelId``."""
        return {"modelId": self.model_name, **_boto_form(self._body(messages, tools, settings))}

    def _map_error(self, error: Exception) -> Exception | None:
        """The agentkit error for a botocore error: HTTP errors keep status, body and headers."""
        errors = _botocore_errors()
        if isinstance(error, errors.ClientError):
            # botocore is imported lazily, so ClientError is Any here and does not narrow `error`
            response: Mapping[str, Any] = cast(Any, error).response
            meta: Mapping[str, Any] = response.get("ResponseMetadata") or {}
            details: Mapping[str, Any] = response.get("Error") or {}
            code = str(details.get("Code") or "")
            status: Any = meta.get("HTTPStatusCode") or _STATUS_BY_CODE.get(code.lower(), 500)
            body = {k: v for k, v in response.items() if k != "ResponseMetadata"}
            headers: Mapping[str, str] = meta.get("HTTPHeaders") or {}
            return ModelHTTPError(self.name, status, body, dict(headers))
        if isinstance(error, (errors.NoCredentialsError, errors.PartialCredentialsError)):
            return ModelSetupError(_NO_CREDENTIALS)
        if isinstance(error, errors.NoRegionError):
            return ModelSetupError(_NO_REGION)
        return None


def _build_client(api_key: str | None, base_url: str | None, region_name: str | None, limits: RequestLimits) -> Any:
    """A ``bedrock-runtime`` client from boto3's usual chain; fails early without credentials or region."""
    boto3 = _boto3()
    # boto3 reads AWS_DEFAULT_REGION; AWS_REGION is what the other AWS SDKs (and Lambda) set
    session = boto3.Session(region_name=region_name or os.environ.get("AWS_REGION") or None)
    # credentials first: with nothing configured, that is the message that helps
    if api_key is None and not os.environ.get(BEARER_ENV_VAR) and session.get_credentials() is None:
        raise ModelSetupError(_NO_CREDENTIALS)
    if session.region_name is None:
        raise ModelSetupError(_NO_REGION)
    options: dict[str, Any] = {"retries": {"total_max_attempts": limits.max_retries + 1, "mode": "standard"}}
    if limits.connect is not None:
        options["connect_timeout"] = limits.connect
    if limits.request is not None:
        options["read_timeout"] = limits.request
    if api_key is not None:
        # A key given in code: unsigned requests carrying it as a bearer token, as botocore does for the env var.
        options["signature_version"] = importlib.import_module("botocore").UNSIGNED
    config = importlib.import_module("botocore.config").Config(**options)
    client = session.client("bedrock-runtime", endpoint_url=base_url, config=config)
    if api_key is None:
        return client
    client.meta.events.register("before-send.bedrock-runtime", partial(_add_bearer, api_key))
    return client


async def _threaded(iterator: Any) -> AsyncIterator[Any]:
    """A blocking iterator read one item at a time in a worker thread."""
    while True:
        item = await asyncio.to_thread(next, iterator, _END)
        if item is _END:
            return
        yield item


def _add_bearer(api_key: str, request: Any, **_: Any) -> None:
    request.headers["Authorization"] = f"Bearer {api_key}"


def _boto_form(value: Any, key: str = "") -> Any:
    """The JSON form with blob members (base64 text) decoded to the bytes boto3 serialises itself."""
    if is_object(value):
        return {k: v if k in _DOCUMENT_KEYS else _boto_form(v, k) for k, v in value.items()}
    if is_array(value):
        return [_boto_form(v) for v in value]
    if key in _BLOB_KEYS and isinstance(value, str):
        return base64.b64decode(value)
    return value
