"""MCP messages fuzzed both ways for longer than the test suite does: 0 undocumented exceptions (issue 17 §6).

    python benchmarks/bench_mcp_fuzz.py            # 600 server scripts against our client, 3,000 client bodies
                                                   # (stateless HTTP), 1,500 in one session, 1,500 stdio lines
    python benchmarks/bench_mcp_fuzz.py --quick    # 40, 300, 150 and 150 (what CI runs)

The fuzzers are those of ``tests/mcp/mcp_fuzz.py``: `MCPServer` against a scripted server whose handshake,
tool list, call results, notifications and requests are fuzzed; and fuzzed JSON-RPC bodies POSTed to
`serving_http`, inside one session of a stateful server, and as lines to the stdio server of
``python -m agentkit.mcp serve``. The script prints the outcomes by kind and fails (exit status 1) on any
undocumented one. Floors, in the same run: for the client, the same number of sessions against the unfuzzed
script (connect, list, call each tool); for the server, a ``ping`` POSTed as many times (stdio: written).
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import sys
import time
import warnings
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the fuzzers live beside the tests

from tests.fuzzing import bench, run_cases
from tests.mcp import mcp_fuzz as fuzz


class _Plain(fuzz.ScriptedServer):
    """The script with nothing fuzzed: the floor's server."""

    def __init__(self) -> None:
        super().__init__(random.Random(0))
        self.tools = fuzz.TOOLS

    def answer(self, request: object) -> list[object]:
        if getattr(request, "method", "") == "tools/call":
            return [{"id": getattr(request, "id", 0), "result": fuzz.RESULTS[0]}]
        return super().answer(request)

    def line(self, message: object, method: str) -> bytes:
        return super().line(message, "")


async def client(cases: int) -> fuzz.Findings:
    findings, fuzzed = await run_cases(cases, fuzz.client_case)
    started = time.process_time()
    for _ in range(cases):
        async with fuzz.MCPServer(_Plain().transport, name="plain", protocol="legacy") as server:
            for key, arguments in fuzz.VALID.items():
                await server.registry.call(fuzz.ToolCall(id="c1", name=key, arguments=arguments))
    floor = time.process_time() - started
    findings.report("fuzzed servers against MCPServer", fuzzed, floor, "unfuzzed session (floor)")
    return findings


async def server(cases: int) -> fuzz.Findings:
    ping = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "ping"}).encode()
    async with fuzz.serving() as url, httpx.AsyncClient() as http:
        findings, fuzzed = await run_cases(cases, lambda rng, found: fuzz.server_case(rng, found, url, http))
        started = time.process_time()
        for _ in range(cases * 2):  # a case is a body and a ping
            await http.post(url, content=ping, headers=fuzz.HEADERS)
        floor = time.process_time() - started
    findings.report("fuzzed bodies to serving_http", fuzzed, floor, "a ping twice (floor)")
    return findings


async def stdio(cases: int) -> fuzz.Findings:
    async with fuzz.StdioServer() as served:
        findings, fuzzed = await run_cases(cases, lambda rng, found: fuzz.stdio_case(rng, found, served))
        started = time.process_time()
        for _ in range(cases):  # a case is a line and a ping
            await served.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
            await served.ping()
        floor = time.process_time() - started
    findings.report("fuzzed lines to the stdio server", fuzzed, floor, "a notification and a ping (floor)")
    return findings


async def stateful(cases: int) -> fuzz.Findings:
    ping = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "ping"}).encode()
    async with httpx.AsyncClient() as http, fuzz.session(http) as (url, headers):
        findings, fuzzed = await run_cases(
            cases, lambda rng, found: fuzz.stateful_case(rng, found, url, headers, http)
        )
        started = time.process_time()
        for _ in range(cases * 2):
            await http.post(url, content=ping, headers=headers)
        floor = time.process_time() - started
    findings.report("fuzzed bodies inside one stateful session", fuzzed, floor, "a ping twice (floor)")
    return findings


def main(quick: bool) -> list[fuzz.Findings]:
    logging.disable(logging.CRITICAL)  # the SDK logs every malformed message it drops
    warnings.simplefilter("ignore")  # and agentkit warns of every unusable tool schema
    return [
        asyncio.run(client(40 if quick else 600)),
        asyncio.run(server(300 if quick else 3_000)),
        asyncio.run(stateful(150 if quick else 1_500)),
        asyncio.run(stdio(150 if quick else 1_500)),
    ]


if __name__ == "__main__":
    bench(__doc__, main)
