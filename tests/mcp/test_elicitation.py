"""An MCP server's elicitation during a tool call is a suspension; its tool annotations drive approvals."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agentkit import Agent, RunSnapshot
from agentkit.agent import PendingSuspension
from agentkit.exceptions import MCPConnectionError, ResumeError
from agentkit.mcp import MCPServer, MCPTool, ToolAnnotations
from agentkit.runs import MemoryRunStore

from ..agent_helpers import call, calls, scripted
from ..durable_helpers import ledger_lines

pytestmark = pytest.mark.e2e  # a real MCP server process (the mcp SDK's server API) over stdio

ROOT = Path(__file__).resolve().parents[2]


def bistro(ledger: str, **options: object) -> MCPServer:
    # The fixture's tools ask with the mcp SDK's ctx.elicit, a back-channel request that only handshake-era
    # connections have (on 2026-07-28 the SDK's server fails it): the handshake is asked for.
    return MCPServer.stdio(
        sys.executable,
        ["-m", "tests.mcp.fixtures.elicit_server", ledger],
        cwd=str(ROOT),
        timeout=20,
        protocol="legacy",
        **options,  # type: ignore[arg-type]
    )


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


async def test_an_elicitation_can_be_declined_and_the_model_is_told(tmp_path: Path) -> None:
    from agentkit import ToolError

    ledger = str(tmp_path / "ledger.txt")
    model, _ = scripted(calls(call("book_table", {"restaurant": "Chez Nous"})), "no booking then")
    agent = Agent(model=model, mcp_servers=[bistro(ledger)], store=MemoryRunStore())
    paused = await agent.generate("book a table")
    assert paused.status == "suspended"
    done = await agent.resume(paused, {"c_book_table": ToolError("The user declined to give the details.")})
    assert done.status == "complete" and done.text == "no booking then"
    (result,) = done.tool_results
    assert result.is_error and result.text == "The user declined to give the details."
    assert ledger_lines(ledger) == ["asked Chez Nous"]  # the server was not called again: nothing booked


async def test_a_stored_answer_that_does_not_fit_the_servers_new_question_is_not_sent(tmp_path: Path) -> None:
    """Issue 17 §4.1, the client side: the answer was checked against the first question only."""
    ledger = str(tmp_path / "ledger.txt")
    model, _ = scripted(calls(call("book_bar", {"restaurant": "Chez Nous"})), "done")
    agent = Agent(model=model, mcp_servers=[bistro(ledger)], store=MemoryRunStore())
    paused = await agent.generate("book the bar")
    assert paused.status == "suspended"
    again = await agent.resume(paused, {"c_book_bar": {"size": 4, "name": "Ada"}})  # fits the first question only
    assert again.status == "suspended", again.tool_results
    (pending,) = again.pending
    assert isinstance(pending, PendingSuspension) and pending.schema is not None
    assert pending.schema["properties"]["size"]["maximum"] == 2
    assert "does not fit this question: $.size: 4 is greater than the maximum of 2" in pending.request["message"]  # type: ignore[index]
    assert ledger_lines(ledger) == ["asked bar Chez Nous", "asked bar Chez Nous"]  # nothing booked with 4
    done = await agent.resume(again, {"c_book_bar": {"size": 2, "name": "Ada"}})
    assert done.status == "complete" and ledger_lines(ledger)[-1] == "booked bar Chez Nous 2 Ada"


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


async def test_a_served_tool_that_suspends_asks_the_client_and_a_client_run_answers_it(tmp_path: Path) -> None:
    from agentkit import Registry
    from agentkit.mcp import serving_http

    from ..durable_helpers import make_tools

    ledger = str(tmp_path / "ledger.txt")
    served = Registry([t for t in make_tools(ledger) if t.id in ("book", "note")])
    async with serving_http(served) as url:
        # an MCP client without elicitation support: the call fails cleanly and the server stays up
        from mcp.client.streamable_http import streamable_http_client

        from .fixtures.helpers import session_in_task

        async with session_in_task(lambda: streamable_http_client(url)) as bare:
            failed = await bare.call_tool("book", {"flight": "LH1"})
            assert failed.is_error and "could not be asked for" in failed.content[0].text
            still = await bare.call_tool("note", {"text": "still up"})
            assert not still.is_error
        # an agentkit run on the client side turns the server's question into its own suspension
        model, _ = scripted(calls(call("book", {"flight": "LH1"})), "booked it")
        agent = Agent(id="client-side", model=model, mcp_servers=[MCPServer.http(url)], store=MemoryRunStore())
        paused = await agent.generate("book")
        assert paused.status == "suspended" and paused.pending[0].request["message"] == "Which seat on LH1?"  # type: ignore[union-attr]
        done = await agent.resume(paused, {"c_book": {"row": 3, "letter": "F"}})
    assert done.status == "complete" and done.tool_results[0].output == {"result": "booked LH1 seat 3F"}
    assert ledger_lines(ledger) == ["book LH1 3F", "note still up"]


@pytest.mark.parametrize("given", ["no", "false", 0, None, bool])
def test_a_requires_approval_that_is_no_policy_is_refused_when_made(given: object, tmp_path: Path) -> None:
    """Regression (issue 17 §4.9's class): "no" was taken, then every tool was skipped as "its schema is unusable"."""
    with pytest.raises(ValueError, match=r"MCPServer\(requires_approval=...\) must be True, False or a function"):
        bistro(str(tmp_path / "ledger.txt"), requires_approval=given)  # type: ignore[arg-type]


async def test_a_policy_function_returning_no_policy_is_named_at_connect(tmp_path: Path) -> None:
    server = bistro(str(tmp_path / "ledger.txt"), requires_approval=lambda a: "no")  # type: ignore[arg-type,return-value]
    with pytest.raises(MCPConnectionError, match=r"the requires_approval function returned 'no' for tool '\w+'"):
        async with server:
            pass
