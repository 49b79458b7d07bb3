"""MCP messages fuzzed both ways (issue 17 §6), a bounded budget: 0 undocumented exceptions.

The fuzzers are in `tests.mcp.mcp_fuzz`; ``benchmarks/bench_mcp_fuzz.py`` runs them longer.
"""

from __future__ import annotations

import random
from typing import Any

import httpx

from agentkit import ToolCall
from agentkit.mcp import MCPServer

from .mcp_fuzz import Findings, ScriptedServer, client_case, server_case, serving


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
