"""MistralProvider: payloads checked against Mistral's OpenAPI-derived schemas, recorded responses parsed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from agentkit import ImagePart, Registry, TextPart, ToolCall, ToolResult
from agentkit.providers import InvalidToolNameError, get_provider
from agentkit.providers.mistral import MistralProvider
from tests.spec import assert_spec_valid, sample, spec_errors

from ..common import function_of, get_weather, ping, place_order, read_fixture

FIXTURES = Path(__file__).parent / "fixtures" / "codec"


def fixture(name: str) -> Any:
    return read_fixture(FIXTURES, name)


@pytest.fixture
def registry() -> Registry:
    return Registry({"get_weather": get_weather, "place_order": place_order, "ping": ping})


@pytest.fixture
def provider() -> MistralProvider:
    return MistralProvider()


def test_get_provider_returns_mistral() -> None:
    assert isinstance(get_provider("mistral"), MistralProvider)


def test_format_tools_is_spec_valid_and_strict_by_default(provider: MistralProvider, registry: Registry) -> None:
    payload = provider.format_tools(registry)
    assert [t["function"]["name"] for t in payload["tools"]] == ["get_weather", "place_order", "ping"]
    for entry in payload["tools"]:
        assert_spec_valid("mistral.chat.tool", entry)
    assert_spec_valid("mistral.chat.tool_choice", payload["tool_choice"])
    assert payload["tool_choice"] == "auto"
    assert "parallel_tool_calls" not in payload

    order = function_of(payload, "place_order")
    assert order["strict"] is True
    params = order["parameters"]
    assert set(params["required"]) == {"customer", "address", "items", "priority", "note", "gift"}
    assert params["additionalProperties"] is False
    assert params["properties"]["priority"]["type"] == ["string", "null"]
    assert None in params["properties"]["priority"]["enum"]
    assert "default" not in params["properties"]["gift"]
    assert '"low"' in params["properties"]["priority"]["description"]
    # nested models keep their $defs and become strict objects too
    assert params["$defs"]["Item"]["additionalProperties"] is False


def test_no_argument_tool_still_sends_parameters(provider: MistralProvider, registry: Registry) -> None:
    params = function_of(provider.format_tools(registry), "ping")["parameters"]
    assert params["type"] == "object"
    assert params["properties"] == {}
    invalid = sample("mistral_tool_no_parameters_is_invalid")
    assert spec_errors(invalid["schema"], invalid["payload"]), "the spec check must reject a tool without parameters"


def test_strict_false_sends_the_canonical_schema(provider: MistralProvider, registry: Registry) -> None:
    order = function_of(provider.format_tools(registry, strict=False), "place_order")
    assert "strict" not in order
    assert order["parameters"] == registry["place_order"].input_schema


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("auto", "auto"),
        ("none", "none"),
        ("required", "any"),
        ("get_weather", {"type": "function", "function": {"name": "get_weather"}}),
    ],
)
def test_tool_choice_forms(provider: MistralProvider, registry: Registry, choice: str, expected: Any) -> None:
    payload = provider.format_tools(registry, tool_choice=choice)
    assert payload["tool_choice"] == expected
    assert_spec_valid("mistral.chat.tool_choice", payload["tool_choice"])
    assert len(payload["tools"]) == 3  # a named choice keeps the list: Mistral has a native form for it


def test_invalid_samples_fail_the_spec_check() -> None:
    assert spec_errors("mistral.chat.tool_choice", "allowed_tools")
    assert spec_errors("mistral.chat.tool_choice", {"type": "function", "name": "get_weather"})
    for name in ("mistral_tool_choice_named", "mistral_tool_choice_any", "mistral_tool", "mistral_tool_message"):
        valid = sample(name)
        assert_spec_valid(valid["schema"], valid["payload"])


def test_active_tools_filter_the_list(provider: MistralProvider, registry: Registry) -> None:
    payload = provider.format_tools(registry, active_tools=["ping", "get_weather"], tool_choice="required")
    assert sorted(t["function"]["name"] for t in payload["tools"]) == ["get_weather", "ping"]
    assert payload["tool_choice"] == "any"


@pytest.mark.parametrize("flag", [True, False])
def test_parallel_tool_calls_flag(provider: MistralProvider, registry: Registry, flag: bool) -> None:
    payload = provider.format_tools(registry, parallel_tool_calls=flag)
    assert payload["parallel_tool_calls"] is flag


# ---- results and ids ---------------------------------------------------------------------------------

NINE = re.compile(r"^[a-zA-Z0-9]{9}$")


def test_ok_result_links_a_remapped_id(provider: MistralProvider) -> None:
    result = ToolResult(call_id="toolu_01A09q90qw90lq917835", name="get_weather", content=[TextPart('{"temp": 21}')])
    [message] = provider.format_tool_results([result])
    assert_spec_valid("mistral.chat.tool_message", message)
    assert NINE.fullmatch(message["tool_call_id"])
    assert message["tool_call_id"] == provider.wire_id("toolu_01A09q90qw90lq917835")  # deterministic
    assert message["name"] == "get_weather"
    assert message["content"] == '{"temp": 21}'


def test_mistral_shaped_ids_pass_unchanged(provider: MistralProvider) -> None:
    result = ToolResult(call_id="D681PevKs", name="get_weather", content=[TextPart("21")])
    assert provider.format_tool_results([result])[0]["tool_call_id"] == "D681PevKs"


def test_assistant_message_uses_the_same_ids(provider: MistralProvider, registry: Registry) -> None:
    calls = [
        ToolCall(id="call_abc123def456", name="get_weather", arguments={"city": "Paris"}),
        ToolCall(id="D681PevKs", name="ping", arguments="{}"),
    ]
    assistant = provider.assistant_message(calls, registry=registry)
    assert_spec_valid("mistral.chat.assistant_message", assistant)
    results = [ToolResult(call_id=c.id, name=c.name, content=[TextPart("x")]) for c in calls]
    messages = provider.format_tool_results(results)
    assert [c["id"] for c in assistant["tool_calls"]] == [m["tool_call_id"] for m in messages]
    assert all(NINE.fullmatch(c["id"]) for c in assistant["tool_calls"])
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"city": "Paris"}


def test_error_result_has_a_text_prefix(provider: MistralProvider) -> None:
    call = ToolCall(id="D681PevKs", name="get_weather", arguments="{}")
    [message] = provider.format_tool_results([ToolResult.error(call, "city is required", "invalid_arguments")])
    assert_spec_valid("mistral.chat.tool_message", message)
    assert message["content"] == "Error: city is required"


def test_image_result_falls_back_to_text_by_default(provider: MistralProvider) -> None:
    result = ToolResult(
        call_id="D681PevKs",
        name="chart",
        content=[TextPart("the chart:"), ImagePart(data=b"\x89PNG....", media_type="image/png")],
    )
    [message] = provider.format_tool_results([result])
    assert_spec_valid("mistral.chat.tool_message", message)
    assert isinstance(message["content"], str)
    assert message["content"].startswith("the chart:\n[image (image/png, 8 bytes)")
    assert "iVBOR" not in message["content"]  # no base64 dumped into the text


def test_image_result_as_chunks_when_enabled() -> None:
    provider = MistralProvider(tool_result_images=True)
    result = ToolResult(
        call_id="D681PevKs",
        name="chart",
        content=[TextPart("the chart:"), ImagePart(data=b"\x89PNG", media_type="image/png")],
    )
    [message] = provider.format_tool_results([result])
    assert_spec_valid("mistral.chat.tool_message", message)
    assert message["content"][0] == {"type": "text", "text": "the chart:"}
    assert message["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")


def test_tool_message_omits_a_name_mistral_would_reject(provider: MistralProvider) -> None:
    [message] = provider.format_tool_results([ToolResult(call_id="D681PevKs", name="search docs", content=[])])
    assert "name" not in message
    assert_spec_valid("mistral.chat.tool_message", message)


# ---- parsing ----------------------------------------------------------------------------------------


def test_text_only_response_has_no_calls(provider: MistralProvider) -> None:
    assert provider.parse_tool_calls(fixture("response_text")) == []


def test_single_call_keeps_json_text(provider: MistralProvider) -> None:
    [call] = provider.parse_tool_calls(fixture("response_single"))
    assert call.id == "D681PevKs"
    assert call.name == "get_weather"
    assert isinstance(call.arguments, str)
    assert call.arguments_dict() == {"city": "Paris", "unit": None}


def test_parallel_calls(provider: MistralProvider) -> None:
    calls = provider.parse_tool_calls(fixture("response_parallel"))
    assert [(c.id, c.arguments_dict()["city"]) for c in calls] == [("a1B2c3D4e", "Paris"), ("Z9y8X7w6V", "Tokyo")]


def test_stream_reports_deltas_and_assembles_calls(provider: MistralProvider, registry: Registry) -> None:
    stream = provider.stream(registry=registry)
    deltas = [d for chunk in fixture("stream") for d in stream.feed(chunk)]
    assert [d.arguments_delta for d in deltas] == ['{"city": ', '"Paris"}', '{"city": "Oslo"}']
    assert deltas[1].arguments_so_far == '{"city": "Paris"}'
    assert deltas[1].name == "get_weather"
    calls = stream.tool_calls()
    assert [(c.id, c.name, c.arguments_dict()) for c in calls] == [
        ("q7W3e9R1t", "get_weather", {"city": "Paris"}),  # the continuation's "null" id did not replace it
        ("m2N4b6V8c", "get_weather", {"city": "Oslo"}),
    ]


# ---- names and strict round trip ----------------------------------------------------------------------


def test_rejected_name_raises_and_alias_round_trips(provider: MistralProvider) -> None:
    registry = Registry({"search.docs": ping, "get_weather": get_weather})
    with pytest.raises(InvalidToolNameError) as info:
        provider.format_tools(registry)
    assert (info.value.key, info.value.vendor) == ("search.docs", "mistral")
    assert "a-zA-Z0-9_-" in info.value.rule

    payload = provider.format_tools(registry, aliases=True, tool_choice="search.docs")
    alias = payload["tool_choice"]["function"]["name"]
    assert alias != "search.docs"
    assert provider.name_rule.accepts(alias)
    assert alias in [t["function"]["name"] for t in payload["tools"]]
    response = {
        "choices": [{"message": {"tool_calls": [{"id": "a1B2c3D4e", "function": {"name": alias, "arguments": "{}"}}]}}]
    }
    [call] = provider.parse_tool_calls(response, registry=registry, aliases=True)
    assert call.name == "search.docs"


async def test_strict_null_restores_the_python_default(provider: MistralProvider, registry: Registry) -> None:
    params = function_of(provider.format_tools(registry), "get_weather")["parameters"]
    assert "unit" in params["required"]
    assert "null" in params["properties"]["unit"]["type"]

    [call] = provider.parse_tool_calls(fixture("response_single"), registry=registry)
    assert call.arguments_dict() == {"city": "Paris"}  # the null was dropped
    result = await registry.call(call)
    assert not result.is_error
    assert result.output == {"city": "Paris", "unit": "c"}
