"""An oversize MCP result over stdio (issue 17 §4.10): how long until the call fails, and how long the event
loop stalls meanwhile, for agentkit's transport, the `mcp` SDK's `stdio_client` (what agentkit used before),
and a floor: reading the same bytes off a child's pipe and dropping them.

    python benchmarks/bench_mcp_stdio.py [--quick]

The server is the `mcp` SDK's own (`MCPServer`), over stdio, answering with N MiB of text (sent twice:
text and structured content). The limit is agentkit's default, 1 MiB.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

SERVER = """
import sys
from mcp.server.mcpserver import MCPServer
server = MCPServer("big")
@server.tool()
def blob(mib: int) -> str:
    return "x" * (mib << 20)
server.run("stdio")
"""
FLOOR = "import sys; sys.stdout.buffer.write(b'x' * ({n} << 20) + b'\\n'); sys.stdout.flush()"


class Ticker:
    """The longest gap between 10 ms ticks of the event loop while it runs (how long the loop was blocked)."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        last = time.perf_counter()
        while True:
            await asyncio.sleep(0.01)
            now = time.perf_counter()
            self.worst = max(self.worst, now - last - 0.01)
            last = now

    def __enter__(self) -> Ticker:
        self._task = asyncio.get_running_loop().create_task(self._run())
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()


async def agentkit_call(mib: int) -> tuple[float, float]:
    from agentkit import ToolCall
    from agentkit.mcp import MCPServer

    async with MCPServer.stdio(sys.executable, ["-c", SERVER], timeout=600) as server:
        with Ticker() as ticker:
            started = time.perf_counter()
            result = await server.registry.call(ToolCall(id="1", name="blob", arguments={"mib": mib}))
            elapsed = time.perf_counter() - started
    assert result.is_error and "the result was not read" in result.text, result.text
    return elapsed, ticker.worst


async def sdk_call(mib: int) -> tuple[float, float]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-c", SERVER])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        with Ticker() as ticker:
            started = time.perf_counter()
            result = await session.call_tool("blob", {"mib": mib})
            elapsed = time.perf_counter() - started
    assert len(result.content[0].text) == mib << 20  # type: ignore[union-attr]  # read whole, then refused
    return elapsed, ticker.worst


async def floor(mib: int) -> tuple[float, float]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", FLOOR.format(n=2 * mib), stdout=asyncio.subprocess.PIPE
    )
    assert process.stdout is not None
    with Ticker() as ticker:
        started = time.perf_counter()
        total = 0
        while chunk := await process.stdout.read(1 << 16):
            total += len(chunk)
        elapsed = time.perf_counter() - started
    await process.wait()
    assert total == (2 * mib << 20) + 1
    return elapsed, ticker.worst


def row(label: str, figures: tuple[float, float], base: float) -> str:
    seconds, stall = figures
    return f"{label:<34} {seconds:8.2f} s   {seconds / base:7.1f}x floor   longest loop stall {stall * 1000:7.0f} ms"


async def main(quick: bool) -> None:
    mib, sdk_mib = (8, 8) if quick else (40, 16)
    base = await floor(mib)
    ours = await agentkit_call(mib)
    print(f"an oversize MCP result over stdio ({mib} MiB of text, sent twice; limit 1 MiB)")
    print(row("floor: read the bytes, drop them", base, base[0]))
    print(row("agentkit: refused as it arrives", ours, base[0]))
    sdk = await sdk_call(sdk_mib)
    print(row(f"mcp stdio_client, {sdk_mib} MiB, read whole", sdk, base[0] * sdk_mib / mib))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    asyncio.run(main(parser.parse_args().quick))
