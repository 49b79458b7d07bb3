"""BFCL's AST rules as `check_calls` applies them (agentkit.evals._checker)."""

from __future__ import annotations

from typing import Any

import pytest

from agentkit.evals import FunctionSpec, ParamSpec, check_calls, decode_calls, error_class, standardize

WEATHER = FunctionSpec(
    "weather.get",
    {
        "city": ParamSpec("string"),
        "days": ParamSpec("integer"),
        "scale": ParamSpec("float"),
        "metric": ParamSpec("boolean"),
        "tags": ParamSpec("array", "string"),
        "where": ParamSpec("dict"),
    },
    ("city",),
)
ANSWER: dict[str, Any] = {
    "weather.get": {
        "city": ["Paris", "Paris, France"],
        "days": [3, ""],
        "scale": [2.0, ""],
        "metric": [True, ""],
        "tags": [["a", "b"], ""],
        "where": [{"lat": [1.5], "lon": [2.5, ""]}, ""],
    }
}


def judge(arguments: dict[str, Any], name: str = "weather.get") -> Any:
    return check_calls([WEATHER], [(name, arguments)], [ANSWER], "simple")


def test_an_expected_call_passes_with_optional_arguments_left_out() -> None:
    assert judge({"city": "Paris"}).passed
    assert judge({"city": "Paris", "days": 3, "scale": 2, "metric": True, "tags": ["A ", "b"]}).passed


@pytest.mark.parametrize(
    ("arguments", "error", "bfcl_error"),
    [
        ({}, "missing_argument", "simple_function_checker:missing_required"),
        ({"city": "Paris", "hour": 3}, "extra_argument", "simple_function_checker:unexpected_param"),
        ({"city": "Paris", "days": "3"}, "wrong_type", "type_error:simple"),
        ({"city": "Paris", "metric": 1}, "wrong_type", "type_error:simple"),  # 1 is not a boolean
        ({"city": "Paris", "days": True}, "wrong_type", "type_error:simple"),  # nor True an integer
        ({"city": "Lyon"}, "wrong_value", "value_error:string"),
        ({"city": "Paris", "days": 4}, "wrong_value", "value_error:others"),
        ({"city": "Paris", "tags": ["a"]}, "wrong_value", "value_error:list/tuple"),
        # BFCL checks list items' types against list answers only: with "" among them, ["a", 2] is a wrong value
        ({"city": "Paris", "tags": ["a", 2]}, "wrong_value", "value_error:list/tuple"),
        ({"city": "Paris", "where": {"lat": 1.5, "alt": 3}}, "wrong_value", "value_error:dict_key"),
        ({"city": "Paris", "where": {"lat": 9.0}}, "wrong_value", "value_error:dict_value"),
    ],
)
def test_each_mistake_has_its_class(arguments: dict[str, Any], error: str, bfcl_error: str) -> None:
    verdict = judge(arguments)
    assert (verdict.passed, verdict.error, verdict.bfcl_error) == (False, error, bfcl_error)
    assert verdict.detail  # said in words
    assert error_class(bfcl_error) == error


def test_list_items_are_type_checked_one_level_deep() -> None:
    spec = FunctionSpec("f", {"tags": ParamSpec("array", "string")}, ("tags",))
    verdict = check_calls([spec], [("f", {"tags": ["a", 2]})], [{"f": {"tags": [["a", "b"]]}}], "simple")
    assert (verdict.error, verdict.bfcl_error) == ("wrong_type", "type_error:nested")


def test_strings_are_normalised_as_bfcl_does() -> None:
    assert standardize("April 1, 2024") == standardize("april 1 2024") == "april12024"
    assert standardize("it's") == 'it"s'
    assert judge({"city": "paris,  FRANCE"}).passed


def test_an_integer_is_accepted_for_a_float_but_not_the_reverse() -> None:
    assert judge({"city": "Paris", "scale": 2}).passed
    int_only = FunctionSpec("f", {"n": ParamSpec("integer")}, ("n",))
    verdict = check_calls([int_only], [("f", {"n": 2.0})], [{"f": {"n": [2]}}], "simple")
    assert verdict.error == "wrong_type"


def test_a_value_of_the_answers_type_is_a_variable_compared_by_value() -> None:
    # BFCL's "variable" rule: acceptable values of another type than declared are compared as they are
    spec = FunctionSpec("f", {"n": ParamSpec("integer")}, ("n",))
    assert check_calls([spec], [("f", {"n": "x"})], [{"f": {"n": ["x"]}}], "simple").passed
    assert not check_calls([spec], [("f", {"n": "y"})], [{"f": {"n": ["x"]}}], "simple").passed


def test_a_wrong_tool_names_the_tool_called() -> None:
    verdict = judge({"city": "Paris"}, name="weather_get")
    assert verdict.error == "wrong_tool" and verdict.tools == ("weather_get",)


def test_no_call_and_malformed_arguments() -> None:
    assert check_calls([WEATHER], [], [ANSWER], "simple").error == "no_call"
    verdict = check_calls([WEATHER], [("weather.get", '{"city": "Paris",')], [ANSWER], "simple")
    assert (verdict.error, verdict.bfcl_error) == ("malformed_arguments", "ast_decoder:decoder_failed")
    verdict = check_calls([WEATHER], [("weather.get", "[1]")], [ANSWER], "simple")
    assert verdict.bfcl_error == "ast_decoder:decoder_wrong_output_format"
    assert decode_calls([("weather.get", '{"city": "Paris"}')]) == [{"weather.get": {"city": "Paris"}}]


def test_simple_and_multiple_want_exactly_one_call() -> None:
    twice = [("weather.get", {"city": "Paris"})] * 2
    assert check_calls([WEATHER], twice, [ANSWER], "simple").bfcl_error == "simple_function_checker:wrong_count"
    assert check_calls([WEATHER], twice, [ANSWER], "multiple").bfcl_error == "multiple_function_checker:wrong_count"


def test_parallel_calls_match_in_any_order() -> None:
    expected = [{"weather.get": {"city": ["Paris"]}}, {"weather.get": {"city": ["Rome"]}}]
    rome, paris = ("weather.get", {"city": "Rome"}), ("weather.get", {"city": "Paris"})
    assert check_calls([WEATHER], [rome, paris], expected, "parallel").passed
    verdict = check_calls([WEATHER], [rome, rome], expected, "parallel")
    assert verdict.bfcl_error == "parallel_function_checker_no_order:cannot_find_match"
    assert verdict.error == "wrong_value"  # the closest call (same tool) had the wrong city
    assert check_calls([WEATHER], [rome], expected, "parallel").error == "wrong_count"


def test_irrelevance_passes_without_a_call_and_fails_with_one() -> None:
    assert check_calls([WEATHER], [], [], "irrelevance").passed
    verdict = check_calls([WEATHER], [("weather.get", {"city": "Paris"})], [], "irrelevance")
    assert (verdict.passed, verdict.error) == (False, "unexpected_call")


def test_an_expected_call_of_a_function_not_offered_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="names no offered function"):
        check_calls([WEATHER], [("x", {})], [{"x": {}}], "multiple")
