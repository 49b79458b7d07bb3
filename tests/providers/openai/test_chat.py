"""OpenAI Chat Completions provider and the OpenAI dialect, checked against the vendor's own spec and SDK."""

from __future__ import annotations

import base64
import json
from functools import partial
from pathlib import Path
from typing import Any, Literal, Optional

import jsonschema
import pytest
from pydantic import BaseModel, Field

from agentkit import Registry, tool
from agentkit.exceptions import ModelAPIError, StrictSchemaError
from agentkit.messages import ImagePart, TextPart, ToolCall, ToolResult
from agentkit.providers import InvalidToolNameError, compatibility, get_provider
from agentkit.providers.openai import OpenAIChatProvider, OpenAIDialect
from tests.spec import assert_spec_valid, sample, spec_errors
from tests.spec import openapi_errors as vendor_openapi_errors

from ..common import PNG, httpx_module, lint_module

FIXTURES = Path(__file__).parent / "fixtures" / "chat"


# ---- shared helpers (the Responses tests import these) -----------------------------------------------


openapi_errors = partial(vendor_openapi_errors, "openai")  # how a payload breaks a component of OpenAI's spec


def strict_lint_errors(schema: dict[str, Any]) -> list[str]:
    """The shared linter's documented OpenAI strict-mode errors for a parameters schema."""
    return [
        f"{path}: {message}"
        for severity, path, message in lint_module().lint_openai_strict(schema)
        if severity == "error"
    ]


def fixture(name: str, folder: Path = FIXTURES) -> Any:
    return json.loads((folder / f"{name}.json").read_text())


def sdk_client(handler: Any) -> Any:
    import openai

    httpx = httpx_module()
    return openai.AsyncOpenAI(
        api_key="x",
        base_url="http://127.0.0.1/v1",
        max_retries=0,
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)),
    )


def sse(events: list[dict[str, Any]], *, named: bool = False, done: bool = False) -> bytes:
    """Server-sent events as the OpenAI API streams them."""
    lines = []
    for event in events:
        head = f"event: {event['type']}\n" if named else ""
        lines.append(f"{head}data: {json.dumps(event)}\n\n")
    if done:
        lines.append("data: [DONE]\n\n")
    return "".join(lines).encode()


# ---- a realistic registry ------------------------------------------------------------------------------


class Address(BaseModel):
    """A postal address."""

    street: str
    city: str
    zip: Optional[str] = None


class Item(BaseModel):
    """One order line."""

    sku: str = Field(min_length=3, description="Stock keeping unit.")
    qty: int = Field(1, ge=1)


def get_weather(city: str, unit: Literal["c", "f"] = "c", days: int = 1) -> dict[str, Any]:
    """Get the weather forecast for a city.

    Args:
        city: City name, e.g. "Paris".
        unit: Temperature unit.
        days: How many days ahead.
    """
    return {"city": city, "unit": unit, "days": days}


def place_order(customer: str, address: Address, items: list[Item], note: str | None = None) -> str:
    """Place an order for a customer.

    Args:
        customer: The customer's name.
        address: Where to deliver.
        items: What to deliver.
        note: A note for the courier.
    """
    return f"{customer}: {sum(i.qty for i in items)} item(s) to {address.city}" + (f" ({note})" if note else "")


def tally(counts: dict[str, int]) -> int:
    """Add up counts per label.

    Args:
        counts: Count per label.
    """
    return sum(counts.values())


def make_registry() -> Registry:
    return Registry({"get_weather": get_weather, "place_order": place_order, "tally": tally})


@pytest.fixture
def provider() -> OpenAIChatProvider:
    return OpenAIChatProvider()


@pytest.fixture
def registry() -> Registry:
    return make_registry()


def by_name(payload: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["function"]["name"]: t["function"] for t in payload["tools"]}


# ---- format_tools ----------------------------------------------------------------------------------------


def test_get_provider_returns_this_class() -> None:
    assert isinstance(get_provider("openai"), OpenAIChatProvider)


def test_tools_are_spec_valid_and_strict_where_possible(provider: OpenAIChatProvider, registry: Registry) -> None:
    payload = provider.format_tools(registry)
    for entry in payload["tools"]:
        assert_spec_valid("openai.chat.tool", entry)
    assert_spec_valid("openai.chat.tool_choice", payload["tool_choice"])
    assert payload["tool_choice"] == "auto"
    assert "parallel_tool_calls" not in payload
    tools = by_name(payload)
    assert list(tools) == ["get_weather", "place_order", "tally"]
    assert tools["get_weather"]["description"].startswith("Get the weather forecast")
    # strict schemas meet the documented rules (checked by the shared linter, not by our code)
    for name in ("get_weather", "place_order"):
        assert tools[name]["strict"] is True
        assert strict_lint_errors(tools[name]["parameters"]) == []
    # dict[str, int] cannot be strict: sent non-strict, explicitly, with the canonical schema
    assert tools["tally"]["strict"] is False
    assert tools["tally"]["parameters"] == registry["tally"].input_schema


def test_strict_makes_optional_params_required_and_nullable(provider: OpenAIChatProvider, registry: Registry) -> None:
    params = by_name(provider.format_tools(registry))["get_weather"]["parameters"]
    assert params["required"] == ["city", "unit", "days"]
    assert params["additionalProperties"] is False
    unit = params["properties"]["unit"]
    assert jsonschema.Draft202012Validator(unit).is_valid(None)
    assert jsonschema.Draft202012Validator(unit).is_valid("f")
    assert not jsonschema.Draft202012Validator(unit).is_valid("kelvin")
    assert '"c"' in unit["description"]  # the default is told to the model
    assert not jsonschema.Draft202012Validator(params["properties"]["city"]).is_valid(None)
    # nested models: every object closed and fully required; a $ref with a description goes into a
    # one-member anyOf (strict refuses siblings beside $ref; inlining would copy the definition)
    order = by_name(provider.format_tools(registry))["place_order"]["parameters"]
    address = order["properties"]["address"]
    assert address == {"anyOf": [{"$ref": "#/$defs/Address"}], "description": "Where to deliver."}
    assert order["$defs"]["Address"]["required"] == ["street", "city", "zip"]
    item = order["$defs"]["Item"]
    assert item["required"] == ["sku", "qty"] and item["additionalProperties"] is False
    assert "minLength: 3" in item["properties"]["sku"]["description"]


def test_strict_false_and_forced(provider: OpenAIChatProvider, registry: Registry) -> None:
    loose = by_name(provider.format_tools(registry, strict=False))
    assert all(t["strict"] is False for t in loose.values())
    assert loose["get_weather"]["parameters"] == registry["get_weather"].input_schema
    with pytest.raises(StrictSchemaError, match=r"(?s)'tally' is forced strict.*strict=None"):
        provider.format_tools(registry, strict=True)  # raised here, not as OpenAI's HTTP 400
    forced = by_name(provider.format_tools(Registry({"get_weather": registry["get_weather"]}), strict=True))
    assert forced["get_weather"]["strict"] is True
    report = {c.key: c for c in compatibility(registry, "openai", strict=True)}
    assert report["tally"].rejected and not report["get_weather"].rejected
    fallback = {c.key: c for c in compatibility(registry, "openai")}
    assert not fallback["tally"].rejected and not fallback["tally"].strict
    assert any("strict: false" in loss.change for loss in fallback["tally"].losses)


def test_tool_strict_setting_is_respected(provider: OpenAIChatProvider) -> None:
    reg = Registry({"w": tool(get_weather, strict=False)})
    entry = by_name(provider.format_tools(reg))["w"]
    assert entry["strict"] is False and entry["parameters"]["required"] == ["city"]


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"tool_choice": "auto"}, "auto"),
        ({"tool_choice": "none"}, "none"),
        ({"tool_choice": "required"}, "required"),
        ({"tool_choice": "place_order"}, {"type": "function", "function": {"name": "place_order"}}),
        (
            {"active_tools": ["get_weather", "tally"]},
            {
                "type": "allowed_tools",
                "allowed_tools": {
                    "mode": "auto",
                    "tools": [
                        {"type": "function", "function": {"name": "get_weather"}},
                        {"type": "function", "function": {"name": "tally"}},
                    ],
                },
            },
        ),
        (
            {"tool_choice": "required", "active_tools": ["tally"]},
            {
                "type": "allowed_tools",
                "allowed_tools": {"mode": "required", "tools": [{"type": "function", "function": {"name": "tally"}}]},
            },
        ),
        ({"tool_choice": "tally", "active_tools": ["tally"]}, {"type": "function", "function": {"name": "tally"}}),
        ({"tool_choice": "none", "active_tools": ["tally"]}, "none"),
        ({"active_tools": []}, "none"),
    ],
)
def test_tool_choice_forms(
    provider: OpenAIChatProvider, registry: Registry, options: dict[str, Any], expected: Any
) -> None:
    payload = provider.format_tools(registry, **options)
    assert_spec_valid("openai.chat.tool_choice", payload["tool_choice"])
    assert payload["tool_choice"] == expected
    # active_tools never changes the tool list: it stays byte-stable for prompt caching
    assert json.dumps(payload["tools"]) == json.dumps(provider.format_tools(registry)["tools"])


@pytest.mark.parametrize("flag", [True, False])
def test_parallel_tool_calls(provider: OpenAIChatProvider, registry: Registry, flag: bool) -> None:
    payload = provider.format_tools(registry, parallel_tool_calls=flag)
    assert payload["parallel_tool_calls"] is flag
    assert not openapi_errors("ParallelToolCalls", payload["parallel_tool_calls"])


def test_empty_registry_sends_nothing(provider: OpenAIChatProvider) -> None:
    assert provider.format_tools(Registry(), tool_choice="required") == {}


@pytest.mark.parametrize(
    "name",
    [
        "openai_chat_tool_choice_any_is_invalid",
        "openai_chat_tool_missing_function",
        "openai_chat_tool_message_image_is_invalid",
    ],
)
def test_the_spec_check_bites(name: str) -> None:
    case = sample(name)
    assert spec_errors(case["schema"], case["payload"]), f"{name} should break {case['schema']}"


@pytest.mark.parametrize(
    "name",
    ["openai_chat_tool", "openai_chat_tool_choice_allowed", "openai_chat_tool_message", "openai_chat_tool_call_chunk"],
)
def test_valid_samples_pass(name: str) -> None:
    case = sample(name)
    assert_spec_valid(case["schema"], case["payload"])


# ---- results -----------------------------------------------------------------------------------------------


async def test_results_ok_and_error(provider: OpenAIChatProvider, registry: Registry) -> None:
    calls = [
        ToolCall(id="call_ok", name="get_weather", arguments='{"city": "Paris"}'),
        ToolCall(id="call_bad", name="get_weather", arguments='{"city": 7}'),
    ]
    ok, bad = await registry.call_many(calls)
    messages = provider.format_tool_results([ok, bad])
    for message in messages:
        assert_spec_valid("openai.chat.tool_message", message)
    assert [m["tool_call_id"] for m in messages] == ["call_ok", "call_bad"]
    assert json.loads(messages[0]["content"]) == {"city": "Paris", "unit": "c", "days": 1}
    assert messages[1]["content"].startswith("Error: Invalid arguments for tool 'get_weather'")
    assert len(messages) == 2  # no follow-up message without images


def test_image_results_fall_back_to_a_user_message(provider: OpenAIChatProvider) -> None:
    results = [
        ToolResult(call_id="call_a", name="chart", content=(TextPart("chart attached"), ImagePart(data=PNG))),
        ToolResult(call_id="call_b", name="get_weather", content=(TextPart("sunny"),)),
        ToolResult(call_id="call_c", name="photo", content=(ImagePart(url="https://example.com/cat.png"),)),
    ]
    messages = provider.format_tool_results(results)
    tool_messages, follow_up = messages[:3], messages[3:]
    for message in tool_messages:
        assert_spec_valid("openai.chat.tool_message", message)
        assert message["role"] == "tool"
    assert [m["tool_call_id"] for m in tool_messages] == ["call_a", "call_b", "call_c"]
    assert tool_messages[0]["content"].startswith("chart attached\n[1 image(s) follow")
    assert tool_messages[1]["content"] == "sunny"
    # the images come after every tool message, in one user message, labelled with their call
    assert len(follow_up) == 1 and follow_up[0]["role"] == "user"
    assert openapi_errors("ChatCompletionRequestUserMessage", follow_up[0]) == []
    parts = follow_up[0]["content"]
    urls = [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]
    assert urls == [f"data:image/png;base64,{base64.b64encode(PNG).decode()}", "https://example.com/cat.png"]
    labels = [p["text"] for p in parts if p["type"] == "text"]
    assert "call_a" in labels[0] and "call_c" in labels[1]


def test_error_flag_is_a_text_prefix(provider: OpenAIChatProvider) -> None:
    result = ToolResult(call_id="c1", name="x", content=(TextPart("boom"),), is_error=True, error_kind="exception")
    assert provider.format_tool_results([result])[0]["content"] == "Error: boom"
    already = ToolResult(call_id="c1", name="x", content=(TextPart("Error: boom"),), is_error=True)
    assert provider.format_tool_results([already])[0]["content"] == "Error: boom"


# ---- parsing -------------------------------------------------------------------------------------------------


def test_parse_text_only(provider: OpenAIChatProvider) -> None:
    assert provider.parse_tool_calls(fixture("text_only")) == []


def test_parse_single_call(provider: OpenAIChatProvider) -> None:
    response = fixture("single_call")
    for entry in response["choices"][0]["message"]["tool_calls"]:
        assert_spec_valid("openai.chat.message_tool_call", entry)
    [call] = provider.parse_tool_calls(response)
    assert call.id == "call_12345xyz" and call.name == "get_weather"
    assert call.arguments == '{"city":"Paris","unit":null,"days":3}'  # the JSON text, as sent


def test_parse_parallel_calls(provider: OpenAIChatProvider) -> None:
    calls = provider.parse_tool_calls(fixture("parallel_calls"))
    assert [(c.id, c.name) for c in calls] == [("call_paris01", "get_weather"), ("call_order02", "place_order")]
    assert json.loads(calls[1].arguments)["items"] == [{"sku": "ABC-1", "qty": 2}]  # type: ignore[arg-type]


async def test_null_means_default_end_to_end(provider: OpenAIChatProvider, registry: Registry) -> None:
    weather, order = provider.parse_tool_calls(fixture("parallel_calls"), registry=registry)
    assert weather.arguments == {"city": "Paris", "unit": "c"}  # days: null dropped
    results = await registry.call_many([weather, order])
    assert not any(r.is_error for r in results), [r.text for r in results]
    assert results[0].output == {"city": "Paris", "unit": "c", "days": 1}  # the Python default applied
    assert results[1].output == "Ada: 2 item(s) to Paris"  # nested zip: null and note: null dropped too


def test_stream_accumulates_parallel_calls(provider: OpenAIChatProvider, registry: Registry) -> None:
    chunks = fixture("stream_parallel")
    for chunk in chunks:
        for choice in chunk["choices"]:
            for entry in choice["delta"].get("tool_calls", ()):
                assert_spec_valid("openai.chat.message_tool_call_chunk", entry)
    stream = provider.stream(registry=registry)
    deltas = [d for chunk in chunks for d in stream.feed(chunk)]
    assert [d.arguments_delta for d in deltas if d.index == 0] == ['{"ci', 'ty":"Pa', 'ris","unit":', '"f","days":2}']
    assert deltas[-1].index == 1 and deltas[-1].name == "get_weather" and deltas[-1].id == "call_s1"
    assert deltas[-1].arguments_so_far == '{"city":"Oslo","unit":null,"days":null}'
    first, second = stream.tool_calls()
    assert (first.id, first.name, first.arguments) == ("call_s0", "get_weather", '{"city":"Paris","unit":"f","days":2}')
    assert second.arguments == {"city": "Oslo"}  # nulls dropped, so the defaults apply


# ---- names -------------------------------------------------------------------------------------------------------


def test_rejected_key_raises_with_key_vendor_rule(provider: OpenAIChatProvider) -> None:
    reg = Registry({"docs.search": get_weather})
    with pytest.raises(InvalidToolNameError) as info:
        provider.format_tools(reg)
    assert info.value.key == "docs.search" and info.value.vendor == "openai"
    assert "^[a-zA-Z0-9_-]{1,64}$" in str(info.value) and "docs.search" in str(info.value)


def test_aliases_are_sent_and_mapped_back(provider: OpenAIChatProvider) -> None:
    reg = Registry({"docs.search": get_weather, "x" * 70: tally})
    payload = provider.format_tools(reg, aliases=True, tool_choice="docs.search")
    names = list(by_name(payload))
    assert names[0] == "docs_search" and len(names[1]) <= 64
    for entry in payload["tools"]:
        assert_spec_valid("openai.chat.tool", entry)
    assert payload["tool_choice"]["function"]["name"] == "docs_search"
    response = fixture("single_call")
    response["choices"][0]["message"]["tool_calls"][0]["function"]["name"] = "docs_search"
    [call] = provider.parse_tool_calls(response, registry=reg, aliases=True)
    assert call.name == "docs.search"
    stream = provider.stream(registry=reg, aliases=True)
    for chunk in fixture("stream_parallel"):
        for choice in chunk["choices"]:
            for entry in choice["delta"].get("tool_calls", ()):
                if "function" in entry and "name" in entry["function"]:
                    entry["function"]["name"] = names[1]
        stream.feed(chunk)
    assert {c.name for c in stream.tool_calls()} == {"x" * 70}


# ---- the OpenAI dialect on schemas our own inference never produces ----------------------------------------


def rewrite(schema: dict[str, Any], strict: bool | None = None) -> Any:
    return OpenAIDialect().rewrite(schema, strict=strict)


def test_dialect_moves_unsupported_constraints_into_the_description() -> None:
    schema = {
        "type": "object",
        "properties": {
            "code": {"type": "string", "minLength": 2, "maxLength": 8, "format": "iso-3166"},
            "when": {"type": "string", "format": "date"},
            "kind": {"type": "string", "not": {"const": "x"}},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True, "maxItems": 3},
        },
        "required": ["code", "when", "kind", "tags"],
        "dependentRequired": {"code": ["kind"]},
        "if": {"properties": {"kind": {"const": "a"}}},
        "then": {"required": ["tags"]},
        "additionalProperties": False,
    }
    result = rewrite(schema)
    assert result.strict and not result.rejected
    out = result.schema
    for keyword in ("dependentRequired", "if", "then"):
        assert keyword not in out and keyword in out["description"]
    code = out["properties"]["code"]
    assert "minLength" not in code and "format" not in code and "iso-3166" in code["description"]
    assert out["properties"]["when"]["format"] == "date"  # a supported format stays
    assert "not" not in out["properties"]["kind"]
    assert out["properties"]["tags"]["maxItems"] == 3 and "uniqueItems" not in out["properties"]["tags"]
    moved = {loss.keyword for loss in result.losses}
    assert {"minLength", "maxLength", "format", "not", "uniqueItems", "dependentRequired", "if", "then"} <= moved
    assert strict_lint_errors(out) == []
    assert schema["properties"]["code"]["minLength"] == 2  # the input is untouched


@pytest.mark.parametrize(
    ("schema", "keyword"),
    [
        (
            {
                "type": "object",
                "properties": {
                    "a": {"allOf": [{"type": "object", "properties": {"x": {"type": "string"}}}, {"required": ["x"]}]}
                },
            },
            "allOf",
        ),
        ({"type": "object", "properties": {"m": {"type": "object"}}}, "additionalProperties"),
        (
            {"type": "object", "properties": {"m": {"type": "object", "patternProperties": {"^x": {}}}}},
            "patternProperties",
        ),
        (
            {"type": "object", "properties": {"t": {"type": "array", "prefixItems": [{"type": "integer"}]}}},
            "prefixItems",
        ),
        ({"type": "object", "properties": {"t": {"type": "array"}}}, "items"),
        ({"anyOf": [{"type": "object"}, {"type": "string"}]}, "type"),
        ({"type": "object", "properties": {"e": {"enum": list(range(1001))}}}, "enum"),
    ],
)
def test_dialect_rejects_or_falls_back(schema: dict[str, Any], keyword: str) -> None:
    forced = rewrite(schema, strict=True)
    assert forced.strict and keyword in {loss.keyword for loss in forced.rejected}
    fallback = rewrite(schema, strict=None)
    assert not fallback.strict and not fallback.rejected
    assert any(loss.keyword == keyword and "strict: false" in loss.change for loss in fallback.losses)


def test_dialect_single_allof_is_merged_and_root_ref_inlined() -> None:
    schema = {
        "$ref": "#/$defs/Args",
        "$defs": {
            "Args": {"type": "object", "properties": {"p": {"allOf": [{"$ref": "#/$defs/P"}], "description": "a p"}}},
            "P": {"type": "object", "properties": {"x": {"type": "integer"}}},
        },
    }
    for strict in (False, None):
        out = rewrite(schema, strict=strict).schema
        assert out["type"] == "object" and "$ref" not in out
    strict_out = rewrite(schema).schema
    p = strict_out["properties"]["p"]
    assert "allOf" not in json.dumps(strict_out)
    assert strict_lint_errors(strict_out) == []
    assert jsonschema.Draft202012Validator(strict_out).is_valid({"p": {"x": 1}})
    assert jsonschema.Draft202012Validator(strict_out).is_valid({"p": None})
    assert "a p" in json.dumps(p)


class Node(BaseModel):
    """A linked node (recursive)."""

    label: str
    child: Node = Field(description="The next node.")
    rest: list[Node] = []


def test_dialect_recursive_ref_with_description_stays_finite() -> None:
    result = rewrite(Node.model_json_schema())
    assert result.strict and not result.rejected
    text = json.dumps(result.schema)
    assert '"$ref"' in text  # recursion stays a reference
    check = jsonschema.Draft202012Validator(result.schema)
    leaf = {"label": "c", "child": None, "rest": None}
    assert not check.is_valid(leaf)  # child is required and not nullable
    deep: dict[str, Any] = {
        "label": "a",
        "child": {"label": "b", "child": {"label": "c", "child": 5, "rest": []}, "rest": None},
        "rest": None,
    }
    assert not check.is_valid(deep)  # a Node at every depth, never "anything"
    deep["child"]["child"]["child"] = {"label": "d", "child": {"label": "e", "child": {}, "rest": []}, "rest": []}
    assert not check.is_valid(deep)
    assert strict_lint_errors(result.schema) == []


# ---- through the official SDK ---------------------------------------------------------------------------------


async def test_sdk_round_trip(provider: OpenAIChatProvider, registry: Registry) -> None:
    bodies: list[dict[str, Any]] = []
    replies = [fixture("parallel_calls"), fixture("text_only")]
    httpx = httpx_module()

    def handler(request: Any) -> Any:
        assert request.url.path == "/v1/chat/completions"
        bodies.append(json.loads(request.content))
        return httpx.Response(200, json=replies[len(bodies) - 1])

    client = sdk_client(handler)
    payload = provider.format_tools(registry, active_tools=["get_weather", "place_order"], parallel_tool_calls=True)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather in Paris, and order one ABC-1 for Ada."}]
    completion = await client.chat.completions.create(model="gpt-4.1", messages=messages, **payload)
    assert bodies[0]["tools"] == payload["tools"] and bodies[0]["tool_choice"] == payload["tool_choice"]
    assert bodies[0]["parallel_tool_calls"] is True
    assert openapi_errors("CreateChatCompletionRequest", bodies[0]) == []

    calls = provider.parse_tool_calls(completion, registry=registry)  # the SDK object, not a dict
    assert [c.name for c in calls] == ["get_weather", "place_order"]
    results = await registry.call_many(calls)
    assistant = completion.choices[0].message.model_dump(mode="json", exclude_none=True)
    follow_up = [*messages, assistant, *provider.format_tool_results(results)]
    final = await client.chat.completions.create(model="gpt-4.1", messages=follow_up, **payload)
    assert bodies[1]["messages"] == follow_up  # the SDK sent our messages unchanged
    assert openapi_errors("CreateChatCompletionRequest", bodies[1]) == []
    assert provider.parse_tool_calls(final) == []


async def test_sdk_stream(provider: OpenAIChatProvider, registry: Registry) -> None:
    httpx = httpx_module()
    seen: list[dict[str, Any]] = []

    def handler(request: Any) -> Any:
        seen.append(json.loads(request.content))
        body = sse(fixture("stream_parallel"), done=True)
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

    client = sdk_client(handler)
    payload = provider.format_tools(registry, tool_choice="get_weather", parallel_tool_calls=False)
    stream = await client.chat.completions.create(
        model="gpt-4.1", messages=[{"role": "user", "content": "Paris and Oslo?"}], stream=True, **payload
    )
    accumulator = provider.stream(registry=registry)
    deltas = [d async for chunk in stream for d in accumulator.feed(chunk)]  # SDK ChatCompletionChunk objects
    assert seen[0]["stream"] is True and seen[0]["tool_choice"] == payload["tool_choice"]
    assert seen[0]["parallel_tool_calls"] is False
    assert len(deltas) == 7
    weather = [c for c in accumulator.tool_calls() if c.name == "get_weather"]
    assert [c.id for c in weather] == ["call_s0", "call_s1"]
    results = await registry.call_many(weather)
    assert [r.output for r in results] == [
        {"city": "Paris", "unit": "f", "days": 2},
        {"city": "Oslo", "unit": "c", "days": 1},
    ]


# ---- whole conversations: format_messages / parse_response ------------------------------------------------


def test_format_messages_whole_history_is_spec_valid(provider: OpenAIChatProvider, registry: Registry) -> None:
    from agentkit.messages import AssistantMessage, SystemMessage, ToolResultsMessage, UserMessage

    calls = [
        ToolCall("call_1", "get_weather", '{"city":"Paris"}'),
        ToolCall("toolu_01A", "tally", {"counts": {"a": 1}}),  # another vendor's parsed arguments
    ]
    results = [
        ToolResult("call_1", "get_weather", (TextPart("sunny"),)),
        ToolResult("toolu_01A", "tally", (TextPart("bad counts"), ImagePart(data=PNG)), is_error=True),
    ]
    history = [
        SystemMessage("Be brief."),
        UserMessage([TextPart("Look:"), ImagePart(url="https://example.com/a.png")]),
        AssistantMessage(text="", tool_calls=calls, provider_details={"anthropic": {"thinking": "x"}}),
        ToolResultsMessage(results),
        AssistantMessage(text="Done."),
    ]
    messages = provider.format_messages(history, registry=registry)["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool", "user", "assistant"]
    assert messages[1]["content"] == [
        {"type": "text", "text": "Look:"},
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
    ]
    assistant = messages[2]
    assert assistant["content"] is None and "provider_details" not in assistant
    assert assistant["tool_calls"][1]["function"] == {"name": "tally", "arguments": '{"counts":{"a":1}}'}
    assert_spec_valid("openai.chat.assistant_message", assistant)
    for message in messages[3:5]:
        assert_spec_valid("openai.chat.tool_message", message)
    assert messages[4]["content"].startswith("Error: bad counts")
    assert messages[6] == {"role": "assistant", "content": "Done."}
    body = {"model": "gpt-4.1", **provider.build_request(history, registry)}
    assert openapi_errors("CreateChatCompletionRequest", body) == []
    assert body["tools"] == provider.format_tools(registry)["tools"]


def test_format_messages_ignores_other_vendors_details(provider: OpenAIChatProvider, registry: Registry) -> None:
    from agentkit.messages import AssistantMessage

    plain = AssistantMessage(text="hi", tool_calls=[ToolCall("c1", "tally", "{}")])
    detailed = AssistantMessage(
        text="hi",
        tool_calls=[ToolCall("c1", "tally", "{}", provider_details={"item_id": "fc_1"})],
        provider_details={"openai-responses": {"output": [{"type": "reasoning", "id": "rs_1", "summary": []}]}},
    )
    assert provider.format_messages([detailed], registry=registry) == provider.format_messages(
        [plain], registry=registry
    )


def test_parse_response_text_usage_and_finish_reasons(provider: OpenAIChatProvider, registry: Registry) -> None:
    from openai.types.chat import ChatCompletion

    completion = fixture("parallel_calls")
    response = provider.parse_response(ChatCompletion.model_validate(completion), registry=registry)  # SDK object
    assert [c.name for c in response.message.tool_calls] == ["get_weather", "place_order"]
    assert response.message.tool_calls[0].arguments_dict() == {"city": "Paris", "unit": "c"}  # null dropped
    assert (response.usage.input_tokens, response.usage.output_tokens, response.usage.requests) == (82, 17, 1)
    assert response.finish_reason == "tool_calls" and response.model_name == "gpt-4.1-2025-04-14"
    assert response.message.text == ""

    def reply(message: dict[str, Any], finish: str | None) -> dict[str, Any]:
        return {"choices": [{"index": 0, "message": message, "finish_reason": finish}]}

    refused = provider.parse_response(reply({"content": None, "refusal": "I can't help."}, "stop"))
    assert (refused.message.text, refused.finish_reason) == ("I can't help.", "stop")
    calls = completion["choices"][0]["message"]["tool_calls"]
    # some OpenAI-compatible servers say "stop" (or the legacy "function_call") beside tool calls
    assert provider.parse_response(reply({"tool_calls": calls}, "stop")).finish_reason == "tool_calls"
    assert provider.parse_response(reply({"tool_calls": calls}, "function_call")).finish_reason == "tool_calls"
    assert provider.parse_response(reply({"content": "cut"}, "length")).finish_reason == "length"
    assert provider.parse_response(reply({"content": None}, "content_filter")).finish_reason == "content_filter"
    with pytest.raises(ModelAPIError, match=r"no choices\[0\]\.message"):  # not an empty answer (issue 17 §2.2)
        provider.parse_response({})
