"""A fuzzer of stored snapshots (issue 17 §2.3): what an edited, truncated or corrupted document does to `resume`.

Three paused runs (an approval, a suspension, a client call) are written as JSON; each case changes that
text or its document (a value replaced by an odd one, a key deleted or added, the text cut short or a
byte changed, a value nested thousands deep) and resumes it with the answers the original pause wanted,
in a fresh agent over a fresh store that records its claims. Every case ends in one of:

* ``ok``: the run went on (an unsigned snapshot is whatever its writer made it: see docs/pausing.md);
* ``refused``: `RunSnapshot.from_json` or `resume` raised a documented error (`SnapshotError`, or
  `ResumeError` for answers that no longer fit the edited pause) before claiming the pause;
* ``lost``: an exception after the pause was claimed: the run is half done and cannot be resumed;
* ``undocumented``: any other exception.

The last two are failures. `tests/runs/test_snapshot_fuzz.py` runs a bounded budget of cases;
``python benchmarks/bench_snapshot_fuzz.py`` a longer run that prints the counts.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import json
import random
from collections import Counter
from dataclasses import dataclass
from typing import Any

from agentkit import Agent, AssistantMessage, ToolCall, ToolContext, ToolResultsMessage, client_tool, tool
from agentkit.exceptions import ResumeError
from agentkit.messages import Message
from agentkit.runs import MemoryRunStore, RunSnapshot
from agentkit.testing import FunctionInfo, FunctionModel

from ..durable_helpers import Receipt, Seat

KEY = b"fuzz-key-32-bytes-long.........."

ODD: list[Any] = [
    None, True, False, 0, -1, 1, 7, 2**64, -(2**63) - 1, 10**400, 1.5, -0.0, float("inf"), float("-inf"),
    float("nan"), "", "x", "é€😀", "\ud800", "a\x00b", "awaiting_approval", "suspended", "c_refund", "refund",
    [], {}, [1, "a"], {"a": 1}, {"role": "user", "content": "hi"}, {"type": "object"}, ["x", "x"],
]  # fmt: skip


class ClaimLog(MemoryRunStore):
    """A memory store that records every claim asked of it."""

    def __init__(self, key: bytes | None = None) -> None:
        super().__init__(key=key)
        self.claims: list[str] = []

    async def claim(self, pause_id: str) -> bool:
        self.claims.append(pause_id)
        return await super().claim(pause_id)


def _tools() -> list[Any]:
    @tool(requires_approval=lambda args: args["amount"] > 100)
    def refund(account: str, amount: int) -> Receipt:
        """Refund an amount to an account."""
        import datetime as dt

        return Receipt(account=account, amount=amount, at=dt.datetime(2026, 1, 2, 3, 4, 5))

    @tool
    def book(ctx: ToolContext[Any], flight: str) -> str:
        """Book a seat on a flight (asks which seat)."""
        seat = ctx.suspend({"question": f"Which seat on {flight}?"}, schema=Seat)
        return f"booked {flight} seat {seat.row}{seat.letter}"

    @tool
    def note(text: str) -> str:
        """Write a note."""
        return f"noted {text}"

    locate = client_tool(
        "locate", input_schema={"type": "object", "properties": {}}, output_schema={"type": "string"},
        description="Where the user is (the browser answers).",
    )  # fmt: skip
    return [refund, book, note, locate]


SCRIPTS: dict[str, list[ToolCall]] = {
    "approval": [
        ToolCall("c_refund", "refund", {"account": "DE01", "amount": 500}), ToolCall("c_note", "note", {"text": "é"}),
    ],
    "suspension": [ToolCall("c_book", "book", {"flight": "LH 1234"})],
    "client": [ToolCall("c_locate", "locate", {}), ToolCall("c_note", "note", {"text": "\ud800 lone"})],
}  # fmt: skip
ANSWERS: dict[str, dict[str, Any]] = {
    "approval": {"c_refund": True},
    "suspension": {"c_book": {"row": 3, "letter": "C"}},
    "client": {"c_locate": "Berlin"},
}


def _agent(scenario: str, store: MemoryRunStore) -> Agent:
    def script(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
        if isinstance(messages[-1], ToolResultsMessage):
            return "done"
        return AssistantMessage("Working on it.", list(SCRIPTS[scenario]))

    return Agent(id="fuzz", model=FunctionModel(script), tools=_tools(), store=store)


@functools.cache
def paused_text(scenario: str, *, signed: bool = False) -> str:
    """The JSON of a paused run of `scenario` (signed with `KEY` when asked)."""
    agent = _agent(scenario, MemoryRunStore(key=KEY if signed else None))
    result = asyncio.run(agent.generate("go"))
    assert result.status in ("awaiting_approval", "suspended", "awaiting_client"), result.status
    return result.snapshot().to_json()


# ---- mutations -----------------------------------------------------------------------------------------


def _containers(document: Any) -> list[Any]:
    found: list[Any] = []
    stack = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, (dict, list)):
            found.append(node)
            stack.extend(node.values() if isinstance(node, dict) else node)
    return found


def _deep(depth: int, rng: random.Random) -> Any:
    value: Any = rng.choice(["x", 1, None])
    for _ in range(depth):
        value = [value] if rng.random() < 0.5 else {"a": value}
    return value


def _value(kind: str, containers: list[Any], rng: random.Random) -> Any:
    """What an edit of `kind` puts in: a deeply nested value, a copy of another part, or an odd value."""
    if kind == "deep":
        return _deep(rng.choice((50, 900, 2000, 50_000)), rng)
    if kind == "swap":
        try:
            return copy.deepcopy(rng.choice(containers))
        except RecursionError:  # a part nested deeper than copy goes
            return None
    return rng.choice(ODD)


def _edit(document: Any, kind: str, rng: random.Random) -> None:
    """One edit of `kind` at a random place in `document`."""
    containers = _containers(document)
    node = rng.choice(containers)
    value = _value(kind, containers, rng)
    if isinstance(node, list):
        if not node or kind == "add":
            node.insert(rng.randrange(len(node) + 1), value)
        elif kind == "delete":
            del node[rng.randrange(len(node))]
        else:
            node[rng.randrange(len(node))] = value
    elif kind == "add" or not node:
        node[rng.choice(["extra", "status", "signature", "\ud800", ""])] = value
    elif kind == "delete":
        del node[rng.choice(list(node))]
    else:
        node[rng.choice(list(node))] = value


def mutate(text: str, rng: random.Random) -> str:
    """`text` changed in one to three random ways."""
    for _ in range(rng.choice((1, 1, 2, 3))):
        kind = rng.choice(("replace", "replace", "replace", "delete", "add", "swap", "deep", "truncate", "byte"))
        if kind == "truncate":
            text = text[: rng.randrange(len(text))]
            continue
        if kind == "byte":
            at = rng.randrange(len(text))
            text = text[:at] + rng.choice('{}[]",:0a\\\x00é') + text[at + 1 :]
            continue
        try:
            document = json.loads(text)
        except ValueError:
            continue
        _edit(document, kind, rng)
        try:
            text = json.dumps(document, ensure_ascii=rng.random() < 0.5)
        except (ValueError, RecursionError):
            continue
    return text


# ---- running a case --------------------------------------------------------------------------------------


@dataclass
class Outcome:
    kind: str  # ok, refused, lost, undocumented
    error: str = ""


def run_case(scenario: str, text: str, *, signed: bool = False) -> Outcome:
    """Read `text` as a snapshot and resume it with the scenario's answers; classify what happened."""
    store = ClaimLog(KEY if signed else None)
    agent = _agent(scenario, store)
    try:
        snapshot = RunSnapshot.from_json(text)
        asyncio.run(agent.resume(snapshot, ANSWERS[scenario]))
    except ResumeError as exc:  # SnapshotError, ApprovalError and AlreadyResumedError are ResumeErrors
        if store.claims:
            return Outcome("lost", f"{type(exc).__name__}: {exc}")
        return Outcome("refused", type(exc).__name__)
    except Exception as exc:
        kind = "lost" if store.claims else "undocumented"
        return Outcome(kind, f"{type(exc).__name__}: {str(exc)[:200]}")
    return Outcome("ok")


def fuzz(cases: int, seed: int = 0) -> tuple[Counter[str], list[tuple[str, str, Outcome]]]:
    """`cases` random cases over every scenario (signed and not); the counts and the failing cases."""
    rng = random.Random(seed)
    texts = {(s, signed): paused_text(s, signed=signed) for s in SCRIPTS for signed in (False, True)}
    counts: Counter[str] = Counter()
    failures: list[tuple[str, str, Outcome]] = []
    for _ in range(cases):
        scenario, signed = rng.choice(sorted(texts))
        text = mutate(texts[scenario, signed], rng)
        outcome = run_case(scenario, text, signed=signed)
        counts[outcome.kind] += 1
        if outcome.kind in ("lost", "undocumented"):
            failures.append((scenario, text, outcome))
    return counts, failures
