"""Gemini generateContent: declarations, function-calling config, calls, streams, results, both dialects."""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from agentkit import ImagePart, Registry, TextPart, Tool, ToolCall, ToolResult, tool
from agentkit.exceptions import RegistryError, ToolChoiceError
from agentkit.providers import InvalidToolNameError, compatibility, get_provider, register_provider
from agentkit.providers.gemini import GeminiJsonSchemaDialect, GeminiOpenAPIDialect
from agentkit.providers.gemini._codec import GENERATED_ID_PREFIX, GeminiProvider
from tests.spec import assert_spec_valid, sample, spec_errors

from ..common import lint_module

FIXTURES = Path(__file__).parent / "fixtures" / "codec"


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / f"{name}.json").read_text())


# ---- a realistic registry ----------------------------------------------------------------------------


class Address(BaseModel):
    """Where to ship."""

    street: str
    city: str
    zip_code: str | None = None


class LineItem(BaseModel):
    sku: str
    quantity: Annotated[int, Field(ge=1)] = 1


@tool
def create_order(
    customer: str,
    address: Address,
    items: list[LineItem],
    priority: Literal["low", "normal", "high"] = "normal",
    note: str | None = None,
    gift: bool = False,
) -> dict[str, Any]:
    """Place an order.

    Args:
        customer: Customer name.
        address: Shipping address.
        items: What to ship.
        priority: How urgent.
        note: Free text for the courier.
        gift: Wrap it.
    """
    return {"customer": customer, "lines": len(items), "priority": priority, "gift": gift}


@tool
def get_weather(city: str, unit: Literal["c", "f"] = "c", days: int = 1) -> dict[str, Any]:
    """Forecast for a city.

    Args:
        city: City name.
        unit: Temperature unit.
        days: Days ahead.
    """
    return {"city": city, "temp": 21, "unit": unit, "days": days}


@tool
def ping() -> str:
    """Check the service."""
    return "pong"


def make_registry() -> Registry:
    return Registry({"create_order": create_order, "get_weather": get_weather, "ping": ping})


@pytest.fixture
def registry() -> Registry:
    return make_registry()


@pytest.fixture
def gemini() -> GeminiProvider:
    return GeminiProvider()


def declarations(payload: dict[str, Any]) -> list[dict[str, Any]]:
    assert len(payload["tools"]) == 1
    return payload["tools"][0]["functionDeclarations"]


def assert_payload_valid(payload: dict[str, Any]) -> None:
    for entry in payload["tools"]:
        assert_spec_valid("gemini.tool", entry)
        for declaration in entry["functionDeclarations"]:
            assert_spec_valid("gemini.function_declaration", declaration)
    assert_spec_valid("gemini.tool_config", payload["toolConfig"])


# ---- format_tools ------------------------------------------------------------------------------------


def test_default_payload_uses_parameters_json_schema(gemini: GeminiProvider, registry: Registry) -> None:
    payload = gemini.format_tools(registry)
    assert_payload_valid(payload)
    assert set(payload) == {"tools", "toolConfig"}
    by_name = {d["name"]: d for d in declarations(payload)}
    assert list(by_name) == ["create_order", "get_weather", "ping"]
    # nearly pass-through: Literal enums, $defs/$ref, nullable anyOf, defaults all arrive as canonical
    assert by_name["create_order"]["parametersJsonSchema"] == registry["create_order"].input_schema
    assert by_name["get_weather"]["parametersJsonSchema"] == registry["get_weather"].input_schema
    assert by_name["get_weather"]["description"] == "Forecast for a city."
    assert "parameters" not in by_name["create_order"]
    # a function without parameters leaves them unset, as Gemini documents
    assert set(by_name["ping"]) == {"name", "description"}
    assert payload["toolConfig"] == {"functionCallingConfig": {"mode": "AUTO"}}


def test_payload_does_not_mutate_canonical_schema(gemini: GeminiProvider, registry: Registry) -> None:
    before = copy.deepcopy(registry["create_order"].input_schema)
    GeminiProvider(schema_format="openapi").format_tools(registry)
    gemini.format_tools(registry, strict=True)
    assert registry["create_order"].input_schema == before


CHOICES: list[tuple[dict[str, Any], dict[str, Any]]] = [
    ({"tool_choice": "auto"}, {"mode": "AUTO"}),
    ({"tool_choice": "none"}, {"mode": "NONE"}),
    ({"tool_choice": "required"}, {"mode": "ANY"}),
    ({"tool_choice": "get_weather"}, {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}),
    # active_tools: the native allowed list, in registry order whatever order it was given in
    (
        {"active_tools": ["ping", "get_weather"]},
        {"mode": "VALIDATED", "allowedFunctionNames": ["get_weather", "ping"]},
    ),
    (
        {"active_tools": ["ping", "get_weather"], "tool_choice": "required"},
        {"mode": "ANY", "allowedFunctionNames": ["get_weather", "ping"]},
    ),
    (
        {"active_tools": ["ping", "get_weather"], "tool_choice": "ping"},
        {"mode": "ANY", "allowedFunctionNames": ["ping"]},
    ),
    ({"active_tools": ["get_weather"], "tool_choice": "none"}, {"mode": "NONE"}),
    ({"active_tools": ["ping", "get_weather", "create_order"]}, {"mode": "AUTO"}),  # nothing restricted
    ({"active_tools": []}, {"mode": "NONE"}),
    ({"strict": True}, {"mode": "VALIDATED"}),
    ({"strict": True, "tool_choice": "required"}, {"mode": "ANY"}),
    ({"parallel_tool_calls": False}, {"mode": "AUTO"}),  # Gemini has no switch: documented, ignored
]


@pytest.mark.parametrize(("options", "config"), CHOICES, ids=[json.dumps(o) for o, _ in CHOICES])
def test_tool_choice_forms(
    gemini: GeminiProvider, registry: Registry, options: dict[str, Any], config: dict[str, Any]
) -> None:
    payload = gemini.format_tools(registry, **options)
    assert_payload_valid(payload)
    assert payload["toolConfig"] == {"functionCallingConfig": config}
    # the declarations never change with the choice: prompt caching keeps working
    assert payload["tools"] == gemini.format_tools(registry)["tools"]


def test_required_with_no_active_tool_is_an_error(gemini: GeminiProvider, registry: Registry) -> None:
    with pytest.raises(ToolChoiceError, match="no tool could be called"):
        gemini.format_tools(registry, tool_choice="required", active_tools=[])


def test_unknown_choice_and_choice_outside_active_tools_raise(gemini: GeminiProvider, registry: Registry) -> None:
    with pytest.raises(KeyError):
        gemini.format_tools(registry, tool_choice="get_wether")
    with pytest.raises(ToolChoiceError, match="not among active_tools") as raised:
        gemini.format_tools(registry, tool_choice="ping", active_tools=["get_weather"])
    assert isinstance(raised.value, RegistryError)  # the agent raises the same class for the same mistake


def test_empty_registry_sends_nothing(gemini: GeminiProvider) -> None:
    assert gemini.format_tools(Registry()) == {}


@pytest.mark.parametrize(
    "name",
    [
        "gemini_function_declaration_bad_name",
        "gemini_function_declaration_both_params_is_invalid",
    ],
)
def test_invalid_samples_fail_the_same_validation(name: str) -> None:
    case = sample(name)
    assert case["expect_valid"] is False
    assert spec_errors(case["schema"], case["payload"])


def test_the_spec_check_bites_on_our_own_payload(gemini: GeminiProvider, registry: Registry) -> None:
    payload = gemini.format_tools(registry, tool_choice="get_weather")
    declaration = dict(declarations(payload)[0])
    declaration["parameters"] = {"type": "OBJECT"}  # both schema fields at once
    assert spec_errors("gemini.function_declaration", declaration)
    config = copy.deepcopy(payload["toolConfig"])
    config["functionCallingConfig"]["mode"] = "REQUIRED"  # OpenAI's spelling is not a Gemini mode
    assert spec_errors("gemini.tool_config", config)


def test_valid_samples_pass() -> None:
    for name in ("gemini_tool_json_schema", "gemini_tool_config_any", "gemini_function_response"):
        case = sample(name)
        assert_spec_valid(case["schema"], case["payload"])


# ---- names and aliases -------------------------------------------------------------------------------


def test_rejected_key_names_key_vendor_and_rule(gemini: GeminiProvider) -> None:
    tools = Registry({"search docs": ping, "9lives": get_weather})
    with pytest.raises(InvalidToolNameError) as info:
        gemini.format_tools(tools)
    assert info.value.key == "search docs"
    assert info.value.vendor == "gemini"
    assert info.value.rule == r"^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$"


def test_gemini_accepts_dots_colons_and_dashes(gemini: GeminiProvider) -> None:
    tools = Registry({"mcp:files.read-text": ping})
    payload = gemini.format_tools(tools)
    assert declarations(payload)[0]["name"] == "mcp:files.read-text"


def test_aliases_are_sent_and_mapped_back(gemini: GeminiProvider) -> None:
    tools = Registry({"search docs": ping, "9lives": get_weather})
    payload = gemini.format_tools(tools, aliases=True, tool_choice="9lives")
    assert_payload_valid(payload)
    sent = [d["name"] for d in declarations(payload)]
    assert sent == ["search_docs", "_9lives"]
    assert payload["toolConfig"]["functionCallingConfig"]["allowedFunctionNames"] == ["_9lives"]
    response = {
        "candidates": [{"content": {"parts": [{"functionCall": {"name": "_9lives", "args": {"city": "Rome"}}}]}}]
    }
    [call] = gemini.parse_tool_calls(response, registry=tools, aliases=True)
    assert call.name == "9lives"
    # the result goes back under the alias: with the registry, and by the deterministic alias without it
    result = ToolResult(call_id=call.id, name=call.name, content=[TextPart('{"temp": 1}')])
    with_registry = gemini.format_tool_results([result], registry=tools, aliases=True)
    assert with_registry[0]["parts"][0]["functionResponse"]["name"] == "_9lives"
    assert gemini.format_tool_results([result]) == with_registry


# ---- the OpenAPI-subset form -------------------------------------------------------------------------


def test_openapi_form_is_valid_and_lints_clean(registry: Registry) -> None:
    provider = GeminiProvider(schema_format="openapi")
    payload = provider.format_tools(registry)
    assert_payload_valid(payload)
    lint = lint_module().lint_gemini_openapi_subset
    for declaration in declarations(payload):
        assert "parametersJsonSchema" not in declaration
        if "parameters" in declaration:
            assert_spec_valid("gemini.schema_openapi_subset", declaration["parameters"])
            assert [f for f in lint(declaration["parameters"]) if f[0] != "info"] == []
    order = declarations(payload)[0]["parameters"]
    assert order["type"] == "OBJECT"
    address = order["properties"]["address"]  # $ref inlined
    assert address["type"] == "OBJECT" and address["properties"]["zip_code"] == {
        "type": "STRING",
        "default": None,
        "nullable": True,
    }
    assert order["properties"]["items"]["items"]["properties"]["quantity"]["minimum"] == 1
    assert order["properties"]["priority"] == {
        "type": "STRING",
        "enum": ["low", "normal", "high"],
        "default": "normal",
        "description": "How urgent.",
    }
    assert order["properties"]["note"]["nullable"] is True


def test_every_zoo_tool_converts_to_a_valid_openapi_subset() -> None:
    from tests.zoo import zoo_registry

    lint = lint_module().lint_gemini_openapi_subset
    tools = zoo_registry()
    for schema_format in ("json_schema", "openapi"):
        provider = GeminiProvider(schema_format=schema_format)  # type: ignore[arg-type]
        payload = provider.format_tools(tools)
        assert_payload_valid(payload)
        for declaration in declarations(payload):
            if "parameters" in declaration:
                assert_spec_valid("gemini.schema_openapi_subset", declaration["parameters"])
                assert lint(declaration["parameters"]) == []
        for key in tools:
            assert not provider.schema_dialect(tools[key]).rejected


def test_a_free_form_map_root_keeps_its_schema(gemini: GeminiProvider) -> None:
    tagger = Tool.from_json_schema("tag", {"type": "object", "additionalProperties": {"type": "string"}})
    [declaration] = declarations(gemini.format_tools(Registry([tagger])))
    assert declaration["parametersJsonSchema"] == {"type": "object", "additionalProperties": {"type": "string"}}


def test_openapi_instance_is_accepted_wherever_a_name_is(registry: Registry) -> None:
    provider = GeminiProvider(schema_format="openapi")
    assert get_provider(provider) is provider
    register_provider("gemini-openapi-test", provider)
    assert get_provider("gemini-openapi-test") is provider
    [report] = compatibility(registry.select(["create_order"]), provider)
    assert report.provider == "gemini"
    assert any(loss.keyword == "additionalProperties" for loss in report.losses)
    assert isinstance(get_provider("gemini"), GeminiProvider)
    assert get_provider("gemini").schema_format == "json_schema"


def test_both_forms_of_one_tool_do_not_share_a_cache(registry: Registry) -> None:
    json_form = GeminiProvider().format_tools(registry)
    openapi_form = GeminiProvider(schema_format="openapi").format_tools(registry)
    assert "parametersJsonSchema" in declarations(json_form)[0]
    assert "parameters" in declarations(openapi_form)[0]
    assert "parametersJsonSchema" in declarations(GeminiProvider().format_tools(registry))[0]


def test_bad_schema_format_is_refused() -> None:
    with pytest.raises(ValueError, match="schema_format"):
        GeminiProvider(schema_format="yaml")  # type: ignore[arg-type]


def losses(result: Any) -> dict[tuple[str, str], Any]:
    return {(loss.path, loss.keyword): loss for loss in result.losses}


def test_openapi_dialect_conversions() -> None:
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "kind": {"const": "circle"},
            "level": {"type": "integer", "enum": [1, 2, 3]},
            "maybe": {"type": ["string", "null"], "description": "Text or nothing."},
            "either": {"type": ["string", "integer"]},
            "radius": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.5, "description": "Size."},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
            "shape": {"oneOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}]},
            "labels": {"type": "object", "patternProperties": {"^x-": {"type": "string"}}},
            "flag": {"enum": [True, False, None]},
            "bad-name": {"type": "string"},
            "id": {"type": "string", "format": "uuid"},
        },
        "required": ["kind"],
        "$defs": {
            "A": {"type": "object", "properties": {"a": {"type": "integer"}}},
            "B": {"type": "object", "properties": {"b": {"type": "integer"}}, "not": {"required": ["a"]}},
        },
    }
    original = copy.deepcopy(schema)
    result = GeminiOpenAPIDialect().rewrite(schema, strict=None)
    assert schema == original
    out = result.schema
    assert_spec_valid("gemini.schema_openapi_subset", out)
    props = out["properties"]
    assert props["kind"] == {"enum": ["circle"]}
    assert props["level"] == {"type": "INTEGER", "enum": ["1", "2", "3"], "format": "enum"}
    assert props["maybe"] == {"type": "STRING", "description": "Text or nothing.", "nullable": True}
    assert props["either"] == {"anyOf": [{"type": "STRING"}, {"type": "INTEGER"}]}
    assert props["radius"]["description"] == "Size. (exclusiveMinimum: 0) (multipleOf: 0.5)"
    assert "exclusiveMinimum" not in props["radius"] and "multipleOf" not in props["radius"]
    assert "uniqueItems" not in props["tags"] and "uniqueItems" in props["tags"]["description"]
    assert props["shape"]["anyOf"][0] == {"type": "OBJECT", "properties": {"a": {"type": "INTEGER"}}}
    assert "not" not in props["shape"]["anyOf"][1]
    assert props["labels"] == {"type": "OBJECT"}
    assert props["flag"] == {"enum": ["true", "false"], "nullable": True}
    assert "format" not in props["id"] and "uuid" in props["id"]["description"]
    assert "additionalProperties" not in out and "defs" not in out and "$defs" not in out

    found = losses(result)
    assert found[("/properties/level", "enum")].change.startswith("values turned into strings")
    assert found[("/properties/flag", "enum")]
    assert found[("/properties/radius", "exclusiveMinimum")].change == "moved into the description"
    assert found[("/properties/shape", "oneOf")].change.startswith("turned into anyOf")
    assert found[("/properties/labels", "patternProperties")].change.startswith("dropped")
    assert found[("/properties/shape/oneOf/1", "not")].change.startswith("dropped")
    assert found[("", "additionalProperties")].change.startswith("dropped")
    assert found[("/properties/bad-name", "properties")].rejected
    assert [loss.keyword for loss in result.rejected] == ["properties"]  # only the bad name is fatal


def test_openapi_dialect_describes_map_values() -> None:
    schema = {
        "type": "object",
        "properties": {
            "scores": {"type": "object", "additionalProperties": {"type": "integer"}, "description": "Per player."}
        },
    }
    result = GeminiOpenAPIDialect().rewrite(schema, strict=None)
    assert result.schema["properties"]["scores"] == {
        "type": "OBJECT",
        "description": 'Per player. (values: {"type": "integer"})',
    }
    assert losses(result)[("/properties/scores", "additionalProperties")].change == "moved into the description"


def test_openapi_dialect_keeps_recursive_refs_as_ref_defs() -> None:
    schema = {
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/Node"}},
        "required": ["root"],
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                },
            }
        },
    }
    result = GeminiOpenAPIDialect().rewrite(schema, strict=None)
    assert_spec_valid("gemini.schema_openapi_subset", result.schema)
    assert result.schema["properties"]["root"] == {"ref": "#/defs/Node"}
    assert result.schema["defs"]["Node"]["properties"]["children"]["items"] == {"ref": "#/defs/Node"}
    assert not result.losses  # nothing cut: Gemini resolves its own references


def test_openapi_no_argument_tool_leaves_parameters_unset(registry: Registry) -> None:
    payload = GeminiProvider(schema_format="openapi").format_tools(registry)
    assert "parameters" not in declarations(payload)[2]


# ---- the JSON Schema dialect -------------------------------------------------------------------------


def test_json_schema_dialect_records_what_gemini_ignores() -> None:
    schema = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": 50},
            "step": {"type": "number", "multipleOf": 0.5},
            "id": {"type": "string", "format": "uuid"},
            "when": {"type": "string", "format": "date-time"},
            "kind": {"const": "x"},
            "shape": {"oneOf": [{"type": "integer"}, {"type": "string"}]},
        },
    }
    original = copy.deepcopy(schema)
    result = GeminiJsonSchemaDialect().rewrite(schema, strict=None)
    assert schema == original
    assert result.strict is False
    found = losses(result)
    assert "documented as ignored" in found[("/properties/query", "minLength")].change
    assert "not in Gemini's documented subset" in found[("/properties/step", "multipleOf")].change
    assert "'uuid'" in found[("/properties/id", "format")].change
    assert ("/properties/when", "format") not in found
    assert not result.rejected
    props = result.schema["properties"]
    assert props["query"] == schema["properties"]["query"]  # recorded, not removed
    assert props["kind"] == {"enum": ["x"]}
    assert props["shape"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}


# ---- strict ------------------------------------------------------------------------------------------


async def test_strict_is_request_level_and_null_means_default(gemini: GeminiProvider, registry: Registry) -> None:
    payload = gemini.format_tools(registry, strict=True)
    assert payload["toolConfig"]["functionCallingConfig"]["mode"] == "VALIDATED"
    weather = declarations(payload)[1]["parametersJsonSchema"]
    # constrained decoding copes with optional parameters: nothing is forced into `required`
    assert weather["required"] == ["city"]
    assert gemini.schema_dialect(registry["get_weather"], True).strict is True
    assert gemini.schema_dialect(registry["get_weather"]).strict is False

    # a model that sends null for a defaulted, non-nullable parameter gets the Python default
    response = {
        "candidates": [
            {"content": {"parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Oslo", "days": None}}}]}}
        ]
    }
    [call] = gemini.parse_tool_calls(response, registry=registry)
    assert call.arguments == {"city": "Oslo"}
    result = await registry.call(call)
    assert not result.is_error
    assert result.output == {"city": "Oslo", "temp": 21, "unit": "c", "days": 1}
    # without the registry the null stays, and validation reports it
    [raw] = gemini.parse_tool_calls(response)
    assert (await registry.call(raw)).is_error


# ---- parsing -----------------------------------------------------------------------------------------


def test_recorded_parts_match_the_spec() -> None:
    for name in ("text_only", "single_call", "parallel_calls"):
        for part in fixture(name)["candidates"][0]["content"]["parts"]:
            assert_spec_valid("gemini.part", part)
    for chunk in fixture("stream"):
        for part in chunk["candidates"][0]["content"]["parts"]:
            assert_spec_valid("gemini.part", part)


def test_text_only_response_has_no_calls(gemini: GeminiProvider) -> None:
    assert gemini.parse_tool_calls(fixture("text_only")) == []
    assert gemini.parse_tool_calls({}) == []
    assert gemini.parse_tool_calls({"candidates": []}) == []


def test_single_call_keeps_id_args_and_thought_signature(gemini: GeminiProvider, registry: Registry) -> None:
    [call] = gemini.parse_tool_calls(fixture("single_call"), registry=registry)
    assert call.id == "x7k2p9qa"
    assert call.name == "get_weather"
    assert call.arguments == {"city": "Paris", "unit": "c"}
    assert call.provider_details == {"thoughtSignature": "CiQBcsjafOSnpx3xMOoVDJFvR8cQTvmEFMfLG3b3e8y3K5YVZ8QKYgFyyNp8"}


def test_parallel_calls_without_ids_get_deterministic_ids(gemini: GeminiProvider, registry: Registry) -> None:
    calls = gemini.parse_tool_calls(fixture("parallel_calls"), registry=registry)
    assert [c.name for c in calls] == ["get_weather", "get_weather", "ping"]
    assert calls[1].arguments == {"city": "Tokyo", "unit": "f", "days": 3}
    assert [c.id.split("_")[2] for c in calls] == ["0", "1", "2"]  # numbered by position
    assert all(c.id.startswith(GENERATED_ID_PREFIX) for c in calls)
    assert len({c.id for c in calls}) == 3
    assert [c.id for c in gemini.parse_tool_calls(fixture("parallel_calls"))] == [c.id for c in calls]
    assert calls[0].provider_details is not None and calls[1].provider_details is None


def test_snake_case_and_sdk_objects_are_read(gemini: GeminiProvider) -> None:
    [call] = gemini.parse_tool_calls(fixture("sdk_snake_case"))
    assert (call.id, call.name, call.arguments) == ("c0ffee01", "get_weather", {"city": "Oslo"})
    assert call.provider_details == {
        "thoughtSignature": fixture("sdk_snake_case")["candidates"][0]["content"]["parts"][0]["thought_signature"]
    }

    # google-genai models are pydantic with camelCase aliases: as_dict dumps them by alias
    class Model(BaseModel):
        model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    class FunctionCall(Model):
        id: str | None = None
        name: str
        args: dict[str, Any]

    class Part(Model):
        function_call: FunctionCall | None = None
        text: str | None = None
        thought_signature: str | None = None

    class Content(Model):
        role: str
        parts: list[Part]

    class Candidate(Model):
        content: Content
        finish_reason: str | None = None

    class Response(Model):
        candidates: list[Candidate]

    response = Response(
        candidates=[
            Candidate(
                content=Content(
                    role="model",
                    parts=[
                        Part(text="One moment."),
                        Part(function_call=FunctionCall(name="ping", args={}), thought_signature="c2ln"),
                    ],
                ),
                finish_reason="STOP",
            )
        ]
    )
    [sdk_call] = gemini.parse_tool_calls(response)
    assert sdk_call.name == "ping" and sdk_call.arguments == {}
    assert sdk_call.provider_details == {"thoughtSignature": "c2ln"}


def test_only_the_first_candidate_is_read(gemini: GeminiProvider) -> None:
    first = {"content": {"parts": [{"functionCall": {"id": "a", "name": "ping", "args": {}}}]}}
    second = {"content": {"parts": [{"functionCall": {"id": "b", "name": "get_weather", "args": {}}}]}}
    assert [c.id for c in gemini.parse_tool_calls({"candidates": [first, second]})] == ["a"]


# ---- streaming ---------------------------------------------------------------------------------------


def test_stream_accumulates_whole_calls(gemini: GeminiProvider, registry: Registry) -> None:
    chunks = fixture("stream")
    acc = gemini.stream(registry=registry)
    deltas = [acc.feed(chunk) for chunk in chunks]
    assert deltas[0] == []
    [first] = deltas[1]
    assert first.index == 0 and first.name == "get_weather"
    assert json.loads(first.arguments_delta) == {"city": "Paris", "days": 2}
    assert first.arguments_so_far == first.arguments_delta
    [second] = deltas[2]
    assert second.index == 1 and second.name == "create_order"
    assert json.loads(second.arguments_so_far)["items"] == [{"sku": "A-1", "quantity": 2}]
    assert acc.partial == {0: first.arguments_delta, 1: second.arguments_delta}

    calls = acc.tool_calls()
    # the same calls delivered in one response parse to the same ToolCalls (ids included)
    merged = {
        "candidates": [{"content": {"parts": [p for c in chunks for p in c["candidates"][0]["content"]["parts"]]}}]
    }
    assert calls == gemini.parse_tool_calls(merged, registry=registry)
    assert calls[0].provider_details == {"thoughtSignature": "CiIBcsjafJ2h4rR0v0nKQ2x1m3b8e5WzX4cYQnB6b7uE"}
    assert calls[1].arguments["address"] == {"street": "1 Main St", "city": "Paris"}  # type: ignore[index]


async def test_streamed_calls_run(gemini: GeminiProvider, registry: Registry) -> None:
    acc = gemini.stream(registry=registry)
    for chunk in fixture("stream"):
        acc.feed(chunk)
    results = await registry.call_many(acc.tool_calls())
    assert [r.is_error for r in results] == [False, False]
    assert results[1].output["lines"] == 1


# ---- results -----------------------------------------------------------------------------------------


def function_responses(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    [message] = content
    assert message["role"] == "user"
    for part in message["parts"]:
        assert_spec_valid("gemini.part", part)
        assert_spec_valid("gemini.function_response", part["functionResponse"])
    return [part["functionResponse"] for part in message["parts"]]


async def test_ok_and_error_results(gemini: GeminiProvider, registry: Registry) -> None:
    calls = gemini.parse_tool_calls(fixture("parallel_calls"), registry=registry)
    calls.append(ToolCall(id="call-9", name="get_weather", arguments={"city": 5}))  # invalid arguments
    results = await registry.call_many(calls)
    responses = function_responses(gemini.format_tool_results(results, registry=registry))
    assert [r["name"] for r in responses] == ["get_weather", "get_weather", "ping", "get_weather"]
    # generated ids are never sent: Gemini matches those by name and order
    assert ["id" in r for r in responses] == [False, False, False, True]
    assert responses[3]["id"] == "call-9"
    # structured output, always under "output" (a bare object with an "error" key would read as an error)
    assert responses[0]["response"] == {"output": {"city": "Paris", "temp": 21, "unit": "c", "days": 1}}
    assert responses[2]["response"] == {"output": "pong"}
    assert set(responses[3]["response"]) == {"error"}
    assert "Invalid arguments for tool 'get_weather'" in responses[3]["response"]["error"]


def test_result_ids_are_passed_through(gemini: GeminiProvider) -> None:
    [call] = gemini.parse_tool_calls(fixture("single_call"))
    result = ToolResult(call_id=call.id, name=call.name, content=[TextPart("sunny")])
    [response] = function_responses(gemini.format_tool_results([result]))
    assert response == {"id": "x7k2p9qa", "name": "get_weather", "response": {"output": "sunny"}}
    assert gemini.format_tool_results([]) == []


def test_text_shaped_by_to_model_output_wins_over_raw_output(gemini: GeminiProvider) -> None:
    result = ToolResult(call_id="c1", name="get_weather", content=[TextPart("Mild, 21 C")], output={"temp": 21})
    [response] = function_responses(gemini.format_tool_results([result]))
    assert response["response"] == {"output": "Mild, 21 C"}


def test_error_without_text_still_says_error(gemini: GeminiProvider) -> None:
    result = ToolResult(call_id="c1", name="ping", content=[], is_error=True, error_kind="exception")
    [response] = function_responses(gemini.format_tool_results([result]))
    assert response["response"] == {"error": "The tool failed."}


PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


def test_image_results_go_into_function_response_parts(gemini: GeminiProvider) -> None:
    result = ToolResult(
        call_id="c1",
        name="render",
        content=[
            TextPart("Here is the chart."),
            ImagePart(data=PNG, media_type="image/png"),
            ImagePart(url="https://example.com/a.jpg", media_type="image/jpeg"),
            ImagePart(url="data:image/webp;base64,UklGRg==", media_type="image/webp"),
            ImagePart(data=b"GIF89a", media_type="image/gif"),
        ],
    )
    [response] = function_responses(gemini.format_tool_results([result]))
    inline, remote, data_url = response["parts"]
    assert inline == {"inlineData": {"mimeType": "image/png", "data": base64.b64encode(PNG).decode()}}
    assert base64.b64decode(inline["inlineData"]["data"]) == PNG
    assert remote == {"fileData": {"mimeType": "image/jpeg", "fileUri": "https://example.com/a.jpg"}}
    assert data_url == {"inlineData": {"mimeType": "image/webp", "data": "UklGRg=="}}
    output = response["response"]["output"]
    assert output.startswith("Here is the chart.")
    assert "image/gif" in output and "not shown" in output  # a type Gemini does not take: text fallback


def test_images_fall_back_to_text_for_older_models() -> None:
    provider = GeminiProvider(tool_result_images=False)
    result = ToolResult(call_id="c1", name="render", content=[ImagePart(data=PNG, media_type="image/png")])
    [response] = function_responses(provider.format_tool_results([result]))
    assert "parts" not in response
    assert "cannot receive images" in response["response"]["output"]


def test_image_in_an_error_result(gemini: GeminiProvider) -> None:
    result = ToolResult(
        call_id="c1",
        name="render",
        content=[TextPart("Rendering failed; partial output attached."), ImagePart(data=PNG)],
        is_error=True,
        error_kind="tool_error",
    )
    [response] = function_responses(gemini.format_tool_results([result]))
    assert response["response"] == {"error": "Rendering failed; partial output attached."}
    assert response["parts"][0]["inlineData"]["mimeType"] == "image/png"


# ---- history replay ----------------------------------------------------------------------------------


def test_model_content_replays_calls_with_signatures(gemini: GeminiProvider, registry: Registry) -> None:
    calls = gemini.parse_tool_calls(fixture("parallel_calls"), registry=registry)
    content = gemini.model_content(calls, text="Checking both cities.", registry=registry)
    assert content["role"] == "model"
    for part in content["parts"]:
        assert_spec_valid("gemini.part", part)
    original = fixture("parallel_calls")["candidates"][0]["content"]["parts"]
    assert content["parts"] == original  # same parts, same order, signature on the same part


def test_model_content_keeps_real_ids(gemini: GeminiProvider) -> None:
    calls = gemini.parse_tool_calls(fixture("single_call"))
    content = gemini.model_content(calls)
    assert content["parts"] == fixture("single_call")["candidates"][0]["content"]["parts"]


def test_tool_from_json_schema_with_bad_property_name_is_reported() -> None:
    odd = Tool.from_json_schema("lookup", {"type": "object", "properties": {"user-id": {"type": "string"}}})
    [json_report] = compatibility(odd, GeminiProvider())
    assert not json_report.rejected  # parametersJsonSchema has no property-name rule
    [openapi_report] = compatibility(odd, GeminiProvider(schema_format="openapi"))
    assert openapi_report.rejected
