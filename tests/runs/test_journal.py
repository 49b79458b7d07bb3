"""Effect keys and the effect journal (issue 19 §2.1, §2.2), in process; the crashes are test_journal_crashes.py."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from agentkit import Agent, AssistantMessage, ToolCall, ToolContext, ToolResultsMessage, tool
from agentkit.exceptions import AlreadyResumedError, ResumeError, ToolDefinitionError
from agentkit.messages import Message
from agentkit.runs import (
    SCHEMA_VERSION,
    EffectJournal,
    MemoryRunStore,
    RunSnapshot,
    SQLiteRunStore,
    effect_key,
)
from agentkit.temporal import effect_key as temporal_effect_key
from agentkit.testing import FunctionInfo, FunctionModel


class Receipt(BaseModel):
    order: str
    cents: int


def _two_refunds(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
    last = messages[-1]
    if isinstance(last, ToolResultsMessage):
        return " | ".join(r.text for r in last.results)
    calls = [ToolCall("c1", "refund", {"order": "o-1"}), ToolCall("c2", "refund", {"order": "o-2"})]
    return AssistantMessage(tool_calls=calls)


def _refund_agent(store: Any, seen: list[tuple[str, str | None]], **options: Any) -> Agent:
    @tool(requires_approval=True, **options)
    def refund(ctx: ToolContext, order: str) -> Receipt:
        """Refund an order."""
        seen.append((order, ctx.effect_key))
        return Receipt(order=order, cents=500)

    return Agent(id="refunds", model=FunctionModel(_two_refunds), tools=[refund], store=store)


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    if request.param == "memory":
        yield MemoryRunStore()
    else:
        with SQLiteRunStore(tmp_path / "runs.sqlite3") as sqlite:
            yield sqlite


def test_an_effect_key_names_one_call_of_one_run() -> None:
    key = effect_key("run-1", "c1")
    assert key == effect_key("run-1", "c1") and key.startswith("ak-") and len(key) == 35
    assert len({key, effect_key("run-1", "c2"), effect_key("run-2", "c1"), effect_key("run-1c", "1")}) == 4
    assert temporal_effect_key("wf-1", "c1") == effect_key("wf-1", "c1")  # one formula, in process and on Temporal


async def test_the_journal_reserves_once_commits_and_releases(store: Any) -> None:
    assert isinstance(store, EffectJournal)
    assert await store.reserve("k", run_id="r", call_id="c", tool="t") is None
    again = await store.reserve("k", run_id="r", call_id="c", tool="t")
    assert again is not None and again.state == "reserved"
    assert (again.run_id, again.call_id, again.tool) == ("r", "c", "t")
    await store.commit("k", {"call_id": "c", "name": "t"})
    entry = await store.effect("k")
    assert entry is not None and entry.state == "committed" and entry.result == {"call_id": "c", "name": "t"}
    await store.release("k")  # a committed entry stays
    assert (await store.effect("k")) == entry
    assert await store.reserve("k2", run_id="r", call_id="c2", tool="t") is None
    await store.release("k2")
    assert await store.effect("k2") is None and await store.reserve("k2", run_id="r", call_id="c2", tool="t") is None


async def test_each_call_gets_its_key_the_same_in_every_copy_of_the_snapshot(store: Any) -> None:
    seen: list[tuple[str, str | None]] = []
    agent = _refund_agent(store, seen)
    paused = await agent.generate("refund both")
    snapshot = paused.snapshot()
    result = await agent.resume(RunSnapshot.from_json(snapshot.to_json()), {"c1": True, "c2": True})
    assert result.status == "complete"
    # the two calls run concurrently (threads): in either order
    assert sorted(seen) == [("o-1", effect_key(snapshot.run_id, "c1")), ("o-2", effect_key(snapshot.run_id, "c2"))]
    entry = await store.effect(effect_key(snapshot.run_id, "c1"))
    assert entry is not None and entry.state == "committed" and entry.tool == "refund"


async def test_a_recovery_uses_committed_results_typed_and_never_runs_them_again(store: Any) -> None:
    seen: list[tuple[str, str | None]] = []
    agent = _refund_agent(store, seen)
    paused = await agent.generate("refund both")
    text = paused.snapshot().to_json()
    snapshot = RunSnapshot.from_json(text)
    await agent.resume(snapshot, {"c1": True, "c2": True})
    # as after a crash before the resume recorded its end: the claim says "started"
    await store.record_resume(snapshot.pause_id, state="started")
    recovered = await agent.recover(RunSnapshot.from_json(text), {"c1": True, "c2": True})
    assert recovered.status == "complete" and len(seen) == 2  # nothing ran again
    outputs = [r.output for r in recovered.tool_results]
    assert outputs == [Receipt(order="o-1", cents=500), Receipt(order="o-2", cents=500)]  # typed again
    record = await store.resume_record(snapshot.pause_id)
    assert record is not None and record.state == "finished"


async def test_a_recovery_of_a_resume_that_ended_is_refused(store: Any) -> None:
    agent = _refund_agent(store, [])
    paused = await agent.generate("refund both")
    text = paused.snapshot().to_json()
    await agent.resume(RunSnapshot.from_json(text), {"c1": True, "c2": True})
    with pytest.raises(AlreadyResumedError, match="finished"):
        await agent.recover(RunSnapshot.from_json(text), {"c1": True, "c2": True})


async def test_a_recovery_of_a_pause_never_resumed_is_a_resume(store: Any) -> None:
    seen: list[tuple[str, str | None]] = []
    agent = _refund_agent(store, seen)
    paused = await agent.generate("refund both")
    result = await agent.recover(paused, {"c1": True, "c2": False})
    assert result.status == "complete" and [order for order, _ in seen] == ["o-1"]
    with pytest.raises(AlreadyResumedError):
        await agent.resume(paused, {"c1": True, "c2": False})


async def test_a_recovery_needs_a_store_with_a_journal() -> None:
    class ClaimsOnly:
        def __init__(self) -> None:
            self.inner = MemoryRunStore()

        async def claim(self, pause_id: str) -> bool:
            return await self.inner.claim(pause_id)

        async def save_paused(self, run_id: str, snapshot: Any) -> None: ...
        async def paused(self, run_id: str) -> Any: ...
        async def claim_paused(self, run_id: str) -> Any: ...
        async def save_history(self, message_id: str, messages: Any) -> None: ...
        async def history(self, message_id: str) -> Any: ...

    agent = _refund_agent(ClaimsOnly(), [])
    paused = await agent.generate("refund both")
    with pytest.raises(ResumeError, match="effect journal"):
        await agent.recover(paused, {"c1": True, "c2": True})


async def test_a_journaled_call_that_suspends_runs_again_when_answered() -> None:
    store = MemoryRunStore()
    runs: list[str | None] = []

    @tool(idempotent=False)
    def transfer(ctx: ToolContext, to: str) -> str:
        """Transfer money after asking how much."""
        runs.append(ctx.effect_key)
        amount = ctx.suspend({"question": "how much?"})
        return f"sent {amount} to {to}"

    def script(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
        if isinstance(messages[-1], ToolResultsMessage):
            return messages[-1].results[0].text
        return AssistantMessage(tool_calls=[ToolCall("t1", "transfer", {"to": "ann"})])

    agent = Agent(model=FunctionModel(script), tools=[transfer], store=store)
    paused = await agent.generate("pay ann")
    assert paused.status == "suspended"
    result = await agent.resume(paused, {"t1": 30})
    assert result.text == "sent 30 to ann"  # not an unknown outcome: the suspension gave its reservation back
    assert len(runs) == 2 and runs[0] == runs[1] is not None


async def test_tools_without_approval_or_idempotent_skip_the_journal() -> None:
    store = MemoryRunStore()

    @tool
    def lookup(ctx: ToolContext, order: str) -> str:
        """Look an order up."""
        return f"{order}: {ctx.effect_key}"

    def script(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
        if isinstance(messages[-1], ToolResultsMessage):
            return messages[-1].results[0].text
        return AssistantMessage(tool_calls=[ToolCall("l1", "lookup", {"order": "o-1"})])

    agent = Agent(model=FunctionModel(script), tools=[lookup], store=store)
    result = await agent.generate("look")
    key = result.text.split(": ")[1]
    assert key.startswith("ak-") and await store.effect(key) is None  # a key, and no journal writes
    assert lookup.journaled is False and tool(requires_approval=True)(lookup.fn).journaled is True
    assert tool(idempotent=True)(lookup.fn).reruns_unknown is True
    assert tool(requires_approval=True)(lookup.fn).reruns_unknown is False


def test_idempotent_takes_a_bool() -> None:
    def pay(to: str) -> str:
        """Pay."""
        return to

    with pytest.raises(ToolDefinitionError, match="idempotent= must be True, False or None"):
        tool(idempotent="yes")(pay)  # type: ignore[call-overload]


async def test_an_older_database_gets_the_journal_table(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    with SQLiteRunStore(path) as store:
        assert await store.claim("p") is True
    db = sqlite3.connect(path)
    db.execute("DROP TABLE agentkit_effects")  # as a database of the schema before the journal
    db.execute("PRAGMA user_version = 1")
    db.commit()
    db.close()
    with SQLiteRunStore(path) as store:
        assert await store.claim("p") is False
        assert await store.reserve("k", run_id="r", call_id="c", tool="t") is None
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 2
    db.close()


async def test_an_unknown_outcome_reaches_the_hooks_which_may_decide() -> None:
    from agentkit import Hooks

    store = MemoryRunStore()
    seen: list[tuple[str, str | None]] = []
    decided: list[str | None] = []

    def policy(ctx: ToolContext, call: ToolCall, result: Any) -> Any:
        decided.append(result.error_kind)
        return None

    agent = _refund_agent(store, seen)
    paused = await agent.generate("refund both")
    run_id = paused.snapshot().run_id
    # as a process that died inside the first refund left it: reserved, never committed
    assert await store.reserve(effect_key(run_id, "c1"), run_id=run_id, call_id="c1", tool="refund") is None
    result = await agent.resume(paused, {"c1": True, "c2": True}, hooks=[Hooks(after_tool_call=policy)])
    assert [order for order, _ in seen] == ["o-2"]  # the reserved call never ran again
    [first, second] = result.tool_results
    assert first.error_kind == "outcome_unknown" and effect_key(run_id, "c1") in first.text
    assert not second.is_error and sorted(decided, key=str) == sorted(["outcome_unknown", None], key=str)
