"""Documented request limits are checked before anything is sent (issue 17 §5.1, §5.3).

OpenAI Chat takes at most 128 tools (HTTP 400 ``array_above_max_length`` past it), Gemini at most 512
function declarations, and Gemini's OpenAPI-form ``parameters`` refuses property names such as
``Content-Type``. Each is a `PayloadRejectedError` saying what to do, from `format_tools`, from the model
client (nothing reaches the server) and from an agent run; `compatibility` (and so ``agentkit lint``)
reports them, and deferring tools keeps such a registry usable.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentkit import Agent, Registry, Tool, UserMessage
from agentkit.exceptions import PayloadRejectedError
from agentkit.models import ModelSettings, allow_model_requests
from agentkit.providers import compatibility, get_provider
from agentkit.providers.gemini import GeminiProvider
from agentkit.providers.openai import OpenAIChatModel

from .openai.test_client import Server, ok


def many(count: int, *, deferred: bool = False) -> Registry:
    def make(index: int) -> Tool[..., Any]:
        def lookup(code: str) -> str:
            return code

        lookup.__name__ = f"lookup_{index}"
        lookup.__doc__ = f"Look up record {index}."
        return Tool(lookup, deferred=deferred)

    return Registry([make(i) for i in range(count)])


@pytest.mark.parametrize(("vendor", "limit"), [("openai", 128), ("gemini", 512)])
def test_the_documented_tool_limit(vendor: str, limit: int) -> None:
    provider = get_provider(vendor)
    assert provider.count_problems(limit) == []
    [problem] = provider.count_problems(limit + 1)
    assert f"{limit + 1} tools in one request: {vendor} takes at most {limit}" in problem
    fix = provider.refusal_fix([problem])
    assert "deferred=True" in fix and "registry.select" in fix
    provider.format_tools(many(limit + 1))  # a bare provider builds what it is asked (compatible servers)


@pytest.mark.parametrize("vendor", ["openai-responses", "anthropic", "mistral", "cohere", "ollama", "bedrock"])
def test_vendors_without_a_documented_limit_have_none(vendor: str) -> None:
    assert get_provider(vendor).max_tools is None and get_provider(vendor).count_problems(10_000) == []


ANSWER = {
    "id": "c1",
    "object": "chat.completion",
    "created": 1,
    "model": "gpt-4.1",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "done"}, "finish_reason": "stop"}],
}


async def test_the_model_client_sends_nothing_past_the_limit_to_openai() -> None:
    server = Server(ok(ANSWER))
    model = OpenAIChatModel("gpt-4.1", client=server.client(base_url="https://api.openai.com/v1"))
    with pytest.raises(PayloadRejectedError, match="129 tools in one request: openai takes at most 128"):
        await model.request([UserMessage("hi")], many(129), ModelSettings())
    assert server.requests == []
    # the same tools to an OpenAI-compatible server (vLLM, llama.cpp): no such limit
    local = OpenAIChatModel("local", client=server.client(base_url="http://127.0.0.1:8080/v1"))
    assert (await local.request([UserMessage("hi")], many(129), ModelSettings())).message.text == "done"
    assert len(server.bodies[0]["tools"]) == 129


async def test_an_agent_run_says_so_and_deferring_the_tools_fits() -> None:
    server = Server(ok(ANSWER))
    model = OpenAIChatModel("gpt-4.1", client=server.client(base_url="https://api.openai.com/v1"))
    with pytest.raises(PayloadRejectedError, match="200 tools in one request"):
        await Agent(model=model, tools=many(200)).generate("find record 7")
    assert server.requests == []
    with allow_model_requests(True):  # a mock transport: nothing leaves the process
        result = await Agent(model=model, tools=many(200, deferred=True)).generate("find record 7")
    assert result.text == "done"
    [sent] = server.bodies
    assert len(sent["tools"]) < 128  # the search tool, not 200 definitions


def test_compatibility_reports_the_limit() -> None:
    rows = [r for r in compatibility(many(129), ["openai", "openai-responses"]) if r.key == "(request)"]
    assert [(r.provider, r.rejected) for r in rows] == [("openai", True)]
    assert "129 tools in one request" in str(rows[0])


headers = Tool.from_json_schema(
    "send_request",
    {
        "type": "object",
        "properties": {
            "Content-Type": {"type": "string"},
            "meta": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": True},
        },
        "required": ["Content-Type"],
    },
    description="Send a request.",
)


def test_gemini_openapi_property_names_it_refuses_are_not_sent() -> None:
    """Issue 17 §5.3: reported as rejected, but sent anyway (HTTP 400 INVALID_ARGUMENT)."""
    openapi = GeminiProvider(schema_format="openapi")
    [row] = compatibility(headers, openapi)
    assert row.rejected and any(loss.path == "/properties/Content-Type" and loss.rejected for loss in row.losses)
    with pytest.raises(PayloadRejectedError, match="Content-Type") as caught:
        openapi.format_tools(Registry([headers]))
    assert "schema_format='json_schema'" in caught.value.fix
    # the default JSON Schema form takes the name as it is
    [declaration] = get_provider("gemini").format_tools(Registry([headers]))["tools"][0]["functionDeclarations"]
    assert "Content-Type" in declaration["parametersJsonSchema"]["properties"]


def test_gemini_openapi_records_an_open_object_it_closes() -> None:
    """Issue 17 §5.3: ``additionalProperties: true`` (an ``extra="allow"`` model) was dropped unrecorded."""
    [row] = compatibility(
        Tool.from_json_schema("meta", headers.input_schema["properties"]["meta"]),
        GeminiProvider(schema_format="openapi"),
    )
    assert [(loss.path, loss.keyword) for loss in row.losses] == [("", "additionalProperties")]
    assert not row.rejected
