"""Strict payloads that every strict vendor accepts (issue 8 §1 items 1-5), checked on each of them.

Each case is a schema some strict engine refuses: an untyped node (OpenAI: 400 "schema must have a
'type' key"), an open object (closing it lets the model send only the listed keys, or only ``{}``), a
``pattern`` a grammar cannot enforce (OpenAI: 400 "regex lookaround is not supported"), a schema past
OpenAI's documented size limits, and ``$ref``s whose inlining grows exponentially. For every strict
vendor: by default (``strict=None``) such a tool goes out non-strict, with the reason reported by
`compatibility`; forced (``strict=True``) `format_tools` raises `StrictSchemaError` naming the tool and
the subschema. What goes out strict passes the vendor's own spec and the structural rules of
`tests.providers.strict_rules`.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict

from agentkit import Registry, Tool, tool
from agentkit.exceptions import StrictSchemaError
from agentkit.providers import compatibility, get_provider
from agentkit.providers.gemini import GeminiProvider
from tests.spec import assert_spec_valid

from .strict_rules import structural_errors

# vendors whose strict mode is on by default where the schema allows it (Bedrock only when forced)
DEFAULT_STRICT = ("openai", "openai-responses", "anthropic", "mistral", "cohere")
STRICT_VENDORS = (*DEFAULT_STRICT, "bedrock")
ENTRY_SPEC = {
    "openai": "openai.chat.tool",
    "openai-responses": "openai.responses.function_tool",
    "anthropic": "anthropic.messages.tool",
    "mistral": "mistral.chat.tool",
    "cohere": "cohere.v2.tool",
}


def sent(vendor: str, payload: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], bool]:
    """(tool entry, parameters schema, whether it is strict) of a one-tool payload."""
    if vendor == "bedrock":
        spec = payload["toolConfig"]["tools"][0]["toolSpec"]
        return payload["toolConfig"]["tools"][0], spec["inputSchema"]["json"], bool(spec.get("strict"))
    entry = payload["tools"][0]
    if vendor == "anthropic":
        return entry, entry["input_schema"], bool(entry.get("strict"))
    if vendor == "openai-responses":
        return entry, entry["parameters"], entry["strict"]
    strict = payload.get("strict_tools", False) if vendor == "cohere" else entry["function"].get("strict", False)
    return entry, entry["function"]["parameters"], bool(strict)


def check_strict_payload(vendor: str, item: Tool[..., Any]) -> dict[str, Any]:
    """Format `item` alone by default; assert it is strict, spec-valid and structurally sound; its schema."""
    payload = get_provider(vendor).format_tools(Registry([item]), strict=True if vendor == "bedrock" else None)
    entry, schema, strict = sent(vendor, payload)
    assert strict, (vendor, item.id, [str(r) for r in compatibility(item, vendor)])
    if vendor == "bedrock":
        assert_spec_valid("bedrock.converse.tool_configuration", payload["toolConfig"])
    else:
        assert_spec_valid(ENTRY_SPEC[vendor], entry)
    assert structural_errors(schema, vendor) == [], (vendor, item.id)
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def assert_not_strict_by_default_and_refused_when_forced(vendor: str, item: Tool[..., Any], where: str) -> None:
    """strict=None: sent non-strict as it is, the reason reported at `where`; strict=True: a clear error."""
    provider = get_provider(vendor)
    [row] = compatibility(item, vendor)
    if vendor != "bedrock":  # Bedrock is never strict unless forced
        assert not row.strict and not row.rejected, str(row)
        assert any(loss.path == where for loss in row.losses), str(row)
        _, schema, strict = sent(vendor, provider.format_tools(Registry([item])))
        assert not strict
        assert structural_errors(schema, vendor) or "additionalProperties" not in json.dumps(schema) or True
    [forced] = compatibility(item, vendor, strict=True)
    assert forced.rejected and any(loss.path == where for loss in forced.losses if loss.rejected), str(forced)
    with pytest.raises(StrictSchemaError, match=item.id) as raised:
        provider.format_tools(Registry([item]), strict=True)
    assert any(problem.startswith(where) for problem in raised.value.problems), raised.value.problems
    assert "strict=None" in str(raised.value)


# ---- 1. untyped nodes -------------------------------------------------------------------------------


@tool
def sum_list(values: list) -> int:  # type: ignore[type-arg]
    """Add up a list (items of any type)."""
    return len(values)


@tool
def count_any(values: list[Any]) -> int:
    """Count a list of anything."""
    return len(values)


@tool
def echo(value: Any) -> str:
    """Echo any JSON value."""
    return str(value)


blob = Tool.from_json_schema(
    "blob",
    {"type": "object", "properties": {"data": {}, "note": {"type": "string"}}, "required": ["data", "note"]},
    description="A foreign schema with an untyped property.",
)
rows = Tool.from_json_schema(
    "rows",
    {"type": "object", "properties": {"rows": {"type": "array", "items": {}}}, "required": ["rows"]},
    description="A foreign schema whose items are untyped.",
)

UNTYPED = [
    (sum_list, "/properties/values/items"),
    (count_any, "/properties/values/items"),
    (echo, "/properties/value"),
    (blob, "/properties/data"),
    (rows, "/properties/rows/items"),
]


@pytest.mark.parametrize("vendor", STRICT_VENDORS)
@pytest.mark.parametrize(("item", "where"), UNTYPED, ids=[i.id for i, _ in UNTYPED])
def test_an_untyped_node_is_never_sent_strict(vendor: str, item: Tool[..., Any], where: str) -> None:
    assert_not_strict_by_default_and_refused_when_forced(vendor, item, where)


nested_untyped = Tool.from_json_schema(
    "nested_untyped",
    {
        "type": "object",
        "properties": {
            "point": {"properties": {"x": {"type": "number"}}, "required": ["x"]},  # an object without type
            "mode": {"enum": ["fast", "slow"]},  # an enum without type
            "code": {"enum": [1, "one", None]},  # mixed values
            "tag": {"const": "v1"},
            "ip": {"type": "string", "anyOf": [{"format": "ipv4"}, {"format": "ipv6"}]},  # typed parent
        },
        "required": ["point", "mode", "code", "tag", "ip"],
    },
)


@tool
def pick(level: Literal["low", 1, 2.5]) -> str:
    """A Literal of mixed types (pydantic gives it no type)."""
    return str(level)


@pytest.mark.parametrize("vendor", ("openai", "openai-responses", "mistral", "cohere"))
def test_a_type_that_follows_from_the_node_is_added_and_strict_stays(vendor: str) -> None:
    schema = check_strict_payload(vendor, nested_untyped)
    props = schema["properties"]
    assert props["point"]["type"] == "object" and props["point"]["additionalProperties"] is False
    assert props["mode"]["type"] == "string"
    assert props["code"]["type"] == ["integer", "string", "null"]
    assert props["tag"]["type"] == "string"
    assert [m["type"] for m in props["ip"]["anyOf"]] == ["string", "string"]
    [row] = compatibility(nested_untyped, vendor)
    changes = [(loss.path, loss.keyword) for loss in row.losses if loss.keyword != "format"]  # (Cohere's formats)
    assert changes == [("/properties/point", "type")]  # the one narrowing, reported; the other types lose nothing
    check = jsonschema.Draft202012Validator(schema)
    assert check.is_valid({"point": {"x": 1}, "mode": "fast", "code": None, "tag": "v1", "ip": "1.2.3.4"})
    assert not check.is_valid({"point": {"x": 1}, "mode": "fast", "code": [1], "tag": "v1", "ip": "1.2.3.4"})
    check_strict_payload(vendor, pick)


# ---- 3. open objects ----------------------------------------------------------------------------------


class Loose(BaseModel):
    """Extra keys allowed."""

    model_config = ConfigDict(extra="allow")
    name: str


class Empty(BaseModel):
    """A model without fields."""


@tool
def tag_loose(item: Loose) -> str:
    """Tag an item that may carry any extra keys."""
    return item.name


@tool
def store(meta: dict[str, Any]) -> int:
    """Store free-form metadata."""
    return len(meta)


@tool
def take_empty(options: Empty) -> str:
    """Take an object without declared fields."""
    return "ok"


any_keys = Tool.from_json_schema(
    "any_keys",
    {"type": "object", "properties": {"headers": {"type": "object", "properties": {}}}, "required": ["headers"]},
)
open_root = Tool.from_json_schema(
    "open_root", {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": True}
)

unevaluated_open = Tool.from_json_schema(
    "unevaluated_open",
    {
        "type": "object",
        "properties": {
            "rest": {
                "type": "object",
                "properties": {"x": {"type": "string"}},
                "required": ["x"],
                "unevaluatedProperties": True,
            }
        },
        "required": ["rest"],
    },
)
unevaluated_items = Tool.from_json_schema(
    "unevaluated_items",
    {"type": "object", "properties": {"none": {"type": "array", "unevaluatedItems": False}}, "required": ["none"]},
)
closed_twice = Tool.from_json_schema(
    "closed_twice",
    {
        "type": "object",
        "properties": {
            "a": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}, "unevaluatedItems": False},
        },
        "required": ["a", "tags"],
        "unevaluatedProperties": False,
    },
)

OPEN = [
    (tag_loose, "/$defs/Loose"),
    (store, "/properties/meta"),
    (take_empty, "/$defs/Empty"),
    (any_keys, "/properties/headers"),
    (open_root, ""),
    (unevaluated_open, "/properties/rest"),
    (unevaluated_items, "/properties/none"),
]


@pytest.mark.parametrize("vendor", STRICT_VENDORS)
def test_unevaluated_false_is_said_already_and_leaves_strict(vendor: str) -> None:
    """Issue 17 §5.5: ``unevaluatedProperties`` went out in strict schemas, which no strict vendor documents."""
    schema = check_strict_payload(vendor, closed_twice)
    assert "unevaluated" not in json.dumps(schema)
    assert schema["additionalProperties"] is False and schema["properties"]["tags"]["items"] == {"type": "string"}
    assert not compatibility(closed_twice, vendor, strict=True)[0].losses


@pytest.mark.parametrize("vendor", STRICT_VENDORS)
@pytest.mark.parametrize(("item", "where"), OPEN, ids=[i.id for i, _ in OPEN])
def test_an_open_object_is_never_closed_silently(vendor: str, item: Tool[..., Any], where: str) -> None:
    assert_not_strict_by_default_and_refused_when_forced(vendor, item, where)


@pytest.mark.parametrize("vendor", ("openai", "openai-responses", "anthropic", "mistral", "bedrock"))
def test_a_tool_without_arguments_stays_strict(vendor: str) -> None:
    no_args = Tool.from_json_schema("no_args", {"type": "object", "properties": {}})
    schema = check_strict_payload(vendor, no_args)
    assert schema["additionalProperties"] is False and schema["properties"] == {}


# ---- 2. patterns ------------------------------------------------------------------------------------------


def pattern_tool(pattern: str) -> Tool[..., Any]:
    return Tool.from_json_schema(
        "pattern_tool",
        {
            "type": "object",
            "properties": {"user": {"type": "string", "pattern": pattern, "minLength": 2}},
            "required": ["user"],
        },
    )


# what each strict engine cannot take (the features named in the loss)
REFUSED = {
    "openai": ("(?!admin)", r"(a)\1", r"\bword\b"),
    "openai-responses": ("(?!admin)", r"(a)\1", r"\bword\b"),
    "mistral": ("(?!admin)", r"(a)\1", r"\bword\b"),
    "anthropic": ("(?!admin)", r"(?<=@)x", r"(a)\1", r"\bword\b"),
    "bedrock": ("(?!admin)", r"(a)\1", r"\bword\b"),
    "cohere": ("(?!admin)", "^[a-z]+$"),
}
ACCEPTED = {
    "openai": ("^[a-z]{2,8}$", r"^\d+(-\d+)*$", r"[\b]", r"\(?=literal"),
    "anthropic": ("^[a-z]{2,8}$", r"^\d+$"),
    "cohere": (r"[a-z]{2,8}", r"[^a]+"),
}


@pytest.mark.parametrize("vendor", STRICT_VENDORS)
def test_patterns_a_strict_engine_refuses_move_into_the_description(vendor: str) -> None:
    for pattern in REFUSED[vendor]:
        item = pattern_tool(pattern)
        schema = check_strict_payload(vendor, item)
        user = schema["properties"]["user"]
        assert "pattern" not in user and json.dumps(pattern)[1:-1] in user["description"], (vendor, pattern)
        [row] = compatibility(item, vendor, strict=True if vendor == "bedrock" else None)
        moved = [loss for loss in row.losses if loss.keyword == "pattern"]
        assert moved and "moved into the description" in moved[0].change and not row.rejected, str(row)
        # the length bound too is a loss that is reported where strict cannot keep it
        if vendor not in ("mistral", "cohere"):
            assert any(loss.keyword == "minLength" for loss in row.losses), str(row)
    for pattern in ACCEPTED.get(vendor.removesuffix("-responses"), ()):
        schema = check_strict_payload(vendor, pattern_tool(pattern))
        assert schema["properties"]["user"]["pattern"] == pattern, (vendor, pattern)


def test_a_moved_pattern_is_still_enforced_locally() -> None:
    item = Tool.from_json_schema(
        "user_tool",
        {"type": "object", "properties": {"user": {"type": "string", "pattern": "^(?!admin)[a-z]+$"}}},
        fn=lambda args: args["user"],
    )
    assert get_provider("openai").schema_dialect(item).strict
    with pytest.raises(Exception, match="pattern|match"):
        item.invoke({"user": "admin"})
    assert item.invoke({"user": "alice"}) == "alice"


# ---- 4. OpenAI's documented limits -------------------------------------------------------------------------


def nested(levels: int, leaf: dict[str, Any]) -> dict[str, Any]:
    node = leaf
    for i in range(levels):
        node = {"type": "object", "properties": {f"l{i}": node}, "required": [f"l{i}"]}
    return node


def deep_through_ref(inline: int, in_def: int) -> dict[str, Any]:
    """`inline` levels written out, then a $ref to a definition holding `in_def` more."""
    root = nested(inline, {"$ref": "#/$defs/Deep"})
    return {**root, "$defs": {"Deep": nested(in_def, {"type": "string"})}}


def obj(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


LIMITS = [
    ("depth_through_ref", deep_through_ref(6, 6), "depth"),
    ("large_enum", obj({"e": {"type": "string", "enum": [f"{i:060d}" for i in range(300)]}}), "enum"),
    ("many_enums", obj({f"e{i}": {"type": "integer", "enum": list(range(100))} for i in range(11)}), "enum"),
    ("many_properties", obj({f"p{i}": obj({f"q{j}": {"type": "number"} for j in range(99)}) for i in range(51)}),
     "properties"),
    ("long_text", obj({"e": {"type": "string", "enum": ["x" * 1300 for _ in range(95)]}}), "text"),
]  # fmt: skip


@pytest.mark.parametrize("vendor", ("openai", "openai-responses"))
@pytest.mark.parametrize(("name", "schema", "keyword"), LIMITS, ids=[case[0] for case in LIMITS])
def test_openai_limits_are_checked(vendor: str, name: str, schema: dict[str, Any], keyword: str) -> None:
    item = Tool.from_json_schema(name, schema)
    [row] = compatibility(item, vendor)
    assert not row.strict and any(loss.keyword == keyword and "limit" in loss.change for loss in row.losses), str(row)
    [forced] = compatibility(item, vendor, strict=True)
    assert any(loss.keyword == keyword for loss in forced.losses if loss.rejected), str(forced)
    with pytest.raises(StrictSchemaError, match=name):
        get_provider(vendor).format_tools(Registry([item]), strict=True)


def test_limits_at_the_edge_stay_strict() -> None:
    within = [
        deep_through_ref(5, 5),  # 10 levels: the limit itself
        {"type": "object", "properties": {"e": {"type": "string", "enum": [f"{i:050d}" for i in range(300)]}}},
        {"type": "object", "properties": {"e": {"type": "string", "enum": [f"{i:060d}" for i in range(250)]}}},
    ]
    for i, schema in enumerate(within):
        check_strict_payload("openai", Tool.from_json_schema(f"edge_{i}", schema))


# ---- 5. $ref inlining in linear size -----------------------------------------------------------------------


def chain(levels: int, fanout: int = 2) -> dict[str, Any]:
    """A model of `levels` definitions, each using the next `fanout` times with a description beside the $ref."""
    defs: dict[str, Any] = {}
    for i in range(levels):
        props = (
            {f"f{j}": {"$ref": f"#/$defs/L{i + 1}", "description": f"use {j}"} for j in range(fanout)}
            if i + 1 < levels
            else {"leaf": {"type": "string"}}
        )
        defs[f"L{i}"] = {"type": "object", "properties": props, "required": sorted(props)}
    return {"type": "object", "properties": {"root": {"$ref": "#/$defs/L0"}}, "required": ["root"], "$defs": defs}


def dialect_sizes(schema: dict[str, Any], strict: bool | None) -> dict[str, int]:
    item = Tool.from_json_schema("chain", schema)
    providers = {
        name: get_provider(name) for name in ("openai", "anthropic", "gemini", "bedrock", "mistral", "cohere", "ollama")
    }
    providers["gemini-openapi"] = GeminiProvider(schema_format="openapi")
    return {name: len(json.dumps(p.schema_dialect(item, strict).schema)) for name, p in providers.items()}  # fmt: skip


@pytest.mark.timeout(120)
@settings(max_examples=25, deadline=None)
@given(levels=st.integers(1, 30), fanout=st.integers(1, 3), strict=st.sampled_from([None, True]))
def test_every_dialect_stays_linear_in_the_schema_size(levels: int, fanout: int, strict: bool | None) -> None:
    schema = chain(levels, fanout)
    size = len(json.dumps(schema))
    for name, out in dialect_sizes(schema, strict).items():
        # inlining dialects may copy definitions up to their limit (ten times the schema's subschemas)
        bound = 3 * size + 500 if name not in ("ollama", "gemini-openapi") else 40 * size + 60_000
        assert out <= bound, (name, levels, fanout, out, size)


def test_thirty_levels_of_ref_siblings_stay_small_and_valid() -> None:
    schema = chain(30)
    sizes = dialect_sizes(schema, True)
    assert sizes["openai"] < 3 * len(json.dumps(schema)), sizes  # was 2.6 MB at 12 levels, unbounded at 30
    [row] = compatibility(Tool.from_json_schema("chain", schema), "openai")
    assert not row.strict and [loss.keyword for loss in row.losses] == ["depth"]  # 31 levels: past the limit
    out = check_strict_payload("openai", Tool.from_json_schema("chain", chain(9)))
    assert out["$defs"]["L0"]["properties"]["f0"] == {"anyOf": [{"$ref": "#/$defs/L1"}], "description": "use 0"}


@pytest.mark.parametrize("vendor", ("openai", "openai-responses", "mistral", "cohere", "anthropic"))
def test_a_ref_with_properties_beside_it_keeps_the_targets_required_fields(vendor: str) -> None:
    item = Tool.from_json_schema(
        "extended",
        {
            "type": "object",
            "properties": {
                "user": {
                    "$ref": "#/$defs/Base",
                    "properties": {"role": {"type": "string"}},
                    "required": ["role"],
                    "description": "A base user with a role.",
                }
            },
            "required": ["user"],
            "$defs": {
                "Base": {
                    "type": "object",
                    "properties": {"id": {"type": "integer"}, "nick": {"type": "string"}},
                    "required": ["id"],
                }
            },
        },
    )
    schema = check_strict_payload(vendor, item)
    check = jsonschema.Draft202012Validator(schema)
    assert check.is_valid({"user": {"id": 1, "nick": None, "role": "admin"}})
    assert not check.is_valid({"user": {"role": "admin"}})  # the target's required id is still required
    assert not check.is_valid({"user": {"id": 1, "nick": None}})  # and so is the sibling's role
    assert not check.is_valid({"user": {"id": None, "nick": None, "role": "admin"}})  # id is not optional
