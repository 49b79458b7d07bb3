"""An MCP server's elicitation during a tool call is a suspension; its tool annotations drive approvals."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agentkit import Agent, RunSnapshot
from agentkit.agent import PendingSuspension
from agentkit.exceptions import ResumeError
from agentkit.mcp import MCPServer, MCPTool, ToolAnnotations
from agentkit.runs import MemoryRunStore

from .agent_helpers import call, calls, scripted
from .durable_helpers import ledger_lines

pytestmark = pytest.mark.e2e  # a real MCP server process (the mcp SDK's server API) over stdio

ROOT = Path(__file__).resolve().parents[1]


def bistro(ledger: str, **options: object) -> MCPServer:
    return MCPServer.stdio(
        sys.executable, ["-m", "tests.mcp_fixtures.elicit_server", ledger], cwd=str(ROOT), timeout=20, **options
    )  # type: ignore[arg-type]


async def test_an_elicitation_suspends_the_run_and_the_answer_reaches_the_server(tmp_path: Path) -> None:
    ledger = str(tmp_path / "ledger.txt")
    model, script = scripted(calls(call("book_table", {"restaurant": "Chez Nous"})), "all set")
    agent = Agent(id="concierge", model=model, mcp_servers=[bistro(ledger)], store=MemoryRunStore())
    paused = await agent.generate("book a table")
    assert paused.status == "suspended"
    (pending,) = paused.pending
    assert isinstance(pending, PendingSuspension) and pending.call_id == "c_book_table"
    assert pending.request == {
        "message": "How many guests at Chez Nous, and in whose name?",
        "mode": "form",
        "server": "bistro",
    }
    assert pending.schema is not None and set(pending.schema["properties"]) == {"size", "name"}
    assert ledger_lines(ledger) == ["asked Chez Nous"]  # the server was told "cancel": nothing booked
    text = paused.snapshot().to_json()  # the server's session closed with the run; the snapshot is all we keep
    with pytest.raises(ResumeError, match="does not fit"):
        await agent.resume(RunSnapshot.from_json(text), {"c_book_table": {"size": "four"}})
    done = await agent.resume(RunSnapshot.from_json(text), {"c_book_table": {"size": 4, "name": "Ada"}})
    assert done.status == "complete" and done.text == "all set"
    assert done.tool_results[0].output == {"result": "booked Chez Nous for 4 (Ada)"}  # the server's structured result
    assert ledger_lines(ledger) == ["asked Chez Nous", "asked Chez Nous", "booked Chez Nous 4 Ada"]


async def test_tool_annotations_are_kept_and_drive_an_approval_policy(tmp_path: Path) -> None:
    ledger = str(tmp_path / "ledger.txt")
    server = bistro(ledger, requires_approval=lambda a: a.destructive)
    async with server:
        tools = server.registry
        listed = tools["list_tables"]
        assert isinstance(listed, MCPTool) and listed.server == "bistro"
        assert listed.annotations == ToolAnnotations(title="List tables", read_only_hint=True)
        assert [k for k, t in tools.items() if t.requires_approval] == [
            "cancel_all",
            "ping",
        ]  # unannotated: destructive
        assert not tools["book_table"].requires_approval and tools["cancel_all"].annotations.destructive  # type: ignore[attr-defined]
    model, _ = scripted(calls(call("list_tables"), call("cancel_all")), "done")
    agent = Agent(
        model=model, mcp_servers=[bistro(ledger, requires_approval=lambda a: a.destructive)], store=MemoryRunStore()
    )
    paused = await agent.generate("cancel everything")
    assert paused.status == "awaiting_approval" and [p.call_id for p in paused.pending] == ["c_cancel_all"]
    done = await agent.resume(paused, {"c_cancel_all": False})
    assert ledger_lines(ledger) == [] and [r.error_kind for r in done.tool_results] == [None, "denied"]
