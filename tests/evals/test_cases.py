"""Users' case files (agentkit.evals._cases) and the BFCL dataset's shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentkit.evals import EvalDataError, bfcl_cases, function_spec_of, load_cases, load_dataset, sample
from agentkit.exceptions import UnknownToolError
from agentkit.messages import SystemMessage, UserMessage
from tests.evals.fixtures import CASES, tools


def write(tmp_path: Path, cases: Any, name: str = "cases.jsonl") -> Path:
    path = tmp_path / name
    if name.endswith(".jsonl"):
        path.write_text("\n".join(json.dumps(c) for c in cases) + "\n")
    else:
        path.write_text(json.dumps(cases))
    return path


def test_a_case_file_becomes_cases(tmp_path: Path) -> None:
    for name in ("cases.jsonl", "cases.json"):
        cases = load_cases(write(tmp_path, CASES, name), tools)
        assert [c.id for c in cases] == ["paris", "two-cities", "hello"]
        paris, pair, hello = cases
        assert paris.messages == (UserMessage("Weather in Paris for 2 days, in Fahrenheit?"),)
        assert list(paris.registry()) == ["weather.get", "search"]  # all tools by default
        assert isinstance(pair.messages[0], SystemMessage) and list(pair.registry()) == ["weather.get"]
        assert (paris.check_mode, pair.check_mode, hello.check_mode) == ("multiple", "parallel", "irrelevance")
        assert paris.expected_tools == ("weather.get",) and hello.expected_tools == ()
    wrapped = tmp_path / "wrapped.json"
    wrapped.write_text(json.dumps({"cases": CASES}))
    assert len(load_cases(wrapped, tools)) == 3


def test_the_checker_reads_types_from_the_tools_schemas() -> None:
    spec = function_spec_of("weather.get", tools["weather.get"].input_schema)
    assert (spec.params["city"].type, spec.params["days"].type, spec.required) == ("string", "integer", ("city",))
    assert spec.params["unit"].type == "string"  # an enum of strings


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"expected": None}, "'expected' is missing; use []"),
        ({"expected": {"weather.get": {}}}, "'expected' is a list of calls"),
        (
            {"expected": [{"weather.get": {"city": "Paris"}}]},
            'must be a non-empty list of acceptable values, e.g. ["Paris"]',
        ),
        ({"expected": [{"search": {"query": ["x"]}}], "tools": ["weather.get"]}, "not among the case's tools"),
        ({"prompt": None}, "give either 'prompt' (text) or 'messages'"),
        ({"messages": [{"role": "assistant", "content": "x"}], "prompt": None}, "must be {'role': 'system' or 'user'"),
        ({"tools": "weather.get"}, "'tools' is a list of registry keys"),
        ({"extra": 1}, "unknown field(s) ['extra']"),
    ],
)
def test_a_malformed_case_names_the_case_the_field_and_the_fix(
    tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    case = {k: v for k, v in {**CASES[0], **change}.items() if v is not None or k == "expected"}
    if change.get("expected", 0) is None:
        case.pop("expected")
    with pytest.raises(EvalDataError) as error:
        load_cases(write(tmp_path, [case]), tools)
    assert message in str(error.value) and "cases.jsonl:1 (id 'paris')" in str(error.value)


def test_an_unknown_tool_key_suggests_the_close_one(tmp_path: Path) -> None:
    with pytest.raises(UnknownToolError, match="weather.get"):
        load_cases(write(tmp_path, [{**CASES[0], "tools": ["weather.gte"]}]), tools)


def test_file_problems_are_clear(tmp_path: Path) -> None:
    with pytest.raises(EvalDataError, match="cannot read the case file"):
        load_cases(tmp_path / "missing.jsonl", tools)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1\n')
    with pytest.raises(EvalDataError, match=r"bad.jsonl:1: not valid JSON"):
        load_cases(bad, tools)
    with pytest.raises(EvalDataError, match="already used"):
        load_cases(write(tmp_path, [CASES[0], CASES[0]]), tools)
    with pytest.raises(EvalDataError, match="pass the registry"):
        load_dataset(str(write(tmp_path, CASES)))


def test_bfcl_categories_and_their_rules() -> None:
    cases = bfcl_cases("bfcl:simple,parallel-multiple")
    assert {c.category for c in cases} == {"simple_python", "parallel_multiple"}
    assert len(cases) == 600
    first = cases[0]
    assert first.id == "simple_python_0" and first.check_mode == "simple"
    assert list(first.registry()) == ["calculate_triangle_area"]
    dotted = next(c for c in cases if "." in c.source[0]["name"])
    assert list(dotted.registry()) == [dotted.source[0]["name"]]  # keys keep BFCL's dotted names
    schema = dotted.registry()[dotted.source[0]["name"]].input_schema
    assert schema["type"] == "object"
    with pytest.raises(EvalDataError, match="unknown BFCL category 'nope'"):
        bfcl_cases("bfcl:nope")
    assert len(bfcl_cases()) == 2551


def test_bfcl_types_become_json_schema() -> None:
    from agentkit.evals import json_schema

    schema = json_schema(
        {
            "type": "dict",
            "properties": {
                "x": {"type": "float", "description": "x", "default": 1.0, "optional": True},
                "pair": {"type": "tuple", "items": {"type": "integer"}},
                "any": {"type": "any"},
                "nested": {"type": "dict", "properties": {"a": {"type": "boolean"}}, "required": ["a"]},
            },
            "required": ["x"],
        }
    )
    assert schema == {
        "type": "object",
        "properties": {
            "x": {"type": "number", "description": "x", "default": 1.0},
            "pair": {"type": "array", "items": {"type": "integer"}},
            "any": {"type": "string"},
            "nested": {"type": "object", "properties": {"a": {"type": "boolean"}}, "required": ["a"]},
        },
        "required": ["x"],
    }


def test_sample_draws_across_categories_stably() -> None:
    cases = bfcl_cases()
    drawn = sample(cases, 20, seed=3)
    assert len(drawn) == 20 and drawn == sample(cases, 20, seed=3) and drawn != sample(cases, 20, seed=4)
    assert {c.category for c in drawn} == {c.category for c in cases}
    order = [c.id for c in cases]
    assert [order.index(c.id) for c in drawn] == sorted(order.index(c.id) for c in drawn)
    assert sample(cases[:3], 10) == cases[:3]
