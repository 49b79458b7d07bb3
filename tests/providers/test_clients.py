"""What every SDK model client does alike, through the client base (issue 9 §3, issue 8 §4.7 and §4.9).

Each vendor's official SDK talks to a real HTTP server on 127.0.0.1 that misbehaves on purpose: it never
answers, stalls mid-stream, answers 200 with a body that is not JSON, or asks for a retry an hour later.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from agentkit import ModelAPIError, ModelHTTPError, ModelSetupError, UserMessage
from agentkit._vendors import VENDORS, load
from agentkit.models import DEFAULT_LIMITS, Model, ModelSettings, RequestLimits

from .cases import cases
from .client_common import LocalServer, make_registry

SETTINGS = ModelSettings()
VENDOR_NAMES = [name for name, row in VENDORS.items() if row.provider is not None]


@pytest.fixture(autouse=True)
def aws_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for var in ("AWS_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    yield


def built(vendor: str, url: str, limits: RequestLimits) -> Model:
    """The vendor's model client with a client built here, pointed at `url`."""
    cls: Any = load(VENDORS[vendor].model)
    case = cases(vendor)
    options: dict[str, Any] = {"api_key": "test-key", "base_url": url + case.base_path, "limits": limits}
    model: Model = cls("test-model", **options, **case.client_options)
    return model


def registry() -> Any:
    return make_registry()


@pytest.mark.parametrize("vendor", VENDOR_NAMES)
async def test_a_server_that_accepts_and_never_answers_ends_the_request_in_time(vendor: str) -> None:
    async with LocalServer("silent") as server:
        model = built(vendor, server.url, RequestLimits(request=0.5, max_retries=0))
        start = time.monotonic()
        with pytest.raises(ModelAPIError, match="timed out|Timeout|timeout"):
            await model.request([UserMessage("hi")], registry(), SETTINGS)
        assert time.monotonic() - start < 10
        await model.aclose()


@pytest.mark.parametrize("vendor", [v for v in VENDOR_NAMES if cases(v).first_event is not None])
async def test_a_stream_that_stalls_ends_in_time(vendor: str) -> None:
    first_event = cases(vendor).first_event
    assert first_event is not None
    kind, first = first_event
    async with LocalServer(("stall", kind, first)) as server:
        model = built(vendor, server.url, RequestLimits(request=20, stream_idle=0.5, max_retries=0))
        start = time.monotonic()
        seen: list[Any] = []
        with pytest.raises(ModelAPIError, match="stream_idle"):
            async for event in model.stream([UserMessage("hi")], registry(), SETTINGS):
                seen.append(event)
        assert time.monotonic() - start < 10
        await model.aclose()


@pytest.mark.parametrize("vendor", VENDOR_NAMES)
@pytest.mark.parametrize(
    ("content_type", "body"), [("text/html", b"<html>Bad gateway</html>"), ("application/json", b"<html>oops")]
)
async def test_a_200_whose_body_is_not_json_is_a_model_api_error(vendor: str, content_type: str, body: bytes) -> None:
    async with LocalServer((200, {"content-type": content_type}, body)) as server:
        model = built(vendor, server.url, RequestLimits(request=10, max_retries=0))
        with pytest.raises(ModelAPIError) as caught:
            await model.request([UserMessage("hi")], registry(), SETTINGS)
        assert caught.value.model_name == model.name
        await model.aclose()


SHAPES = {  # what the error says is missing
    "openai": "the response has no choices[0].message",
    "openai-responses": "the response has no output",
    "anthropic": "the response has no content",
    "gemini": "the response has no candidates[0] or promptFeedback",
    "bedrock": "no output",  # the client's own check, already
    "mistral": "body.choices\n  Field required",  # its SDK validates responses
    "cohere": "the response has no message",
    "ollama": "the response has no message",
}


@pytest.mark.parametrize("vendor", VENDOR_NAMES)
@pytest.mark.parametrize("body", [b"{}", b'{"object": "error", "status": "ok", "detail": "upstream busy"}'])
async def test_a_200_whose_json_holds_no_answer_is_a_model_api_error(
    vendor: str, body: bytes
) -> None:
    """Issue 17 §2.2: a proxy's JSON, or an empty object, used to be read as an empty, finished answer."""
    async with LocalServer((200, {"content-type": "application/json"}, body)) as server:
        model = built(vendor, server.url, RequestLimits(request=10, max_retries=0))
        with pytest.raises(ModelAPIError) as caught:
            await model.request([UserMessage("hi")], registry(), SETTINGS)
        assert SHAPES[vendor] in str(caught.value) and caught.value.model_name == model.name
        await model.aclose()


@pytest.mark.parametrize("vendor", ["anthropic", "cohere"])
async def test_retry_after_sleeps_are_capped(vendor: str) -> None:
    answers = {
        "anthropic": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": [{"type": "text", "text": "Sunny."}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 1, "output_tokens": 1},
        },
        "cohere": {
            "id": "c1",
            "finish_reason": "COMPLETE",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "Sunny."}]},
        },
    }
    busy = (429, {"content-type": "application/json", "retry-after": "3600"}, b'{"error": {"message": "busy"}}')
    ok = (200, {"content-type": "application/json"}, json.dumps(answers[vendor]).encode())
    async with LocalServer(busy, ok) as server:
        model = built(vendor, server.url, RequestLimits(request=30, max_retries=1, max_retry_wait=0.2))
        start = time.monotonic()
        response = await model.request([UserMessage("hi")], registry(), SETTINGS)
        assert response.message.text == "Sunny." and server.requests == 2
        assert time.monotonic() - start < 10  # not the hour the server asked for
        await model.aclose()


@pytest.mark.parametrize("vendor", ["openai", "anthropic", "cohere"])
@pytest.mark.parametrize("header", [("retry-after", "3600"), ("retry-after-ms", "3600000")])
async def test_an_app_sees_the_retry_after_the_server_sent(vendor: str, header: tuple[str, str]) -> None:
    """Issue 17 §4.8: the header an app read was the 30 s cap, when the server said an hour."""
    name, value = header
    busy = (429, {"content-type": "application/json", name: value}, b'{"error": {"message": "busy"}}')
    async with LocalServer(busy, busy) as server:
        model = built(vendor, server.url, RequestLimits(request=30, max_retries=1, max_retry_wait=0.2))
        start = time.monotonic()
        with pytest.raises(ModelHTTPError) as caught:
            await model.request([UserMessage("hi")], registry(), SETTINGS)
        assert time.monotonic() - start < 10 and server.requests == 2  # agentkit still waited at most the cap
        assert caught.value.status_code == 429 and caught.value.headers[name] == value
        assert not any(k.startswith("x-agentkit") for k in caught.value.headers)
        await model.aclose()


async def test_a_callers_client_keeps_its_settings_and_the_stream_idle_bound_still_applies() -> None:
    import openai

    first_event = cases("openai").first_event
    assert first_event is not None
    kind, first = first_event
    async with LocalServer(("stall", kind, first)) as server:
        client = openai.AsyncOpenAI(api_key="k", base_url=f"{server.url}/v1", timeout=60, max_retries=5)
        cls: Any = load(VENDORS["openai"].model)
        model = cls("m", client=client, limits=RequestLimits(stream_idle=0.5))
        assert (client.timeout, client.max_retries) == (60, 5)  # used as it is
        with pytest.raises(ModelAPIError, match="stream_idle"):
            [e async for e in model.stream([UserMessage("hi")], registry(), SETTINGS)]
        await client.close()
    default = cls("m", client=openai.AsyncOpenAI(api_key="k", base_url="http://127.0.0.1:9/v1"))
    assert default.limits == DEFAULT_LIMITS and default._deadline() is None  # no deadline on a caller's client


@pytest.mark.parametrize("vendor", VENDOR_NAMES)
def test_a_client_together_with_options_for_one_built_here_is_the_same_clear_error(vendor: str) -> None:
    cls: Any = load(VENDORS[vendor].model)
    with pytest.raises(ModelSetupError, match="either client= .* not both; got client= and api_key="):
        cls("m", client=object(), api_key="sk-ignored")
    with pytest.raises(ModelSetupError, match="not both; got client= and base_url="):
        cls("m", client=object(), base_url="http://127.0.0.1:1")


@pytest.mark.parametrize("vendor", VENDOR_NAMES)
def test_every_client_names_itself_and_refuses_an_empty_model_name(vendor: str) -> None:
    cls: Any = load(VENDORS[vendor].model)
    with pytest.raises(ModelSetupError, match="needs a model name"):
        cls("", client=object())
    model = cls("some-model", client=object())
    assert model.name == f"{vendor}:some-model" and repr(model) == f"{cls.__name__}('some-model')"


@pytest.mark.parametrize("bad", [{"request": 0}, {"stream_idle": -1}, {"max_retries": -1}, {"connect": "10"}])
def test_limits_are_checked(bad: dict[str, Any]) -> None:
    with pytest.raises(ModelSetupError, match="RequestLimits"):
        RequestLimits(**bad)
