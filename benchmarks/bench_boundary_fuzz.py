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

import asyncio
import contextlib
import functools
import json
import os
import random
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the fuzzers live beside the tests

from tests.fuzzing import bench, run_cases
from tests.providers import boundary_fuzz as fuzz
from tests.providers.client_common import LocalServer


def arguments(cases: int) -> fuzz.Findings:
    # each case runs its own event loop (`Registry.call_many`): in a thread, out of `run_cases`' loop
    case = functools.partial(asyncio.to_thread, fuzz.arguments_case)
    findings, fuzzed = asyncio.run(run_cases(cases, case))
    texts = []
    for seed in range(cases):  # the floor: the same vendors' recorded calls as wire text, read back
        rng = random.Random(seed)
        texts.append(fuzz.json_text(fuzz.recorded_call(rng.choice(fuzz.VENDORS))))
    started = time.process_time()
    for text in texts:
        json.loads(text)
    findings.report("fuzzed tool calls (8 vendors)", fuzzed, time.process_time() - started, "json.loads")
    return findings


async def responses(cases: int) -> fuzz.Findings:
    findings, fuzzed = await run_cases(cases, fuzz.response_case)
    started = time.process_time()
    for seed in range(cases):
        rng = random.Random(seed)
        body = fuzz.response_body(rng, rng.choice(fuzz.VENDORS))
        served = LocalServer((200, {"content-type": "application/json"}, body))
        async with served as server, httpx.AsyncClient() as http:
            answer = await http.post(server.url, content=b"{}")
            with contextlib.suppress(ValueError, RecursionError):  # not JSON, or deeper than Python's reader goes
                answer.json()
    floor = time.process_time() - started
    findings.report("fuzzed responses through the SDKs", fuzzed, floor, "httpx + .json()")
    return findings


def main(quick: bool) -> list[fuzz.Findings]:
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")  # Bedrock's SDK signs requests (to 127.0.0.1)
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "secret")
    return [arguments(1_000 if quick else 20_000), asyncio.run(responses(40 if quick else 1_000))]


if __name__ == "__main__":
    bench(__doc__, main)
