"""A run on Temporal takes only real decisions, by `TemporalRun.resume` and by a raw update (issue 17 §1.1)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentkit import ToolError
from agentkit.agent import Approval
from agentkit.exceptions import ApprovalError, ResumeError
from agentkit.temporal import DevServer

from ..durable_helpers import ledger_lines
from .helpers import durable_support

NOT_A_DECISION: list[Any] = ["false", {"approved": False}, ToolError("no"), 1, Approval("no")]  # type: ignore[arg-type]
RAW_NOT_A_DECISION: list[Any] = [{"approved": "false"}, {"approved": 0}, "yes", {"approved": True, "reason": 5}, 1]


@pytest.fixture(scope="module")
def temporal_address() -> Iterator[str]:
    with DevServer() as server:
        yield server.address


@pytest.fixture
async def client(temporal_address: str) -> AsyncIterator[Any]:
    from temporalio.client import Client

    yield await Client.connect(temporal_address)


@pytest.mark.e2e
@pytest.mark.temporal
async def test_only_true_false_or_an_approval_resumes_a_durable_run(client: Any, tmp_path: Path) -> None:
    from temporalio.client import WorkflowUpdateFailedError

    ledger = str(tmp_path / "ledger.txt")
    durable = durable_support(ledger)
    async with durable.worker(client):
        run = await durable.start(client, "refund")
        assert (await run.wait()).status == "awaiting_approval"
        for given in NOT_A_DECISION:
            with pytest.raises(ApprovalError, match="'c_refund'"):
                await run.resume({"c_refund": given})
        for given in RAW_NOT_A_DECISION:  # what another client could send without agentkit's own checks
            with pytest.raises(WorkflowUpdateFailedError) as info:
                await run.handle.execute_update("resume", {"approvals": {"c_refund": given}})
            assert "c_refund" in str(info.value.cause)
        with pytest.raises(WorkflowUpdateFailedError):
            await run.handle.execute_update("resume", {"approvals": [1, 2]})
        assert ledger_lines(ledger) == []
        assert (await run.state()).status == "awaiting_approval"  # the pause was not used up
        await run.resume({"c_refund": False})
        result = await run.result()
    assert result.status == "complete" and result.tool_results[0].error_kind == "denied"
    assert ledger_lines(ledger) == ["note refund asked"]


def test_decoding_a_raw_update_reads_nothing_by_truthiness() -> None:
    from agentkit.temporal._agent import decode_answers

    answers = decode_answers({"approvals": {"a": {"approved": "false"}, "b": {"approved": True, "reason": "ok"}}})
    assert answers == {"a": {"approved": "false"}, "b": Approval(True, "ok")}
    with pytest.raises(ResumeError, match="keyed by call id"):
        decode_answers({"approvals": "x"})
