"""MCP in both directions, offline: the real `mcp-server-time` as a registry, and a registry served back.

Needs `pip install 'agentkit-tools[mcp]' mcp-server-time`. Nothing leaves this machine: the time server is
spawned over stdio, and agentkit's own server listens on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile

from agentkit import Registry, ToolCall, tool
from agentkit.mcp import MCPServer, serving_http
from agentkit.providers import get_provider


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def main() -> None:
    """Use the time server through agentkit, then serve a registry and call it back."""
    # 1. An MCP server's tools as a Registry, keyed by their MCP names. The server's own log (its stderr)
    # goes to a temporary file, so it never interleaves with this script's output (and leaves nothing behind).
    with tempfile.TemporaryFile("w+") as server_log:
        arguments = ["-m", "mcp_server_time", "--local-timezone", "UTC"]
        time_server = MCPServer.stdio(sys.executable, arguments, timeout=10, errlog=server_log)
        async with time_server:
            tools = time_server.registry
            print("tools:", list(tools))
            print("output schema of convert_time:", json.dumps(tools["convert_time"].output_schema)[:80], "...")

            now = await tools.call(ToolCall(id="1", name="get_current_time", arguments={"timezone": "Asia/Tokyo"}))
            print("structured output:", now.output)

            converted = await tools.call(
                ToolCall(
                    id="2",
                    name="convert_time",
                    arguments={"source_timezone": "Europe/Paris", "time": "09:30", "target_timezone": "America/Lima"},
                )
            )
            print("time difference:", converted.output["time_difference"])

            # The model's mistakes come back as error results, never as exceptions:
            rejected = await tools.call(ToolCall(id="3", name="get_current_time", arguments={"timezone": 42}))
            print(f"[{rejected.error_kind}]", rejected.text.splitlines()[1])  # checked by agentkit, never sent
            failed = await tools.call(ToolCall(id="4", name="get_current_time", arguments={"timezone": "Mars/Base"}))
            print(f"[{failed.error_kind}]", failed.text)  # the server's isError result

            # The same registry in a vendor's request format:
            payload = get_provider("anthropic").format_tools(tools)
            print("anthropic tools:", [t["name"] for t in payload["tools"]])

    # 2. An agentkit registry served over MCP (streamable HTTP), and called back through MCP.
    async with serving_http(Registry([add])) as url, MCPServer.http(url) as remote:
        result = await remote.registry.call(ToolCall(id="5", name="add", arguments={"a": 2, "b": 3}))
        print(f"served at {url}: add(2, 3) ->", result.output)


if __name__ == "__main__":
    asyncio.run(main())
