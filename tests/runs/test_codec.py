"""The snapshot codec's fast paths give what the plain ones gave (issue 18, Faster §5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentkit import RunSnapshot
from agentkit._agent.resume import check_resume_async
from agentkit._agent.runs import spec_of
from agentkit.exceptions import SnapshotError
from agentkit.messages import ImagePart, TextPart, ToolResult
from agentkit.runs import MemoryRunStore
from agentkit.runs._codec import _adapter, encode_results  # pyright: ignore[reportPrivateUsage]

from ..durable_helpers import ledger_lines, make_agent

KEY = b"k" * 32

parts = st.lists(
    st.one_of(
        st.builds(TextPart, st.text(max_size=5)),
        st.builds(ImagePart, url=st.just("https://x/y.png")),
        st.builds(ImagePart, data=st.binary(min_size=1, max_size=4), media_type=st.sampled_from(["image/png", "x"])),
    ),
    max_size=3,
)
results = st.builds(
    ToolResult,
    call_id=st.text(max_size=4),
    name=st.sampled_from(["a", "b"]),
    content=parts,
    output=st.none() | st.integers() | st.text(max_size=3) | st.lists(st.booleans(), max_size=2),
    is_error=st.booleans(),
    error_kind=st.none() | st.just("exception"),
    exception_type=st.none() | st.just("ValueError"),
)


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.lists(results, max_size=4))
def test_results_are_written_as_the_results_adapter_writes_them(items: list[ToolResult]) -> None:
    expected = _adapter("results").dump_python(items, mode="json", exclude_none=True)
    assert encode_results(items, {}) == expected
    assert json.dumps(encode_results(items, {})) == json.dumps(expected)  # the same keys in the same order


@pytest.fixture
def ledger(tmp_path: Path) -> str:
    return str(tmp_path / "ledger.txt")


async def test_a_signed_snapshot_is_checked_from_its_text_or_from_its_document(ledger: str) -> None:
    paused = await make_agent(ledger, store=MemoryRunStore(), key=KEY).generate("refund")
    text = paused.snapshot().to_json()
    document = json.loads(text)
    assert text.endswith(f',"signature":"{document["signature"]}"}}')  # the signed bytes, then the signature
    reformatted = json.dumps(dict(reversed(list(document.items()))), indent=2)  # as a JSON column may keep it
    for written in (text, reformatted):
        done = await make_agent(ledger, store=MemoryRunStore(), key=KEY).resume(
            RunSnapshot.from_json(written), {"c_refund": True}
        )
        assert done.status == "complete"
    assert ledger_lines(ledger).count("refund DE01 500") == 2


async def test_a_document_edited_after_reading_is_what_resumes(ledger: str) -> None:
    """`document` handed out may be edited: from then on nothing reads the text it came from."""
    unsigned = (await make_agent(ledger, store=MemoryRunStore()).generate("refund")).snapshot().to_json()
    snapshot = RunSnapshot.from_json(unsigned)
    snapshot.document["messages"][-1]["tool_calls"][0]["arguments"]["amount"] = 7
    done = await make_agent(ledger, store=MemoryRunStore()).resume(snapshot, {"c_refund": True})
    assert done.status == "complete" and "refund DE01 7" in ledger_lines(ledger)

    signed = (await make_agent(ledger, store=MemoryRunStore(), key=KEY).generate("refund")).snapshot()
    snapshot = RunSnapshot.from_json(signed.to_json())
    snapshot.document["messages"][-1]["tool_calls"][0]["arguments"]["amount"] = 99_999
    assert json.loads(snapshot.to_json())["messages"][-1]["tool_calls"][0]["arguments"]["amount"] == 99_999
    with pytest.raises(SnapshotError, match="signature does not match"):
        await make_agent(ledger, store=MemoryRunStore(), key=KEY).resume(snapshot, {"c_refund": True})
    assert "refund DE01 99999" not in ledger_lines(ledger)


async def test_a_snapshot_read_from_text_says_what_it_holds_and_restores_twice(ledger: str) -> None:
    agent = make_agent(ledger, store=MemoryRunStore())
    text = (await agent.generate("refund")).snapshot().to_json()
    snapshot = RunSnapshot.from_json(text)
    assert snapshot.to_json() == text and snapshot.status == "awaiting_approval" and snapshot.signed is False
    assert [p.call_id for p in snapshot.pending] == ["c_refund"] and snapshot.usage.requests == 1
    await check_resume_async(spec_of(agent), snapshot, {"c_refund": True})  # as the UI adapters do: a first restore
    done = await agent.resume(snapshot, {"c_refund": True})
    assert done.status == "complete" and snapshot == RunSnapshot(json.loads(text))
