"""Bedrock Converse provider and dialect, checked against the botocore service model's JSON schemas.

boto3/botocore are not project dependencies and are not used here: payloads are validated against
``tests/data/specs/jsonschema/bedrock.*`` (converted from the service model).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from agentkit import Registry, tool
from agentkit.exceptions import StrictSchemaError, ToolChoiceError
from agentkit.messages import ImagePart, TextPart, ToolCall, ToolResult
from agentkit.providers import InvalidToolNameError, compatibility, get_provider
from agentkit.providers.bedrock import BedrockDialect
from agentkit.providers.bedrock._codec import BEDROCK_ID_RULE, BedrockProvider
from tests.spec import assert_spec_valid, sample, spec_errors
from tests.zoo import ZOO

from ..claude_common import make_registry
from ..common import PNG, read_fixture

FIXTURES = Path(__file__).parent / "fixtures" / "codec"
CONFIG, MESSAGE, REQUEST = "bedrock.converse.tool_configuration", "bedrock.converse.message", "bedrock.converse.request"
RESULT, EVENT = "bedrock.converse.tool_result_block", "bedrock.converse_stream.event"


def fixture(name: str) -> Any:
    return read_fixture(FIXTURES, name, drop_source=True)


@pytest.fixture
def provider() -> BedrockProvider:
    return BedrockProvider()


@pytest.fixture
def registry() -> Registry:
    return make_registry()


def specs(payload: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["toolSpec"]["name"]: entry["toolSpec"] for entry in payload["toolConfig"]["tools"]}


def assert_request_valid(payload: dict[str, Any], messages: list[dict[str, Any]] | None = None) -> None:
    assert_spec_valid(CONFIG, payload["toolConfig"])
    request = {"messages": messages or [{"role": "user", "content": [{"text": "hi"}]}], **payload}
    assert_spec_valid(REQUEST, request)


# ---- format_tools --------------------------------------------------------------------------------------


def test_get_provider_returns_this_class() -> None:
    assert isinstance(get_provider("bedrock"), BedrockProvider)


def test_tool_config_is_spec_valid_and_not_strict_by_default(provider: BedrockProvider, registry: Registry) -> None:
    payload = provider.format_tools(registry)
    assert list(payload) == ["toolConfig"]
    assert_request_valid(payload)
    tools = specs(payload)
    assert list(tools) == ["get_weather", "place_order", "show_chart"]
    assert tools["get_weather"]["description"] == "Current weather for a city."
    # strict is opt-in on Bedrock (only some models support it): the canonical schema goes out
    assert all("strict" not in spec for spec in tools.values())
    assert tools["place_order"]["inputSchema"]["json"] == registry["place_order"].input_schema
    assert "toolChoice" not in payload["toolConfig"]  # auto is the default


def test_strict_makes_optional_params_required_and_nullable(provider: BedrockProvider, registry: Registry) -> None:
    payload = provider.format_tools(registry, strict=True)
    assert_request_valid(payload)
    spec = specs(payload)["place_order"]
    assert spec["strict"] is True
    schema = spec["inputSchema"]["json"]
    assert set(schema["required"]) == {"address", "items", "priority", "note"}
    assert schema["properties"]["priority"]["type"] == ["string", "null"]
    assert schema["additionalProperties"] is False and schema["$defs"]["Item"]["additionalProperties"] is False
    assert "minimum: 1" in schema["$defs"]["Item"]["properties"]["qty"]["description"]


async def test_null_means_default_end_to_end(provider: BedrockProvider, registry: Registry) -> None:
    response = fixture("converse_single_call")
    response["output"]["message"]["content"][1]["toolUse"]["input"] = {"city": "Oslo", "unit": None}
    [call] = provider.parse_tool_calls(response, registry=registry)
    assert call.arguments == {"city": "Oslo"}
    result = await registry.call(call)
    assert result.output == {"city": "Oslo", "unit": "c"}


def test_tool_strict_setting_is_respected(provider: BedrockProvider) -> None:
    @tool(strict=True)
    def lookup(key: str, fuzzy: bool = False) -> str:
        """Look a key up."""
        return key

    [entry] = provider.format_tools(Registry([lookup]))["toolConfig"]["tools"]
    assert entry["toolSpec"]["strict"] is True
    assert entry["toolSpec"]["inputSchema"]["json"]["required"] == ["key", "fuzzy"]


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("auto", None),
        ("required", {"any": {}}),
        ("get_weather", {"tool": {"name": "get_weather"}}),
        ("none", None),  # no Converse form; toolConfig must stay (history may hold tool blocks)
    ],
)
@pytest.mark.parametrize("parallel", [None, False])
def test_tool_choice_forms(
    provider: BedrockProvider, registry: Registry, choice: str, expected: dict[str, Any] | None, parallel: bool | None
) -> None:
    payload = provider.format_tools(registry, tool_choice=choice, parallel_tool_calls=parallel)
    assert payload["toolConfig"].get("toolChoice") == expected
    assert len(payload["toolConfig"]["tools"]) == len(registry)
    assert_request_valid(payload)


def test_none_keeps_tool_config_for_a_history_with_tool_blocks(provider: BedrockProvider, registry: Registry) -> None:
    payload = provider.format_tools(registry, tool_choice="none")
    history = [
        {"role": "user", "content": [{"text": "Weather in Paris?"}]},
        fixture("converse_single_call")["output"]["message"],
        *provider.format_tool_results([ToolResult("tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "get_weather", [TextPart("9C")])]),
    ]
    assert payload["toolConfig"]["tools"]  # Converse refuses tool blocks without toolConfig (WIRE-FORMATS §7d)
    assert_request_valid(payload, history)


def test_active_tools_filter_the_list(provider: BedrockProvider, registry: Registry) -> None:
    payload = provider.format_tools(registry, active_tools=["show_chart", "get_weather"], tool_choice="required")
    assert list(specs(payload)) == ["get_weather", "show_chart"]
    assert payload["toolConfig"]["toolChoice"] == {"any": {}}
    assert_request_valid(payload)
    with pytest.raises(ToolChoiceError, match="no tool could be called"):
        provider.format_tools(registry, active_tools=[], tool_choice="required")
    nothing = provider.format_tools(registry, active_tools=[])
    assert len(nothing["toolConfig"]["tools"]) == len(registry) and "toolChoice" not in nothing["toolConfig"]
    assert_request_valid(nothing)


def test_empty_registry_sends_nothing(provider: BedrockProvider) -> None:
    assert provider.format_tools(Registry()) == {}


@pytest.mark.parametrize("name", ["bedrock_tool_config_none_choice_is_invalid", "bedrock_tool_config_name_too_long"])
def test_the_spec_check_bites(name: str) -> None:
    case = sample(name)
    assert spec_errors(case["schema"], case["payload"]), f"{name} should be invalid"
    with pytest.raises(AssertionError):
        assert_spec_valid(case["schema"], case["payload"])


@pytest.mark.parametrize(
    "name",
    [
        "bedrock_tool_config",
        "bedrock_tool_result_message",
        "bedrock_tool_result_json_and_image",
        "bedrock_stream_tool_start",
    ],
)
def test_valid_samples_pass(name: str) -> None:
    case = sample(name)
    assert_spec_valid(case["schema"], case["payload"])


@pytest.mark.parametrize("strict", [None, True, False])
def test_zoo_definitions_are_spec_valid(provider: BedrockProvider, strict: bool | None) -> None:
    registry = Registry(ZOO)
    if strict is True:  # forced strict: the tools Claude's strict mode refuses raise, the others are sent
        refused = [r.key for r in compatibility(registry, "bedrock", strict=True) if r.rejected]
        assert refused
        for key in refused:
            with pytest.raises(StrictSchemaError, match=key):
                provider.format_tools(Registry({key: registry[key]}), strict=True)
        registry = Registry([item for item in ZOO if item.id not in refused])
    payload = provider.format_tools(registry, strict=strict)
    assert_request_valid(payload)
    report = compatibility(registry, "bedrock", strict=strict)
    assert all(r.strict is (strict is True) for r in report)


# ---- tool results --------------------------------------------------------------------------------------


async def test_results_ok_error_and_image_in_one_user_message(provider: BedrockProvider, registry: Registry) -> None:
    calls = [
        ToolCall("tooluse_1", "get_weather", {"city": "Paris"}),
        ToolCall("tooluse_2", "get_weather", {"town": "Paris"}),  # invalid arguments
        ToolCall("tooluse_3", "show_chart", {"title": "sales"}),
    ]
    results = await registry.call_many(calls)
    messages = provider.format_tool_results(results)
    assert len(messages) == 1
    assert_spec_valid(MESSAGE, messages[0])
    ok, error, chart = (block["toolResult"] for block in messages[0]["content"])
    for block in (ok, error, chart):
        assert_spec_valid(RESULT, block)
    assert [b["toolUseId"] for b in (ok, error, chart)] == ["tooluse_1", "tooluse_2", "tooluse_3"]
    assert "status" not in ok and json.loads(ok["content"][0]["text"]) == {"city": "Paris", "unit": "c"}
    assert error["status"] == "error" and error["content"][0]["text"].startswith("Error: ")
    assert chart["content"] == [
        {"text": "chart: sales"},
        {"image": {"format": "png", "source": {"bytes": base64.b64encode(PNG).decode()}}},
    ]


def test_an_error_result_is_never_empty(provider: BedrockProvider) -> None:
    failed = ToolResult("tooluse_1", "x", [], is_error=True, error_kind="exception")
    [message] = provider.format_tool_results([failed])
    block = message["content"][0]["toolResult"]
    assert block["content"] and block["content"][0]["text"].startswith("Error: ")
    assert_spec_valid(RESULT, block)


@pytest.mark.parametrize(
    ("part", "expected"),
    [
        (
            ImagePart(url="s3://bucket/chart.jpg", media_type="image/jpeg"),
            {"image": {"format": "jpeg", "source": {"s3Location": {"uri": "s3://bucket/chart.jpg"}}}},
        ),
        (
            ImagePart(url="data:image/webp;base64,UklGRg=="),
            {"image": {"format": "webp", "source": {"bytes": "UklGRg=="}}},
        ),
    ],
)
def test_image_sources(provider: BedrockProvider, part: ImagePart, expected: dict[str, Any]) -> None:
    [message] = provider.format_tool_results([ToolResult("tooluse_1", "show_chart", [part])])
    block = message["content"][0]["toolResult"]
    assert_spec_valid(RESULT, block)
    assert block["content"] == [expected]


@pytest.mark.parametrize(
    "part", [ImagePart(url="https://example.com/a.png"), ImagePart(data=b"<svg/>", media_type="image/svg+xml")]
)
def test_images_bedrock_cannot_take_become_a_note(provider: BedrockProvider, part: ImagePart) -> None:
    [message] = provider.format_tool_results([ToolResult("tooluse_1", "show_chart", [part])])
    block = message["content"][0]["toolResult"]
    assert_spec_valid(RESULT, block)
    [note] = block["content"]
    assert "omitted" in note["text"]


def test_foreign_ids_are_remapped_deterministically(provider: BedrockProvider) -> None:
    foreign = "call_" + "x" * 70 + "|fc_1"  # too long, and with a character Bedrock refuses
    [message] = provider.format_tool_results([ToolResult(foreign, "get_weather", [TextPart("sunny")])])
    block = message["content"][0]["toolResult"]
    assert_spec_valid(RESULT, block)
    assert BEDROCK_ID_RULE.accepts(block["toolUseId"]) and len(block["toolUseId"]) <= 64
    assert block["toolUseId"] == provider.wire_id(foreign)
    assert provider.wire_id("tooluse_a.b:c-1") == "tooluse_a.b:c-1"  # dots and colons are fine here


# ---- parsing ---------------------------------------------------------------------------------------------


def test_parse_text_only(provider: BedrockProvider) -> None:
    response = fixture("converse_text_only")
    assert_spec_valid(MESSAGE, response["output"]["message"])
    assert provider.parse_tool_calls(response) == []


def test_parse_single_call(provider: BedrockProvider, registry: Registry) -> None:
    response = fixture("converse_single_call")
    assert_spec_valid(MESSAGE, response["output"]["message"])
    assert_spec_valid("bedrock.converse.tool_use_block", response["output"]["message"]["content"][1]["toolUse"])
    [call] = provider.parse_tool_calls(response, registry=registry)
    assert call == ToolCall("tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "get_weather", {"city": "Seattle", "unit": "f"})
    # a bare message (as replayed in history) parses the same
    assert provider.parse_tool_calls(response["output"]["message"]) == [call]


async def test_parse_parallel_calls(provider: BedrockProvider, registry: Registry) -> None:
    response = fixture("converse_parallel_calls")
    assert_spec_valid(MESSAGE, response["output"]["message"])
    calls = provider.parse_tool_calls(response, registry=registry)
    assert [(c.id, c.name) for c in calls] == [
        ("tooluse_aaaa1111", "get_weather"),
        ("tooluse_bbbb2222", "get_weather"),
        ("tooluse_cccc3333", "place_order"),
    ]
    results = await registry.call_many(calls)
    assert [r.is_error for r in results] == [False, False, False]
    assert results[2].output == "1 line(s) to Paris, low"


def test_server_tool_uses_are_not_ours(provider: BedrockProvider) -> None:
    content = [{"toolUse": {"toolUseId": "srv_1", "name": "web_search", "input": {}, "type": "server_tool_use"}}]
    assert provider.parse_tool_calls({"role": "assistant", "content": content}) == []


def test_stream_reports_deltas_and_assembles_calls(provider: BedrockProvider, registry: Registry) -> None:
    events = fixture("converse_stream")["events"]
    for event in events:
        assert_spec_valid(EVENT, event)
    accumulator = provider.stream(registry=registry)
    deltas = [d for event in events for d in accumulator.feed(event)]
    assert [(d.index, d.id, d.arguments_delta) for d in deltas] == [
        (0, "tooluse_stream01", '{"city": "Pa'),
        (0, "tooluse_stream01", 'ris", "unit": "c"}'),
        (1, "tooluse_stream02", '{"city": "Berlin"}'),
    ]
    assert deltas[1].arguments_so_far == '{"city": "Paris", "unit": "c"}' and deltas[1].name == "get_weather"
    assert accumulator.tool_calls() == [
        ToolCall("tooluse_stream01", "get_weather", {"city": "Paris", "unit": "c"}),
        ToolCall("tooluse_stream02", "get_weather", {"city": "Berlin"}),
    ]


def test_stream_call_without_arguments(provider: BedrockProvider) -> None:
    accumulator = provider.stream()
    start = {"contentBlockStart": {"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "t0", "name": "now"}}}}
    accumulator.feed(start)
    accumulator.feed({"contentBlockStop": {"contentBlockIndex": 0}})
    assert accumulator.tool_calls() == [ToolCall("t0", "now", {})]


# ---- names and aliases --------------------------------------------------------------------------------------


def dotted_registry() -> Registry:
    @tool
    def weather(city: str) -> str:
        """Weather."""
        return city

    return Registry({"weather.get": weather})


def test_rejected_key_raises_with_key_vendor_rule(provider: BedrockProvider) -> None:
    with pytest.raises(InvalidToolNameError) as excinfo:
        provider.format_tools(dotted_registry())
    assert (excinfo.value.key, excinfo.value.vendor, excinfo.value.rule) == (
        "weather.get",
        "bedrock",
        r"^[a-zA-Z0-9_-]{1,64}$",
    )


def test_aliases_are_sent_and_mapped_back(provider: BedrockProvider) -> None:
    registry = dotted_registry()
    payload = provider.format_tools(registry, aliases=True, tool_choice="weather.get")
    [alias] = specs(payload)
    assert alias != "weather.get" and payload["toolConfig"]["toolChoice"] == {"tool": {"name": alias}}
    assert_request_valid(payload)
    message = {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": alias, "input": {}}}]}
    [call] = provider.parse_tool_calls(message, registry=registry, aliases=True)
    assert call.name == "weather.get"
    accumulator = provider.stream(registry=registry, aliases=True)
    start = {"contentBlockStart": {"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "t1", "name": alias}}}}
    accumulator.feed(start)
    [delta] = accumulator.feed({"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"toolUse": {"input": "{}"}}}})
    assert delta.name == "weather.get"


# ---- the dialect -------------------------------------------------------------------------------------------


def test_dialect_strict_only_when_forced(registry: Registry) -> None:
    dialect = BedrockDialect()
    schema = registry["place_order"].input_schema
    assert dialect.rewrite(schema, strict=None) == dialect.rewrite(schema, strict=False)
    assert not dialect.rewrite(schema, strict=None).strict
    assert dialect.rewrite(schema, strict=True).strict


def test_dialect_records_what_claude_strict_refuses() -> None:
    recursive = {
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/N"}},
        "required": ["root"],
        "$defs": {"N": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/N"}}}}},
    }
    result = BedrockDialect().rewrite(recursive, strict=True)
    assert result.strict and result.rejected
    assert BedrockDialect().rewrite({"properties": {}}, strict=False).schema == {"type": "object", "properties": {}}
