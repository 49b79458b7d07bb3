"""Argument repair (agentkit.evals._repair): known slips fixed where the schema says what was meant, always reported."""

from __future__ import annotations

from typing import Any

import pytest

from agentkit import Tool
from agentkit.evals import repair_arguments

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "count": {"type": "integer"},
        "ratio": {"type": "number"},
        "filters": {"type": "object", "properties": {"tag": {"type": "string"}}},
        "ids": {"type": "array", "items": {"type": "integer"}},
    },
    "required": ["name"],
}
TOOL = Tool.from_json_schema("find", SCHEMA)


@pytest.mark.parametrize(
    ("sent", "repaired", "fix"),
    [
        ('{"name": "a", "count": 2,}', {"name": "a", "count": 2}, "removed a trailing comma"),
        ('{"name": "a", "ids": [1, 2,]}', {"name": "a", "ids": [1, 2]}, "removed a trailing comma"),
        ("{'name': 'a', 'count': 2}", {"name": "a", "count": 2}, "read single-quoted (Python) syntax as JSON"),
        (
            '{"name": "a", "filters": "{\\"tag\\": \\"x\\"}"}',
            {"name": "a", "filters": {"tag": "x"}},
            "decoded the JSON string at /filters into an object",
        ),
        (
            '{"name": "a", "ids": "[1, 2]"}',
            {"name": "a", "ids": [1, 2]},
            "decoded the JSON string at /ids into an array",
        ),
        ('"{\\"name\\": \\"a\\"}"', {"name": "a"}, "decoded arguments that were encoded as a JSON string"),
        ('{"name": "a", "count": "7"}', {"name": "a", "count": 7}, "read the string '7' at /count as an integer"),
        ('{"name": "a", "ratio": "0.5"}', {"name": "a", "ratio": 0.5}, "read the string '0.5' at /ratio as a number"),
        ({"name": "a", "ids": ["1", "2"]}, {"name": "a", "ids": [1, 2]}, "read the string '1' at /ids/0 as an integer"),
    ],
)
def test_each_slip_is_repaired_and_reported(sent: Any, repaired: dict[str, Any], fix: str) -> None:
    result = repair_arguments(sent, TOOL)
    assert result is not None and result.arguments == repaired
    assert fix in result.fixes


@pytest.mark.parametrize(
    "sent",
    [
        '{"name": "a", "count": 2}',  # valid: nothing to repair
        '{"name": 12}',  # a number where a string is meant: no slip explains it
        '{"name": "a", "count": "seven"}',  # not a number
        '{"name": "a", "count": "2.5"}',  # not a whole number for an integer
        '{"count": 2,}',  # repaired syntax, still invalid (no name): refused
        "{'name': __import__('os')}",  # not a literal: never evaluated
        "[1, 2]",  # not an object
        "name=a",
    ],
)
def test_no_repair_without_a_known_slip_or_when_still_invalid(sent: str) -> None:
    assert repair_arguments(sent, TOOL) is None


def test_a_string_meant_as_a_string_is_left_alone() -> None:
    tool = Tool.from_json_schema(
        "t", {"type": "object", "properties": {"code": {"type": "string"}, "n": {"type": "integer"}}}
    )
    result = repair_arguments('{"code": "42", "n": "3"}', tool)
    assert result is not None and result.arguments == {"code": "42", "n": 3}
    assert result.fixes == ("read the string '3' at /n as an integer",)
