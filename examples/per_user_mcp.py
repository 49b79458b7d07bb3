"""One MCP session per user, for one run only: each request opens its own server with that user's credentials.

Needs `pip install 'agentkit-tools[mcp]'`. Offline: this file is also the MCP server (spawned over stdio with
``--serve``), and a scripted model stands in for the LLM. Two users' runs go side by side; each sees
only its own session's tools and data, and each session is closed when its run ends.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from agentkit import Agent, Registry, tool
from agentkit.mcp import MCPServer, serve
from agentkit.messages import Message, ToolResultsMessage
from agentkit.testing import FunctionInfo, FunctionModel

ACCOUNTS = {"token-ada": ("ada", 120), "token-bob": ("bob", 35)}  # what the remote service would hold


# ---- the MCP server: a bank account API that knows its caller by the token it was started with --------


def account_api() -> Registry:
    """The tools the server offers, bound to the token in its environment."""
    user, balance = ACCOUNTS[os.environ["ACCOUNT_TOKEN"]]

    @tool
    def my_balance() -> dict[str, Any]:
        """The caller's account balance."""
        return {"user": user, "balance": balance}

    return Registry([my_balance])


# ---- the application ------------------------------------------------------------------------------


def user_session(token: str) -> MCPServer:
    """An MCP session with one user's credentials (a real app would pass an OAuth token or API key)."""
    return MCPServer.stdio(sys.executable, [__file__, "--serve"], env={"ACCOUNT_TOKEN": token}, timeout=30)


def scripted_llm(messages: list[Message], info: FunctionInfo) -> Any:
    """Stands in for the model: calls the balance tool once, then answers with what it returned."""
    last = messages[-1]
    if isinstance(last, ToolResultsMessage):
        return f"Your balance: {last.results[0].text}"
    from agentkit.messages import AssistantMessage, ToolCall

    return AssistantMessage(tool_calls=[ToolCall("c1", "my_balance", {})])


async def main() -> None:
    """Two users ask at once; each run opens (and closes) that user's own session."""
    agent = Agent(id="banker", instructions="Answer from the user's account.", model=FunctionModel(scripted_llm))
    ada, bob = await asyncio.gather(
        agent.generate("What is my balance?", mcp_servers=[user_session("token-ada")]),
        agent.generate("What is my balance?", mcp_servers=[user_session("token-bob")]),
    )
    print("ada:", ada.text)
    print("bob:", bob.text)
    assert ada.tool_results[0].output == {"user": "ada", "balance": 120}
    assert bob.tool_results[0].output == {"user": "bob", "balance": 35}
    assert list(agent.tools) == []  # the sessions' tools left with their runs


if __name__ == "__main__":
    if "--serve" in sys.argv:
        serve(account_api())
    else:
        asyncio.run(main())
