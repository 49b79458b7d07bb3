"""The checker agrees with bfcl-eval's own, and its self-test passes.

bfcl-eval's verdicts are recorded by ``python -m dev.bfcl compare --record``.

`tests/data/bfcl/bfcl_verdicts.jsonl.gz` holds bfcl-eval 2026.3.23's verdict (valid, error type) on every probe
of every shipped question: each expected answer, the variants BFCL accepts and deliberately wrong calls.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from agentkit.evals import bfcl_cases, check_calls, probes, self_test

VERDICTS = Path(__file__).resolve().parents[1] / "data" / "bfcl" / "bfcl_verdicts.jsonl.gz"


def test_every_probe_is_judged_as_bfcl_eval_judged_it() -> None:
    with gzip.open(VERDICTS, "rt") as handle:
        recorded = [json.loads(line) for line in handle]
    ours = [(case, probe) for case in bfcl_cases() for probe in probes(case)]
    assert len(ours) == len(recorded) > 20_000
    wrong = []
    for (case, probe), theirs in zip(ours, recorded, strict=True):
        assert (case.id, probe.label) == (theirs["id"], theirs["probe"])
        verdict = check_calls(case.specs(), probe.calls, case.expected, case.check_mode)
        if (verdict.passed, verdict.bfcl_error) != (theirs["valid"], theirs["error_type"]):
            wrong.append((case.id, probe.label, verdict.bfcl_error, theirs["error_type"]))
    assert wrong == []
    # the recording covers expected answers that pass and wrong ones that fail, in every class
    assert sum(t["valid"] for t in recorded) > 6_000
    kinds = {t["error_type"].split(":")[0] for t in recorded if not t["valid"]}
    assert {"type_error", "value_error", "simple_function_checker", "ast_decoder"} <= kinds


def test_the_checker_self_test_passes() -> None:
    report = self_test()
    assert report.ok, str(report)
    assert report.cases == 2551 and report.probes > 20_000
