"""agentkit.interop: foreign tool definitions (OpenAI, Anthropic, Gemini, Bedrock, MCP, BFCL) as Tools."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from agentkit import AgentkitWarning, Registry, RegistryError, ToolDefinitionError, ToolError, ToolInputError
from agentkit.interop import normalize_schema, registry_from_definitions, tool_from_definition

WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer", "default": 1}},
    "required": ["city"],
}


def quietly(definition: dict[str, Any], **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tool_from_definition(definition, **kwargs)


def fixed(schema: Any) -> tuple[dict[str, Any], set[str]]:
    result = normalize_schema(schema)
    Draft202012Validator.check_schema(result.schema)
    return result.schema, {f.kind for f in result.fixes}


# ---- definition shapes -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "definition",
    [
        {"type": "function", "function": {"name": "weather", "description": "Weather.", "parameters": WEATHER}},
        {"type": "function", "name": "weather", "description": "Weather.", "parameters": WEATHER},
        {"name": "weather", "description": "Weather.", "input_schema": WEATHER},
        {"name": "weather", "description": "Weather.", "inputSchema": WEATHER},
        {"name": "weather", "description": "Weather.", "parametersJsonSchema": WEATHER},
        {"toolSpec": {"name": "weather", "description": "Weather.", "inputSchema": {"json": WEATHER}}},
    ],
    ids=["openai-chat", "openai-responses", "anthropic", "mcp", "gemini", "bedrock"],
)
def test_every_vendor_shape_imports(definition: dict[str, Any]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a clean definition warns about nothing
        item = tool_from_definition(definition)
    assert item.id == "weather"
    assert item.description == "Weather."
    assert item.input_schema == WEATHER


def test_the_definition_is_not_modified() -> None:
    definition = {"name": "f", "parameters": {"type": "dict", "properties": {"x": {"type": "float"}}}}
    before = repr(definition)
    quietly(definition)
    assert repr(definition) == before


def test_fn_receives_validated_arguments() -> None:
    seen: list[dict[str, Any]] = []
    item = tool_from_definition({"name": "weather", "parameters": WEATHER}, fn=lambda args: seen.append(args) or "ok")
    assert item.invoke({"city": "Paris"}) == "ok"
    assert seen == [{"city": "Paris"}]
    with pytest.raises(ToolInputError):
        item.invoke({"days": 2})


def test_without_fn_the_tool_describes_but_does_not_run() -> None:
    item = tool_from_definition({"name": "weather", "parameters": WEATHER})
    with pytest.raises(ToolError, match="no implementation"):
        item.invoke({"city": "Paris"})


async def test_async_fn() -> None:
    async def run(args: dict[str, Any]) -> str:
        return args["city"].upper()

    item = tool_from_definition({"name": "weather", "parameters": WEATHER}, fn=run)
    assert await item.ainvoke({"city": "paris"}) == "PARIS"


def test_mcp_output_schema_and_draft07_marker() -> None:
    definition = {
        "name": "read_file",
        "title": "Read File",
        "description": "Read a file.",
        "inputSchema": {"$schema": "http://json-schema.org/draft-07/schema#", **WEATHER},
        "outputSchema": {"type": "object", "properties": {"content": {"type": "string"}}, "required": ["content"]},
        "annotations": {"readOnlyHint": True},
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # removing the draft-07 marker is quiet
        item = tool_from_definition(definition)
    assert "$schema" not in item.input_schema
    assert item.output_schema == definition["outputSchema"]


def test_bfcl_response_becomes_the_output_schema() -> None:
    definition = {
        "name": "absolute_value",
        "parameters": {"type": "dict", "properties": {"number": {"type": "float"}}, "required": ["number"]},
        "response": {"type": "dict", "properties": {"result": {"type": "float"}}},
    }
    item = quietly(definition)
    assert item.output_schema == {"type": "object", "properties": {"result": {"type": "number"}}}


def test_dotted_names_are_kept_and_strict_is_read() -> None:
    item = quietly({"name": "math.factorial", "parameters": {"type": "dict", "properties": {}}, "strict": True})
    assert item.id == "math.factorial"
    assert item.strict is True
    assert quietly({"name": "f", "parameters": {}}, id="g", strict=False).id == "g"


def test_missing_parameters_mean_no_arguments() -> None:
    item = tool_from_definition({"name": "ping", "description": "Ping."})
    assert item.input_schema == {"type": "object", "properties": {}}


@pytest.mark.parametrize(
    ("definition", "message"),
    [
        ({"description": "no name"}, 'no "name"'),
        ({"name": "f", "parameters": {"type": "string"}}, "type object"),
        ({"name": "f", "parameters": {"type": "object", "properties": {"x": {"minimum": "zero"}}}}, "not a valid"),
    ],
)
def test_definition_errors(definition: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolDefinitionError, match=message):
        quietly(definition)
    with pytest.raises(ToolDefinitionError):
        tool_from_definition("weather")  # type: ignore[arg-type]


def test_registry_from_definitions() -> None:
    definitions = [
        {"type": "function", "function": {"name": "math.sum", "parameters": {"type": "dict", "properties": {}}}},
        {"name": "weather", "inputSchema": WEATHER},
    ]
    registry = quietly_registry(definitions, fns={"weather": lambda args: args["city"]})
    assert list(registry) == ["math.sum", "weather"]
    assert registry["weather"].invoke({"city": "Oslo"}) == "Oslo"
    with pytest.raises(RegistryError):
        quietly_registry([*definitions, definitions[1]])


def quietly_registry(definitions: list[dict[str, Any]], **kwargs: Any) -> Registry:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return registry_from_definitions(definitions, **kwargs)


# ---- warnings ------------------------------------------------------------------------------------------


def test_one_warning_per_kind_naming_the_tool() -> None:
    definition = {
        "name": "geo.distance",
        "parameters": {
            "type": "dict",
            "properties": {
                "a": {"type": "float"},
                "b": {"type": "float"},
                "c": {"type": "float"},
                "d": {"type": "float"},
                "opts": {"type": "dict", "properties": {}},
            },
        },
    }
    with pytest.warns(AgentkitWarning) as caught:
        tool_from_definition(definition)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 2  # "dict" -> "object" (twice), "float" -> "number" (four times)
    assert all(m.startswith("tool 'geo.distance': input schema: ") for m in messages)
    floats = next(m for m in messages if '"float"' in m)
    assert "/properties/a, /properties/b, /properties/c and 1 more" in floats


def test_warn_false_is_silent() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        item = tool_from_definition({"name": "f", "parameters": {"type": "dict", "properties": {}}}, warn=False)
    assert item.input_schema["type"] == "object"


# ---- the repairs (each found in the BFCL corpus) -------------------------------------------------------------


@pytest.mark.parametrize(
    ("bfcl", "json_schema"),
    [
        ("dict", "object"),
        ("float", "number"),
        ("double", "number"),
        ("tuple", "array"),
        ("list", "array"),
        ("ArrayList", "array"),
        ("Array", "array"),
        ("HashMap", "object"),
        ("String", "string"),
        ("char", "string"),
        ("Boolean", "boolean"),
        ("bool", "boolean"),
        ("int", "integer"),
        ("long", "integer"),
    ],
)
def test_type_names(bfcl: str, json_schema: str) -> None:
    schema, kinds = fixed({"type": "object", "properties": {"x": {"type": bfcl}}})
    assert schema["properties"]["x"] == {"type": json_schema}
    assert kinds == {f'type "{bfcl}" -> "{json_schema}"'}


def test_any_and_empty_types_accept_any_value() -> None:
    schema, kinds = fixed(
        {"type": "dict", "properties": {"x": {"type": "any", "description": "X."}, "y": {"type": ""}}}
    )
    assert schema["properties"] == {"x": {"description": "X."}, "y": {}}
    assert 'type "any" -> any value' in kinds


def test_unknown_type_name_goes_to_the_description() -> None:
    schema, kinds = fixed({"type": "object", "properties": {"x": {"type": "Widget", "description": "A widget."}}})
    assert schema["properties"]["x"] == {"description": "A widget. Type: Widget."}
    assert kinds == {"an unknown type name dropped (kept in the description)"}


def test_type_lists_are_mapped_and_deduplicated() -> None:
    schema, _ = fixed({"type": "object", "properties": {"x": {"type": ["float", "number", "None"]}}})
    assert schema["properties"]["x"] == {"type": ["number", "null"]}


def test_nested_items_and_maps() -> None:
    schema, _ = fixed(
        {
            "type": "dict",
            "properties": {
                "points": {"type": "array", "items": {"type": "tuple", "items": {"type": "float"}}},
                "headers": {"type": "dict", "additionalProperties": {"type": "String"}},
                "tags": {"type": "list", "items": "string"},
            },
        }
    )
    props = schema["properties"]
    assert props["points"] == {"type": "array", "items": {"type": "array", "items": {"type": "number"}}}
    assert props["headers"] == {"type": "object", "additionalProperties": {"type": "string"}}
    assert props["tags"] == {"type": "array", "items": {"type": "string"}}


def test_optional_flags_become_required() -> None:
    schema, kinds = fixed(
        {
            "type": "dict",
            "properties": {
                "a": {"type": "string"},
                "b": {"type": "string", "optional": True},
                "c": {"type": "string", "optional": "true"},
                "d": {"type": "string", "required": True},
            },
            "required": ["a", "b"],
        }
    )
    assert schema["required"] == ["a", "d"]
    assert all("optional" not in p and "required" not in p for p in schema["properties"].values())
    assert 'a name both required and "optional": kept optional' in kinds


def test_root_optional_list() -> None:
    schema, _ = fixed(
        {
            "type": "dict",
            "properties": {"x": {"type": "integer"}, "w": {"type": "float"}},
            "required": ["x", "w"],
            "optional": ["w"],
        }
    )
    assert schema["required"] == ["x"] and "optional" not in schema


def test_required_naming_missing_properties_declares_them() -> None:
    schema, kinds = fixed({"type": "dict", "properties": {"p": {"type": "dict", "required": ["adults", "kids"]}}})
    assert schema["properties"]["p"] == {
        "type": "object",
        "required": ["adults", "kids"],
        "properties": {"adults": {}, "kids": {}},
    }
    assert '"required" names undeclared properties: declared as any value' in kinds


@pytest.mark.parametrize(
    ("prop", "expected", "kind"),
    [
        ({"type": "integer", "default": None}, {"type": "integer"}, "placeholder"),
        ({"type": "integer", "default": "none"}, {"type": "integer"}, "placeholder"),
        ({"type": "string", "default": None}, {"type": "string"}, "placeholder"),
        ({"type": "boolean", "default": "False"}, {"type": "boolean", "default": False}, "converted"),
        ({"type": "integer", "default": "0"}, {"type": "integer", "default": 0}, "converted"),
        ({"type": "float", "default": "1.2"}, {"type": "number", "default": 1.2}, "converted"),
        (
            {"type": "integer", "default": "The current year", "description": "Year."},
            {"type": "integer", "description": "Year. Default: The current year."},
            "moved",
        ),
        (
            {"type": "string", "enum": ["red", "blue"], "default": "any"},
            {"type": "string", "enum": ["red", "blue"], "description": "Default: any."},
            "moved",
        ),
        (
            {"type": "string", "default": True, "description": "Verify TLS."},
            {"type": "string", "description": "Verify TLS. Default: true."},
            "moved",
        ),
        ({"type": "string", "default": "None"}, {"type": "string", "default": "None"}, None),  # valid: kept
        ({"type": ["integer", "null"], "default": None}, {"type": ["integer", "null"], "default": None}, None),
    ],
)
def test_defaults_of_the_wrong_type(prop: dict[str, Any], expected: dict[str, Any], kind: str | None) -> None:
    schema, kinds = fixed({"type": "object", "properties": {"x": prop}})
    assert schema["properties"]["x"] == expected
    assert [k for k in kinds if "default" in k] == ([] if kind is None else [k for k in kinds if kind in k])
    assert (kind is None) == (not kinds - {'type "float" -> "number"'})


def test_root_default_is_dropped() -> None:
    schema, kinds = fixed({"type": "dict", "properties": {"location": {"type": "string"}}, "default": "location"})
    assert "default" not in schema
    assert "a non-object default at the root dropped" in kinds


@pytest.mark.parametrize(
    ("prop", "expected"),
    [
        (  # BFCL's SGD tools: booleans that also take "dontcare"
            {"type": "boolean", "enum": ["True", "False", "dontcare"], "default": "dontcare"},
            {"type": "string", "enum": ["True", "False", "dontcare"], "default": "dontcare"},
        ),
        (
            {"type": "integer", "enum": ["1", "2", "3"], "default": 1},
            {"type": "integer", "enum": [1, 2, 3], "default": 1},
        ),
        (  # an enum meant for the elements
            {"type": "array", "enum": ["temperature", "humidity"], "items": {"type": "string"}},
            {"type": "array", "items": {"type": "string", "enum": ["temperature", "humidity"]}},
        ),
        ({"type": "string", "enum": ["a", "a", "b"]}, {"type": "string", "enum": ["a", "b"]}),
        ({"type": "string", "enum": []}, {"type": "string"}),
        ({"enum": ["a", "b"]}, {"type": "string", "enum": ["a", "b"]}),
    ],
)
def test_enums(prop: dict[str, Any], expected: dict[str, Any]) -> None:
    schema, _ = fixed({"type": "object", "properties": {"x": prop}})
    assert schema["properties"]["x"] == expected


def test_default_inside_items_checked_against_the_items() -> None:
    schema, _ = fixed(
        {
            "type": "object",
            "properties": {
                "factors": {
                    "type": "array",
                    "items": {"type": "string", "enum": ["drift", "flow"], "default": ["drift", "flow"]},
                }
            },
        }
    )
    assert schema["properties"]["factors"]["items"] == {
        "type": "string",
        "enum": ["drift", "flow"],
        "description": 'Default: ["drift", "flow"].',
    }


def test_array_keywords_on_items_move_to_the_array() -> None:
    schema, kinds = fixed(
        {
            "type": "object",
            "properties": {"r": {"type": "array", "items": {"type": "integer", "minItems": 5, "maxItems": 100}}},
        }
    )
    assert schema["properties"]["r"] == {"type": "array", "items": {"type": "integer"}, "minItems": 5, "maxItems": 100}
    assert kinds == {"array keywords on non-array items moved to the array"}


def test_missing_types_are_inferred() -> None:
    schema, _ = fixed(
        {"properties": {"o": {"properties": {"a": {"type": "string"}}}, "l": {"items": {"type": "string"}}}}
    )
    assert schema["type"] == "object"
    assert schema["properties"]["o"]["type"] == "object"
    assert schema["properties"]["l"]["type"] == "array"


def test_older_draft_forms() -> None:
    schema, kinds = fixed(
        {
            "type": "object",
            "properties": {
                "pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}], "additionalItems": False},
                "n": {"type": "number", "minimum": 0, "exclusiveMinimum": True},
            },
            "dependencies": {"a": ["b"], "c": {"required": ["d"]}},
        }
    )
    assert schema["properties"]["pair"] == {
        "type": "array",
        "prefixItems": [{"type": "string"}, {"type": "integer"}],
        "items": False,
    }
    assert schema["properties"]["n"] == {"type": "number", "exclusiveMinimum": 0}
    assert schema["dependentRequired"] == {"a": ["b"]}
    assert schema["dependentSchemas"] == {"c": {"required": ["d"]}}
    assert len(kinds) == 3


def test_refs_and_combinators_are_walked() -> None:
    schema, _ = fixed(
        {
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A"}, "u": {"anyOf": [{"type": "float"}, {"type": "String"}]}},
            "$defs": {"A": {"type": "dict", "properties": {"x": {"type": "int", "default": "3"}}}},
        }
    )
    assert schema["$defs"]["A"] == {"type": "object", "properties": {"x": {"type": "integer", "default": 3}}}
    assert schema["properties"]["u"] == {"anyOf": [{"type": "number"}, {"type": "string"}]}


def test_a_valid_schema_is_left_alone() -> None:
    schema = {
        "type": "object",
        "properties": {
            "q": {"type": "string", "minLength": 1, "pattern": "^[a-z]+$"},
            "n": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
        },
        "required": ["q"],
        "additionalProperties": False,
    }
    result = normalize_schema(schema)
    assert result.schema == schema and result.fixes == ()


def test_root_forms() -> None:
    assert normalize_schema(None).schema == {"type": "object", "properties": {}}
    assert normalize_schema({}).schema == {"type": "object", "properties": {}}
    assert normalize_schema({"type": ["object", "null"], "properties": {}}).schema["type"] == "object"
    assert normalize_schema({"type": "string"}, root_object=False).schema == {"type": "string"}
    with pytest.raises(ValueError, match="type object"):
        normalize_schema({"type": "array"})


def test_fix_records_are_readable() -> None:
    result = normalize_schema({"type": "dict", "properties": {"x": {"type": "integer", "default": "five"}}})
    assert [str(f) for f in result.fixes] == [
        '/: type "dict" -> "object"',
        "/properties/x: a default the schema does not accept moved into the description (five)",
    ]


def test_geminis_openapi_form() -> None:
    schema, kinds = fixed(
        {
            "type": "OBJECT",
            "properties": {"n": {"type": "INTEGER", "nullable": True}, "s": {"type": "STRING", "nullable": False}},
        }
    )
    assert schema["properties"] == {"n": {"type": ["integer", "null"]}, "s": {"type": "string"}}
    assert 'OpenAPI "nullable" -> a "null" type' in kinds
