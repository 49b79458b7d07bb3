"""The snapshot fuzzer, a longer run (issue 17 §2.3): edited, truncated, deeply nested and oddly typed snapshots.

    python benchmarks/bench_snapshot_fuzz.py            # 3,000 cases
    python benchmarks/bench_snapshot_fuzz.py --quick    # 300 cases (what CI runs)
    python benchmarks/bench_snapshot_fuzz.py --cases 20000 --seed 3

Each case changes a paused run's snapshot (an approval, a suspension, a client call; signed or not) and
resumes it (`tests/runs/snapshot_fuzz.py` says how). It prints how many cases resumed, how many were
refused with a documented error before the pause was claimed, and every case that was not: an
undocumented exception or a pause lost after its claim. Any such case makes the script exit 1.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from tests.runs.snapshot_fuzz import fuzz


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="300 cases")
    parser.add_argument("--cases", type=int, default=None, help="how many cases (default 3,000)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    cases = args.cases if args.cases is not None else 300 if args.quick else 3000
    start = time.process_time()
    counts, failures = fuzz(cases, seed=args.seed)
    seconds = time.process_time() - start
    print(f"snapshot fuzzer: {cases:,} cases, seed {args.seed}, {seconds:.1f} s CPU")
    for kind in ("ok", "refused", "lost", "undocumented"):
        print(f"  {kind:<14}{counts[kind]:>7,}")
    for what, count in Counter(f"{o.kind}: {o.error[:120]}" for _, _, o in failures).most_common(20):
        print(f"  !! {count} x {what}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
