"""The UI endpoints fuzzed for longer than the test suite does: every answer must be a documented one.

    python benchmarks/bench_ui_fuzz.py            # 2,000 cases
    python benchmarks/bench_ui_fuzz.py --quick    # 200 cases

Each case (the fuzzer of ``tests/ui/body_fuzz.py``) pauses a run on a fresh Vercel or AG-UI app, then posts
a mutated request body; the script fails (exit status 1) on any undocumented answer (a 500, an exception,
a masked exception in the stream) and prints the answers by kind. The floor posts the very same bodies
to a Starlette endpoint that only reads the JSON (`request.json()`), in the same run: the ratio is what
checking, running and streaming cost on top of reading the body.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from pathlib import Path

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the fuzzer lives beside the tests

from tests.ui.body_fuzz import Findings, fuzz_case


async def _echo(request: Request) -> Response:
    try:
        await request.json()
    except (ValueError, RecursionError):  # Starlette's own request.json() raises RecursionError on deep JSON
        return JSONResponse({"error": "bad"}, status_code=400)
    return JSONResponse({})


async def main(cases: int) -> int:
    findings = Findings()
    bodies: list[tuple[bytes, str]] = []
    started = time.perf_counter()
    for seed in range(cases):
        bodies.append(await fuzz_case(random.Random(seed), findings))
    fuzzed = time.perf_counter() - started
    floor_app = Starlette(routes=[Route("/", _echo, methods=["POST"])])
    transport = httpx.ASGITransport(app=floor_app)
    started = time.perf_counter()
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as http:
        for content, content_type in bodies:
            await http.post("/", content=content, headers={"content-type": content_type})
    floor = time.perf_counter() - started
    print(f"{findings.cases} fuzzed UI request bodies, {len(findings.undocumented)} undocumented answers")
    for outcome, count in sorted(findings.outcomes.items()):
        print(f"  {outcome:<14}{count:>7}")
    per_case, per_floor = fuzzed / cases, floor / cases
    print(
        f"{'per case (pause + fuzzed post)':<38}{per_case * 1e3:>9.2f} ms    {'json echo':<12}"
        f"{per_floor * 1e3:9.2f} ms   ratio {per_case / per_floor:5.1f}x"
    )
    for finding in findings.undocumented[:20]:
        print("UNDOCUMENTED", finding, file=sys.stderr)
    return 1 if findings.undocumented else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer cases")
    sys.exit(asyncio.run(main(200 if parser.parse_args().quick else 2000)))
