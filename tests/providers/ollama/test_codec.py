"""OllamaProvider: payloads checked against the types.go transcription, recorded responses parsed."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from agentkit import ImagePart, Registry, TextPart, ToolCall, ToolResult
from agentkit.providers import InvalidToolNameError, get_provider
from agentkit.providers.ollama import OllamaProvider
from agentkit.providers.ollama._dialect import PROPERTY_KEYS, ROOT_KEYS
from tests.spec import assert_spec_valid, sample, spec_errors

from ..common import function_of, get_weather, ping, place_order, read_fixture

FIXTURES = Path(__file__).parent / "fixtures" / "codec"


def fixture(name: str) -> Any:
    return read_fixture(FIXTURES, name)


@pytest.fixture
def registry() -> Registry:
    return Registry({"get_weather": get_weather, "place_order": place_order, "ping": ping})


@pytest.fixture
def provider() -> OllamaProvider:
    return OllamaProvider()


def all_subschemas(node: Any) -> list[dict[str, Any]]:
    found = []
    if isinstance(node, dict):
        found.append(node)
        for key in ("properties",):
            for child in node.get(key, {}).values():
                found.extend(all_subschemas(child))
        for child in node.get("anyOf", []):
            found.extend(all_subschemas(child))
        if isinstance(node.get("items"), dict):
            found.extend(all_subschemas(node["items"]))
    return found


def test_get_provider_returns_ollama() -> None:
    assert isinstance(get_provider("ollama"), OllamaProvider)


def test_format_tools_keeps_only_what_ollama_decodes(provider: OllamaProvider, registry: Registry) -> None:
    payload = provider.format_tools(registry)
    assert set(payload) == {"tools"}
    for entry in payload["tools"]:
        assert_spec_valid("ollama.chat.tool", entry)
    params = function_of(payload, "place_order")["parameters"]
    assert set(params) <= ROOT_KEYS
    for node in all_subschemas(params)[1:]:
        assert set(node) <= PROPERTY_KEYS, node
    # $refs inlined: the nested model's fields are visible in place
    assert params["properties"]["address"]["properties"]["city"]["type"] == "string"
    assert params["properties"]["items"]["items"]["required"] == ["sku", "qty"]
    # constraints and defaults folded into descriptions, where the model still reads them
    qty = params["properties"]["items"]["items"]["properties"]["qty"]
    assert "minimum: 1" in qty["description"]
    assert "maximum: 100" in qty["description"]
    assert 'default: "low"' in params["properties"]["priority"]["description"]
    assert params["required"] == ["customer", "address", "items"]  # never strict: optional stays optional
    assert function_of(payload, "ping")["parameters"] == {"type": "object", "properties": {}}


def test_losses_are_reported(provider: OllamaProvider, registry: Registry) -> None:
    result = provider.schema_dialect(registry["place_order"], strict=True)
    assert result.strict is False
    changes = {(loss.keyword, loss.change) for loss in result.losses}
    assert ("minimum", "moved into the description") in changes
    assert ("additionalProperties", "dropped") in changes
    assert any(loss.keyword == "strict" for loss in result.losses)
    assert not result.rejected


def test_const_and_one_of_survive_in_kept_keywords() -> None:
    from agentkit.providers.ollama import OllamaDialect

    schema = {
        "type": "object",
        "properties": {
            "kind": {"const": "a", "title": "Kind"},
            "v": {"oneOf": [{"type": "integer"}, {"type": "string"}]},
        },
        "required": ["kind"],
    }
    out = OllamaDialect().rewrite(schema, strict=None)
    assert out.schema["properties"]["kind"] == {"enum": ["a"]}
    assert out.schema["properties"]["v"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert schema["properties"]["kind"] == {"const": "a", "title": "Kind"}  # input untouched


@pytest.mark.parametrize(
    ("choice", "tools"),
    [
        ("auto", ["get_weather", "place_order", "ping"]),
        ("required", ["get_weather", "place_order", "ping"]),  # cannot be forced: documented
        ("get_weather", ["get_weather"]),  # the closest Ollama gets: only that tool is offered
    ],
)
def test_tool_choice_forms(provider: OllamaProvider, registry: Registry, choice: str, tools: list[str]) -> None:
    payload = provider.format_tools(registry, tool_choice=choice, parallel_tool_calls=False)
    assert set(payload) == {"tools"}
    assert [t["function"]["name"] for t in payload["tools"]] == tools


def test_tool_choice_none_sends_no_tools(provider: OllamaProvider, registry: Registry) -> None:
    assert provider.format_tools(registry, tool_choice="none") == {}


def test_active_tools_filter(provider: OllamaProvider, registry: Registry) -> None:
    payload = provider.format_tools(registry, active_tools=["ping"])
    assert [t["function"]["name"] for t in payload["tools"]] == ["ping"]


def test_invalid_samples_fail_the_spec_check() -> None:
    bad = sample("ollama_arguments_as_string_is_invalid")
    assert spec_errors(bad["schema"], bad["payload"])
    assert spec_errors(
        "ollama.chat.tool", {"type": "function", "function": {"name": "", "parameters": {"type": "object"}}}
    )
    for name in ("ollama_tool", "ollama_tool_message", "ollama_assistant_tool_calls"):
        valid = sample(name)
        assert_spec_valid(valid["schema"], valid["payload"])


# ---- results ----------------------------------------------------------------------------------------


def test_ok_result(provider: OllamaProvider) -> None:
    result = ToolResult(call_id="call_x1", name="get_weather", content=[TextPart('{"temp": 21}')])
    [message] = provider.format_tool_results([result])
    assert_spec_valid("ollama.chat.message", message)
    assert message == {"role": "tool", "tool_name": "get_weather", "tool_call_id": "call_x1", "content": '{"temp": 21}'}


def test_error_result(provider: OllamaProvider) -> None:
    call = ToolCall(id="call_x1", name="get_weather")
    [message] = provider.format_tool_results([ToolResult.error(call, "city is required", "invalid_arguments")])
    assert_spec_valid("ollama.chat.message", message)
    assert message["content"] == "Error: city is required"


def test_image_result(provider: OllamaProvider) -> None:
    result = ToolResult(
        call_id="call_x1",
        name="chart",
        content=[TextPart("chart"), ImagePart(data=b"\x89PNG"), ImagePart(url="https://example.com/c.png")],
    )
    [message] = provider.format_tool_results([result])
    assert_spec_valid("ollama.chat.message", message)
    assert [base64.b64decode(i) for i in message["images"]] == [b"\x89PNG"]
    assert message["content"].startswith("chart\n[image: https://example.com/c.png")


# ---- parsing ----------------------------------------------------------------------------------------


def test_text_only_response_has_no_calls(provider: OllamaProvider) -> None:
    assert provider.parse_tool_calls(fixture("response_text")) == []


def test_single_call_keeps_the_object(provider: OllamaProvider) -> None:
    response = fixture("response_single")
    assert_spec_valid("ollama.chat.message", response["message"])
    [call] = provider.parse_tool_calls(response)
    assert call.id == "call_k3x9a1bq"
    assert call.arguments == {"city": "Paris", "unit": None}


def test_parallel_calls_without_ids(provider: OllamaProvider) -> None:
    calls = provider.parse_tool_calls(fixture("response_parallel"))
    assert [(c.id, c.arguments_dict()["city"]) for c in calls] == [("call_0", "Paris"), ("call_1", "Tokyo")]


def test_stream_gathers_whole_calls(provider: OllamaProvider) -> None:
    stream = provider.stream()
    chunks = fixture("stream")
    deltas = [d for chunk in chunks for d in stream.feed(json.dumps(chunk))]  # NDJSON lines
    assert [json.loads(d.arguments_delta) for d in deltas] == [{"city": "Paris"}, {"city": "Oslo", "unit": "c"}]
    calls = stream.tool_calls()
    assert [(c.id, c.arguments) for c in calls] == [
        ("call_a1b2c3d4", {"city": "Paris"}),
        ("call_e5f6g7h8", {"city": "Oslo", "unit": "c"}),
    ]


def test_stream_without_indexes_keeps_every_call(provider: OllamaProvider) -> None:
    stream = provider.stream()
    for city in ("Paris", "Oslo"):
        stream.feed({"message": {"tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": city}}}]}})
    assert [c.arguments_dict()["city"] for c in stream.tool_calls()] == ["Paris", "Oslo"]


def test_assistant_message_round_trip(provider: OllamaProvider, registry: Registry) -> None:
    calls = provider.parse_tool_calls(fixture("response_parallel"), registry=registry)
    message = provider.assistant_message(calls, registry=registry)
    assert_spec_valid("ollama.chat.message", message)
    assert provider.parse_tool_calls({"message": message}) == calls


# ---- names and defaults -----------------------------------------------------------------------------


def test_only_unusable_names_are_aliased(provider: OllamaProvider) -> None:
    registry = Registry({"search-docs.v2": ping, "bad\nname": ping})
    with pytest.raises(InvalidToolNameError) as info:
        provider.format_tools(registry)
    assert (info.value.key, info.value.vendor, info.value.rule) == ("bad\nname", "ollama", "^.+$")
    payload = provider.format_tools(registry, aliases=True)
    names = [t["function"]["name"] for t in payload["tools"]]
    assert names[0] == "search-docs.v2"  # no server-side rule: sent as it is
    assert names[1] == "bad_name"
    response = {"message": {"tool_calls": [{"function": {"name": "bad_name", "arguments": {}}}]}}
    assert provider.parse_tool_calls(response, registry=registry, aliases=True)[0].name == "bad\nname"


async def test_null_restores_the_python_default(provider: OllamaProvider, registry: Registry) -> None:
    [call] = provider.parse_tool_calls(fixture("response_single"), registry=registry)
    assert call.arguments == {"city": "Paris"}
    result = await registry.call(call)
    assert result.output == {"city": "Paris", "unit": "c"}


# ---- native structured output: what Ollama's format grammar refuses (issue 17 §5.2) ---------------------


def _output_definition(target: Any) -> Any:
    from agentkit._output import OutputSchema

    return OutputSchema(target).definition


def test_an_untyped_node_in_format_goes_to_the_output_tool_reported() -> None:
    """Ollama's server answers 500 "invalid JSON schema in format" for ``Any`` fields; compatibility said ok."""
    from pydantic import BaseModel, Field

    from agentkit.exceptions import AgentSetupError
    from agentkit.providers import compatibility

    class Report(BaseModel):
        title: str
        extra: Any = Field(description="anything else")

    class Plain(BaseModel):
        title: str
        tags: list[str]

    provider = OllamaProvider()
    definition = _output_definition(Report)
    [loss] = provider.output_schema(definition).rejected
    assert loss.path == "/properties/extra" and "untyped" in loss.change
    plan = provider.output_plan(definition, mode="auto")
    assert plan.mode == "tool" and plan.reason is not None and "/properties/extra" in plan.reason
    with pytest.raises(AgentSetupError, match="cannot ask for this output natively.*properties/extra"):
        provider.output_plan(definition, mode="native")
    [row] = compatibility(Registry(), provider, output=Report)
    assert row.output_mode == "tool" and "untyped" in str(row)
    # a schema whose every node says what it is stays native, and is sent as it is
    plain = _output_definition(Plain)
    assert provider.output_plan(plain, mode="auto").mode == "native"
    assert provider.format_output(plain) == {"format": plain.input_schema}
