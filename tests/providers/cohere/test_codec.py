"""CohereProvider: payloads checked against schemas generated from Cohere's SDK types, recorded responses parsed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentkit import ImagePart, Registry, TextPart, ToolCall, ToolResult
from agentkit.exceptions import StrictSchemaError
from agentkit.providers import InvalidToolNameError, compatibility, get_provider
from agentkit.providers.cohere import CohereDialect, CohereProvider
from tests.spec import assert_spec_valid, sample, spec_errors

from ..common import function_of, get_weather, ping, place_order, read_fixture

FIXTURES = Path(__file__).parent / "fixtures" / "codec"


def fixture(name: str) -> Any:
    return read_fixture(FIXTURES, name)


@pytest.fixture
def registry() -> Registry:
    return Registry({"get_weather": get_weather, "place_order": place_order})


@pytest.fixture
def provider() -> CohereProvider:
    return CohereProvider()


def test_get_provider_returns_cohere() -> None:
    assert isinstance(get_provider("cohere"), CohereProvider)


def test_format_tools_is_spec_valid_and_strict(provider: CohereProvider, registry: Registry) -> None:
    payload = provider.format_tools(registry)
    for entry in payload["tools"]:
        assert_spec_valid("cohere.v2.tool", entry)
    assert "tool_choice" not in payload  # auto is Cohere's default and has no value of its own
    assert payload["strict_tools"] is True

    params = function_of(payload, "place_order")["parameters"]
    assert set(params["required"]) == {"customer", "address", "items", "priority", "note", "gift"}
    assert params["properties"]["gift"]["type"] == ["boolean", "null"]
    qty = params["$defs"]["Item"]["properties"]["qty"]
    assert "minimum" not in qty
    assert "maximum" not in qty
    assert "minimum: 1" in qty["description"]
    assert "minLength" not in params["$defs"]["Address"]["properties"]["city"]


def test_a_tool_that_cannot_be_strict_turns_strict_tools_off(provider: CohereProvider, registry: Registry) -> None:
    registry.add("ping", ping)  # no properties: strict_tools needs a required field in every object
    payload = provider.format_tools(registry)
    assert "strict_tools" not in payload
    assert "null" not in json.dumps(function_of(payload, "get_weather")["parameters"])  # canonical, not nullable
    # restricting the request to strict-capable tools brings it back
    assert provider.format_tools(registry, active_tools=["get_weather"])["strict_tools"] is True
    [report] = compatibility(registry["ping"], "cohere", strict=True)
    assert report.rejected


def test_strict_false_and_forced(provider: CohereProvider, registry: Registry) -> None:
    loose = provider.format_tools(registry, strict=False)
    assert "strict_tools" not in loose
    assert function_of(loose, "place_order")["parameters"] == registry["place_order"].input_schema
    assert provider.format_tools(registry, strict=True)["strict_tools"] is True
    registry.add("ping", ping)  # no required field: strict_tools refuses it
    with pytest.raises(StrictSchemaError, match=r"'ping' is forced strict, but cohere's strict mode"):
        provider.format_tools(registry, strict=True)


def test_strict_dialect_rejects_unsupported_keywords() -> None:
    schema = {
        "type": "object",
        "properties": {
            "code": {"type": "string", "pattern": "^[A-Z]{3}$", "format": "email"},
            "n": {"not": {"type": "null"}},
        },
        "required": ["code", "n"],
    }
    result = CohereDialect().rewrite(schema, strict=True)
    code = result.schema["properties"]["code"]
    assert "pattern" not in code
    assert "format" not in code
    assert [loss.keyword for loss in result.rejected] == ["not", "type"]  # `not` alone says no type either
    assert CohereDialect().rewrite(schema, strict=None).strict is False


@pytest.mark.parametrize(
    ("choice", "expected", "tools"),
    [
        ("auto", None, ["get_weather", "place_order"]),
        ("none", "NONE", ["get_weather", "place_order"]),
        ("required", "REQUIRED", ["get_weather", "place_order"]),
        ("get_weather", "REQUIRED", ["get_weather"]),  # no specific-tool form: filter and require
    ],
)
def test_tool_choice_forms(
    provider: CohereProvider, registry: Registry, choice: str, expected: str | None, tools: list[str]
) -> None:
    payload = provider.format_tools(registry, tool_choice=choice)
    assert payload.get("tool_choice") == expected
    if expected is not None:
        assert_spec_valid("cohere.v2.tool_choice", payload["tool_choice"])
    assert [t["function"]["name"] for t in payload["tools"]] == tools


def test_invalid_samples_fail_the_spec_check() -> None:
    lowercase = sample("cohere_tool_choice_lowercase_is_invalid")
    assert spec_errors(lowercase["schema"], lowercase["payload"])
    string_data = sample("cohere_tool_message_document_data_string_docs_style")
    assert spec_errors(string_data["schema"], string_data["payload"])
    for name in ("cohere_tool", "cohere_tool_choice", "cohere_tool_message_documents", "cohere_assistant_tool_calls"):
        valid = sample(name)
        assert_spec_valid(valid["schema"], valid["payload"])


@pytest.mark.parametrize(
    ("schema", "payload"),
    [
        # Fern's forward-compatible enums keep only the documented values
        ("cohere.v2.tool_choice", "AUTO"),
        ("cohere.v2.tool_choice", None),
        # a field the SDK types as Optional may be left out, never sent as null
        ("cohere.v2.tool", {"type": "function", "function": None}),
        ("cohere.v2.assistant_message", {"role": "assistant", "content": None}),
        ("cohere.v2.tool_call", {"id": "a", "type": "function", "function": {"name": None, "arguments": "{}"}}),
        # the unions' discriminants (type, role) are required, as the API reads them
        ("cohere.v2.tool", {"function": {"name": "x", "parameters": {}}}),
        ("cohere.v2.tool_message", {"role": "tool", "tool_call_id": "a", "content": [{"text": "x"}]}),
        ("cohere.v2.tool_message", {"tool_call_id": "a", "content": "x"}),
        ("cohere.v2.tool_call", {"id": "a", "function": {}}),
        # and what the SDK itself requires
        ("cohere.v2.tool", {"type": "function", "function": {"name": "x"}}),
        ("cohere.v2.tool_message", {"role": "tool", "content": "x"}),
        ("cohere.v2.assistant_message", {"role": "user", "content": "x"}),
    ],
)
def test_the_sdk_generated_schemas_reject_what_the_api_rejects(schema: str, payload: Any) -> None:
    # each was rejected by the schemas formerly extracted from Cohere's (proprietary) OpenAPI document
    assert spec_errors(schema, payload)


def test_active_tools_filter_and_parallel_is_ignored(provider: CohereProvider, registry: Registry) -> None:
    payload = provider.format_tools(registry, active_tools=["place_order"], parallel_tool_calls=False)
    assert [t["function"]["name"] for t in payload["tools"]] == ["place_order"]
    assert "parallel_tool_calls" not in payload


# ---- results ----------------------------------------------------------------------------------------


def test_json_object_result_is_a_document(provider: CohereProvider) -> None:
    result = ToolResult(call_id="get_weather_p1t92w7gfgq7", name="get_weather", content=[TextPart('{"temp": 21}')])
    [message] = provider.format_tool_results([result])
    assert_spec_valid("cohere.v2.tool_message", message)
    assert message["tool_call_id"] == "get_weather_p1t92w7gfgq7"
    assert message["content"] == [{"type": "document", "document": {"data": {"temp": 21}}}]


def test_list_and_plain_text_results(provider: CohereProvider) -> None:
    results = [
        ToolResult(call_id="a", name="search", content=[TextPart('[{"title": "A"}, {"title": "B"}]')]),
        ToolResult(call_id="b", name="search", content=[TextPart("21 degrees")]),
        ToolResult(call_id="c", name="search", content=[TextPart("[1, 2]")]),
    ]
    docs, text, numbers = provider.format_tool_results(results)
    for message in (docs, text, numbers):
        assert_spec_valid("cohere.v2.tool_message", message)
    assert [b["document"]["data"]["title"] for b in docs["content"]] == ["A", "B"]
    assert text["content"] == [{"type": "text", "text": "21 degrees"}]
    assert numbers["content"] == [{"type": "text", "text": "[1, 2]"}]


def test_error_result_is_prefixed_text(provider: CohereProvider) -> None:
    call = ToolCall(id="get_weather_p1t92w7gfgq7", name="get_weather")
    [message] = provider.format_tool_results([ToolResult.error(call, '{"detail": "city is required"}', "tool_error")])
    assert_spec_valid("cohere.v2.tool_message", message)
    assert message["content"] == [{"type": "text", "text": 'Error: {"detail": "city is required"}'}]


def test_image_result_falls_back_to_text(provider: CohereProvider) -> None:
    result = ToolResult(
        call_id="x",
        name="chart",
        content=[ImagePart(url="https://example.com/c.png"), ImagePart(data=b"\x89PNG", media_type="image/png")],
    )
    [message] = provider.format_tool_results([result])
    assert_spec_valid("cohere.v2.tool_message", message)
    texts = [b["text"] for b in message["content"]]
    assert all(b["type"] == "text" for b in message["content"])
    assert "https://example.com/c.png" in texts[0]
    assert "image/png, 4 bytes" in texts[1]


# ---- parsing ----------------------------------------------------------------------------------------


def test_text_only_response_has_no_calls(provider: CohereProvider) -> None:
    assert provider.parse_tool_calls(fixture("response_text")) == []


def test_single_call_and_assistant_echo(provider: CohereProvider, registry: Registry) -> None:
    [call] = provider.parse_tool_calls(fixture("response_single"))
    assert (call.id, call.name) == ("get_weather_p1t92w7gfgq7", "get_weather")
    assert isinstance(call.arguments, str)
    assert call.provider_details == {"tool_plan": "I will look up the weather in Paris."}
    echo = provider.assistant_message([call], registry=registry)
    assert_spec_valid("cohere.v2.assistant_message", echo)
    assert echo["tool_plan"] == "I will look up the weather in Paris."
    assert echo["tool_calls"][0]["function"]["arguments"] == call.arguments


def test_parallel_calls(provider: CohereProvider) -> None:
    calls = provider.parse_tool_calls(fixture("response_parallel"))
    assert [c.arguments_dict()["city"] for c in calls] == ["Paris", "Tokyo"]
    assert len({c.id for c in calls}) == 2


def test_stream_events(provider: CohereProvider) -> None:
    events = fixture("stream")
    for event in events:
        if event["type"] == "tool-call-start":
            assert_spec_valid("cohere.v2.stream.tool_call_start", event)
        if event["type"] == "tool-call-delta":
            assert_spec_valid("cohere.v2.stream.tool_call_delta", event)
    stream = provider.stream()
    deltas = [d for event in events for d in stream.feed(event)]
    assert [d.index for d in deltas] == [0, 0, 1]
    assert deltas[0].arguments_delta == '{\n    "'
    assert json.loads(deltas[1].arguments_so_far) == {"city": "Paris"}
    calls = stream.tool_calls()
    assert [(c.id, c.arguments_dict()) for c in calls] == [
        ("get_weather_nsz5zm3w56q3", {"city": "Paris"}),
        ("get_weather_j0kqsde5ldnf", {"city": "Oslo"}),
    ]
    assert calls[0].provider_details == {"tool_plan": "I will search for the weather."}


def test_stream_accepts_sse_data_lines(provider: CohereProvider) -> None:
    stream = provider.stream()
    for event in fixture("stream"):
        stream.feed(f"data: {json.dumps(event)}")
    assert [c.name for c in stream.tool_calls()] == ["get_weather", "get_weather"]


# ---- names and strict round trip ----------------------------------------------------------------------


def test_dashed_key_raises_and_alias_round_trips(provider: CohereProvider) -> None:
    registry = Registry({"search-docs": get_weather})
    with pytest.raises(InvalidToolNameError) as info:
        provider.format_tools(registry)
    assert (info.value.key, info.value.vendor) == ("search-docs", "cohere")
    assert "A-Za-z_" in info.value.rule

    payload = provider.format_tools(registry, aliases=True)
    alias = payload["tools"][0]["function"]["name"]
    assert alias == "search_docs"
    response = {
        "message": {"tool_calls": [{"id": "x1", "type": "function", "function": {"name": alias, "arguments": "{}"}}]}
    }
    [call] = provider.parse_tool_calls(response, registry=registry, aliases=True)
    assert call.name == "search-docs"
    assert (
        provider.format_tools(registry, aliases=True, tool_choice="search-docs")["tools"][0]["function"]["name"]
        == alias
    )


async def test_strict_null_restores_the_python_default(provider: CohereProvider, registry: Registry) -> None:
    params = function_of(provider.format_tools(registry), "get_weather")["parameters"]
    assert "unit" in params["required"]
    [call] = provider.parse_tool_calls(fixture("response_single"), registry=registry)
    assert call.arguments_dict() == {"city": "Paris"}
    result = await registry.call(call)
    assert result.output == {"city": "Paris", "unit": "c"}
