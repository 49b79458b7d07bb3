"""Anthropic Messages provider and dialect, checked against the SDK-derived spec schemas and the SDK itself."""

from __future__ import annotations

import base64
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from agentkit import Registry, Tool, tool
from agentkit.exceptions import StrictSchemaError, ToolChoiceError
from agentkit.messages import ImagePart, TextPart, ToolCall, ToolResult
from agentkit.providers import InvalidToolNameError, compatibility, get_provider
from agentkit.providers.anthropic._codec import ANTHROPIC_ID_RULE, AnthropicProvider
from agentkit.providers.anthropic._dialect import AnthropicDialect, strict_budget_counts
from tests.spec import CORPUS, assert_spec_valid, sample, spec_errors
from tests.zoo import ZOO

from ..claude_common import make_registry as make_claude_registry
from ..common import PNG, httpx_module, lint_module, read_fixture

FIXTURES = Path(__file__).parent / "fixtures" / "codec"
TOOL, CHOICE, RESULT = (
    "anthropic.messages.tool",
    "anthropic.messages.tool_choice",
    "anthropic.messages.tool_result_block",
)


def strict_lint_errors(schema: dict[str, Any]) -> list[str]:
    """The shared linter's Anthropic strict-mode errors for an input schema."""
    return [f"{p}: {m}" for severity, p, m in lint_module().lint_anthropic_strict(schema) if severity == "error"]


def fixture(name: str) -> Any:
    return read_fixture(FIXTURES, name, drop_source=True)


def assert_payload_valid(payload: dict[str, Any]) -> None:
    for entry in payload["tools"]:
        assert_spec_valid(TOOL, entry)
    assert_spec_valid(CHOICE, payload["tool_choice"])


# ---- a realistic registry ----------------------------------------------------------------------------


class Node(BaseModel):
    """A tree node."""

    name: str
    children: list[Node] = []


def make_registry() -> Registry:
    registry = make_claude_registry()  # get_weather, place_order, show_chart

    @registry.tool
    def count_nodes(root: Node) -> int:
        """Count the nodes of a tree."""
        return 1 + sum(count_nodes(c) for c in root.children)

    return registry


@pytest.fixture
def provider() -> AnthropicProvider:
    return AnthropicProvider()


@pytest.fixture
def registry() -> Registry:
    return make_registry()


def by_name(payload: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["name"]: entry for entry in payload["tools"]}


# ---- format_tools --------------------------------------------------------------------------------------


def test_get_provider_returns_this_class() -> None:
    assert isinstance(get_provider("anthropic"), AnthropicProvider)


def test_tools_are_spec_valid_and_strict_where_possible(provider: AnthropicProvider, registry: Registry) -> None:
    payload = provider.format_tools(registry)
    assert_payload_valid(payload)
    assert payload["tool_choice"] == {"type": "auto"}
    tools = by_name(payload)
    assert list(tools) == ["get_weather", "place_order", "show_chart", "count_nodes"]
    assert tools["get_weather"]["description"] == "Current weather for a city."
    for name in ("get_weather", "place_order", "show_chart"):
        assert tools[name]["strict"] is True
        assert strict_lint_errors(tools[name]["input_schema"]) == []
    # recursive: Anthropic strict refuses it, so strict=None sends it non-strict and unchanged
    assert "strict" not in tools["count_nodes"]
    assert tools["count_nodes"]["input_schema"] == registry["count_nodes"].input_schema


def test_strict_makes_optional_params_required_and_nullable(provider: AnthropicProvider, registry: Registry) -> None:
    schema = by_name(provider.format_tools(registry))["place_order"]["input_schema"]
    assert set(schema["required"]) == {"address", "items", "priority", "note"}
    assert schema["properties"]["priority"]["type"] == ["string", "null"]
    assert None in schema["properties"]["priority"]["enum"]
    assert "default" not in schema["properties"]["priority"]
    assert '"low"' in schema["properties"]["priority"]["description"]  # the default, for the model to read
    item = schema["$defs"]["Item"]
    assert item["additionalProperties"] is False and set(item["required"]) == {"sku", "qty"}
    assert "minimum" not in item["properties"]["qty"] and "maximum" not in item["properties"]["qty"]
    assert "minimum: 1" in item["properties"]["qty"]["description"]
    assert "minLength: 3" in item["properties"]["sku"]["description"]
    assert schema["$defs"]["Address"]["additionalProperties"] is False


def test_strict_false_sends_the_canonical_schema(provider: AnthropicProvider, registry: Registry) -> None:
    tools = by_name(provider.format_tools(registry, strict=False))
    assert all("strict" not in entry for entry in tools.values())
    assert tools["place_order"]["input_schema"] == registry["place_order"].input_schema


def test_strict_true_is_forced_and_rejections_are_reported(provider: AnthropicProvider, registry: Registry) -> None:
    with pytest.raises(StrictSchemaError, match=r"(?s)'count_nodes' is forced strict.*recursive") as raised:
        provider.format_tools(registry, strict=True)  # a clear error, not an HTTP 400 from the vendor
    assert raised.value.key == "count_nodes" and raised.value.vendor == "anthropic"
    payload = provider.format_tools(Registry({k: v for k, v in registry.items() if k != "count_nodes"}), strict=True)
    assert all(entry["strict"] is True for entry in payload["tools"])
    report = {r.key: r for r in compatibility(registry, "anthropic", strict=True)}
    assert report["count_nodes"].rejected and not report["place_order"].rejected
    loose = {r.key: r for r in compatibility(registry, "anthropic")}
    assert not loose["count_nodes"].rejected and not loose["count_nodes"].strict
    assert any("sent without strict" in str(loss) for loss in loose["count_nodes"].losses)


async def test_null_means_default_end_to_end(provider: AnthropicProvider, registry: Registry) -> None:
    response = fixture("single_call")
    response["content"][1]["input"] = {"city": "Oslo", "unit": None}  # what strict lets the model send
    [call] = provider.parse_tool_calls(response, registry=registry)
    assert call.arguments == {"city": "Oslo"}
    result = await registry.call(call)
    assert not result.is_error and result.output == {"city": "Oslo", "unit": "c"}


@pytest.mark.parametrize(
    ("choice", "parallel", "expected"),
    [
        ("auto", None, {"type": "auto"}),
        ("auto", False, {"type": "auto", "disable_parallel_tool_use": True}),
        ("none", None, {"type": "none"}),
        ("none", False, {"type": "none"}),  # none takes no parallel flag
        ("required", None, {"type": "any"}),
        ("required", False, {"type": "any", "disable_parallel_tool_use": True}),
        ("get_weather", None, {"type": "tool", "name": "get_weather"}),
        ("get_weather", False, {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": True}),
        ("auto", True, {"type": "auto"}),
    ],
)
def test_tool_choice_forms(
    provider: AnthropicProvider, registry: Registry, choice: str, parallel: bool | None, expected: dict[str, Any]
) -> None:
    payload = provider.format_tools(registry, tool_choice=choice, parallel_tool_calls=parallel)
    assert payload["tool_choice"] == expected
    assert_payload_valid(payload)
    assert len(payload["tools"]) == len(registry)  # the choice never changes the list


def test_active_tools_filter_the_list(provider: AnthropicProvider, registry: Registry) -> None:
    payload = provider.format_tools(registry, active_tools=["place_order", "get_weather"], tool_choice="required")
    assert [t["name"] for t in payload["tools"]] == ["get_weather", "place_order"]  # registry order
    assert payload["tool_choice"] == {"type": "any"}
    assert_payload_valid(payload)


def test_no_active_tools_keeps_the_list_and_forbids_calls(provider: AnthropicProvider, registry: Registry) -> None:
    payload = provider.format_tools(registry, active_tools=[])
    assert len(payload["tools"]) == len(registry) and payload["tool_choice"] == {"type": "none"}
    assert_payload_valid(payload)
    with pytest.raises(ToolChoiceError, match="no tool could be called"):  # as the agent says
        provider.format_tools(registry, active_tools=[], tool_choice="required")


def test_empty_registry_sends_nothing(provider: AnthropicProvider) -> None:
    assert provider.format_tools(Registry()) == {}


@pytest.mark.parametrize(
    "name",
    [
        "anthropic_tool_choice_required_is_invalid",
        "anthropic_tool_bad_name",
        "anthropic_tool_typo_key",
        "anthropic_tool_result_bad_id",
    ],
)
def test_the_spec_check_bites(name: str) -> None:
    case = sample(name)
    assert spec_errors(case["schema"], case["payload"]), f"{name} should be invalid"
    with pytest.raises(AssertionError):
        assert_spec_valid(case["schema"], case["payload"])


@pytest.mark.parametrize("name", ["anthropic_tool", "anthropic_tool_choice_tool", "anthropic_tool_result_image"])
def test_valid_samples_pass(name: str) -> None:
    case = sample(name)
    assert_spec_valid(case["schema"], case["payload"])


# ---- tool results --------------------------------------------------------------------------------------


async def test_results_ok_error_and_image_in_one_user_message(provider: AnthropicProvider, registry: Registry) -> None:
    calls = [
        ToolCall("toolu_01", "get_weather", {"city": "Paris"}),
        ToolCall("toolu_02", "get_weather", {"town": "Paris"}),  # invalid arguments
        ToolCall("toolu_03", "show_chart", {"title": "sales"}),
    ]
    results = await registry.call_many(calls)
    messages = provider.format_tool_results(results)
    assert len(messages) == 1 and messages[0]["role"] == "user"
    blocks = messages[0]["content"]
    for block in blocks:
        assert_spec_valid(RESULT, block)
    assert [b["tool_use_id"] for b in blocks] == ["toolu_01", "toolu_02", "toolu_03"]
    assert json.loads(blocks[0]["content"]) == {"city": "Paris", "unit": "c"} and "is_error" not in blocks[0]
    assert blocks[1]["is_error"] is True and "city" in blocks[1]["content"]
    text, image = blocks[2]["content"]
    assert text == {"type": "text", "text": "chart: sales"}
    assert image["source"] == {"type": "base64", "media_type": "image/png", "data": base64.b64encode(PNG).decode()}


@pytest.mark.parametrize(
    ("part", "source"),
    [
        (ImagePart(url="https://example.com/a.png"), {"type": "url", "url": "https://example.com/a.png"}),
        (
            ImagePart(url="data:image/jpeg;base64,/9j/4AAQ"),
            {"type": "base64", "media_type": "image/jpeg", "data": "/9j/4AAQ"},
        ),
    ],
)
def test_image_sources(provider: AnthropicProvider, part: ImagePart, source: dict[str, Any]) -> None:
    [message] = provider.format_tool_results([ToolResult("toolu_1", "show_chart", [part])])
    [block] = message["content"]
    assert_spec_valid(RESULT, block)
    assert block["content"] == [{"type": "image", "source": source}]


def test_unsupported_image_type_becomes_a_note(provider: AnthropicProvider) -> None:
    part = ImagePart(data=b"<svg/>", media_type="image/svg+xml")
    [message] = provider.format_tool_results([ToolResult("toolu_1", "show_chart", [part])])
    [block] = message["content"]
    assert_spec_valid(RESULT, block)
    assert "image/svg+xml" in block["content"] and "omitted" in block["content"]


def test_foreign_ids_are_remapped_deterministically(provider: AnthropicProvider) -> None:
    foreign = "functions.get_weather:0"  # an id another vendor produced
    results = [ToolResult(foreign, "get_weather", [TextPart("sunny")]), ToolResult("toolu_ok", "x", [])]
    [message] = provider.format_tool_results(results)
    first, second = message["content"]
    assert_spec_valid(RESULT, first)
    assert first["tool_use_id"] != foreign and ANTHROPIC_ID_RULE.accepts(first["tool_use_id"])
    assert first["tool_use_id"] == provider.wire_id(foreign)  # same mapping whenever history is re-sent
    assert second == {"type": "tool_result", "tool_use_id": "toolu_ok"}  # nothing to say: no content


# ---- parsing ---------------------------------------------------------------------------------------------


def test_parse_text_only(provider: AnthropicProvider) -> None:
    assert provider.parse_tool_calls(fixture("text_only")) == []


def test_parse_single_call(provider: AnthropicProvider, registry: Registry) -> None:
    response = fixture("single_call")
    for block in response["content"][1:]:
        assert_spec_valid("anthropic.messages.tool_use_block_response", block)
    [call] = provider.parse_tool_calls(response, registry=registry)
    assert call == ToolCall("toolu_01A09q90qw90lq917835lq9", "get_weather", {"city": "San Francisco", "unit": "c"})


async def test_parse_parallel_calls(provider: AnthropicProvider, registry: Registry) -> None:
    calls = provider.parse_tool_calls(fixture("parallel_calls"), registry=registry)
    assert [(c.id, c.name) for c in calls] == [
        ("toolu_01Weather1", "get_weather"),
        ("toolu_01Weather2", "get_weather"),
        ("toolu_01Order3", "place_order"),
    ]
    results = await registry.call_many(calls)
    assert [r.is_error for r in results] == [False, False, False]
    assert results[2].output == "1 line(s) to Paris, high"


def test_stream_reports_deltas_and_assembles_calls(provider: AnthropicProvider, registry: Registry) -> None:
    accumulator = provider.stream(registry=registry)
    deltas = [d for event in fixture("stream_tool_use")["events"] for d in accumulator.feed(event)]
    assert [(d.index, d.arguments_delta) for d in deltas] == [
        (0, '{"city": "Pa'),
        (0, 'ris", "unit"'),
        (0, ': "c"}'),
        (1, '{"city": '),
        (1, '"Berlin"}'),
    ]
    assert deltas[1].arguments_so_far == '{"city": "Paris", "unit"' and deltas[1].name == "get_weather"
    assert accumulator.partial == {0: '{"city": "Paris", "unit": "c"}', 1: '{"city": "Berlin"}'}
    calls = accumulator.tool_calls()
    assert calls == [
        ToolCall("toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather", {"city": "Paris", "unit": "c"}),
        ToolCall("toolu_01Vb2yXqH7kP3mW9sLrT4nQz", "get_weather", {"city": "Berlin"}),
    ]


def test_stream_call_without_arguments_and_with_broken_json(provider: AnthropicProvider) -> None:
    accumulator = provider.stream()
    events = [
        {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t0", "name": "a"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "t1", "name": "b"}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": '{"x": '}},
        {"type": "content_block_stop", "index": 1},
    ]
    for event in events:
        accumulator.feed(event)
    first, second = accumulator.tool_calls()
    assert first.arguments == {}
    assert second.arguments == '{"x": '  # kept as text, for validation to report to the model


# ---- names and aliases --------------------------------------------------------------------------------------


def dotted_registry() -> Registry:
    @tool
    def weather(city: str) -> str:
        """Weather."""
        return city

    return Registry({"weather.get": weather})


def test_rejected_key_raises_with_key_vendor_rule(provider: AnthropicProvider) -> None:
    with pytest.raises(InvalidToolNameError) as excinfo:
        provider.format_tools(dotted_registry())
    assert (excinfo.value.key, excinfo.value.vendor) == ("weather.get", "anthropic")
    assert excinfo.value.rule == r"^[a-zA-Z0-9_-]{1,64}$"
    assert "aliases=True" in str(excinfo.value)


def test_aliases_are_sent_and_mapped_back(provider: AnthropicProvider) -> None:
    registry = dotted_registry()
    payload = provider.format_tools(registry, aliases=True, tool_choice="weather.get")
    [entry] = payload["tools"]
    alias = entry["name"]
    assert alias != "weather.get" and payload["tool_choice"] == {"type": "tool", "name": alias}
    assert_payload_valid(payload)
    response = {"content": [{"type": "tool_use", "id": "toolu_9", "name": alias, "input": {"city": "Rome"}}]}
    [call] = provider.parse_tool_calls(response, registry=registry, aliases=True)
    assert call.name == "weather.get"
    accumulator = provider.stream(registry=registry, aliases=True)
    start = {"type": "tool_use", "id": "toolu_9", "name": alias, "input": {}}
    accumulator.feed({"type": "content_block_start", "index": 0, "content_block": start})
    [delta] = accumulator.feed(
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{}"}}
    )
    assert delta.name == "weather.get"


# ---- the strict budget ----------------------------------------------------------------------------------------


def small_tools(count: int, *, prefix: str = "t", strict: bool | None = None) -> list[Tool[..., Any]]:
    def make(i: int) -> Tool[..., Any]:
        def fn(x: int) -> int:
            return x

        return Tool(fn, id=f"{prefix}{i}", description=f"Tool {i}.", strict=strict)

    return [make(i) for i in range(count)]


def test_strict_tools_past_twenty_fall_back(provider: AnthropicProvider, caplog: pytest.LogCaptureFixture) -> None:
    registry = Registry(small_tools(22))
    with caplog.at_level(logging.DEBUG, logger="agentkit.providers.anthropic._codec"):
        payload = provider.format_tools(registry)
    flags = [entry.get("strict", False) for entry in payload["tools"]]
    assert flags == [True] * 20 + [False, False]
    assert_payload_valid(payload)
    budget = provider.strict_budget(registry)
    assert [f.key for f in budget.fallbacks] == ["t20", "t21"] and "21 tools > 20" in budget.fallbacks[0].reason
    assert "t20" in caplog.text  # recorded
    # fewer tools sent, no budget problem
    few = provider.format_tools(registry, active_tools=["t20", "t21"])
    assert [entry.get("strict") for entry in few["tools"]] == [True, True]


def test_union_budget_counts_across_tools(provider: AnthropicProvider) -> None:
    def make(i: int) -> Tool[..., Any]:
        def fn(a: int = 0, b: int = 0, c: int = 0, d: int = 0, e: int = 0) -> int:
            return a

        return Tool(fn, id=f"wide{i}")

    registry = Registry([*(make(i) for i in range(4)), *small_tools(1)])
    counts = strict_budget_counts(provider.schema_dialect(registry["wide0"]).schema)
    assert counts.unions == 5  # five optional params, each made nullable
    payload = provider.format_tools(registry)
    flags = {entry["name"]: entry.get("strict", False) for entry in payload["tools"]}
    # 5 + 5 + 5 = 15 unions fit; a fourth wide tool would make 20 > 16; the narrow one still fits
    assert flags == {"wide0": True, "wide1": True, "wide2": True, "wide3": False, "t0": True}
    assert provider.strict_budget(registry).unions == 15


def test_forced_strict_counts_first_and_is_never_dropped(provider: AnthropicProvider) -> None:
    forced = small_tools(1, prefix="forced", strict=True)
    registry = Registry([*small_tools(20), *forced])
    payload = provider.format_tools(registry)
    flags = {entry["name"]: entry.get("strict", False) for entry in payload["tools"]}
    assert flags["forced0"] is True and flags["t19"] is False and sum(flags.values()) == 20
    everything = provider.strict_budget(Registry(small_tools(22)), strict=True)
    assert everything.over_budget == ("t20", "t21") and everything.fallbacks == ()
    assert all(entry["strict"] for entry in provider.format_tools(Registry(small_tools(22)), strict=True)["tools"])


# ---- the dialect -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "keyword"),
    [
        ({"type": "object", "properties": {"m": {"type": "object", "additionalProperties": {"type": "int"}}}}, "m"),
        ({"type": "object", "properties": {"m": {"type": "object"}}}, "m"),
        ({"type": "object", "properties": {"v": {"description": "anything"}}}, "v"),
        ({"type": "object", "properties": {"e": {"enum": [{"a": 1}, {"b": 2}]}}}, "e"),
        ({"type": "object", "properties": {"r": {"$ref": "https://example.com/s.json"}}}, "r"),
        ({"type": "object", "properties": {"t": {"type": "array", "prefixItems": [{"type": "integer"}]}}}, "t"),
    ],
)
def test_dialect_falls_back_or_rejects(schema: dict[str, Any], keyword: str) -> None:
    dialect = AnthropicDialect()
    loose = dialect.rewrite(schema, strict=None)
    assert not loose.strict and loose.schema == schema and not loose.rejected
    assert any(keyword in loss.path and "sent without strict" in loss.change for loss in loose.losses)
    forced = dialect.rewrite(schema, strict=True)
    assert forced.strict and (forced.rejected or any("free-form" in loss.change for loss in forced.losses))


def test_dialect_moves_what_strict_cannot_enforce() -> None:
    schema = {
        "type": "object",
        "properties": {
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 5, "uniqueItems": True},
            "one": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            "word": {"type": "string", "pattern": r"^\bfoo\b$"},
            "code": {"type": "string", "pattern": "^[A-Z]{3}$", "format": "uri"},
            "slug": {"type": "string", "format": "slug"},
            "pick": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        },
        "required": ["tags", "one", "word", "code", "slug", "pick"],
    }
    result = AnthropicDialect().rewrite(schema, strict=True)
    props = result.schema["properties"]
    assert "minItems" not in props["tags"] and "maxItems" not in props["tags"] and "uniqueItems" not in props["tags"]
    assert props["one"]["minItems"] == 1  # 0 and 1 are supported
    assert "pattern" not in props["word"] and props["code"]["pattern"] == "^[A-Z]{3}$"  # simple regexes stay
    assert props["code"]["format"] == "uri" and "format" not in props["slug"] and "slug" in props["slug"]["description"]
    assert "anyOf" in props["pick"] and "oneOf" not in props["pick"]
    assert result.schema["additionalProperties"] is False
    assert not result.rejected and strict_lint_errors(result.schema) == []
    assert schema["properties"]["tags"]["minItems"] == 2  # the input is untouched


def test_dialect_inlines_refs_used_with_allof() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"allOf": [{"$ref": "#/$defs/A"}, {"description": "an A"}]}},
        "required": ["a"],
        "$defs": {"A": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}},
    }
    result = AnthropicDialect().rewrite(schema, strict=None)
    assert result.strict and "$defs" not in result.schema
    assert strict_lint_errors(result.schema) == []


def test_dialect_empty_root_means_no_arguments() -> None:
    dialect = AnthropicDialect()
    result = dialect.rewrite({"type": "object", "properties": {}}, strict=None)  # as MCP servers send it
    assert result.strict and result.schema["additionalProperties"] is False
    assert not dialect.rewrite({"type": "object", "additionalProperties": True}, strict=None).strict


def test_dialect_root_gets_type_object() -> None:
    result = AnthropicDialect().rewrite({"properties": {"q": {"type": "string"}}}, strict=False)
    assert result.schema["type"] == "object" and not result.losses


@pytest.mark.parametrize("strict", [None, True, False])
def test_zoo_definitions_are_spec_valid(provider: AnthropicProvider, strict: bool | None) -> None:
    for item in ZOO:
        result = provider.schema_dialect(item, strict)
        if strict is True and result.rejected:
            with pytest.raises(StrictSchemaError, match=item.id):
                provider.format_tools(Registry([item]), strict=True)
            continue
        entry = provider.tool_definition(item, item.id, strict)
        assert_spec_valid(TOOL, entry)
        if result.strict and not result.rejected:
            assert strict_lint_errors(entry["input_schema"]) == [], item.id


def test_mcp_corpus_strict_schemas_pass_the_linter() -> None:
    corpus = json.loads((CORPUS / "mcp_schemas.json").read_text())
    dialect = AnthropicDialect()
    strict = 0
    for server in corpus["servers"]:
        for entry in server["tools"]:
            result = dialect.rewrite(entry["inputSchema"], strict=None)
            if result.strict:
                strict += 1
                assert strict_lint_errors(result.schema) == [], entry["name"]
            else:
                assert result.losses, entry["name"]  # a fallback always says why
    assert strict >= 95  # of 96: one takes a free-form object


# ---- through the official SDK ---------------------------------------------------------------------------------


def sdk_client(handler: Any) -> Any:
    import anthropic

    httpx = httpx_module()
    return anthropic.AsyncAnthropic(
        api_key="x",
        base_url="http://127.0.0.1",
        max_retries=0,
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)),
    )


def sse(events: list[dict[str, Any]]) -> bytes:
    """Server-sent events as the Messages API streams them (named events)."""
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


async def test_sdk_round_trip(provider: AnthropicProvider, registry: Registry) -> None:
    bodies: list[dict[str, Any]] = []
    replies = [fixture("parallel_calls"), fixture("text_only")]
    httpx = httpx_module()

    def handler(request: Any) -> Any:
        assert request.url.path == "/v1/messages"
        bodies.append(json.loads(request.content))
        return httpx.Response(200, json=replies[len(bodies) - 1])

    client = sdk_client(handler)
    payload = provider.format_tools(registry, active_tools=["get_weather", "place_order"], parallel_tool_calls=False)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather in Paris and Berlin; order one ABC-1."}]
    message = await client.messages.create(model="claude-sonnet-4-6", max_tokens=1024, messages=messages, **payload)
    assert bodies[0]["tools"] == payload["tools"] and bodies[0]["tool_choice"] == payload["tool_choice"]
    assert bodies[0]["messages"] == messages

    calls = provider.parse_tool_calls(message, registry=registry)  # the SDK's Message object
    assert [c.name for c in calls] == ["get_weather", "get_weather", "place_order"]
    results = await registry.call_many(calls)
    assistant = {
        "role": "assistant",
        "content": [b.model_dump(mode="json", exclude_none=True) for b in message.content],
    }
    follow_up = [*messages, assistant, *provider.format_tool_results(results)]
    final = await client.messages.create(model="claude-sonnet-4-6", max_tokens=1024, messages=follow_up, **payload)
    assert bodies[1]["messages"] == follow_up  # the SDK sent our messages unchanged
    assert [b["tool_use_id"] for b in bodies[1]["messages"][2]["content"]] == [c.id for c in calls]
    assert provider.parse_tool_calls(final) == []


async def test_sdk_stream(provider: AnthropicProvider, registry: Registry) -> None:
    httpx = httpx_module()
    seen: list[dict[str, Any]] = []

    def handler(request: Any) -> Any:
        seen.append(json.loads(request.content))
        body = sse(fixture("stream_tool_use")["events"])
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

    client = sdk_client(handler)
    payload = provider.format_tools(registry, tool_choice="get_weather")
    stream = await client.messages.create(
        model="claude-sonnet-4-6",
        max_tokens=1024,
        messages=[{"role": "user", "content": "Paris and Berlin?"}],
        stream=True,
        **payload,
    )
    accumulator = provider.stream(registry=registry)
    deltas = [d async for event in stream for d in accumulator.feed(event)]  # SDK event objects
    assert seen[0]["stream"] is True and seen[0]["tool_choice"] == {"type": "tool", "name": "get_weather"}
    assert len(deltas) == 5
    results = await registry.call_many(accumulator.tool_calls())
    assert [r.output for r in results] == [{"city": "Paris", "unit": "c"}, {"city": "Berlin", "unit": "c"}]
