"""A fuzzer of resume answers (issue 17 §6): what odd `answers` given to `Agent.resume` do to a paused run.

The three paused runs of `tests.runs.snapshot_fuzz` (an approval, a suspension whose answer has a schema,
a client call whose output has one) are resumed, each from its unedited snapshot in a fresh agent over a
fresh store that records its claims, with answers made from the valid ones: a value replaced by an odd one
(a string for a bool, an `Approval` with an odd reason, a `ToolError`, a lone surrogate, a huge number, a
value nested thousands deep), an answer dropped, or an answer for a call that is not pending. Every case
ends in one of:

* ``ok``: the answers fit and the run went on;
* ``refused``: `resume` raised `ResumeError` (`ApprovalError` for decisions) before claiming the pause,
  and the same snapshot then resumes with the right answers (a refused resume does not use the pause up);
* ``lost``: an exception after the claim, or a refusal that used the pause up;
* ``undocumented``: any other exception.

The last two are failures. `tests/runs/test_answers_fuzz.py` runs a bounded budget of cases;
``python benchmarks/bench_answers_fuzz.py`` a longer run that prints the counts.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from agentkit import Approval, ToolError

from . import snapshot_fuzz
from .snapshot_fuzz import ANSWERS, ODD, SCRIPTS, ClaimLog, Outcome, paused_text

__all__ = ["answers", "fuzz", "run_case"]


def _deep(rng: random.Random) -> Any:
    value: Any = rng.choice(["x", 3, None])
    for _ in range(rng.choice([50, 250, 1_000, 5_000])):
        value = [value] if rng.random() < 0.5 else {"row": value}
    return value


def _odd(rng: random.Random, scenario: str) -> Any:
    roll = rng.random()
    if roll < 0.5:
        return rng.choice(ODD)
    if roll < 0.65:
        return Approval(rng.choice([True, False, "yes", None, 1]), rng.choice([None, "no", "\ud800", 5, "x" * 10_000]))  # type: ignore[arg-type]  # odd on purpose
    if roll < 0.75:
        return ToolError(rng.choice(["not here", "", "\ud800", "x" * 10_000]))
    if roll < 0.9:  # the right shape with odd fields (the suspension's answer is a seat: a row and a letter)
        seat = {
            "row": rng.choice([3, "3", -1, 2**70, 1.5, None, "\ud800"]),
            "letter": rng.choice(["C", 3, "", "\ud800"]),
        }
        if rng.random() < 0.3:
            seat[rng.choice(["extra", "\ud800", ""])] = rng.choice(ODD)
        if rng.random() < 0.2:
            del seat[rng.choice(["row", "letter"])]
        return seat
    return _deep(rng)


def answers(rng: random.Random, scenario: str) -> dict[str, Any]:
    """The scenario's right answers with one to three changes."""
    out: dict[str, Any] = dict(ANSWERS[scenario])
    ids = [call.id for call in SCRIPTS[scenario]]
    for _ in range(rng.randint(1, 3)):
        roll = rng.random()
        if roll < 0.7 and out:
            out[rng.choice(sorted(out))] = _odd(rng, scenario)
        elif roll < 0.8 and out:
            del out[rng.choice(sorted(out))]
        else:  # an answer for a call that is not pending (or no call at all)
            out[rng.choice([*ids, "c_other", "", "\ud800"])] = _odd(rng, scenario)
    return out


def run_case(scenario: str, given: dict[str, Any]) -> Outcome:
    """Resume `scenario`'s paused run with `given` answers; classify what happened."""
    store = ClaimLog()
    outcome = snapshot_fuzz.run_case(scenario, paused_text(scenario), answers=given, store=store)
    if outcome.kind == "refused":  # nothing was used up: the right answers still resume it
        again = snapshot_fuzz.run_case(scenario, paused_text(scenario), store=store)
        if again.kind != "ok":
            return Outcome("lost", f"refused, then the right answers gave {again}")
    return outcome


def fuzz(cases: int, seed: int = 0) -> tuple[Counter[str], list[tuple[str, dict[str, Any], Outcome]]]:
    """`cases` random cases over every scenario; the counts and the failing cases."""
    rng = random.Random(seed)
    counts: Counter[str] = Counter()
    failures: list[tuple[str, dict[str, Any], Outcome]] = []
    for _ in range(cases):
        scenario = rng.choice(sorted(SCRIPTS))
        given = answers(rng, scenario)
        outcome = run_case(scenario, given)
        counts[outcome.kind] += 1
        if outcome.kind in ("lost", "undocumented"):
            failures.append((scenario, given, outcome))
    return counts, failures
