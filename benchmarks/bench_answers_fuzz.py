"""The resume-answers fuzzer, a longer run (issue 17 §6): odd answers given to `Agent.resume`.

    python benchmarks/bench_answers_fuzz.py            # 3,000 cases
    python benchmarks/bench_answers_fuzz.py --quick    # 200 cases (what CI runs)

Each case resumes a paused run (an approval, a suspension, a client call) with answers made from the right
ones with a value replaced, dropped or added (`tests/runs/answers_fuzz.py` says how). It prints how many
cases resumed, how many were refused with a documented error before the pause was claimed (and then
resumed with the right answers), and every case that was not: an undocumented exception or a pause lost.
Any such case makes the script exit 1. The floor, in the same run: resuming with the right answers.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from tests.fuzzing import Findings, bench
from tests.runs.answers_fuzz import fuzz, run_case
from tests.runs.snapshot_fuzz import ANSWERS, SCRIPTS


def floor(cases: int) -> float:
    """CPU seconds for `cases` resumes with the right answers, the scenarios in turn."""
    started = time.process_time()
    for index in range(cases):
        scenario = sorted(SCRIPTS)[index % len(SCRIPTS)]
        assert run_case(scenario, ANSWERS[scenario]).kind == "ok"
    return time.process_time() - started


def main(quick: bool) -> list[Findings]:
    cases = 200 if quick else 3_000
    started = time.process_time()
    counts, failures = fuzz(cases)
    seconds = time.process_time() - started
    findings = Findings(cases=cases, outcomes=counts)
    for scenario, given, outcome in failures:
        findings.undocumented.append(f"{scenario} {sorted(given)!r}: {outcome.kind}: {outcome.error[:200]}")
    findings.report(
        "resumes with odd answers (lost: 0 expected)", seconds, floor(cases // 10) * 10, "right answers (floor)"
    )
    return [findings]


if __name__ == "__main__":
    bench(__doc__, main)
