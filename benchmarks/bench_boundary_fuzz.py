"""Tool arguments and vendor responses fuzzed for longer than the test suite does: 0 undocumented exceptions.

    python benchmarks/bench_boundary_fuzz.py            # 20,000 argument cases, 1,000 response cases
    python benchmarks/bench_boundary_fuzz.py --quick    # 1,000 and 40 (what CI runs)

The fuzzers are those of ``tests/providers/boundary_fuzz.py``, on all eight vendors: a recorded tool call
with odd arguments read, answered by `Registry.call` and replayed in the next request; a fuzzed response
read by the vendor's official SDK from a real server on 127.0.0.1. The script fails (exit status 1) on any
undocumented exception and prints the outcomes by kind. Floors, in the same run: for arguments, reading the
same wire text with ``json.loads`` (what every SDK does first); for responses, fetching the same bodies from
the same kind of server with a bare httpx client (the transport, no SDK, no agentkit).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the fuzzers live beside the tests

from tests.providers import boundary_fuzz as fuzz
from tests.providers.client_common import LocalServer


def arguments(cases: int) -> tuple[fuzz.Findings, float, float]:
    findings = fuzz.Findings()
    started = time.perf_counter()
    for seed in range(cases):
        fuzz.arguments_case(random.Random(seed), findings)
    fuzzed = time.perf_counter() - started
    texts = []
    for seed in range(cases):  # the floor: the same vendors' recorded calls as wire text, read back
        rng = random.Random(seed)
        texts.append(fuzz.json_text(fuzz.recorded_call(rng.choice(fuzz.VENDORS))))
    started = time.perf_counter()
    for text in texts:
        json.loads(text)
    return findings, fuzzed, time.perf_counter() - started


async def responses(cases: int) -> tuple[fuzz.Findings, float, float]:
    findings = fuzz.Findings()
    started = time.perf_counter()
    for seed in range(cases):
        await fuzz.response_case(random.Random(seed), findings)
    fuzzed = time.perf_counter() - started
    started = time.perf_counter()
    for seed in range(cases):
        rng = random.Random(seed)
        body = fuzz.response_body(rng, rng.choice(fuzz.VENDORS))
        served = LocalServer((200, {"content-type": "application/json"}, body))
        async with served as server, httpx.AsyncClient() as http:
            answer = await http.post(server.url, content=b"{}")
            with contextlib.suppress(ValueError, RecursionError):  # not JSON, or deeper than Python's reader goes
                answer.json()
    return findings, fuzzed, time.perf_counter() - started


def report(name: str, findings: fuzz.Findings, fuzzed: float, floor: float, floor_name: str) -> None:
    print(f"{findings.cases} {name}, {len(findings.undocumented)} undocumented exceptions")
    for outcome, count in sorted(findings.outcomes.items()):
        print(f"  {outcome:<40}{count:>7}")
    per_case, per_floor = fuzzed / findings.cases, floor / findings.cases
    print(
        f"{'per case':<12}{per_case * 1e3:>9.3f} ms    {floor_name:<22}{per_floor * 1e3:9.3f} ms"
        f"   ratio {per_case / per_floor:7.1f}x"
    )
    for finding in findings.undocumented[:20]:
        print("UNDOCUMENTED", finding, file=sys.stderr)


def main(quick: bool) -> int:
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")  # Bedrock's SDK signs requests (to 127.0.0.1)
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "secret")
    found, fuzzed, floor = arguments(1_000 if quick else 20_000)
    report("fuzzed tool calls (8 vendors)", found, fuzzed, floor, "json.loads")
    answers, fuzzed, floor = asyncio.run(responses(40 if quick else 1_000))
    report("fuzzed responses through the SDKs", answers, fuzzed, floor, "httpx + .json()")
    return 1 if found.undocumented or answers.undocumented else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer cases")
    sys.exit(main(parser.parse_args().quick))
