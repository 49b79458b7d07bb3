"""What the boundary fuzzers share (issue 17 §6): their findings, the positions of a document, its mutation."""

from __future__ import annotations

import argparse
import copy
import functools
import operator
import random
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Findings", "bench", "mutate", "paths", "run_cases"]

SURROGATES = ["\ud800", "\udc00", "\\ud800", "\x00"]


@dataclass
class Findings:
    """What the cases gave: outcomes by kind, and the undocumented ones (each a finding)."""

    cases: int = 0
    outcomes: Counter[str] = field(default_factory=lambda: Counter[str]())
    undocumented: list[str] = field(default_factory=lambda: [])

    def found(self, where: str, error: BaseException | str) -> None:
        """Record a finding: an exception (or what went wrong) at `where`."""
        self.outcomes["UNDOCUMENTED"] += 1
        text = error if isinstance(error, str) else f"{type(error).__name__}: {str(error)[:300]}"
        self.undocumented.append(f"{where}: {text}")

    def report(self, name: str, seconds: float, floor: float, floor_name: str) -> None:
        """Print the outcomes and the time per case beside the floor's (for the benchmarks)."""
        print(f"{self.cases:,} {name}, {len(self.undocumented)} undocumented")
        for outcome, count in sorted(self.outcomes.items()):
            print(f"  {outcome:<40}{count:>7,}")
        per_case, per_floor = seconds / self.cases, floor / self.cases
        print(f"per case {per_case * 1e3:9.3f} ms    {floor_name:<28}{per_floor * 1e3:9.3f} ms", end="")
        print(f"   ratio {per_case / per_floor:7.2f}x")
        for finding in self.undocumented[:20]:
            print("UNDOCUMENTED", finding, file=sys.stderr)


def paths(node: Any, prefix: tuple[Any, ...] = (), limit: int = 30) -> list[tuple[Any, ...]]:
    """Every position in `node`, down to `limit` levels (an odd value put in may be thousands deep)."""
    found: list[tuple[Any, ...]] = []
    if len(prefix) > limit:
        return found
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        found.append((*prefix, key))
        found.extend(paths(value, (*prefix, key), limit))
    return found


def mutate(
    rng: random.Random, document: Any, odd: Callable[[random.Random], Any], keys: Sequence[str] = (), changes: int = 3
) -> Any:
    """`document` with one to `changes` values replaced by `odd` ones, deleted, holding a surrogate, or odd
    keys (among `keys`) added; `odd` itself when the document has no positions."""
    out = copy.deepcopy(document)
    for _ in range(rng.randint(1, changes)):
        found = paths(out)
        if not found:
            return odd(rng)
        path = rng.choice(found)
        parent = functools.reduce(operator.getitem, path[:-1], out)
        current, roll = parent[path[-1]], rng.random()
        if roll < 0.2 and isinstance(parent, dict):
            del parent[path[-1]]
        elif roll < 0.3 and keys and isinstance(parent, dict):
            parent[rng.choice(keys)] = odd(rng)
        elif roll < 0.45 and isinstance(current, str):
            cut = rng.randint(0, len(current))
            parent[path[-1]] = current[:cut] + rng.choice(SURROGATES) + current[cut:]
        else:
            parent[path[-1]] = odd(rng)
    return out


def bench(doc: str | None, main: Callable[[bool], list[Findings]]) -> None:
    """Run a fuzzing benchmark's `main` (``--quick``: CI's budget); exit 1 if any part found something."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="the bounded budget CI runs")
    sys.exit(1 if any(part.undocumented for part in main(parser.parse_args().quick)) else 0)


async def run_cases(
    count: int, case: Callable[[random.Random, Findings], Awaitable[None] | None]
) -> tuple[Findings, float]:
    """`case` on seeds 0 to `count - 1` (awaited when it is a coroutine); the findings and the CPU seconds."""
    findings = Findings()
    started = time.process_time()
    for seed in range(count):
        pending = case(random.Random(seed), findings)
        if pending is not None:
            await pending
    return findings, time.process_time() - started
