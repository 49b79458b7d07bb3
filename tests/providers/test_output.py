"""Structured output on every vendor, through its official SDK against a real HTTP server on 127.0.0.1.

Per vendor: the request body's structured-output field validated against the vendor's spec, a recorded
answer (each vendor's recorded text turn, its text swapped for the JSON answer) parsed to the typed value,
and an invalid answer retried with its JSON-path errors; where native output cannot sit beside tools
(Cohere, Ollama, Gemini before 3), the output tool is sent instead and its call is the answer.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import jsonschema
import pytest
from pydantic import BaseModel

from agentkit import Agent, tool
from agentkit._vendors import VENDORS, load
from agentkit.models import Model, RequestLimits
from agentkit.output import Output
from agentkit.testing import request_payload
from tests.spec import SPECS, assert_spec_valid

from .cases import cases

HERE = Path(__file__).parent
VENDOR_NAMES = [name for name, row in VENDORS.items() if row.provider is not None]


class Weather(BaseModel):
    """The weather in one city."""

    city: str
    temperature: int
    unit: Literal["c", "f"] = "c"


@tool
def get_weather(city: str) -> int:
    """The temperature in a city.

    Args:
        city: City name.
    """
    return 21


GOOD = '{"city": "Paris", "temperature": 21, "unit": null}'  # null: the strict vendors' "use the default"
BAD = '{"city": "Paris", "temperature": "warm"}'
EXPECTED = Weather(city="Paris", temperature=21)


@pytest.fixture(autouse=True)
def aws_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for var in ("AWS_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    yield


def answer(vendor: str, text: str) -> bytes:
    """The vendor's recorded text turn, its text replaced by `text`."""
    fixture, path = cases(vendor).text_turn
    data = json.loads((HERE / fixture).read_text())
    data.pop("_source", None)
    node = data
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = text
    return json.dumps(data).encode()


def field(body: dict[str, Any], path: tuple[str, ...]) -> Any:
    for part in path:
        body = body[part]
    return body


class Recorder:
    """A real HTTP server on 127.0.0.1: answers from a queue of JSON bodies, keeps each request's body."""

    def __init__(self, *bodies: bytes) -> None:
        self.bodies = list(bodies)
        self.requests: list[dict[str, Any]] = []
        self._server: Any = None

    @property
    def url(self) -> str:
        host, port = self._server.sockets[0].getsockname()[:2]
        return f"http://{host}:{port}"

    async def __aenter__(self) -> Recorder:
        import asyncio

        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._server.close()

    async def _handle(self, reader: Any, writer: Any) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).lower()
        headers = dict(line.split(b":", 1) for line in head.split(b"\r\n")[1:] if b":" in line)
        if headers.get(b"transfer-encoding", b"").strip() == b"chunked":
            raw = b""
            while True:
                size = int((await reader.readuntil(b"\r\n")).strip(), 16)
                chunk = await reader.readexactly(size + 2)
                if not size:
                    break
                raw += chunk[:-2]
        else:
            length = int(headers.get(b"content-length", b"0"))
            raw = await reader.readexactly(length) if length else b""
        self.requests.append(json.loads(raw) if raw else {})
        body = self.bodies.pop(0)
        lines = [
            "HTTP/1.1 200 OK",
            "content-type: application/json",
            f"content-length: {len(body)}",
            "connection: close",
        ]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        await writer.drain()
        writer.close()


def built(vendor: str, url: str, model_name: str = "test-model") -> Model:
    """The vendor's model client with a client built here, pointed at `url`."""
    cls: Any = load(VENDORS[vendor].model)
    case = cases(vendor)
    options: dict[str, Any] = {
        "api_key": "test-key",
        "base_url": url + case.base_path,
        "limits": RequestLimits(request=20, max_retries=0),
    }
    model: Model = cls(model_name, **options, **case.client_options)
    return model


def check_native(vendor: str, body: dict[str, Any]) -> dict[str, Any]:
    """The native output field of `body`, checked against the vendor's spec (or its SDK's own type)."""
    path, spec = cases(vendor).native
    fragment = field(body, path)
    if spec is not None and "#" in spec:
        # the member the spec's discriminator picks (its oneOf alone cannot tell the members apart)
        name, member = spec.split("#")
        document = json.loads((SPECS / f"{name}.schema.json").read_text())
        document = {"$ref": f"#/$defs/{member}", "$defs": document["$defs"]}
        errors = [e.message for e in jsonschema.Draft202012Validator(document).iter_errors(fragment)]
        assert not errors, errors
    elif spec is not None:
        assert_spec_valid(spec, fragment)
    else:
        check = cases(vendor).native_type
        assert check is not None, f"{vendor}: no spec schema and no SDK type check for its native output field"
        check(fragment)
    return fragment


def schema_of(vendor: str, fragment: dict[str, Any]) -> dict[str, Any]:
    """The JSON Schema inside a native fragment."""
    return dict(cases(vendor).native_schema(fragment))


# ---- the request body --------------------------------------------------------------------------------


@pytest.mark.parametrize("vendor", VENDOR_NAMES)
def test_the_native_output_field_fits_the_vendor_spec(vendor: str) -> None:
    body = request_payload(Agent(model=f"{vendor}:m", output_type=Weather), "Weather in Paris?")
    schema = schema_of(vendor, check_native(vendor, body))
    assert set(schema["properties"]) == {"city", "temperature", "unit"}


@pytest.mark.parametrize("vendor", ["openai", "openai-responses", "anthropic", "bedrock", "mistral"])
def test_native_output_and_tools_in_one_request(vendor: str) -> None:
    body = request_payload(Agent(model=f"{vendor}:m", tools=[get_weather], output_type=Weather), "Weather?")
    check_native(vendor, body)
    assert "final_result" not in json.dumps(body.get("tools", body.get("toolConfig")))


def test_gemini_3_combines_native_output_with_tools_and_earlier_models_get_the_output_tool() -> None:
    agent = Agent(model="gemini:gemini-3-pro-preview", tools=[get_weather], output_type=Weather)
    check_native("gemini", request_payload(agent, "Weather?"))
    older = request_payload(Agent(model="gemini:gemini-2.5-flash", tools=[get_weather], output_type=Weather), "?")
    names = [d["name"] for d in older["tools"][0]["functionDeclarations"]]
    assert names == ["get_weather", "final_result"]
    assert older["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}  # the answer is a call
    assert "responseJsonSchema" not in older["generationConfig"]
    for declaration in older["tools"][0]["functionDeclarations"]:
        assert_spec_valid("gemini.function_declaration", declaration)


@pytest.mark.parametrize(("vendor", "spec"), [("cohere", "cohere.v2.tool"), ("ollama", "ollama.chat.tool")])
def test_beside_tools_the_output_tool_is_sent_instead(vendor: str, spec: str) -> None:
    body = request_payload(Agent(model=f"{vendor}:m", tools=[get_weather], output_type=Weather), "Weather?")
    assert cases(vendor).native[0][0] not in body
    entries = {entry["function"]["name"]: entry for entry in body["tools"]}
    assert list(entries) == ["get_weather", "final_result"]
    for entry in entries.values():
        assert_spec_valid(spec, entry)


def test_anthropic_asks_with_the_output_tool_for_a_schema_strict_cannot_express() -> None:
    class Tree(BaseModel):
        name: str
        children: list[Tree] = []

    body = request_payload(Agent(model="anthropic:m", output_type=Tree), "?")
    assert "output_config" not in body
    assert [t["name"] for t in body["tools"]] == ["final_result"]
    assert body["tool_choice"] == {"type": "any"}
    with pytest.raises(Exception, match="anthropic cannot ask for this output natively: .*recursive"):
        request_payload(Agent(model="anthropic:m", output_type=Output(Tree, mode="native")), "?")


@pytest.mark.parametrize("vendor", ["openai", "anthropic", "gemini"])
def test_prompted_mode_puts_the_schema_in_the_instructions(vendor: str) -> None:
    agent = Agent(model=f"{vendor}:m", instructions="Be brief.", output_type=Output(Weather, mode="prompted"))
    text = json.dumps(request_payload(agent, "?"))
    assert cases(vendor).native[0][0] not in json.loads(text) or vendor == "gemini"
    assert "Give your final answer as one JSON object" in text and "Be brief." in text


# ---- recorded answers through the SDK ----------------------------------------------------------------


@pytest.mark.parametrize("vendor", VENDOR_NAMES)
async def test_a_recorded_answer_comes_back_typed_through_the_sdk(vendor: str) -> None:
    async with Recorder(answer(vendor, GOOD)) as server:
        model = built(vendor, server.url)
        result = await Agent(model=model, output_type=Weather).generate("Weather in Paris?")
        await model.aclose()
    assert result.output == EXPECTED  # the strict vendors' null for `unit` read as its default
    assert result.text == GOOD
    (sent,) = server.requests
    check_native(vendor, sent)


@pytest.mark.parametrize("vendor", VENDOR_NAMES)
async def test_an_invalid_answer_is_retried_through_the_sdk(vendor: str) -> None:
    async with Recorder(answer(vendor, BAD), answer(vendor, GOOD)) as server:
        model = built(vendor, server.url)
        result = await Agent(model=model, output_type=Weather).generate("Weather in Paris?")
        await model.aclose()
    assert result.output == EXPECTED
    first, second = server.requests
    retry = json.dumps(second)
    assert "$.temperature: Input should be a valid integer" in retry and "warm" in retry
    assert BAD.replace('"', '\\"') in retry  # the invalid answer stays in the conversation it was corrected in
    check_native(vendor, second)


# ---- the output tool through the SDK (vendors whose native form cannot sit beside tools) ---------------


def _tool_turn(vendor: str) -> bytes:
    """The vendor's recorded tool-call turn, its call made a call of the output tool."""
    arguments = {"city": "Paris", "temperature": 21}
    data = json.loads((HERE / f"{vendor}/fixtures/client/tool_call.json").read_text())
    data.pop("_source", None)
    if vendor == "cohere":
        call = data["message"]["tool_calls"][0]
        call["function"] = {"name": "final_result", "arguments": json.dumps(arguments)}
    elif vendor == "ollama":
        call = data["message"]["tool_calls"][0]
        call["function"] = {"index": 0, "name": "final_result", "arguments": arguments}
    else:
        part = data["candidates"][0]["content"]["parts"][0]
        part["functionCall"] = {"id": "x7k2p9qa", "name": "final_result", "args": arguments}
    return json.dumps(data).encode()


@pytest.mark.parametrize(
    ("vendor", "model_name"), [("cohere", "command-a"), ("ollama", "qwen3:8b"), ("gemini", "gemini-2.5-flash")]
)
async def test_the_output_tool_call_is_the_answer_through_the_sdk(vendor: str, model_name: str) -> None:
    async with Recorder(_tool_turn(vendor)) as server:
        model = built(vendor, server.url, model_name)
        result = await Agent(model=model, tools=[get_weather], output_type=Weather).generate("Weather in Paris?")
        await model.aclose()
    assert result.output == EXPECTED
    (sent,) = server.requests
    assert all(name not in json.dumps(sent) for name in ("response_format", "responseJsonSchema", '"format"'))
    assert "final_result" in json.dumps(sent)


def test_the_compatibility_report_covers_the_output_schema() -> None:
    from agentkit.providers import compatibility

    rows = [r for r in compatibility(Agent(tools=[get_weather]).tools, output=Weather) if r.output_mode is not None]
    modes = {r.provider: r.output_mode for r in rows}
    assert modes == {vendor: cases(vendor).output_mode for vendor in VENDOR_NAMES}
    cohere = next(r for r in rows if r.provider == "cohere")
    assert "not native: cohere does not accept response_format together with tools" in str(cohere)
    assert not any(r.rejected for r in rows)
