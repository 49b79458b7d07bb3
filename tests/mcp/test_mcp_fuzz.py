"""MCP messages fuzzed both ways (issue 17 §6), a bounded budget: 0 undocumented exceptions.

The fuzzers are in `tests.mcp.mcp_fuzz`; ``benchmarks/bench_mcp_fuzz.py`` runs them longer.
"""

from __future__ import annotations

import random
from typing import Any

import httpx

from agentkit import ToolCall
from agentkit.mcp import MCPServer

from .mcp_fuzz import (
    Findings,
    ScriptedServer,
    StdioServer,
    client_case,
    server_case,
    serving,
    session,
    stateful_case,
    stdio_case,
)


async def test_odd_server_messages_give_a_connection_error_a_result_or_a_pause() -> None:
    findings = Findings()
    for seed in range(40):
        await client_case(random.Random(seed), findings)
    assert findings.undocumented == []
    assert findings.cases == 40 and findings.outcomes["ok"] > 0 and findings.outcomes["MCPConnectionError"] > 0


async def test_odd_client_requests_get_a_json_rpc_answer_or_a_4xx_and_the_server_lives_on() -> None:
    findings = Findings()
    async with serving() as url, httpx.AsyncClient() as http:
        for seed in range(150):
            await server_case(random.Random(seed), findings, url, http)
    assert findings.undocumented == []
    assert findings.outcomes["HTTP 200 result"] > 0 and findings.outcomes["HTTP 400 error"] > 0


async def test_odd_requests_inside_a_session_leave_the_session_answering() -> None:
    findings = Findings()
    async with httpx.AsyncClient() as http, session(http) as (url, headers):
        for seed in range(150):
            await stateful_case(random.Random(seed), findings, url, headers, http)
    assert findings.undocumented == []
    assert findings.outcomes["HTTP 200 result"] > 0 and findings.outcomes["HTTP 400 error"] > 0


async def test_odd_lines_on_stdin_leave_the_stdio_server_answering_in_json_rpc_only() -> None:
    findings = Findings()
    async with StdioServer() as server:
        for seed in range(150):
            await stdio_case(random.Random(seed), findings, server)
    assert findings.undocumented == []
    assert findings.cases == 150 and findings.outcomes["stdio result"] > 0 and findings.outcomes["stdio error"] > 0


async def test_the_stdio_server_answers_a_line_that_is_no_message_as_json_rpc_says() -> None:
    """Found by the stdio fuzzer: such lines got no answer (a client waited for its timeout)."""
    async with StdioServer() as server:
        await server.send(b'{"jsonrpc": "2.0", "id": 5, "method": "tools/list"')  # cut short: not JSON
        await server.send(b'{"jsonrpc": "2.0", "id": 6, "method": 3}')  # JSON, no valid request
        await server.send(b'{"jsonrpc": "2.0", "id": "r1", "result": 3}')  # a malformed response: no answer
        await server.send(b'{"jsonrpc": "1.0", "id": true, "method": "ping"}')  # an id JSON-RPC does not allow
        *answers, _ = await server.ping()
    assert [(a["id"], a["error"]["code"]) for a in answers] == [(None, -32700), (6, -32600), (None, -32600)]
    assert all(a["jsonrpc"] == "2.0" and a["error"]["message"] for a in answers)


class _Answering(ScriptedServer):
    """A server that answers every call with `result`, untouched."""

    def __init__(self, result: Any) -> None:
        super().__init__(random.Random(0))
        self.result = result

    def answer(self, request: Any) -> list[Any]:
        if request.method == "tools/call":
            return [{"id": request.id, "result": self.result}]
        return super().answer(request)

    def line(self, message: Any, method: str) -> bytes:
        return super().line(message, "")  # never broken


async def test_a_result_that_is_not_valid_mcp_is_the_servers_error_not_an_exception() -> None:
    """Found by the fuzzer: the SDK's ValidationError became an `exception` result (a bug in the tool)."""
    server = MCPServer(_Answering({"content": [{"type": "text", "text": 2**64}]}).transport, name="odd", timeout=5)
    async with server:
        result = await server.registry.call(ToolCall(id="1", name="echo", arguments={"text": "hi"}))
    assert result.error_kind == "tool_error", result.text
    assert "MCP server 'fuzz' answered the call to 'echo' with a result that is not valid MCP" in result.text
    assert "content.0" in result.text and "pydantic" not in result.text
