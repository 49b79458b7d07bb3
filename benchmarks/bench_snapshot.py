"""Snapshot cost for a 100-turn run: size, `to_json` and `from_json` (+ restore) against the history alone.

    python benchmarks/bench_snapshot.py            # full run
    python benchmarks/bench_snapshot.py --quick    # fewer repetitions

The run: 99 turns each calling `lookup` (a pydantic result with a datetime and a list), then a refund
that needs approval, so the run pauses after 100 turns. The floor is `json.dumps` / `json.loads` of the
same document (the snapshot as plain JSON data, same bytes); the history alone is printed too. `to_json`
is measured from the paused `RunResult` (building the document included), unsigned and signed;
`from_json` includes what `resume` does before running: parsing, checking the whole document's shape,
the signature and the tool fingerprints, and re-validating every output into its type. CPU time, best
of the rounds. Timing never fails the script.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import time
from typing import Any

from pydantic import BaseModel

from agentkit import Agent, AssistantMessage, ToolCall, tool
from agentkit.limits import RunLimits
from agentkit.messages import Message
from agentkit.runs import MemoryRunStore, RunSnapshot
from agentkit.runs._codec import encode_messages
from agentkit.runs._snapshot import restore
from agentkit.testing import FunctionInfo, FunctionModel

TURNS = 100
KEY = b"benchmark-key-32-bytes-long....."


class Order(BaseModel):
    order_id: str
    total: float
    placed: dt.datetime
    items: list[str]


@tool
def lookup(order_id: str) -> Order:
    """Look an order up."""
    return Order(order_id=order_id, total=19.99, placed=dt.datetime(2026, 1, 2, 3, 4), items=["book", "pen", "ink"])


@tool(requires_approval=True)
def refund(order_id: str, amount: float) -> str:
    """Refund an order."""
    return "refunded"


def turn(messages: list[Message], info: FunctionInfo) -> AssistantMessage:
    index = sum(isinstance(m, AssistantMessage) for m in messages)
    if index == TURNS - 1:
        return AssistantMessage(tool_calls=[ToolCall(f"c{index}", "refund", {"order_id": "o-1", "amount": 19.99})])
    return AssistantMessage(f"Looking at order {index}.", [ToolCall(f"c{index}", "lookup", {"order_id": f"o-{index}"})])


TARGET = 3.0


def best(fn: Any, number: int, repeats: int) -> float:
    """Best mean CPU time of `number` calls over `repeats` rounds, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.process_time()
        for _ in range(number):
            fn()
        times.append((time.process_time() - start) / number)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    number, repeats = (5, 3) if parser.parse_args().quick else (20, 5)

    plain = Agent(
        id="bench",
        model=FunctionModel(turn),
        tools=[lookup, refund],
        store=MemoryRunStore(),
        limits=RunLimits(max_steps=TURNS),
    )
    signed = Agent(id="bench", model=FunctionModel(turn), tools=[lookup, refund], store=MemoryRunStore(key=KEY))
    signed.max_steps = TURNS
    result = asyncio.run(plain.generate("Check every order, then refund o-1."))
    signed_result = asyncio.run(signed.generate("Check every order, then refund o-1."))
    assert result.status == "awaiting_approval" and len(result.steps) == TURNS

    history = encode_messages(result.messages, plain.tools)
    history_text = json.dumps(history)
    text = result.snapshot().to_json()
    signed_text = signed_result.snapshot().to_json()
    document = json.loads(text)
    document_text = json.dumps(document)

    dumps = best(lambda: json.dumps(document), number, repeats)
    loads = best(lambda: json.loads(document_text), number, repeats)
    history_dumps = best(lambda: json.dumps(history), number, repeats)
    history_loads = best(lambda: json.loads(history_text), number, repeats)
    to_json = best(lambda: result.snapshot().to_json(), number, repeats)
    to_json_signed = best(lambda: signed_result.snapshot().to_json(), number, repeats)
    from_json = best(lambda: restore(RunSnapshot.from_json(text), "bench", plain.tools, None), number, repeats)
    from_json_signed = best(
        lambda: restore(RunSnapshot.from_json(signed_text), "bench", signed.tools, KEY), number, repeats
    )

    print(f"{TURNS}-turn paused run: {len(result.messages)} messages, {len(result.steps)} steps")
    print(f"{'size':<38}{len(text) / 1024:>9.1f} KiB   history alone {len(history_text) / 1024:8.1f} KiB   ratio "
          f"{len(text) / len(history_text):5.2f}x")  # fmt: skip
    for label, out, back in (
        ("floor: the document", dumps, loads),
        ("(the history alone)", history_dumps, history_loads),
    ):
        print(f"{label:<38}json.dumps {out * 1e3:6.2f} ms   json.loads {back * 1e3:6.2f} ms")
    rows = [
        ("to_json (snapshot() + to_json())", to_json, dumps, "json.dumps"),
        ("to_json, signed (HMAC-SHA256)", to_json_signed, dumps, "json.dumps"),
        ("from_json + restore", from_json, loads, "json.loads"),
        ("from_json + restore, signed", from_json_signed, loads, "json.loads"),
    ]
    for label, value, floor, floor_name in rows:
        ok = "ok" if value / floor <= TARGET else "OVER TARGET"
        print(
            f"{label:<38}{value * 1e3:>9.2f} ms    {floor_name:<12}{floor * 1e3:9.2f} ms   ratio {value / floor:5.2f}x"
            f"   target <= {TARGET:g}x [{ok}]"
        )


if __name__ == "__main__":
    main()
