"""The snapshot fuzzer (issue 17 §2.3, §6), a bounded budget: no case ends in an undocumented exception or a lost pause.

`benchmarks/bench_snapshot_fuzz.py` runs it longer and prints the counts.
"""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .snapshot_fuzz import SCRIPTS, mutate, paused_text, run_case


@settings(max_examples=120, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(sorted(SCRIPTS)), st.booleans(), st.randoms(use_true_random=False))
def test_an_edited_snapshot_is_resumed_or_refused_before_its_claim(
    scenario: str, signed: bool, rng: random.Random
) -> None:
    text = mutate(paused_text(scenario, signed=signed), rng)
    outcome = run_case(scenario, text, signed=signed)
    assert outcome.kind in ("ok", "refused"), outcome


def test_the_untouched_snapshots_resume() -> None:
    for scenario in SCRIPTS:
        for signed in (False, True):
            assert run_case(scenario, paused_text(scenario, signed=signed), signed=signed).kind == "ok"
