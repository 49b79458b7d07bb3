"""The resume-answers fuzzer (issue 17 §6), a bounded budget: no case ends in an undocumented exception or a lost pause.

`benchmarks/bench_answers_fuzz.py` runs it longer and prints the counts.
"""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .answers_fuzz import answers, run_case
from .snapshot_fuzz import ANSWERS, SCRIPTS


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(sorted(SCRIPTS)), st.randoms(use_true_random=False))
def test_odd_answers_resume_the_run_or_are_refused_before_its_claim(scenario: str, rng: random.Random) -> None:
    outcome = run_case(scenario, answers(rng, scenario))
    assert outcome.kind in ("ok", "refused"), outcome


def test_the_right_answers_resume_and_a_wrong_one_is_refused_without_using_the_pause_up() -> None:
    for scenario in SCRIPTS:
        assert run_case(scenario, ANSWERS[scenario]).kind == "ok"
        assert run_case(scenario, {}).kind == "refused"  # then resumed with the right answers
