"""The playground's compatibility tab (issue 22 §5.5): how long opening it takes, and how long the server stalls.

    python benchmarks/bench_playground.py            # 100 six-parameter tools
    python benchmarks/bench_playground.py --quick    # 30 tools

Each scenario runs in a fresh process (the report's first build imports every vendor's dialect, which a
warm process has done already). Printed beside the floor of the same run, ``GET /api/agent`` through the
same in-process HTTP client (the request machinery, the agent's tool list as JSON):

* BEFORE, what the tab did until now: build the report on the event loop at each opening
  (`agentkit.playground._app._compatibility`): the first opening, a later one, and how long the event
  loop stalled meanwhile (a chat's stream waits that long);
* AFTER: the page's load (``GET /api/agent``) starts the build in a worker thread; the tab opened at once
  (the worst case: it waits for the build, the loop does not) and opened later (the report is reused).

The stall is the longest gap of a 1 ms ticker on the loop. Nothing here fails on timing; it asserts that
both paths give the same rows.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing


def agent(size: int) -> Any:
    from agentkit import Agent, Registry
    from benchmarks.run import make_function

    return Agent(model="test", tools=Registry({f"search_{i}": make_function() for i in range(size)}))


async def stalled(work: Callable[[], Awaitable[Any]]) -> tuple[float, float, Any]:
    """(seconds `work` took, the longest gap of a 1 ms ticker meanwhile, its result)."""
    gaps: list[float] = []
    done = False

    async def tick() -> None:
        last = time.perf_counter()
        while not done:
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    ticker = asyncio.ensure_future(tick())
    await asyncio.sleep(0.01)
    gaps.clear()
    start = time.perf_counter()
    result = await work()
    took = time.perf_counter() - start
    done = True
    await ticker
    return took, max(gaps, default=0.0), result


async def child(scenario: str, size: int) -> dict[str, Any]:
    import httpx

    from agentkit.playground import _app
    from agentkit.playground import create_app as playground_app

    subject = agent(size)
    asgi = playground_app(subject)
    figures: dict[str, Any] = {}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=asgi), base_url="http://127.0.0.1") as http:

        async def floor() -> Any:
            return (await http.get("/api/agent")).json()

        if scenario == "before":

            async def old_tab() -> Any:  # the old route: the report built on the loop, at every opening
                return json.loads(json.dumps(_app._compatibility(subject)))

            figures["first"], figures["first_stall"], rows = await stalled(old_tab)
            figures["later"], figures["later_stall"], _ = await stalled(old_tab)
        else:

            async def tab() -> Any:
                return (await http.get("/api/compatibility")).json()

            await floor()  # the page loads: the build starts
            figures["first"], figures["first_stall"], rows = await stalled(tab)
            figures["later"], figures["later_stall"], _ = await stalled(tab)
        figures["floor"] = min([(await stalled(floor))[0] for _ in range(5)])
    figures["rows"] = sorted((r["vendor"], r["key"], r["rejected"]) for r in rows)
    return figures


def measure(scenario: str, size: int) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", scenario, "--size", str(size)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def line(label: str, seconds: float, floor: float) -> None:
    print(f"  {label:<66} {seconds * 1e3:9.1f} ms   {seconds / floor:8.1f}x the floor")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="30 tools instead of 100")
    parser.add_argument("--child", choices=["before", "after"], help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(asyncio.run(child(args.child, args.size))))
        return
    size = 30 if args.quick else 100
    before, after = measure("before", size), measure("after", size)
    assert before["rows"] == after["rows"] and before["rows"], "the two paths must report the same rows"
    floor = min(before["floor"], after["floor"])
    print(f"playground compatibility tab, {size} six-parameter tools, 8 vendors (floor: GET /api/agent)")
    line("floor: GET /api/agent", floor, floor)
    line("BEFORE first opening (built on the event loop)", before["first"], floor)
    line("  ... the event loop stalled", before["first_stall"], floor)
    line("BEFORE a later opening (rebuilt on the event loop)", before["later"], floor)
    line("  ... the event loop stalled", before["later_stall"], floor)
    line("AFTER opened right after the page loaded (waits for the build)", after["first"], floor)
    line("  ... the event loop stalled", after["first_stall"], floor)
    line("AFTER a later opening (the report reused)", after["later"], floor)
    line("  ... the event loop stalled", after["later_stall"], floor)


if __name__ == "__main__":
    main()
