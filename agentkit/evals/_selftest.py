"""The checker's self-test: every expected answer passes, and deliberately wrong ones fail.

`probes` makes, for one case, the calls its expected answer describes (the first acceptable value of
each argument, then variants BFCL accepts: optional arguments left out, another order, a string
spelled differently, an integer for a float) and wrong ones (another tool name, a required argument
missing, an extra argument, a value of the wrong type, a wrong value, no call, one call too many).
`self_test` judges them all with `check_calls` and reports any probe judged against its intent.
``dev/bfcl.py compare`` sends the same probes through bfcl-eval's own checker.
"""

from __future__ import annotations as _annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .._jsonish import is_array, is_mapping
from ._cases import EvalCase
from ._checker import FunctionSpec, check_calls, standardize

__all__ = ["Probe", "SelfTestReport", "consistent", "probes", "self_test"]

Calls = list[dict[str, dict[str, Any]]]


@dataclass(frozen=True)
class Probe:
    """Calls made up for a case, and whether BFCL's rules should accept them."""

    label: str
    calls: Calls
    should_pass: bool | None
    """True or False when the rules decide it whatever the data; None where BFCL's quirks may (the greedy
    order-free matching, an acceptable value that happens to equal the wrong one): then only the
    agreement with bfcl-eval's recorded verdicts judges it."""


@dataclass
class SelfTestReport:
    """What `self_test` found: probes judged, and those judged against their intent."""

    cases: int = 0
    probes: int = 0
    wrong: list[tuple[str, str, str]] = field(default_factory=lambda: [])
    """``(case id, probe label, verdict)`` of each probe judged against its intent."""

    @property
    def ok(self) -> bool:
        """True when every probe was judged as intended."""
        return not self.wrong

    def __str__(self) -> str:
        head = f"checker self-test: {self.probes} probes on {self.cases} cases, {len(self.wrong)} judged wrongly"
        return "\n".join([head, *(f"  {case} {label}: {verdict}" for case, label, verdict in self.wrong[:20])])


def _first(values: Sequence[Any]) -> tuple[bool, Any]:
    for value in values:
        if value != "":
            return True, value
    return False, None


def _value(spec_type: str | None, items: str | None, allowed: Sequence[Any]) -> tuple[bool, Any]:
    """An acceptable value: a dict (or list of dicts) is built from its keys' first acceptable values."""
    found, value = _first(allowed)
    if not found:
        return False, None
    if spec_type == "dict" and is_mapping(value):
        return True, _dict_value(value)
    if spec_type in ("array", "tuple") and items == "dict" and is_array(value):
        return True, [_dict_value(v) if is_mapping(v) else v for v in value]
    return True, value


def _dict_value(answer: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, allowed in answer.items():
        found, value = _first(allowed) if is_array(allowed) else (True, allowed)
        if found:
            out[key] = value
    return out


def consistent(functions: Sequence[FunctionSpec], expected: Sequence[Mapping[str, Any]]) -> bool:
    """Whether BFCL's own rules can accept the expected answer.

    Every argument must be a parameter of its function, and every required parameter must have an
    acceptable value; a few BFCL answers break this (their own checker rejects them).
    """
    specs = {f.name: f for f in functions}
    for answer in expected:
        name, possible = next(iter(answer.items()))
        spec = specs.get(name)
        if spec is None or any(param not in spec.params for param in possible):
            return False
        if any(not _first(possible.get(param, ()))[0] for param in spec.required):
            return False
    return True


def _oracle(functions: Sequence[FunctionSpec], expected: Sequence[Mapping[str, Any]], keep_optional: bool) -> Calls:
    specs = {f.name: f for f in functions}
    calls: Calls = []
    for answer in expected:
        name, possible = next(iter(answer.items()))
        spec = specs.get(name)
        arguments: dict[str, Any] = {}
        for param, allowed in possible.items():
            if not keep_optional and "" in allowed and not (spec is not None and param in spec.required):
                continue
            param_spec = spec.params.get(param) if spec is not None else None
            found, value = _value(
                param_spec.type if param_spec else None, param_spec.items if param_spec else None, allowed
            )
            if found:
                arguments[param] = value
        calls.append({name: arguments})
    return calls


def _wrong_type(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return 12345
    if isinstance(value, (int, float)):
        return str(value)
    return "not a " + type(value).__name__


def _wrong_value(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, str):
        return "zzzz no such value"
    if isinstance(value, int):
        return value + 9973
    if isinstance(value, float):
        return value + 997.25
    if isinstance(value, list):
        return [*value, "zzzz"]
    return {"zzzz": 1}


def probes(case: EvalCase) -> list[Probe]:
    """The probes of one case (deterministic: same case, same probes)."""
    functions = case.specs()
    if not case.expected:
        first = functions[0].name if functions else "any_tool"
        return [Probe("no-call", [], True), Probe("a-call", [{first: {}}], False)]
    good = consistent(functions, case.expected)
    oracle = _oracle(functions, case.expected, keep_optional=True)
    out = [Probe("oracle", oracle, good), Probe("no-call", [], False)]
    bare = _oracle(functions, case.expected, keep_optional=False)
    if bare != oracle:
        out.append(Probe("omit-optional", bare, True if good else None))
    if len(oracle) > 1:
        out.append(Probe("reversed", list(reversed(oracle)), None))
    out.append(Probe("one-call-too-many", [*oracle, oracle[-1]], False))
    name, arguments = next(iter(oracle[0].items()))
    rest = oracle[1:]
    out.append(Probe("wrong-name", [{name + "_v2": arguments}, *rest], False))
    out.append(Probe("extra-argument", [{name: {**arguments, "zz_extra": 1}}, *rest], False))
    spec = next((f for f in functions if f.name == name), None)
    required = [p for p in (spec.required if spec else ()) if p in arguments]
    if required:
        dropped = {k: v for k, v in arguments.items() if k != required[0]}
        out.append(Probe("missing-required", [{name: dropped}, *rest], False))
    if arguments:
        # the argument to spoil: a required one with a single acceptable value if there is one
        possible = next(iter(case.expected[0].values()))
        single = [p for p in arguments if len([v for v in possible.get(p, ()) if v != ""]) == 1]
        param = next((p for p in single if p in required), single[0] if single else next(iter(arguments)))
        value = arguments[param]
        out.append(Probe("wrong-type", [{name: {**arguments, param: _wrong_type(value)}}, *rest], None))
        out.append(Probe("wrong-value", [{name: {**arguments, param: _wrong_value(value)}}, *rest], None))
    out += [replace(p, should_pass=True if good else None) for p in _equivalents(name, arguments, spec, rest)]
    return out


def _equivalents(name: str, arguments: dict[str, Any], spec: FunctionSpec | None, rest: Calls) -> list[Probe]:
    """Spellings BFCL's normalisation accepts: a string cased and spaced otherwise, an integer for a float."""
    out: list[Probe] = []
    if spec is None:
        return out
    for param, value in arguments.items():
        kind = spec.params.get(param)
        if kind is None:
            continue
        if kind.type == "string" and isinstance(value, str) and value and standardize(value.upper() + " ") != "":
            out.append(Probe("respelled-string", [{name: {**arguments, param: value.upper() + " "}}, *rest], True))
            break
    for param, value in arguments.items():
        kind = spec.params.get(param)
        if kind is not None and kind.type == "float" and isinstance(value, float) and value.is_integer():
            out.append(Probe("int-for-float", [{name: {**arguments, param: int(value)}}, *rest], True))
            break
    return out


def self_test(cases: Iterable[EvalCase] | None = None) -> SelfTestReport:
    """Judge every probe of `cases` (default: all shipped BFCL questions) and report those judged wrongly.

    An expected answer, or a variant BFCL accepts, must pass; a wrong answer must fail.
    """
    if cases is None:
        from ._bfcl import bfcl_cases

        cases = bfcl_cases()
    report = SelfTestReport()
    for case in cases:
        report.cases += 1
        for probe in probes(case):
            report.probes += 1
            verdict = check_calls(case.specs(), probe.calls, case.expected, case.check_mode)
            if probe.should_pass is not None and verdict.passed != probe.should_pass:
                shown = "passed" if verdict.passed else f"failed: {verdict.bfcl_error}: {verdict.detail}"
                report.wrong.append((case.id, probe.label, shown))
    return report
