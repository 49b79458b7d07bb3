"""Every strict Claude schema (Anthropic, Bedrock) passes Anthropic's own SDK normaliser (issue 17 §5.4).

The SDK's ``transform_schema`` (``anthropic.lib._parse._transform``) is what the SDK itself sends strict tool
and output schemas through: it refuses any subschema that does not say what it is ("Schema must have a
'type', 'anyOf', 'oneOf', or 'allOf' field ..."), a member of ``anyOf`` included. Our strict dialect let
such members through. It now gives a typed parent's constraint-only members its type (the same meaning) and
treats any other untyped member as the untyped node it is (the tool goes out non-strict, reported).

The normaliser asserts on type lists (``["integer", "null"]``), which the API itself takes, so they are
narrowed to one type before the check: what is checked is the untyped-node rule.
"""

from __future__ import annotations

from typing import Any

import pytest
from anthropic.lib._parse._transform import transform_schema

from agentkit import Tool
from agentkit.exceptions import StrictSchemaError
from agentkit.providers import get_provider
from benchmarks import corpus_report as corpus


def one_type(node: Any) -> Any:
    if isinstance(node, dict):
        out = {k: one_type(v) for k, v in node.items()}
        if isinstance(out.get("type"), list):
            out["type"] = next((t for t in out["type"] if t != "null"), "null")
        return out
    if isinstance(node, list):
        return [one_type(v) for v in node]
    return node


def passes_the_sdk(schema: dict[str, Any]) -> None:
    transform_schema(one_type(schema))


IP = {"type": "string", "anyOf": [{"format": "ipv4"}, {"format": "ipv6"}]}  # in the MCP corpus
ANY_MEMBER = {"anyOf": [{"type": "string"}, {}]}
DESCRIBED_MEMBER = {"anyOf": [{"type": "integer"}, {"description": "anything else"}]}


def schema_with(node: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"value": node}, "required": ["value"]}


@pytest.mark.parametrize("vendor", ["anthropic", "bedrock"])
def test_a_typed_parents_constraint_only_members_take_its_type(vendor: str) -> None:
    result = get_provider(vendor).schema_dialect(Tool.from_json_schema("ip", schema_with(IP)), True)
    assert result.strict and not result.losses
    assert result.schema["properties"]["value"]["anyOf"] == [
        {"format": "ipv4", "type": "string"},
        {"format": "ipv6", "type": "string"},
    ]
    passes_the_sdk(result.schema)


@pytest.mark.parametrize("node", [ANY_MEMBER, DESCRIBED_MEMBER], ids=["empty", "described"])
@pytest.mark.parametrize("vendor", ["anthropic", "bedrock"])
def test_an_untyped_member_is_an_untyped_node(vendor: str, node: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="must have a 'type'"):
        passes_the_sdk(schema_with(node))  # what the SDK says of it
    provider = get_provider(vendor)
    item = Tool.from_json_schema("loose", schema_with(node))
    default = provider.schema_dialect(item, None)
    assert not default.strict or vendor == "bedrock"  # Bedrock is strict only when asked
    forced = provider.schema_dialect(item, True)
    [loss] = [loss for loss in forced.losses if loss.rejected]
    assert loss.path == "/properties/value/anyOf/1" and "untyped" in loss.change
    with pytest.raises(StrictSchemaError, match="anyOf/1"):
        provider.format_tools([item.definition("loose")], strict=True)


def test_every_strict_corpus_schema_passes_the_sdk() -> None:
    provider = get_provider("anthropic")
    checked = 0
    for name in ("bfcl", "mcp"):
        for registry in corpus.registries(name):
            for definition in registry.definitions():
                result = provider.schema_dialect(definition, None)
                if result.strict:
                    passes_the_sdk(result.schema)
                    checked += 1
    assert checked > 3_400


def test_an_annotations_only_allof_member_is_merged_into_its_parent() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"allOf": [{"$ref": "#/$defs/A"}, {"description": "an A"}]}},
        "required": ["a"],
        "$defs": {"A": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}},
    }
    result = get_provider("anthropic").schema_dialect(Tool.from_json_schema("a", schema), None)
    assert result.strict and result.schema["properties"]["a"]["description"] == "an A"
    passes_the_sdk(result.schema)  # the SDK refuses {"description": ...} as an allOf member
