"""Run every benchmark script; a script that crashes fails the run, a slow figure never does.

    python benchmarks/run_all.py --quick    # what CI runs (fewer repetitions)
    python benchmarks/run_all.py            # full runs

The scripts are `run.py` and every `bench_*.py` beside this file. Each runs in its own process (so one
script's imports and caches cannot flatter another's figures) and all of them run even after a failure, so
every figure is printed; then the names of the scripts that exited non-zero are printed and the exit status
is 1. Timing is informational: the scripts assert what they compute (a benchmark that measures a wrong
answer is a bug), never how fast.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def scripts(folder: Path) -> list[Path]:
    """The benchmark scripts of `folder`: `run.py` first, then each `bench_*.py` by name."""
    found = sorted(folder.glob("bench_*.py"))
    return [*([folder / "run.py"] if (folder / "run.py").exists() else []), *found]


def run_all(folder: Path, extra: list[str]) -> list[str]:
    """Run each script of `folder` with `extra` arguments; return the names of those that failed."""
    failed = []
    for script in scripts(folder):
        print(f"-- {script.name}", flush=True)
        code = subprocess.run([sys.executable, str(script), *extra], check=False).returncode
        if code != 0:
            print(f"!! {script.name} failed to run (exit status {code})", file=sys.stderr, flush=True)
            failed.append(script.name)
    return failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (passed to each script)")
    parser.add_argument("--dir", type=Path, default=HERE, help="the folder of scripts (default: this one)")
    args = parser.parse_args()
    failed = run_all(args.dir, ["--quick"] if args.quick else [])
    if failed:
        print(f"benchmarks that crashed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
