"""BFCL's AST rules for judging tool calls, written here (no ``bfcl-eval`` import, no dependencies).

Berkeley's Function Calling Leaderboard judges a model's calls against expected calls whose every
argument lists the values it may take (``""`` in the list: the argument may be left out). The rules
below follow ``bfcl_eval/eval_checker/ast_eval/ast_checker.py`` (bfcl-eval 2026.3.23, Apache-2.0) for
Python functions, quirks included, so a score here is a score there: ``dev/bfcl.py compare`` runs
both checkers on every expected answer and on deliberately wrong ones, and
``tests/evals/test_checker_agreement.py`` replays bfcl-eval's recorded verdicts against this module.

* types are checked exactly (``True`` is not an integer), except that an integer is accepted for a
  float; an argument whose acceptable values are of another type than declared is a "variable" and
  is compared by value only;
* strings are compared after normalisation: lower case, without spaces and ``,./-_*^``, with ``'``
  read as ``"`` (so "April 1, 2024" matches "april 1 2024"); lists and dicts compare their string
  members the same way (one level deep);
* a single expected call needs exactly one call; several expected calls (parallel) are matched in
  any order, each expected call taking the first unmatched call that satisfies it (greedy, as BFCL);
* no call at all fails a question that expects one, and any call fails a question that expects none.

Every verdict carries BFCL's own error type (``"value_error:string"``, ...) and agentkit's coarser
`ErrorClass`, which the reports count.
"""

from __future__ import annotations as _annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from .._jsonish import is_array, is_mapping, is_object

__all__ = [
    "ERROR_CLASSES",
    "CheckMode",
    "ErrorClass",
    "FunctionSpec",
    "ParamSpec",
    "Verdict",
    "check_calls",
    "decode_calls",
    "error_class",
    "function_spec",
    "standardize",
]

ErrorClass = Literal[
    "no_call",
    "unexpected_call",
    "wrong_tool",
    "wrong_count",
    "missing_argument",
    "extra_argument",
    "wrong_type",
    "wrong_value",
    "malformed_arguments",
    "model_error",
]
"""Why a question failed: no call when one was needed, a call when none fits, the wrong tool, the wrong
number of calls, a missing or extra argument, an argument of the wrong type or value, arguments that are
not a JSON object, or a request that failed (the model's server answered with an error)."""

ERROR_CLASSES: tuple[ErrorClass, ...] = get_args(ErrorClass)
"""Every `ErrorClass`, in report order."""

CheckMode = Literal["simple", "multiple", "parallel", "irrelevance"]
"""Which BFCL rule set judges a question: one function offered and one call expected (``simple``),
several offered and one expected (``multiple``), one or more expected in any order (``parallel``), or
none expected (``irrelevance``)."""

_PYTHON_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "float": float,
    "boolean": bool,
    "array": list,
    "tuple": list,
    "dict": dict,
    "any": str,
}
"""BFCL's type names and the Python types their values must have (``any`` is read as a string, as BFCL does)."""


@dataclass(frozen=True)
class ParamSpec:
    """What the checker knows of one parameter: its BFCL type name and, for arrays, its items' type."""

    type: str | None
    """``string``, ``integer``, ``float``, ``boolean``, ``array``, ``tuple``, ``dict`` or ``any``;
    None: not checked (a schema without one of these types), values are still compared."""
    items: str | None = None
    """The element type of an ``array``/``tuple`` (checked one level deep), else None."""


@dataclass(frozen=True)
class FunctionSpec:
    """A function as the checker sees it: its name, parameters and required parameters."""

    name: str
    params: Mapping[str, ParamSpec]
    required: tuple[str, ...] = ()


@dataclass(frozen=True)
class Verdict:
    """The judgement of one question's calls."""

    passed: bool
    error: ErrorClass | None = None
    """agentkit's class of the failure (None when passed)."""
    bfcl_error: str | None = None
    """BFCL's own error type, e.g. ``"simple_function_checker:missing_required"``."""
    detail: str = ""
    """What was wrong, in a sentence."""
    tools: tuple[str, ...] = field(default=())
    """For ``wrong_tool``: the tool names called instead."""


_STANDARDIZE = re.compile(r"[ ,./\-_*^]")


def standardize(text: str) -> str:
    """BFCL's string normalisation: no spaces or ``,./-_*^``, lower case, ``'`` read as ``"``."""
    return _STANDARDIZE.sub("", text).lower().replace("'", '"')


def function_spec(function: Mapping[str, Any]) -> FunctionSpec:
    """The `FunctionSpec` of a BFCL function document (``{"name", "description", "parameters"}``)."""
    parameters = function.get("parameters")
    properties = parameters.get("properties") if is_mapping(parameters) else None
    params: dict[str, ParamSpec] = {}
    for name, body in properties.items() if is_mapping(properties) else ():
        kind = body.get("type") if is_mapping(body) else None
        items = body.get("items") if is_mapping(body) else None
        item_type = items.get("type") if is_mapping(items) and kind in ("array", "tuple") else None
        params[str(name)] = ParamSpec(
            kind if isinstance(kind, str) else None, item_type if isinstance(item_type, str) else None
        )
    required = parameters.get("required") if is_mapping(parameters) else None
    return FunctionSpec(str(function["name"]), params, tuple(str(r) for r in required) if is_array(required) else ())


# ---- decoding the model's calls ------------------------------------------------------------------

Decoded = list[dict[str, dict[str, Any]]]
"""Calls as BFCL reads them: ``[{name: {argument: value}}, ...]``."""


def decode_calls(calls: Sequence[tuple[str, str | Mapping[str, Any]]]) -> Decoded | Verdict:
    """``[(name, arguments)]`` as BFCL's decoder reads them, or the failing `Verdict` when it cannot.

    Arguments are JSON text (decoded) or an object. No calls at all is BFCL's failed decoding of a
    text answer (``no_call``); text that is not JSON, or JSON that is not an object, is
    ``malformed_arguments``.
    """
    if not calls:
        return Verdict(False, "no_call", "ast_decoder:decoder_failed", "no tool was called")
    decoded: Decoded = []
    for name, arguments in calls:
        if isinstance(arguments, Mapping):
            value: Any = dict(arguments)
        else:
            try:
                value = json.loads(arguments)
            except (ValueError, RecursionError):
                shown = arguments if len(arguments) <= 80 else arguments[:80] + "..."
                return Verdict(
                    False,
                    "malformed_arguments",
                    "ast_decoder:decoder_failed",
                    f"{name}: arguments {shown!r} are not JSON",
                )
        if not isinstance(value, dict):
            return Verdict(
                False,
                "malformed_arguments",
                "ast_decoder:decoder_wrong_output_format",
                f"{name}: arguments are {type(value).__name__}, not an object",
            )
        decoded.append({name: value})
    return decoded


# ---- the checker ---------------------------------------------------------------------------------


def check_calls(
    functions: Sequence[FunctionSpec],
    calls: Decoded | Sequence[tuple[str, str | Mapping[str, Any]]],
    expected: Sequence[Mapping[str, Mapping[str, Sequence[Any]]]],
    mode: CheckMode,
) -> Verdict:
    """Judge `calls` against the `expected` ones under BFCL's rules for `mode`.

    `calls` are ``[(name, arguments)]`` pairs (see `decode_calls`) or already decoded. `expected` is
    BFCL's possible answer: ``[{name: {argument: [acceptable values]}}]``, empty for ``irrelevance``.
    """
    decoded = _as_decoded(calls)
    if mode == "irrelevance":
        if isinstance(decoded, Verdict) or _is_empty(decoded):
            return Verdict(True)
        names = tuple(next(iter(call)) for call in decoded)
        return Verdict(
            False, "unexpected_call", "irrelevance_error:decoder_success", f"called {', '.join(names)}; no tool fits"
        )
    if isinstance(decoded, Verdict):
        return decoded
    if mode == "parallel":
        return _parallel(functions, decoded, expected)
    if mode == "multiple":  # one call of the expected function among several offered
        if len(decoded) != len(expected):
            return Verdict(False, "wrong_count", "multiple_function_checker:wrong_count", _count(decoded, expected))
        return _simple(_find(functions, next(iter(expected[0]))), decoded[0], expected[0])
    if len(decoded) != 1:  # simple: the one function offered, called once
        return Verdict(False, "wrong_count", "simple_function_checker:wrong_count", _count(decoded, expected))
    return _simple(functions[0], decoded[0], expected[0])


def _count(decoded: Decoded, expected: Sequence[Any]) -> str:
    return f"{len(decoded)} calls, expected {len(expected)}"


def _as_decoded(calls: Decoded | Sequence[tuple[str, str | Mapping[str, Any]]]) -> Decoded | Verdict:
    if calls and all(isinstance(call, dict) for call in calls):
        return [dict(call) for call in calls if isinstance(call, dict)]
    pairs = [call for call in calls if isinstance(call, tuple)]
    return decode_calls(pairs)


def _is_empty(decoded: Decoded) -> bool:
    return len(decoded) == 0 or (len(decoded) == 1 and len(decoded[0]) == 0)


def _find(functions: Sequence[FunctionSpec], name: str) -> FunctionSpec:
    for function in functions:
        if function.name == name:
            return function
    # an expected call of a function not offered: a broken dataset, said plainly
    raise ValueError(f"the expected call {name!r} names no offered function ({[f.name for f in functions]})")


def _parallel(functions: Sequence[FunctionSpec], decoded: Decoded, expected: Sequence[Mapping[str, Any]]) -> Verdict:
    if len(decoded) != len(expected):
        return Verdict(
            False,
            "wrong_count",
            "parallel_function_checker_no_order:wrong_count",
            _count(decoded, expected),
        )
    matched: set[int] = set()
    for answer in expected:
        function = _find(functions, next(iter(answer)))
        failures: list[tuple[int, Verdict]] = []
        for index, call in enumerate(decoded):
            if index in matched:
                continue
            verdict = _simple(function, call, answer)
            if verdict.passed:
                matched.add(index)
                break
            failures.append((index, verdict))
        else:
            closest = _closest(function.name, decoded, failures)
            return Verdict(
                False,
                closest.error,
                "parallel_function_checker_no_order:cannot_find_match",
                f"no call matches the expected {function.name}: {closest.detail}",
                closest.tools,
            )
    return Verdict(True)


def _closest(name: str, decoded: Decoded, failures: list[tuple[int, Verdict]]) -> Verdict:
    """The most telling failure for an unmatched expected call: one of a call to the same function."""
    for index, verdict in failures:
        if name in decoded[index]:
            return verdict
    return failures[0][1] if failures else Verdict(False, "wrong_count", detail="no call left")


def _simple(function: FunctionSpec, call: Mapping[str, Any], answer: Mapping[str, Any]) -> Verdict:
    possible: Mapping[str, Sequence[Any]] = next(iter(answer.values()))
    name = function.name
    if name not in call:
        called = tuple(str(k) for k in call)
        return Verdict(
            False,
            "wrong_tool",
            "simple_function_checker:wrong_func_name",
            f"called {', '.join(called)} instead of {name}",
            called,
        )
    arguments: Mapping[str, Any] = call[name]
    for param in function.required:
        if param not in arguments:
            return Verdict(
                False,
                "missing_argument",
                "simple_function_checker:missing_required",
                f"{name}: missing required argument {param!r}",
            )
    for param, value in arguments.items():
        if param not in function.params or param not in possible:
            return Verdict(
                False, "extra_argument", "simple_function_checker:unexpected_param", f"{name}: unexpected {param!r}"
            )
        verdict = _argument(name, param, value, function.params[param], possible[param])
        if verdict is not None:
            return verdict
    for param, values in possible.items():
        if param not in arguments and "" not in values:
            return Verdict(
                False,
                "missing_argument",
                "simple_function_checker:missing_optional",
                f"{name}: argument {param!r} is expected (it may not be left out here)",
            )
    return Verdict(True)


def _argument(name: str, param: str, value: Any, spec: ParamSpec, possible: Sequence[Any]) -> Verdict | None:
    """The failing verdict for one argument, or None when it is acceptable."""
    expected_type = _PYTHON_TYPES.get(spec.type) if spec.type is not None else None
    nested = _PYTHON_TYPES.get(spec.items) if spec.type in ("array", "tuple") and spec.items is not None else None
    if spec.type == "float" and type(value) is int:
        value = float(value)  # an integer is accepted for a float (BFCL: Python's own int -> float promotion)
    is_variable = False
    if expected_type is not None:
        failure, is_variable = _type_check(value, possible, expected_type, nested)
        if failure is not None:
            return Verdict(
                False,
                "wrong_type",
                failure,
                f"{name}: {param!r} should be {spec.type}, got {type(value).__name__} {_short(value)}",
            )
        if not is_variable:
            failure = _by_kind(expected_type, nested, value, possible)
            if failure is not None:
                return Verdict(False, "wrong_value", failure, f"{name}: {param!r} = {_short(value)}, {_hint(possible)}")
            return None
    elif isinstance(value, str) or is_array(value) or is_object(value):  # no declared type: by the value's kind
        own: type[Any] = str if isinstance(value, str) else list if is_array(value) else dict
        failure = _by_kind(own, None, value, possible)
        if failure is not None:
            return Verdict(False, "wrong_value", failure, f"{name}: {param!r} = {_short(value)}, {_hint(possible)}")
        return None
    if value not in possible:
        return Verdict(
            False, "wrong_value", "value_error:others", f"{name}: {param!r} = {_short(value)}, {_hint(possible)}"
        )
    return None


def _first_type(possible: Sequence[Any]) -> type[Any] | None:
    for answer in possible:
        if answer != "":
            kind: type[Any] = type(answer)  # pyright: ignore[reportUnknownVariableType]  # any JSON value's type
            return kind
    return None


def _type_check(
    value: Any, possible: Sequence[Any], expected: type[Any], nested: type[Any] | None
) -> tuple[str | None, bool]:
    """(BFCL's error type or None, is a variable): BFCL's `type_checker`, one level of nesting."""
    answer_type = _first_type(possible)
    is_variable = answer_type is not None and answer_type is not expected
    failure = "type_error:simple"
    if type(value) is expected:
        if nested is None:
            return None, is_variable
        items: list[Any] = list(value)  # a list: its type was just checked
        for item in possible:
            if is_array(item) and not all(_type_check(v, item, nested, None)[0] is None for v in items):
                continue
            return None, is_variable  # BFCL: an acceptable value that is not a list passes the nested check
        failure = "type_error:nested"
    if answer_type is not None and type(value) is answer_type:
        # a variable (a value of the acceptable values' type); after a failed nested check BFCL still fails
        return (None, True) if failure == "type_error:simple" else (failure, True)
    return "type_error:simple", is_variable


def _by_kind(expected: type[Any], nested: type[Any] | None, value: Any, possible: Sequence[Any]) -> str | None:
    """BFCL's value rules by declared type; the error type, or None when the value is acceptable."""
    if expected is dict:
        return _dict_check(value, possible)
    if expected is list and nested is dict:
        return _list_dict_check(value, possible)
    if expected is str:
        wanted = [standardize(a) for a in possible if isinstance(a, str)]
        return None if standardize(value) in wanted else "value_error:string"
    if expected is list:
        return None if _std_list(value) in [_std_answer_list(a) for a in possible] else "value_error:list/tuple"
    return None if value in possible else "value_error:others"


def _std_list(value: Sequence[Any]) -> list[Any]:
    return [standardize(v) if type(v) is str else v for v in value]


def _std_answer_list(answer: Any) -> list[Any]:
    # BFCL indexes each acceptable value: a list gives its items; the "" marker gives none (so [] matches
    # it); another string gives its characters
    if is_array(answer):
        return _std_list(answer)
    if isinstance(answer, str):
        return _std_list(list(answer))
    return [answer]


def _std_value(value: Any) -> Any:
    return standardize(value) if type(value) is str else value


def _dict_check(value: Mapping[str, Any], possible: Sequence[Any]) -> str | None:
    error = "dict_checker:unclear"
    for answer in possible:
        if answer == "":
            continue
        error = "dict_checker:unclear"
        ok = True
        for key, item in value.items():
            if not is_mapping(answer) or key not in answer:
                error, ok = "value_error:dict_key", False
                break
            allowed: Any = answer[key]
            if _std_value(item) not in [_std_value(a) for a in (allowed if is_array(allowed) else [allowed])]:
                error, ok = "value_error:dict_value", False
                break
        if is_mapping(answer):
            for key, allowed in answer.items():
                if key not in value and "" not in allowed:
                    error, ok = "value_error:dict_key", False
                    break
        if ok:
            return None
    return error


def _list_dict_check(value: Sequence[Any], possible: Sequence[Any]) -> str | None:
    error = "list_dict_checker:unclear"
    for answer in possible:
        members: list[Any] | str = answer if is_array(answer) or isinstance(answer, str) else ""
        if members == "" and answer != "" or len(value) != len(members):
            error = "value_error:list_dict_count"
            continue
        failure = None
        for position, item in enumerate(value):
            wanted: Any = members[position]
            failure = _dict_check(item, [wanted]) if is_mapping(item) and is_mapping(wanted) else "value_error:dict_key"
            if failure is not None:
                break
        if failure is None:
            return None
        error = failure
    return error


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:60] + "..."


def _hint(possible: Sequence[Any]) -> str:
    shown = [a for a in possible if a != ""][:4]
    return f"expected one of {_short(shown)}" if shown else "expected it left out"


_CLASSES: dict[str, ErrorClass] = {
    "ast_decoder:decoder_failed": "no_call",
    "ast_decoder:decoder_wrong_output_format": "malformed_arguments",
    "irrelevance_error:decoder_success": "unexpected_call",
    "simple_function_checker:wrong_func_name": "wrong_tool",
    "simple_function_checker:missing_required": "missing_argument",
    "simple_function_checker:missing_optional": "missing_argument",
    "simple_function_checker:unexpected_param": "extra_argument",
}


def error_class(bfcl_error: str) -> ErrorClass:
    """The `ErrorClass` of one of BFCL's error types (e.g. ``"value_error:string"`` -> ``wrong_value``)."""
    known = _CLASSES.get(bfcl_error)
    if known is not None:
        return known
    if bfcl_error.endswith(":wrong_count"):
        return "wrong_count"
    if bfcl_error.startswith("type_error"):
        return "wrong_type"
    return "wrong_value"
