"""One agent run per vendor, recorded through the vendor's official SDK against the provider tests' recorded
responses (an in-process server behind the SDK's own transport), and the same agent with the vendor's own
client (a ``"vendor:model"`` string, the key from the environment) for replaying with the network blocked.

The run: the model calls tools in parallel (the vendor's ``parallel`` fixture); `get_weather` answers for
Paris and fails for any other city, `place_order` fails (tool errors the model sees), `local_time`
answers; then the model answers (the vendor's ``text`` fixture).
"""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

from agentkit import Agent, ToolError, tool
from agentkit.models import Model
from tests.providers.client_common import QueueServer
from tests.providers.common import httpx_module

PROVIDERS = Path(__file__).resolve().parents[1] / "providers"
KEY = "sk-live-DO-NOT-RECORD-4f9a2c"
"""The API key the recording clients send: it must never reach a cassette."""
SECRET = "acct-7781-PRIVATE"
"""A configured secret: the prompt carries it, the cassette must not."""
PROMPT = f"Weather in Paris and elsewhere, and my order (account {SECRET})?"


def tools() -> list[Any]:
    @tool
    def get_weather(city: str, unit: Literal["c", "f"] = "c", days: int | None = None) -> dict[str, Any]:
        """Get the current weather for a city.

        Args:
            city: City name.
            unit: Temperature unit.
            days: Days of forecast.
        """
        if city != "Paris":
            raise ToolError(f"no weather station in {city}")
        return {"city": city, "temp": 21, "unit": unit}

    @tool
    def place_order(
        customer: str | None = None,
        address: dict[str, Any] | None = None,
        items: list[dict[str, Any]] | None = None,
        note: str | None = None,
        sku: str | None = None,
        qty: int = 1,
    ) -> str:
        """Place an order."""
        raise ToolError(f"{sku or 'the item'} is out of stock")

    @tool
    def local_time(tz: str) -> str:
        """The local time in a time zone."""
        return f"12:00 in {tz}"

    return [get_weather, place_order, local_time]


def fixture_bytes(vendor: str, name: str) -> bytes:
    data = json.loads((PROVIDERS / vendor / "fixtures" / "client" / name).read_text())
    data.pop("_source", None)
    return json.dumps(data).encode()


@dataclass(frozen=True)
class Case:
    """A vendor: its recorded answers, an SDK client over them, and its model string for replays."""

    name: str
    model: str
    """The ``"vendor:model"`` string the replaying agent uses (its client built by agentkit)."""
    answers: tuple[str, str]
    """The fixtures of the two turns: parallel tool calls, then the text answer."""
    env: dict[str, str]
    recording_model: Callable[[Any], Model]
    """The model over an SDK client whose transport is the in-process server."""

    def server(self) -> Server:
        vendor = self.name.split("-")[0]
        if vendor == "bedrock":
            return BedrockService(*(fixture_bytes("bedrock", name) for name in self.answers))
        http = _http(vendor)
        replies = [http.Response(200, content=fixture_bytes(vendor, name), headers=JSON) for name in self.answers]
        return Server(*replies)

    def agent(self, model: Any) -> Agent:
        return Agent(id=f"cassette-{self.name}", model=model, tools=tools(), instructions="Be brief.")


JSON = {"content-type": "application/json"}


def _http(vendor: str) -> Any:
    if vendor in ("cohere", "ollama"):
        import httpx

        return httpx
    return httpx_module()


class Server(QueueServer):
    """The in-process vendor endpoint (a MockTransport handler): records requests, answers from a queue."""


class BedrockService:
    """Recorded Bedrock answers through botocore's ``before-send`` (as tests/providers/bedrock does)."""

    def __init__(self, *bodies: bytes) -> None:
        self.bodies = list(bodies)
        self.requests: list[Any] = []

    def send(self, request: Any, **_: Any) -> Any:
        from botocore.awsrequest import AWSResponse

        self.requests.append(request)
        return AWSResponse(request.url, 200, JSON, _Body(self.bodies.pop(0)))


class _Body:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def stream(self, amt: int = 1024, decode_content: bool = True) -> Iterator[bytes]:
        yield self.data

    def read(self, amt: int | None = None) -> bytes:
        return self.data

    def close(self) -> None:
        return None


def _openai_chat(server: Any) -> Model:
    import openai

    from agentkit.providers.openai import OpenAIChatModel

    http = httpx_module()
    transport = http.MockTransport(server)
    client = openai.AsyncOpenAI(api_key=KEY, max_retries=0, http_client=http.AsyncClient(transport=transport))
    return OpenAIChatModel("gpt-4.1", client=client)


def _openai_responses(server: Any) -> Model:
    import openai

    from agentkit.providers.openai import OpenAIResponsesModel

    http = httpx_module()
    transport = http.MockTransport(server)
    client = openai.AsyncOpenAI(api_key=KEY, max_retries=0, http_client=http.AsyncClient(transport=transport))
    return OpenAIResponsesModel("gpt-4.1", client=client)


def _anthropic(server: Any) -> Model:
    import anthropic

    from agentkit.providers.anthropic import AnthropicModel

    http = httpx_module()
    client = anthropic.AsyncAnthropic(
        api_key=KEY, max_retries=0, http_client=http.AsyncClient(transport=http.MockTransport(server))
    )
    return AnthropicModel("claude-sonnet-4-5", client=client)


def _gemini(server: Any) -> Model:
    from google import genai
    from google.genai import types

    from agentkit.providers.gemini import GeminiModel

    http = httpx_module()
    options = types.HttpOptions(httpx_async_client=http.AsyncClient(transport=http.MockTransport(server)))
    return GeminiModel("gemini-2.5-flash", client=genai.Client(api_key=KEY, http_options=options))


def _mistral(server: Any) -> Model:
    from mistralai.client import Mistral

    from agentkit.providers.mistral import MistralModel

    http = httpx_module()
    client = Mistral(api_key=KEY, async_client=http.AsyncClient(transport=http.MockTransport(server)))
    return MistralModel("mistral-large-latest", client=client)


def _cohere(server: Any) -> Model:
    import cohere
    import httpx

    from agentkit.providers.cohere import CohereModel

    http = httpx.AsyncClient(transport=httpx.MockTransport(server))
    client = cohere.AsyncClientV2(api_key=KEY, httpx_client=http, max_retries=0)
    return CohereModel("command-a-03-2025", client=client)


def _ollama(server: Any) -> Model:
    import httpx
    import ollama

    from agentkit.providers.ollama import OllamaModel

    return OllamaModel("qwen3:8b", client=ollama.AsyncClient(transport=httpx.MockTransport(server)))


def _bedrock(service: Any) -> Model:
    import boto3
    from botocore.config import Config

    from agentkit.providers.bedrock import BedrockModel

    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key=KEY,
        config=Config(retries={"total_max_attempts": 1}),
    )
    client.meta.events.register("before-send.bedrock-runtime", service.send)
    return BedrockModel(BEDROCK_MODEL, client=client)


BEDROCK_MODEL = "anthropic.claude-3-5-sonnet-20241022-v2:0"
REPLAY_KEY = KEY + "-replay"


def _gemini_case_name() -> str:
    """``gemini``, or ``gemini-genai2`` where Python 3.10 gets google-genai 2.x (its requests go to another
    path, ``/v1beta/...``): a recording is of one SDK's requests, so each generation has its own."""
    from importlib.metadata import version

    major = int(version("google-genai").split(".")[0])
    return "gemini" if major >= 3 else f"gemini-genai{major}"


GEMINI = _gemini_case_name()
AWS = {"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": REPLAY_KEY, "AWS_REGION": "us-east-1"}

CASES = [
    Case("openai", "openai:gpt-4.1", ("chat_parallel.json", "chat_text.json"), {"OPENAI_API_KEY": REPLAY_KEY},
         _openai_chat),
    Case("openai-responses", "openai-responses:gpt-4.1", ("responses_parallel.json", "responses_text.json"),
         {"OPENAI_API_KEY": REPLAY_KEY}, _openai_responses),
    Case("anthropic", "anthropic:claude-sonnet-4-5", ("parallel_calls.json", "text.json"),
         {"ANTHROPIC_API_KEY": REPLAY_KEY}, _anthropic),
    Case(GEMINI, "gemini:gemini-2.5-flash", ("parallel_calls.json", "text.json"), {"GEMINI_API_KEY": REPLAY_KEY},
         _gemini),
    Case("mistral", "mistral:mistral-large-latest", ("parallel_tool_calls.json", "text.json"),
         {"MISTRAL_API_KEY": REPLAY_KEY}, _mistral),
    Case("cohere", "cohere:command-a-03-2025", ("parallel_tool_calls.json", "text.json"), {"CO_API_KEY": REPLAY_KEY},
         _cohere),
    Case("ollama", "ollama:qwen3:8b", ("parallel_calls.json", "text.json"), {}, _ollama),
    Case("bedrock", f"bedrock:{BEDROCK_MODEL}", ("converse_parallel.json", "converse_text.json"), AWS, _bedrock),
]  # fmt: skip


@contextlib.contextmanager
def network_blocked(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No name lookup and no connection can be made (a replay must not even try)."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError(f"network blocked in this test: {args[:2]!r}")

    with monkeypatch.context() as patch:
        patch.setattr(socket, "getaddrinfo", refuse)
        patch.setattr(socket.socket, "connect", refuse)
        patch.setattr(socket.socket, "connect_ex", refuse)
        yield
