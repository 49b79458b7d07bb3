"""A real loop: the local LLM calls a tool that lives in ``mcp-server-time``, through agentkit.

llama-server (OpenAI Chat and Anthropic Messages) <- agentkit model -> ToolCall -> `MCPServer.registry`
-> the real time server over stdio -> the result back to the model, which answers.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agentkit.limits import RunLimits
from agentkit.messages import Message, SystemMessage, ToolResultsMessage, UserMessage
from agentkit.models import Model, ModelSettings
from tests.e2e._llama import check_call

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]  # one busy CPU thread: see conftest.REQUEST_TIMEOUT


@pytest.fixture
async def time_server() -> AsyncIterator[Any]:
    from agentkit.mcp import MCPServer

    server = MCPServer.stdio(
        sys.executable, ["-m", "mcp_server_time", "--local-timezone", "UTC"], timeout=120, connect_timeout=120
    )
    async with server:
        yield server


async def _loop(model: Model, server: Any, *, none_honoured: bool = True) -> None:
    registry = server.registry.select(["get_current_time"])
    history: list[Message] = [
        SystemMessage("You are a helpful assistant. Use the tools to answer."),
        UserMessage("What time is it now in the IANA timezone Europe/Paris?"),
    ]
    first = await model.request(history, registry, ModelSettings(tool_choice="required", max_tokens=200, temperature=0))
    assert first.message.tool_calls
    for call in first.message.tool_calls:
        check_call(registry, call)  # valid against the MCP server's own inputSchema
    results = [await registry.call(call) for call in first.message.tool_calls]
    for result in results:
        # the call really went to the MCP server: either its structured output, or its isError text
        if result.is_error:
            assert result.error_kind == "tool_error" and result.text, result
        else:
            assert {"timezone", "datetime"} <= set(result.output), result.output
            assert result.output["datetime"][:2] == "20" and result.text
    history += [first.message, ToolResultsMessage(results)]
    final = await model.request(history, registry, ModelSettings(tool_choice="none", max_tokens=120, temperature=0))
    if none_honoured:
        assert final.message.text.strip() and not final.message.tool_calls
    else:  # llama-server's Anthropic converter drops tool_choice "none": the turn must be complete and valid
        for call in final.message.tool_calls:
            check_call(registry, call)


async def test_openai_chat_model_calls_an_mcp_tool(openai_model: Any, time_server: Any) -> None:
    await _loop(openai_model, time_server)


async def test_anthropic_model_calls_an_mcp_tool(anthropic_model: Any, time_server: Any) -> None:
    await _loop(anthropic_model, time_server, none_honoured=False)


async def test_agent_with_mcp_server_runs_the_loop(openai_model: Any) -> None:
    """The same loop inside `Agent`: the MCP session opens and closes with the run."""
    from agentkit.agent import Agent
    from agentkit.mcp import MCPServer

    server = MCPServer.stdio(
        sys.executable, ["-m", "mcp_server_time", "--local-timezone", "UTC"], timeout=120, connect_timeout=120
    )
    agent = Agent(
        id="clock",
        instructions="You are a helpful assistant. Use the tools to answer.",
        model=openai_model,
        mcp_servers=[server],
        model_settings=ModelSettings(temperature=0, max_tokens=200),
        limits=RunLimits(max_steps=2),
    )
    result = await agent.generate("What time is it now in UTC?", tool_choice="required", active_tools=None)
    assert result.tool_calls and {c.name for c in result.tool_calls} <= {"get_current_time", "convert_time"}
    assert len(result.tool_results) == len(result.tool_calls)
    assert not server.connected, "the session closed with the run"
