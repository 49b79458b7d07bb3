"""BedrockModel through the real boto3 ``bedrock-runtime`` client, and the Bedrock provider's conversation
formatting (`format_messages` / `parse_response`).

Nothing leaves the process: a botocore ``before-send`` handler answers each request with a recorded
response (``fixtures/bedrock/``, written from the Converse docs), and ConverseStream answers are encoded
here in the AWS event-stream binary framing that botocore itself decodes. Each SDK test checks both
directions: the JSON body botocore put on the wire (equal to `BedrockModel.payload`, valid against the
service model's schemas) and the neutral response or events made of the recorded answer.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import os
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentkit import Registry
from agentkit.exceptions import ModelAPIError, ModelHTTPError, ModelSetupError
from agentkit.messages import (
    AssistantMessage,
    ImagePart,
    Message,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    ToolResultsMessage,
    UserMessage,
)
from agentkit.models import (
    ModelSettings,
    ResponseDone,
    TextDelta,
    ToolCallArgsDelta,
    ToolCallStart,
    infer_model,
)
from agentkit.providers.bedrock import BedrockModel
from agentkit.providers.bedrock._codec import BEDROCK_ID_RULE, BedrockProvider
from tests.providers.common import PNG, read_fixture
from tests.spec import assert_spec_valid

from ..client_common import assert_blocked, make_registry

FIXTURES = Path(__file__).parent / "fixtures" / "client"
MESSAGE, REQUEST = "bedrock.converse.message", "bedrock.converse.request"
MODEL = "anthropic.claude-3-5-sonnet-20241022-v2:0"
LOCAL = "http://127.0.0.1:9"


def fixture(name: str) -> Any:
    return read_fixture(FIXTURES, name, drop_source=True)


def assert_request_valid(body: dict[str, Any]) -> None:
    """The whole body against ConverseRequest (the JSON body: ``modelId`` is in the URL), each message
    against Message; user and assistant alternate."""
    assert_spec_valid(REQUEST, body)
    for message in body["messages"]:
        assert_spec_valid(MESSAGE, message)
        kinds = ["toolResult" in block for block in message["content"]]
        assert kinds == sorted(kinds, reverse=True), "toolResult blocks open their user turn"
    roles = [m["role"] for m in body["messages"]]
    assert all(a != b for a, b in zip(roles, roles[1:], strict=False)), roles


# ---- an in-process HTTP layer for botocore ------------------------------------------------------------------


def event_message(headers: dict[str, str], payload: bytes) -> bytes:
    """One AWS event-stream message: prelude (lengths + CRC), string headers, payload, message CRC."""
    encoded = b"".join(
        bytes([len(name)]) + name.encode() + b"\x07" + struct.pack(">H", len(value)) + value.encode()
        for name, value in headers.items()
    )
    prelude = struct.pack(">II", 12 + len(encoded) + len(payload) + 4, len(encoded))
    message = prelude + struct.pack(">I", binascii.crc32(prelude)) + encoded + payload
    return message + struct.pack(">I", binascii.crc32(message))


def event_stream(events: list[dict[str, Any]]) -> bytes:
    """ConverseStream events (as boto3 yields them) encoded as the service sends them."""
    out = b""
    for event in events:
        [(kind, member)] = event.items()
        headers = {":message-type": "event", ":event-type": kind, ":content-type": "application/json"}
        out += event_message(headers, json.dumps(member).encode())
    return out


def exception_event(kind: str, message: str) -> bytes:
    headers = {":message-type": "exception", ":exception-type": kind, ":content-type": "application/json"}
    return event_message(headers, json.dumps({"message": message}).encode())


class RawBody:
    """What botocore reads an HTTP body from (urllib3's response API), served in small chunks."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.closed = False
        self.reader_threads: set[str] = set()

    def stream(self, amt: int = 1024, decode_content: bool = True) -> Iterator[bytes]:
        for start in range(0, len(self.data), 37):  # odd chunks: events are split across reads
            self.reader_threads.add(threading.current_thread().name)
            yield self.data[start : start + 37]

    def read(self, amt: int | None = None) -> bytes:
        return self.data

    def close(self) -> None:
        self.closed = True


class Service:
    """Recorded Bedrock answers, served through botocore's ``before-send`` event; keeps every request."""

    def __init__(self, *replies: tuple[int, dict[str, str], bytes]) -> None:
        self.replies = list(replies)
        self.requests: list[Any] = []
        self.bodies: list[RawBody] = []

    def attach(self, client: Any) -> Any:
        client.meta.events.register("before-send.bedrock-runtime", self.send)
        return client

    def send(self, request: Any, **_: Any) -> Any:
        from botocore.awsrequest import AWSResponse

        self.requests.append(request)
        status, headers, data = self.replies.pop(0)
        raw = RawBody(data)
        self.bodies.append(raw)
        return AWSResponse(request.url, status, headers, raw)

    @property
    def sent(self) -> list[dict[str, Any]]:
        return [json.loads(r.body) for r in self.requests]

    def client(self, endpoint_url: str | None = LOCAL) -> Any:
        import boto3
        from botocore.config import Config

        return self.attach(
            boto3.client(
                "bedrock-runtime",
                region_name="us-east-1",
                endpoint_url=endpoint_url,
                aws_access_key_id="AKIDEXAMPLE",
                aws_secret_access_key="wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                config=Config(retries={"total_max_attempts": 1}),  # errors surface at once, no backoff
            )
        )

    def model(self) -> BedrockModel:
        return BedrockModel(MODEL, client=self.client())


def ok(name: str) -> tuple[int, dict[str, str], bytes]:
    return 200, {"content-type": "application/json"}, json.dumps(fixture(name)).encode()


def streamed(data: bytes) -> tuple[int, dict[str, str], bytes]:
    return 200, {"content-type": "application/vnd.amazon.eventstream"}, data


def error(status: int) -> tuple[int, dict[str, str], bytes]:
    recorded = fixture("errors")[str(status)]
    return status, {"content-type": "application/json", **recorded["headers"]}, json.dumps(recorded["body"]).encode()


@pytest.fixture
def registry() -> Registry:
    return make_registry()


@pytest.fixture
def no_aws_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No credentials anywhere boto3 looks, and no instance-metadata lookups (no network)."""
    for name in (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_DEFAULT_PROFILE",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_ROLE_ARN",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


# ---- requests through boto3 ----------------------------------------------------------------------------------


async def test_plain_text() -> None:
    service = Service(ok("converse_text"))
    model = service.model()
    history: list[Message] = [SystemMessage("Be brief."), UserMessage("Weather in Paris?")]
    response = await model.request(history, Registry(), ModelSettings())

    [request] = service.requests
    assert request.url == f"{LOCAL}/model/{MODEL.replace(':', '%3A')}/converse"
    assert request.headers["Authorization"].startswith(b"AWS4-HMAC-SHA256")  # boto3 signed it
    [body] = service.sent
    assert body == {
        "system": [{"text": "Be brief."}],
        "messages": [{"role": "user", "content": [{"text": "Weather in Paris?"}]}],
    }
    assert body == model.payload(history, Registry(), ModelSettings())
    assert_request_valid(body)
    assert response.message.text == "It is sunny in Paris, 21 degrees."
    assert response.message.tool_calls == [] and response.message.provider_details is None
    assert response.finish_reason == "stop"
    assert (response.usage.input_tokens, response.usage.output_tokens, response.usage.requests) == (1030, 12, 1)
    assert response.model_name == MODEL and model.name == f"bedrock:{MODEL}"
    assert response.raw["ResponseMetadata"]["HTTPStatusCode"] == 200  # boto3's own answer, for debugging


async def test_a_tool_call_and_its_follow_up(registry: Registry) -> None:
    service = Service(ok("converse_tool_call"), ok("converse_text"))
    model = service.model()
    settings = ModelSettings(max_tokens=512, temperature=0.3)
    history: list[Message] = [UserMessage([TextPart("Weather where this is?"), ImagePart(data=PNG)])]
    first = await model.request(history, registry, settings)

    sent = service.sent[0]
    assert sent["toolConfig"] == BedrockProvider().format_tools(registry)["toolConfig"]
    assert sent["inferenceConfig"] == {"maxTokens": 512, "temperature": 0.3}
    image = sent["messages"][0]["content"][1]["image"]
    assert image == {"format": "png", "source": {"bytes": base64.b64encode(PNG).decode()}}  # boto3 encoded our bytes
    assert sent == model.payload(history, registry, settings)
    assert_request_valid(sent)

    assert first.finish_reason == "tool_calls" and first.message.text == "Let me look that up."
    assert first.message.tool_calls == [ToolCall("tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "get_weather", {"city": "Paris"})]
    reasoning = fixture("converse_tool_call")["output"]["message"]["content"][:2]
    # kept in the JSON form: the redacted blob boto3 returned as bytes is base64 text again
    assert first.message.provider_details == {"bedrock": {"blocks": reasoning}}

    results = await registry.call_many(first.message.tool_calls)
    history += [first.message, ToolResultsMessage(results)]
    await model.request(history, registry, settings)

    follow_up = service.sent[1]
    assert_request_valid(follow_up)
    assistant, results_turn = follow_up["messages"][1:]
    # reasoning goes back unmodified (the blob byte for byte) and first
    assert assistant == {
        "role": "assistant",
        "content": [
            *reasoning,
            {"text": "Let me look that up."},
            {
                "toolUse": {
                    "toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q",
                    "name": "get_weather",
                    "input": {"city": "Paris"},
                }
            },
        ],
    }
    [result] = results_turn["content"]
    assert result["toolResult"]["toolUseId"] == "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q"
    assert json.loads(result["toolResult"]["content"][0]["text"]) == {"city": "Paris", "unit": "c"}


async def test_parallel_calls_are_answered_in_one_user_turn(registry: Registry) -> None:
    service = Service(ok("converse_parallel"), ok("converse_text"))
    model = service.model()
    history: list[Message] = [UserMessage("Paris and Berlin, and order two ABC-1.")]
    first = await model.request(history, registry, ModelSettings(tool_choice="required"))
    assert service.sent[0]["toolConfig"]["toolChoice"] == {"any": {}}
    calls = first.message.tool_calls
    assert [(c.name, c.arguments) for c in calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_weather", {"city": "Berlin", "unit": "f"}),
        ("place_order", {"sku": "ABC-1", "qty": 2}),
    ]
    results = await registry.call_many(calls)
    results[2] = ToolResult.error(calls[2], "out of stock", "tool_error")
    history += [first.message, ToolResultsMessage(results), UserMessage("Thanks!")]
    await model.request(history, registry, ModelSettings(tool_choice="none"))

    body = service.sent[1]
    assert_request_valid(body)
    assert "toolChoice" not in body["toolConfig"] and body["toolConfig"]["tools"]  # §7d: kept for the history
    last = body["messages"][2]["content"]
    assert [b["toolResult"]["toolUseId"] for b in last[:3]] == [c.id for c in calls]
    assert last[2]["toolResult"]["status"] == "error"
    assert last[3] == {"text": "Thanks!"}


async def test_stream_yields_text_and_calls_then_the_whole_turn(registry: Registry) -> None:
    events = fixture("converse_stream")["events"]
    service = Service(streamed(event_stream(events)))
    model = service.model()
    history: list[Message] = [UserMessage("Paris and Berlin?")]
    settings = ModelSettings(tool_choice="get_weather")
    seen = [event async for event in model.stream(history, registry, settings)]

    [request] = service.requests
    assert request.url.endswith("/converse-stream")
    assert service.sent[0] == model.payload(history, registry, settings)
    assert service.sent[0]["toolConfig"]["toolChoice"] == {"tool": {"name": "get_weather"}}
    # the body was read in worker threads, never on the event loop's thread
    assert threading.main_thread().name not in service.bodies[0].reader_threads
    assert service.bodies[0].closed

    assert [e.text for e in seen if isinstance(e, TextDelta)] == ["Let me check the weather", " in both cities."]
    starts = [e for e in seen if isinstance(e, ToolCallStart)]
    assert starts == [
        ToolCallStart(0, "tooluse_stream01", "get_weather"),
        ToolCallStart(1, "tooluse_stream02", "get_weather"),
    ]
    deltas = [e for e in seen if isinstance(e, ToolCallArgsDelta)]
    assert deltas == [
        ToolCallArgsDelta(0, '{"city": "Pa', '{"city": "Pa'),
        ToolCallArgsDelta(0, 'ris", "unit": "f"}', '{"city": "Paris", "unit": "f"}'),
        ToolCallArgsDelta(1, '{"city": "Berlin"}', '{"city": "Berlin"}'),
    ]
    done = seen[-1]
    assert isinstance(done, ResponseDone) and sum(isinstance(e, ResponseDone) for e in seen) == 1
    response = done.response
    assert response.message.text == "Let me check the weather in both cities."
    assert [(c.id, c.arguments) for c in response.message.tool_calls] == [
        ("tooluse_stream01", {"city": "Paris", "unit": "f"}),
        ("tooluse_stream02", {"city": "Berlin"}),
    ]
    assert (response.usage.input_tokens, response.usage.output_tokens) == (400, 80)
    assert response.finish_reason == "tool_calls" and response.model_name == MODEL

    # exactly what request() returns for the same turn, not streamed
    whole = {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {"text": response.message.text},
                    {
                        "toolUse": {
                            "toolUseId": "tooluse_stream01",
                            "name": "get_weather",
                            "input": {"city": "Paris", "unit": "f"},
                        }
                    },
                    {"toolUse": {"toolUseId": "tooluse_stream02", "name": "get_weather", "input": {"city": "Berlin"}}},
                ],
            }
        },
        "stopReason": "tool_use",
        "usage": {"inputTokens": 400, "outputTokens": 80, "totalTokens": 480},
        "metrics": {"latencyMs": 1500},
    }
    other = Service((200, {"content-type": "application/json"}, json.dumps(whole).encode()))
    requested = await other.model().request(history, registry, settings)
    assert (requested.message, requested.usage, requested.finish_reason) == (
        response.message,
        response.usage,
        response.finish_reason,
    )


async def test_the_loop_keeps_running_while_the_stream_is_read(registry: Registry) -> None:
    events = fixture("converse_stream")["events"]
    service = Service(streamed(event_stream(events)))
    model = service.model()
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(ticker())
    try:
        seen = [e async for e in model.stream([UserMessage("x")], registry, ModelSettings())]
    finally:
        task.cancel()
    assert isinstance(seen[-1], ResponseDone)
    assert ticks > len(events)  # the loop ran between the events read in worker threads


async def test_stopping_early_closes_the_stream(registry: Registry) -> None:
    service = Service(streamed(event_stream(fixture("converse_stream")["events"])))
    stream = service.model().stream([UserMessage("x")], registry, ModelSettings())
    first = await stream.__anext__()
    assert first == TextDelta("Let me check the weather")
    await stream.aclose()
    assert service.bodies[0].closed


async def test_an_exception_inside_the_stream_is_an_http_error(registry: Registry) -> None:
    events = fixture("converse_stream")["events"][:3]
    data = event_stream(events) + exception_event("throttlingException", "Too many tokens, please wait.")
    model = Service(streamed(data)).model()
    seen: list[Any] = []
    with pytest.raises(ModelHTTPError) as info:
        async for event in model.stream([UserMessage("x")], registry, ModelSettings()):
            seen.append(event)
    assert [e.text for e in seen] == ["Let me check the weather", " in both cities."]  # delivered before it
    assert info.value.status_code == 429 and info.value.kind == "rate_limit"
    assert info.value.body["Error"]["Message"] == "Too many tokens, please wait."


@pytest.mark.parametrize(
    ("status", "kind"), [(403, "permission"), (429, "rate_limit"), (400, "bad_request"), (500, "server_error")]
)
async def test_http_errors_keep_status_body_and_headers(registry: Registry, status: int, kind: str) -> None:
    recorded = fixture("errors")[str(status)]
    model = Service(error(status)).model()
    with pytest.raises(ModelHTTPError) as info:
        await model.request([UserMessage("hi")], registry, ModelSettings())
    problem = info.value
    assert (problem.status_code, problem.kind, problem.model_name) == (status, kind, f"bedrock:{MODEL}")
    assert problem.body["Error"] == {"Code": recorded["code"], "Message": recorded["body"]["message"]}
    assert problem.headers["x-amzn-requestid"] == recorded["headers"]["x-amzn-RequestId"]
    assert recorded["body"]["message"] in str(problem)


async def test_errors_when_opening_a_stream(registry: Registry) -> None:
    model = Service(error(429)).model()
    with pytest.raises(ModelHTTPError) as info:
        async for _ in model.stream([UserMessage("hi")], registry, ModelSettings()):
            pass
    assert info.value.status_code == 429


async def test_a_connection_failure_is_an_api_error(registry: Registry) -> None:
    from botocore.exceptions import EndpointConnectionError

    service = Service()
    client = service.client()

    def refuse(request: Any, **_: Any) -> Any:
        raise EndpointConnectionError(endpoint_url=request.url)

    client.meta.events.unregister("before-send.bedrock-runtime", service.send)
    client.meta.events.register("before-send.bedrock-runtime", refuse)
    with pytest.raises(ModelAPIError) as info:
        await BedrockModel(MODEL, client=client).request([UserMessage("hi")], registry, ModelSettings())
    assert not isinstance(info.value, ModelHTTPError) and "EndpointConnectionError" in str(info.value)


# ---- setup, credentials, blocking -----------------------------------------------------------------------


@pytest.mark.usefixtures("no_aws_environment")
def test_missing_credentials_name_the_variables() -> None:
    with pytest.raises(ModelSetupError) as info:
        BedrockModel(MODEL, region_name="us-east-1")
    message = str(info.value)
    assert "AWS_ACCESS_KEY_ID" in message and "AWS_PROFILE" in message and "model='test'" in message
    with pytest.raises(ModelSetupError, match="AWS_ACCESS_KEY_ID"):
        infer_model(f"bedrock:{MODEL}")  # no region either: the credentials are what is reported


@pytest.mark.usefixtures("no_aws_environment")
async def test_a_callers_client_without_credentials_fails_with_the_same_hint(registry: Registry) -> None:
    import boto3

    service = Service(ok("converse_text"))
    client = service.attach(boto3.client("bedrock-runtime", region_name="us-east-1", endpoint_url=LOCAL))
    with pytest.raises(ModelSetupError, match="AWS_ACCESS_KEY_ID"):
        await BedrockModel(MODEL, client=client).request([UserMessage("hi")], registry, ModelSettings())
    assert service.requests == []  # botocore gave up before sending


@pytest.mark.usefixtures("no_aws_environment")
def test_a_missing_region_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_PROFILE", "dev")
    (Path(os.environ["AWS_CONFIG_FILE"])).write_text(
        "[profile dev]\naws_access_key_id = AKID\naws_secret_access_key = s\n"
    )
    with pytest.raises(ModelSetupError, match="AWS_REGION"):
        BedrockModel(MODEL)
    assert BedrockModel(MODEL, region_name="ap-south-1").client.meta.region_name == "ap-south-1"


@pytest.mark.usefixtures("no_aws_environment")
async def test_a_client_built_from_the_environment(monkeypatch: pytest.MonkeyPatch, registry: Registry) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDENV")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("AWS_REGION", "eu-west-3")
    model = infer_model(f"bedrock:{MODEL}")
    assert isinstance(model, BedrockModel) and model.client.meta.region_name == "eu-west-3"
    with pytest.raises(ModelSetupError, match="blocked"):  # the real endpoint, blocked in tests
        await model.request([UserMessage("hi")], registry, ModelSettings())
    local = BedrockModel(MODEL, base_url=LOCAL)
    service = Service(ok("converse_text"))
    service.attach(local.client)
    await local.request([UserMessage("hi")], registry, ModelSettings())
    assert b"Credential=AKIDENV/" in service.requests[0].headers["Authorization"]


@pytest.mark.usefixtures("no_aws_environment")
async def test_an_api_key_is_sent_as_a_bearer_token(registry: Registry) -> None:
    model = BedrockModel(MODEL, api_key="bedrock-api-key-123", base_url=LOCAL, region_name="us-west-2")
    service = Service(ok("converse_text"))
    service.attach(model.client)
    await model.request([UserMessage("hi")], registry, ModelSettings())
    assert service.requests[0].headers["Authorization"] == "Bearer bedrock-api-key-123"


def test_a_client_and_a_region_together_are_refused() -> None:
    with pytest.raises(ModelSetupError, match="not both"):
        BedrockModel(MODEL, client=Service().client(), region_name="us-east-1")


async def test_requests_to_a_real_endpoint_are_blocked_in_tests(registry: Registry) -> None:
    service = Service(ok("converse_text"))
    model = BedrockModel(MODEL, client=service.client(endpoint_url=None))
    response = await assert_blocked(model, registry, service.requests)
    assert response.message.text and service.requests[0].url.startswith("https://bedrock-runtime.us-east-1.")


async def test_extra_is_merged_last(registry: Registry) -> None:
    service = Service(ok("converse_text"))
    model = service.model()
    settings = ModelSettings(
        max_tokens=10,
        extra={"additionalModelRequestFields": {"top_k": 5}, "inferenceConfig": {"maxTokens": 64, "topP": 0.9}},
    )
    await model.request([UserMessage("hi")], registry, settings)
    [body] = service.sent
    assert body["inferenceConfig"] == {"maxTokens": 64, "topP": 0.9}
    assert body["additionalModelRequestFields"] == {"top_k": 5}
    assert_request_valid(body)


def test_importing_agentkit_does_not_load_boto3() -> None:
    code = "import sys, agentkit, agentkit.providers.bedrock; print('boto3' in sys.modules, 'botocore' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False False"


# ---- format_messages / parse_response (pure) ----------------------------------------------------------------


def test_system_and_user_messages() -> None:
    provider = BedrockProvider()
    fragment = provider.format_messages(
        [
            SystemMessage("You are terse."),
            UserMessage("Look:"),
            UserMessage([TextPart("this"), ImagePart(url="s3://bucket/a.png"), ImagePart(url="https://x.test/a.png")]),
            SystemMessage("Answer in French."),
            AssistantMessage(),
            UserMessage("  "),
        ]
    )
    assert fragment["system"] == [{"text": "You are terse."}, {"text": "Answer in French."}]
    [turn] = fragment["messages"]
    assert turn["content"][:3] == [
        {"text": "Look:"},
        {"text": "this"},
        {"image": {"format": "png", "source": {"s3Location": {"uri": "s3://bucket/a.png"}}}},
    ]
    assert "omitted" in turn["content"][3]["text"] and "tool results" not in turn["content"][3]["text"]
    assert_request_valid(fragment)


def test_a_history_from_another_vendor_is_remapped_consistently(registry: Registry) -> None:
    provider = BedrockProvider()
    foreign = "call/with spaces and a very long tail that Bedrock refuses because it is over 64 chars"
    call = ToolCall(foreign, "get_weather", '{"city": "Oslo"}', provider_details={"thoughtSignature": "c2ln"})
    history: list[Message] = [
        UserMessage("Oslo?"),
        AssistantMessage("", [call], provider_details={"anthropic": {"blocks": [{"type": "thinking"}]}}),
        ToolResultsMessage([ToolResult(foreign, "get_weather", [TextPart("cold")])]),
    ]
    body = provider.build_request(history, registry)
    assert_request_valid(body)
    use = body["messages"][1]["content"][0]["toolUse"]  # the Anthropic thinking block is not replayed here
    result = body["messages"][2]["content"][0]["toolResult"]
    assert use == {"toolUseId": provider.wire_id(foreign), "name": "get_weather", "input": {"city": "Oslo"}}
    assert BEDROCK_ID_RULE.accepts(use["toolUseId"]) and result["toolUseId"] == use["toolUseId"]
    assert body == provider.build_request(history, registry)


def test_an_empty_registry_with_tool_history_keeps_a_tool_config() -> None:
    provider = BedrockProvider()
    history: list[Message] = [
        UserMessage("x"),
        AssistantMessage("", [ToolCall("t1", "get_weather", {"city": "A"})]),
        ToolResultsMessage([ToolResult("t1", "get_weather", [TextPart("ok")])]),
    ]
    body = provider.build_request(history, Registry())
    assert_request_valid(body)
    assert [t["toolSpec"]["name"] for t in body["toolConfig"]["tools"]] == ["get_weather"]
    assert "toolConfig" not in provider.build_request([UserMessage("hi")], Registry())


@pytest.mark.parametrize(
    ("stop", "expected"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("tool_use", "tool_calls"),
        ("max_tokens", "length"),
        ("guardrail_intervened", "content_filter"),
        ("content_filtered", "content_filter"),
        ("malformed_tool_use", "malformed_tool_use"),
    ],
)
def test_finish_reasons_are_normalised(stop: str, expected: str) -> None:
    parsed = BedrockProvider().parse_response({"output": {"message": {"content": []}}, "stopReason": stop})
    assert parsed.finish_reason == expected


def test_results_open_the_user_turn_even_after_a_user_remark(registry: Registry) -> None:
    history: list[Message] = [
        UserMessage("x"),
        AssistantMessage("", [ToolCall("t1", "get_weather", {"city": "A"})]),
        UserMessage("(still there?)"),  # recorded before the results arrived
        ToolResultsMessage([ToolResult("t1", "get_weather", [TextPart("ok")])]),
    ]
    body = BedrockProvider().build_request(history, registry)
    assert_request_valid(body)
    assert [next(iter(b)) for b in body["messages"][2]["content"]] == ["toolResult", "text"]


async def test_a_stream_cut_before_message_stop_is_no_turn(registry: Registry) -> None:
    events = fixture("converse_stream")["events"]
    cut = [e for e in events if "messageStop" not in e and "metadata" not in e]
    service = Service(streamed(event_stream(cut)))
    with pytest.raises(ModelAPIError, match="before messageStop"):
        [e async for e in service.model().stream([UserMessage("Paris?")], registry, ModelSettings())]


async def test_a_json_body_for_a_stream_request_is_no_turn(registry: Registry) -> None:
    service = Service(ok("converse_tool_call"))
    with pytest.raises(ModelAPIError):
        [e async for e in service.model().stream([UserMessage("Paris?")], registry, ModelSettings())]


async def test_responses_carry_the_request_id_boto3_reads_from_the_headers(registry: Registry) -> None:
    whole = (200, {"content-type": "application/json", "x-amzn-requestid": "e1f2-whole"}, ok("converse_text")[2])
    stream = (
        200,
        {"content-type": "application/vnd.amazon.eventstream", "x-amzn-requestid": "e1f2-stream"},
        event_stream(fixture("converse_stream")["events"]),
    )
    model = Service(whole, stream).model()
    response = await model.request([UserMessage("hi")], registry, ModelSettings())
    assert response.request_id == "e1f2-whole"
    assert (response.provider_name, response.provider_url) == ("bedrock", LOCAL)
    events = [e async for e in model.stream([UserMessage("hi")], registry, ModelSettings())]
    done = events[-1]
    assert isinstance(done, ResponseDone)
    assert done.response.request_id == "e1f2-stream"
