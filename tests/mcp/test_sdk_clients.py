"""agentkit's MCP server as the official SDK clients see it (issue 22 §1.2, §6): the TypeScript SDK's client
(npm `@modelcontextprotocol/sdk`, run by node) lists and uses tools, resources, templates and prompts, and
answers a suspended tool's question. Real HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import pytest

from agentkit import Registry
from agentkit.mcp import serving_http

from .fixtures.helpers import JS, node_with
from .fixtures.library import PROMPTS, RESOURCES
from .fixtures.registry import PIXEL, tools
from .test_rounds import choose_seat

pytestmark = pytest.mark.e2e  # node and the TypeScript SDK from js/node_modules
NEEDS_NODE = True


async def run_ts_client(url: str) -> dict[str, Any]:
    node = node_with("@modelcontextprotocol/sdk")
    process = await asyncio.create_subprocess_exec(
        node, str(JS / "mcp-client.mjs"), url, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()
    return json.loads(out)


async def test_the_typescript_sdk_client_uses_tools_resources_and_prompts() -> None:
    served = Registry({"add": tools["add"], "choose_seat": choose_seat})
    async with serving_http(served, resources=RESOURCES, prompts=PROMPTS) as url:
        seen = await run_ts_client(url)
    assert seen["server"]["name"] == "agentkit"
    assert {t["name"] for t in seen["tools"]} == {"add", "choose_seat"}
    assert seen["resources"] == ["docs://readme", "images://pixel", "data://raw"]
    assert seen["templates"] == ["docs://pages/{page}", "books://{id}"]
    assert seen["readme"] == {
        "uri": "docs://readme",
        "mimeType": "text/markdown",
        "text": "# agentkit\nTools for models.",
    }
    assert json.loads(seen["book"]["text"]) == {"id": 3, "title": "Book 3"}
    assert base64.b64decode(seen["pixel"]["blob"]) == PIXEL and seen["pixel"]["mimeType"] == "image/png"
    assert seen["prompts"][0] == {
        "name": "review",
        "arguments": [
            {"name": "code", "description": "The code to review.", "required": True},
            {"name": "language", "description": "Its language.", "required": False},
            {"name": "strict", "description": "Whether to be strict.", "required": False},
        ],
    }
    assert seen["review"] == [{"role": "user", "content": {"type": "text", "text": "Review this python code:\nx = 1"}}]
    assert seen["add"]["structuredContent"] == {"result": 5}
    assert seen["seat"]["structuredContent"] == {"result": "LH1: 7B"}  # asked by elicitation, answered by the SDK
    assert seen["missing"]["code"] == -32002 and "Resource not found: docs://missing" in seen["missing"]["message"]
