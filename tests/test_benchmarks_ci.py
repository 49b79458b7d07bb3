"""CI runs every benchmark: a crash fails the run, timing never does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUN_ALL = ROOT / "benchmarks" / "run_all.py"


def _run_all(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(RUN_ALL), "--quick", "--dir", str(folder)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def test_a_crashing_benchmark_fails_the_run_and_the_others_still_run(tmp_path: Path) -> None:
    (tmp_path / "run.py").write_text("import sys\nprint('run quick' if '--quick' in sys.argv else 'run full')\n")
    (tmp_path / "bench_a.py").write_text("raise RuntimeError('the floor broke')\n")
    (tmp_path / "bench_b.py").write_text("print('b ran')\n")
    (tmp_path / "helper.py").write_text("raise SystemExit('not a benchmark: never run')\n")

    done = _run_all(tmp_path)

    assert done.returncode == 1
    assert "run quick" in done.stdout and "b ran" in done.stdout  # every figure is still printed
    assert "the floor broke" in done.stderr
    assert "benchmarks that crashed: bench_a.py" in done.stderr
    assert "helper.py" not in done.stdout + done.stderr


def test_benchmarks_that_finish_pass_however_slow(tmp_path: Path) -> None:
    (tmp_path / "bench_slow.py").write_text("print('ours 40.0x the floor (target <= 2x)')\n")

    done = _run_all(tmp_path)

    assert done.returncode == 0, done.stderr
    assert "40.0x" in done.stdout


def test_ci_runs_every_benchmark_and_lets_a_crash_fail_it() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    lines = [line.strip() for line in ci.splitlines() if "benchmarks/" in line and not line.strip().startswith("#")]
    assert lines == ["python benchmarks/run_all.py --quick"]  # no `|| echo`, no per-script list to forget one
    assert "\nset -euo pipefail\n" in ci  # a non-zero exit stops CI
