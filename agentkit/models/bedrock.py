"""AWS Bedrock Runtime Converse / ConverseStream through boto3's ``bedrock-runtime`` client, imported lazily.

```python
from agentkit.models.bedrock import BedrockModel

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
import json
import os
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from ..exceptions import ModelAPIError, ModelHTTPError, ModelSetupError
from ..messages import Message, ModelResponse
from ..providers.bedrock import BedrockProvider
from ..registry import Registry
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
from ._sdk import provider_request, sampling_options

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


class BedrockModel(Model):
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

    def __init__(
        self,
        model_name: str,
        *,
        client: Any = None,
        api_key: str | None = None,
        base_url: str | None = None,
        provider: BedrockProvider | None = None,
        region_name: str | None = None,
    ) -> None:
        self.model_name = model_name
        """The ``modelId`` sent."""
        self.provider = provider if provider is not None else BedrockProvider()
        """The provider that builds the request body and reads the response."""
        if client is not None:
            if api_key is not None or base_url is not None or region_name is not None:
                raise ModelSetupError(
                    "BedrockModel: pass either client= or api_key=/base_url=/region_name=, not both; "
                    "configure the client you pass instead."
                )
        else:
            client = _build_client(api_key, base_url, region_name)
        self.client: Any = client
        """The boto3 ``bedrock-runtime`` client requests go through."""

    @property
    def name(self) -> str:
        """``bedrock:<modelId>``."""
        return f"bedrock:{self.model_name}"

    def payload(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> dict[str, Any]:
        """The JSON body `request` sends to ``POST /model/{modelId}/converse`` (blobs as base64 text).

        ``modelId`` travels in the URL, not in the body. `settings.extra` is merged last, key by key
        (an ``inferenceConfig`` there replaces the one built from `max_tokens`/`temperature`).
        """
        body = provider_request(self.provider, messages, tools, settings)
        inference = sampling_options(settings, "maxTokens")
        if inference:
            body["inferenceConfig"] = inference
        body.update(settings.extra)
        return body

    async def request(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> ModelResponse:
        """Send one Converse request (in a worker thread) and return the model's turn."""
        kwargs = self._kwargs(messages, tools, settings)
        check_request_allowed(self.name, self.client.meta.endpoint_url)
        errors = _botocore_errors()
        try:
            response = await asyncio.to_thread(partial(self.client.converse, **kwargs))
        except (errors.BotoCoreError, errors.ClientError) as exc:
            raise self._error(exc) from exc
        parsed = self.provider.parse_response(_json_form(response), registry=tools, aliases=settings.aliases)
        return replace(parsed, model_name=self.model_name, raw=response)

    async def stream(
        self, messages: Sequence[Message], tools: Registry, settings: ModelSettings
    ) -> AsyncIterator[ModelStreamEvent]:
        """Stream one ConverseStream request: text and tool-call events, then `ResponseDone`.

        Each event is read from boto3's blocking ``EventStream`` in a worker thread.
        """
        kwargs = self._kwargs(messages, tools, settings)
        check_request_allowed(self.name, self.client.meta.endpoint_url)
        names = self.provider.names(tools, aliases=settings.aliases)
        accumulator = self.provider.stream(registry=tools, aliases=settings.aliases)
        snapshot = _Snapshot()
        errors = _botocore_errors()
        try:
            response = await asyncio.to_thread(partial(self.client.converse_stream, **kwargs))
            events = response["stream"]
            iterator = iter(events)
            try:
                while True:
                    event: Any = await asyncio.to_thread(next, iterator, _END)
                    if event is _END:
                        break
                    started = snapshot.feed(event)
                    if started is not None:
                        index, call_id, wire_name = started
                        yield ToolCallStart(index, call_id, names.key_for(wire_name))
                    text = _text_delta(event)
                    if text:
                        yield TextDelta(text)
                    for delta in accumulator.feed(event):
                        yield ToolCallArgsDelta(delta.index, delta.arguments_delta, delta.arguments_so_far)
            finally:
                events.close()  # releases the connection when the consumer stops early
        except (errors.BotoCoreError, errors.ClientError) as exc:
            raise self._error(exc) from exc
        parsed = self.provider.parse_response(_json_form(snapshot.response), registry=tools, aliases=settings.aliases)
        yield ResponseDone(replace(parsed, model_name=self.model_name))

    def _kwargs(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> dict[str, Any]:
        """boto3 ``converse`` arguments: the payload with blobs as bytes, plus ``modelId``."""
        return {"modelId": self.model_name, **_boto_form(self.payload(messages, tools, settings))}

    def _error(self, exc: Exception) -> Exception:
        """The agentkit error for a botocore error: HTTP errors keep status, body and headers."""
        errors = _botocore_errors()
        if isinstance(exc, errors.ClientError):
            response = exc.response
            meta = response.get("ResponseMetadata") or {}
            code = str((response.get("Error") or {}).get("Code") or "")
            status = meta.get("HTTPStatusCode") or _STATUS_BY_CODE.get(code.lower(), 500)
            body = {k: v for k, v in response.items() if k != "ResponseMetadata"}
            return ModelHTTPError(self.name, status, body, dict(meta.get("HTTPHeaders") or {}))
        if isinstance(exc, (errors.NoCredentialsError, errors.PartialCredentialsError)):
            return ModelSetupError(_NO_CREDENTIALS)
        if isinstance(exc, errors.NoRegionError):
            return ModelSetupError(_NO_REGION)
        return ModelAPIError(self.name, f"{type(exc).__name__}: {exc}")


def _build_client(api_key: str | None, base_url: str | None, region_name: str | None) -> Any:
    """A ``bedrock-runtime`` client from boto3's usual chain; fails early without credentials or region."""
    boto3 = _boto3()
    # boto3 reads AWS_DEFAULT_REGION; AWS_REGION is what the other AWS SDKs (and Lambda) set
    session = boto3.Session(region_name=region_name or os.environ.get("AWS_REGION") or None)
    # credentials first: with nothing configured, that is the message that helps
    if api_key is None and not os.environ.get(BEARER_ENV_VAR) and session.get_credentials() is None:
        raise ModelSetupError(_NO_CREDENTIALS)
    if session.region_name is None:
        raise ModelSetupError(_NO_REGION)
    if api_key is None:
        return session.client("bedrock-runtime", endpoint_url=base_url)
    # A key given in code: unsigned requests carrying it as a bearer token, as botocore does for the env var.
    config = importlib.import_module("botocore.config").Config(
        signature_version=importlib.import_module("botocore").UNSIGNED
    )
    client = session.client("bedrock-runtime", endpoint_url=base_url, config=config)
    client.meta.events.register("before-send.bedrock-runtime", partial(_add_bearer, api_key))
    return client


def _add_bearer(api_key: str, request: Any, **_: Any) -> None:
    request.headers["Authorization"] = f"Bearer {api_key}"


def _boto_form(value: Any, key: str = "") -> Any:
    """The JSON form with blob members (base64 text) decoded to the bytes boto3 serialises itself."""
    if isinstance(value, dict):
        return {k: v if k in _DOCUMENT_KEYS else _boto_form(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_boto_form(v) for v in value]
    if key in _BLOB_KEYS and isinstance(value, str):
        return base64.b64decode(value)
    return value


def _json_form(value: Any) -> Any:
    """A boto3 response in the service's JSON form: bytes as base64 text, ``ResponseMetadata`` dropped."""
    if isinstance(value, dict):
        return {k: _json_form(v) for k, v in value.items() if k != "ResponseMetadata"}
    if isinstance(value, list):
        return [_json_form(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    return value


def _text_delta(event: dict[str, Any]) -> str:
    delta = (event.get("contentBlockDelta") or {}).get("delta") or {}
    text = delta.get("text")
    return text if isinstance(text, str) else ""


class _Snapshot:
    """Rebuilds the Converse response a stream describes, so the stream ends with what `request` returns."""

    def __init__(self) -> None:
        self._blocks: dict[int, dict[str, Any]] = {}
        self._json: dict[int, str] = {}
        self._calls = 0
        self._end: dict[str, Any] = {}

    @property
    def response(self) -> dict[str, Any]:
        """The response so far, in ``converse``'s shape."""
        content = [self._blocks[i] for i in sorted(self._blocks)]
        return {"output": {"message": {"role": "assistant", "content": content}}, **self._end}

    def feed(self, event: dict[str, Any]) -> tuple[int, str | None, str] | None:
        """Apply one event; return (call index, id, wire name) when it starts a tool call."""
        if "contentBlockStart" in event:
            start = event["contentBlockStart"]
            use = (start.get("start") or {}).get("toolUse")
            index = start.get("contentBlockIndex")
            if isinstance(use, dict) and isinstance(index, int):
                self._blocks[index] = {"toolUse": {**use, "input": {}}}
                self._json[index] = ""
                self._calls += 1
                return self._calls - 1, use.get("toolUseId"), use.get("name") or ""
        elif "contentBlockDelta" in event:
            self._delta(event["contentBlockDelta"].get("contentBlockIndex"), event["contentBlockDelta"].get("delta"))
        elif "contentBlockStop" in event:
            index = event["contentBlockStop"].get("contentBlockIndex")
            text = self._json.pop(index, None) if isinstance(index, int) else None
            if text is not None and text.strip():
                try:
                    self._blocks[index]["toolUse"]["input"] = json.loads(text)
                except ValueError:
                    self._blocks[index]["toolUse"]["input"] = text  # as the accumulator: validation reports it
        elif "messageStop" in event:
            stop = event["messageStop"]
            self._end["stopReason"] = stop.get("stopReason")
            if "additionalModelResponseFields" in stop:
                self._end["additionalModelResponseFields"] = stop["additionalModelResponseFields"]
        elif "metadata" in event:
            self._end.update(event["metadata"])  # usage, metrics, trace
        return None

    def _delta(self, index: Any, delta: Any) -> None:
        if not isinstance(index, int) or not isinstance(delta, dict):
            return
        if isinstance(delta.get("text"), str):
            block = self._blocks.setdefault(index, {"text": ""})
            block["text"] = block.get("text", "") + delta["text"]
        elif isinstance(delta.get("toolUse"), dict) and index in self._json:
            self._json[index] += delta["toolUse"].get("input") or ""
        elif isinstance(delta.get("reasoningContent"), dict):
            reasoning = self._blocks.setdefault(index, {"reasoningContent": {}}).setdefault("reasoningContent", {})
            piece = delta["reasoningContent"]
            if "text" in piece or "signature" in piece:
                text = reasoning.setdefault("reasoningText", {"text": ""})
                text["text"] += piece.get("text") or ""
                if "signature" in piece:
                    text["signature"] = piece["signature"]
            if "redactedContent" in piece:
                reasoning["redactedContent"] = reasoning.get("redactedContent", b"") + piece["redactedContent"]
