"""agentkit's MCP client against a server nobody here wrote (issue 22 §6): the reference server
`@modelcontextprotocol/server-everything` from npm (the TypeScript SDK's own), over stdio: resources
(text, binary, templates), subscriptions, prompts with arguments and embedded resources, content types,
elicitation, and a task-only tool run as an MCP task."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from agentkit import Agent, ImagePart, TextPart, ToolCall, ToolContext, UserMessage
from agentkit.agent import PendingSuspension
from agentkit.mcp import MCPServer
from agentkit.runs import MemoryRunStore

from ..agent_helpers import call, calls, scripted
from .fixtures.helpers import EVERYTHING, node_with

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]
NEEDS_NODE = True


def everything(**options: Any) -> MCPServer:
    return MCPServer.stdio(node_with("@modelcontextprotocol/server-everything"), [str(EVERYTHING), "stdio"], **options)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[MCPServer]:
    async with everything(timeout=30) as opened:
        yield opened


async def test_it_is_negotiated_to_the_handshake_and_lists_everything(server: MCPServer) -> None:
    assert server.protocol_version == "2025-11-25"  # the TypeScript SDK 1.x answers no server/discover
    assert server.name == "mcp-servers/everything"
    assert {"echo", "get-tiny-image", "simulate-research-query"} <= set(server.registry)
    assert any(r.uri.startswith("demo://resource/static/document/") for r in server.resources)
    assert [t.uri_template for t in server.resource_templates] == [
        "demo://resource/dynamic/text/{resourceId}",
        "demo://resource/dynamic/blob/{resourceId}",
    ]
    assert {p.name for p in server.prompts} >= {"simple-prompt", "args-prompt", "resource-prompt"}


async def test_text_and_binary_resources_from_templates(server: MCPServer) -> None:
    text_template, blob_template = server.resource_templates
    (text,) = await server.read_resource(text_template.expand(resourceId=3))
    assert text.text is not None and text.text.startswith("Resource 3: This is a plaintext resource")
    (blob,) = await server.read_resource(blob_template.expand(resourceId=3))
    assert blob.text is None and blob.data is not None and blob.data.startswith(b"Resource 3: This is a base64 blob")
    document = next(r for r in server.resources if r.uri.endswith("/features.md"))
    (page,) = await server.read_resource(document.uri)
    assert page.mime_type == "text/markdown" and page.text is not None and "# Everything Server" in page.text


async def test_prompts_with_arguments_and_embedded_resources(server: MCPServer) -> None:
    assert await server.get_prompt("args-prompt", {"city": "Paris"}) == [UserMessage("What's weather in Paris?")]
    (message,) = await server.get_prompt("resource-prompt", {"resourceType": "Text", "resourceId": "2"})
    assert isinstance(message.content, list) and len(message.content) == 2
    assert message.content[1].text.startswith("Resource 2: This is a plaintext resource")  # type: ignore[union-attr]
    with pytest.raises(ValueError, match=r"missing \['city'\]"):
        await server.get_prompt("args-prompt", {"state": "TX"})


async def test_content_types_and_structured_content(server: MCPServer) -> None:
    image = await server.registry.call(ToolCall(id="1", name="get-tiny-image", arguments={}))
    assert [type(p) for p in image.output] == [TextPart, ImagePart, TextPart]
    weather = await server.registry.call(
        ToolCall(id="2", name="get-structured-content", arguments={"location": "New York"})
    )
    assert set(weather.output) == {"temperature", "conditions", "humidity"}


async def test_a_subscription_receives_the_servers_updates(server: MCPServer) -> None:
    started = await server.registry.call(ToolCall(id="1", name="toggle-subscriber-updates", arguments={}))
    assert "Started simulated resource updated notifications" in started.text
    uri = server.resources[0].uri
    async with server.subscribe(uri) as updates:
        assert await asyncio.wait_for(updates.__anext__(), 30) == uri
    await server.registry.call(ToolCall(id="2", name="toggle-subscriber-updates", arguments={}))  # off again


async def test_a_task_only_tool_runs_as_a_task_with_its_statuses(server: MCPServer) -> None:
    statuses: list[Any] = []
    result = await server.registry.call(
        ToolCall(id="1", name="simulate-research-query", arguments={"topic": "bees"}),
        context=ToolContext(on_progress=statuses.append),
    )
    assert not result.is_error and "bees" in result.text, result.text
    assert statuses[0]["status"] == "working" and statuses[-1]["status"] == "completed"
    assert len({s["task"] for s in statuses}) == 1 and len(statuses) >= 3


async def test_its_elicitation_pauses_an_agentkit_run() -> None:
    model, _ = scripted(calls(call("trigger-elicitation-request")), "thanks")
    agent = Agent(model=model, mcp_servers=[everything(timeout=30)], store=MemoryRunStore())
    paused = await agent.generate("ask me")
    assert paused.status == "suspended"
    (pending,) = paused.pending
    assert isinstance(pending, PendingSuspension) and pending.schema is not None
    assert pending.request["server"] == "mcp-servers/everything"  # type: ignore[index]
    required = pending.schema.get("required", [])
    answer = {key: _sample(pending.schema["properties"][key]) for key in required}
    done = await agent.resume(paused, {pending.call_id: answer})
    assert done.status == "complete" and not done.tool_results[0].is_error, done.tool_results[0].text


def _sample(schema: dict[str, Any]) -> Any:
    if "enum" in schema:
        return schema["enum"][0]
    return {"string": "Ada", "integer": 3, "number": 1.5, "boolean": True}.get(schema.get("type", "string"), "x")
