"""Tool search: a library of hundreds of tools, none sent until the model searches for what it needs.

Needs `pip install 'agentkit-tools[search]'` (the BM25 library). Offline: a scripted model stands in for the
LLM; the request bodies are the real OpenAI Chat Completions payloads, built without sending anything.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from agentkit import Agent, Registry, Tool, tool
from agentkit.exceptions import PayloadRejectedError
from agentkit.messages import AssistantMessage, Message, ToolCall, ToolResultsMessage
from agentkit.providers.openai import OpenAIChatModel
from agentkit.search import ToolIndex, ToolSearch
from agentkit.testing import FunctionInfo, FunctionModel, request_payload


@tool
def convert_currency(amount: float, from_currency: str, to_currency: str) -> dict[str, Any]:
    """Convert an amount of money from one currency to another at today's rate.

    Args:
        amount: How much money.
        from_currency: ISO code of the currency it is in, e.g. "USD".
        to_currency: ISO code of the currency wanted, e.g. "EUR".
    """
    return {"amount": round(amount * 0.92, 2), "currency": to_currency}


def filler(i: int) -> Tool[..., Any]:
    """One of many other tools of a large library (an internal API, say)."""
    topics = ["invoice", "ticket", "shipment", "employee", "contract", "device", "meeting", "report"]
    topic = topics[i % len(topics)]
    schema = {
        "type": "object",
        "properties": {"id": {"type": "string", "description": f"The {topic} id."}},
        "required": ["id"],
    }
    return Tool.from_json_schema(
        f"get_{topic}_{i}", schema, description=f"Read {topic} record set {i}.", fn=lambda args: {"id": args["id"]}
    )


def library() -> Registry:
    """500 tools: the one this conversation needs among 499 others."""
    return Registry([*(filler(i) for i in range(499)), convert_currency])


def scripted_llm(messages: list[Message], info: FunctionInfo) -> Any:
    """Stands in for the model: searches, calls what it found, then answers."""
    last = messages[-1]
    if not isinstance(last, ToolResultsMessage):
        return AssistantMessage(tool_calls=[ToolCall("s1", "search_tools", {"query": "convert money to euros"})])
    if last.results[0].name == "search_tools":
        found = [match["name"] for match in json.loads(last.results[0].text)]
        print("search found:", found)
        print("tools sent now:", info.tool_keys)
        arguments = {"amount": 100, "from_currency": "USD", "to_currency": "EUR"}
        return AssistantMessage(tool_calls=[ToolCall("c1", found[0], arguments)])
    return f"100 USD is {last.results[0].output['amount']} EUR."


async def main() -> None:
    """Compare the first request with every tool sent and with them deferred, then run the search."""
    tools = library()
    try:  # api.openai.com takes at most 128 tools per request: agentkit refuses before sending
        request_payload(Agent(model="openai:gpt-4.1", tools=tools), "100 USD in EUR?")
    except PayloadRejectedError as exc:
        print("every tool to api.openai.com:", exc.problems[0])
    # an OpenAI-compatible server (llama.cpp, vLLM) takes them all: what that first request would weigh
    local = OpenAIChatModel("gpt-4.1", base_url="http://127.0.0.1:8080/v1", api_key="unused")
    sent = request_payload(Agent(model=local, tools=tools), "100 USD in EUR?")
    deferred_agent = Agent(model="openai:gpt-4.1", tools=tools, tool_search=ToolSearch(deferred=True))
    deferred = request_payload(deferred_agent, "100 USD in EUR?")
    size = len(json.dumps(sent)), len(json.dumps(deferred))
    print(f"first request: {size[0]:,} bytes with {len(sent['tools'])} tools sent")
    print(f"first request: {size[1]:,} bytes deferred ({[t['function']['name'] for t in deferred['tools']]})")

    # the index on its own: what a search for a need ranks first
    print("ranked:", [hit.key for hit in ToolIndex(tools).search("currency of an amount of money", limit=3)])

    with deferred_agent.override(model=FunctionModel(scripted_llm)):
        result = await deferred_agent.generate("How much is 100 USD in EUR?")
    print(result.text)
    assert result.text == "100 USD is 92.0 EUR." and size[0] > 20 * size[1]


if __name__ == "__main__":
    asyncio.run(main())
