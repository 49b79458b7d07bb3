"""A snapshot document is checked whole before a resume claims anything; it carries any string (issue 17 §2.3, §2.1)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentkit import Agent, AssistantMessage, RunSnapshot, ToolCall, ToolResultsMessage, UserMessage, tool
from agentkit.exceptions import SnapshotError
from agentkit.messages import Message
from agentkit.runs import MemoryRunStore, SQLiteRunStore
from agentkit.testing import FunctionInfo, FunctionModel

from ..durable_helpers import ledger_lines, make_agent, make_tools
from .snapshot_fuzz import ClaimLog

KEY = b"k" * 32


@pytest.fixture
def ledger(tmp_path: Path) -> str:
    return str(tmp_path / "ledger.txt")


async def _paused_document(ledger: str, key: bytes | None = None) -> dict[str, Any]:
    result = await make_agent(ledger, store=MemoryRunStore(), key=key).generate("refund")
    assert result.status == "awaiting_approval"
    return json.loads(result.snapshot().to_json())


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(document: dict[str, Any]) -> None:
        *parents, last = path.split("/")
        node: Any = document
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        node[int(last) if isinstance(node, list) else last] = value

    return edit


# What each edit did on the previous release: mostly an exception other than SnapshotError, some only after the
# pause was claimed and the turn's other call had run (the pause then lost, half done).
EDITS = [
    ("status", ["awaiting_approval"], "TypeError: unhashable type: 'list'"),
    ("state", [], "AttributeError: 'list' object has no attribute 'get'"),
    ("state/control", "x", "AttributeError: 'str' object has no attribute 'get'"),
    ("state/control/deferred", "x", "AgentSetupError"),
    ("state/max_steps", float("inf"), "OverflowError"),
    ("state/settings/temperature", "hot", "accepted: sent to the vendor after the claim"),
    ("state/settings/active_tools", "refund", "UnknownToolError: 'r' (a string read as a tuple of letters)"),
    ("usage/input_tokens", "refund", "TypeError after the claim: the pause lost"),
    ("usage/requests", [], "TypeError after the claim: the pause lost"),
    ("subagent_responses", [{"usage": {}}], "KeyError: 'message'"),
    # refused before too, and still by the one check of the whole document
    ("state/max_steps", [], "SnapshotError"),
    ("state/failures", {"refund": "x"}, "SnapshotError"),
    ("state/control/limits", {"max_tool_calls": "5"}, "SnapshotError"),
    ("steps/0/usage/requests", {"a": 1}, "SnapshotError"),
    ("steps/0/message", True, "SnapshotError, naming messages"),
    ("steps/0", 3, "SnapshotError"),
    ("steps/0/results", 0, "SnapshotError"),
    ("messages/1/tool_calls/0/arguments", 7, "SnapshotError"),
    ("pending/0/call_id", ["c_refund"], "SnapshotError"),
    ("tools", [], "SnapshotError"),
]


@pytest.mark.parametrize(("path", "value", "before"), EDITS, ids=[e[0] for e in EDITS])
async def test_an_edited_document_is_refused_before_anything_is_claimed_or_run(
    ledger: str, path: str, value: Any, before: str
) -> None:
    document = await _paused_document(ledger)
    _set(path, value)(document)
    store = ClaimLog()
    with pytest.raises(SnapshotError) as info:
        await make_agent(ledger, store=store).resume(RunSnapshot.from_json(json.dumps(document)), {"c_refund": True})
    assert store.claims == [] and ledger_lines(ledger) == [], before
    assert path.split("/")[0] in str(info.value) or "not a paused one" in str(info.value)


async def test_unknown_fields_are_ignored_as_a_newer_writer_may_add_them(ledger: str) -> None:
    document = await _paused_document(ledger)
    document["usage"]["output_tokeés"] = 3  # was TypeError: Usage() got an unexpected keyword argument
    document["state"]["control"]["limits"]["later"] = 1
    done = await make_agent(ledger, store=MemoryRunStore()).resume(RunSnapshot(document), {"c_refund": True})
    assert done.status == "complete" and RunSnapshot(document).usage.requests == 1


async def test_an_invalid_suspension_schema_is_refused_before_the_claim(ledger: str) -> None:
    def booking(store: MemoryRunStore) -> Agent:
        def script(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
            if isinstance(messages[-1], ToolResultsMessage):
                return "done"
            return AssistantMessage(tool_calls=[ToolCall("c_book", "book", {"flight": "LH1"})])

        return Agent(id="support", model=FunctionModel(script), tools=make_tools(ledger), store=store)

    paused = await booking(MemoryRunStore()).generate("book")
    document = json.loads(paused.snapshot().to_json())
    assert document["status"] == "suspended"
    for schema in ({"type": "suspended"}, {"type": "object", "properties": {"a": {"$ref": "#/nowhere"}}}):
        document["pending"][0]["schema"] = schema  # was jsonschema's UnknownType / Unresolvable, after the claim
        store = ClaimLog()
        with pytest.raises(SnapshotError, match="has no usable schema"):
            await booking(store).resume(RunSnapshot(document), {"c_book": {"row": 3, "letter": "C"}})
        assert store.claims == []


@pytest.mark.parametrize("depth", [2_000, 100_000])
def test_a_document_nested_too_deeply_is_a_snapshot_error(depth: int) -> None:
    text = '{"format": "agentkit.run-snapshot", "version": 1, "messages": ' + "[" * depth + "]" * depth + "}"
    # was RecursionError; Python 3.13's json reads 2,000 levels (then the document is judged by its parts)
    with pytest.raises(SnapshotError, match="nested too deeply|the snapshot lacks"):
        RunSnapshot.from_json(text)


async def test_a_signature_that_is_not_ascii_does_not_match(ledger: str) -> None:
    document = await _paused_document(ledger, key=KEY)
    for signature in ("hmac-sha256:é" + "0" * 63, "\ud800", "", 7):
        document["signature"] = signature
        with pytest.raises(SnapshotError, match="signature does not match|not signed"):  # was TypeError
            await make_agent(ledger, store=MemoryRunStore(), key=KEY).resume(RunSnapshot(document), {"c_refund": True})
    assert ledger_lines(ledger) == []


async def test_an_edited_document_still_resumes_once_put_back(ledger: str) -> None:
    """A refusal spends nothing: the same pause, as written, resumes afterwards."""
    document = await _paused_document(ledger)
    edited = json.loads(json.dumps(document))
    edited["usage"]["requests"] = "many"
    store = ClaimLog()
    agent = make_agent(ledger, store=store)
    with pytest.raises(SnapshotError, match="usage is malformed at requests"):
        await agent.resume(RunSnapshot(edited), {"c_refund": True})
    done = await agent.resume(RunSnapshot(document), {"c_refund": True})
    assert done.status == "complete" and store.claims == [document["pause_id"]]


# ---- any string (issue 17 §2.1, the snapshot part) ---------------------------------------------------------

LONE = "\ud800"


@tool
def shout(text: str) -> str:
    """Say it loud (the result holds a lone surrogate, as a vendor's "\\ud800" escape decodes)."""
    return f"{text.upper()} {LONE}"


@tool(requires_approval=True)
def echo(text: str) -> str:
    """Say it back."""
    return f"echo {text}"


def _script(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
    turns = sum(isinstance(m, AssistantMessage) for m in messages)
    if turns == 0:
        return AssistantMessage(f"about {LONE}", [ToolCall("c0", "shout", {"text": "hi"})])
    if turns == 1:
        return AssistantMessage("", [ToolCall("c1", "echo", {"text": "hi"})])
    return f"said {messages[-1].results[0].text}"  # type: ignore[union-attr]


@pytest.mark.parametrize("signed", [False, True])
async def test_a_pause_holding_a_lone_surrogate_is_signed_stored_and_resumed(tmp_path: Path, signed: bool) -> None:
    store = SQLiteRunStore(tmp_path / "runs.sqlite3", key=KEY if signed else None)
    agent = Agent(id="a", model=FunctionModel(_script), tools=[shout, echo], store=store)
    paused = await agent.generate(f"go {LONE}")
    assert paused.status == "awaiting_approval"
    snapshot = paused.snapshot()  # signing was a UnicodeEncodeError
    text = snapshot.to_json()
    text.encode()  # storable anywhere that takes UTF-8
    await store.save_paused("run-1", snapshot)  # was a UnicodeEncodeError: the pause was lost
    stored = await store.claim_paused("run-1")
    assert stored is not None and stored == RunSnapshot.from_json(text) == snapshot
    done = await agent.resume(stored, {"c1": True})
    assert done.text == "said echo hi" and done.messages[0].content == f"go {LONE}"  # type: ignore[union-attr]
    assert done.messages[1].text == f"about {LONE}" and done.tool_results[0].output == f"HI {LONE}"  # type: ignore[union-attr]


async def test_a_history_holding_a_lone_surrogate_is_stored(tmp_path: Path) -> None:
    store = SQLiteRunStore(tmp_path / "runs.sqlite3")
    history: list[Message] = [UserMessage(f"hi {LONE}"), AssistantMessage(f"ho {LONE}")]
    await store.save_history("m1", history)  # was a UnicodeEncodeError
    assert await store.history("m1") == history
