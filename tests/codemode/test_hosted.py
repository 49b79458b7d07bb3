"""Hosted code mode: the vendor runs the program, agentkit runs its tool calls (through the same registry).

OpenAI Responses' programmatic tool calling and Anthropic's code execution, each through its official SDK
over an in-process transport, on recorded responses of the documented shapes (tests/codemode/fixtures):
the request marks the chosen tools ``allowed_callers`` and adds the vendor's code tool (both checked
against the vendor's published schemas), the program's calls come back as ordinary calls tagged with
their caller, and the next request hands the caller, the program item and the container back.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentkit import Registry
from agentkit.exceptions import RegistryError
from agentkit.messages import ToolResultsMessage, UserMessage
from agentkit.models import ModelSettings
from agentkit.providers import get_provider
from agentkit.providers.anthropic import AnthropicModel
from agentkit.providers.openai import OpenAIResponsesModel
from tests.providers.anthropic.test_client import Server as AnthropicServer
from tests.providers.anthropic.test_client import assert_conversation_valid
from tests.providers.openai.test_client import Server as OpenAIServer
from tests.providers.openai.test_client import ok
from tests.spec import assert_spec_valid

from .helpers import CALLS, registry

FIXTURES = Path(__file__).parent / "fixtures"


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / f"{name}.json").read_text())


async def test_openai_programmatic_tool_calling_round_trip() -> None:
    server = OpenAIServer(ok(fixture("openai_program_calls")), ok(fixture("openai_program_done")))
    model = OpenAIResponsesModel("gpt-5.5", client=server.client())
    tools = registry()
    settings = ModelSettings(programmatic_tools=("add", "greet"))
    first = await model.request([UserMessage("Add 1 and 2, and greet Ada.")], tools, settings)

    sent = server.body(0)["tools"]
    assert sent[-1] == {"type": "programmatic_tool_calling"}
    assert [t["allowed_callers"] for t in sent[:-1]] == [["programmatic"], ["programmatic"]]
    for entry in sent:
        assert_spec_valid("openai.responses.tool", entry)

    calls = first.message.tool_calls
    assert [(c.name, c.provider_details["caller"]) for c in calls if c.provider_details] == [
        ("add", {"type": "program", "caller_id": "prog_7Qx2"}),
        ("greet", {"type": "program", "caller_id": "prog_7Qx2"}),
    ]
    CALLS.clear()
    results = await tools.call_many(calls)  # the program's calls run here, through the registry
    assert CALLS == [("add", (1, 2)), ("greet", "Ada")]

    history = [UserMessage("Add 1 and 2, and greet Ada."), first.message, ToolResultsMessage(results)]
    done = await model.request(history, tools, settings)
    assert done.message.text == "The sum is 3, and: hello Ada."
    items = server.body(1)["input"]
    program = next(i for i in items if i.get("type") == "program")
    assert program["fingerprint"] == "fp_8c1d5e9a"  # replayed as received
    for item in items:
        if item.get("type") == "function_call":
            assert item["caller"] == {"type": "program", "caller_id": "prog_7Qx2"}
            assert_spec_valid("openai.responses.function_call", item)
        elif item.get("type") == "function_call_output":
            assert item["caller"] == {"type": "program", "caller_id": "prog_7Qx2"}
            assert_spec_valid("openai.responses.function_call_output", item)
    assert [i.get("type") for i in items][1:] == [
        "program",
        "function_call",
        "function_call",
        *["function_call_output"] * 2,
    ]


async def test_programmatic_and_direct_keeps_both_callers() -> None:
    fragment = get_provider("openai-responses").format_tools(registry(), programmatic=["add"], programmatic_direct=True)
    add, greet, hosted = fragment["tools"]
    assert add["allowed_callers"] == ["direct", "programmatic"]
    assert "allowed_callers" not in greet and hosted == {"type": "programmatic_tool_calling"}


async def test_anthropic_code_execution_round_trip() -> None:
    server = AnthropicServer(anthropic_reply("anthropic_program_calls"), anthropic_reply("anthropic_program_done"))
    model = AnthropicModel("claude-opus-4-6", client=server.client())
    tools = registry()
    settings = ModelSettings(programmatic_tools=("add", "greet"))
    first = await model.request([UserMessage("Add 1 and 2, and greet Ada.")], tools, settings)

    sent = server.body(0)["tools"]
    assert sent[-1] == {"type": "code_execution_20260120", "name": "code_execution"}
    assert [t["allowed_callers"] for t in sent[:-1]] == [["code_execution_20260120"]] * 2
    for entry in sent[:-1]:
        assert_spec_valid("anthropic.messages.tool", entry)
    from anthropic.types import CodeExecutionTool20260120Param
    from pydantic import TypeAdapter, ValidationError

    TypeAdapter(CodeExecutionTool20260120Param).validate_python(sent[-1])  # the SDK's own type of the entry
    with pytest.raises(ValidationError):
        TypeAdapter(CodeExecutionTool20260120Param).validate_python({"type": "code_execution_20260120"})

    calls = first.message.tool_calls
    callers = [c.provider_details["caller"] for c in calls if c.provider_details]
    assert callers == [{"type": "code_execution_20260120", "tool_id": "srvtoolu_01Code"}] * 2
    results = await tools.call_many(calls)
    history = [UserMessage("Add 1 and 2, and greet Ada."), first.message, ToolResultsMessage(results)]
    done = await model.request(history, tools, settings)
    assert done.message.text == "The sum is 3, and: hello Ada."
    body = server.body(1)
    assert body["container"] == "container_011CProg"  # the program goes on in its container
    assistant = body["messages"][1]["content"]
    assert [b["type"] for b in assistant] == ["server_tool_use", "text", "tool_use", "tool_use"]
    assert all(b["caller"]["tool_id"] == "srvtoolu_01Code" for b in assistant if b["type"] == "tool_use")
    assert [b["type"] for b in body["messages"][2]["content"]] == ["tool_result", "tool_result"]
    assert_conversation_valid({**body, "tools": body["tools"][:-1]})  # the code tool: checked above


def anthropic_reply(name: str) -> Any:
    from tests.providers.anthropic.test_client import httpx2

    return httpx2.Response(200, json=fixture(name))


def test_a_vendor_without_hosted_programs_refuses_the_option() -> None:
    with pytest.raises(RegistryError, match="runs no programs that call tools"):
        get_provider("gemini").format_tools(registry(), programmatic=["add"])
    with pytest.raises(RegistryError, match="own code tool"):
        get_provider("anthropic").format_tools(
            Registry({"code_execution": registry()["add"]}), programmatic=["code_execution"]
        )


async def test_a_hosted_code_mode_run_sends_the_vendor_form_and_runs_the_calls_here() -> None:
    from agentkit import Agent
    from agentkit.codemode import CodeMode

    server = OpenAIServer(ok(fixture("openai_program_calls")), ok(fixture("openai_program_done")))
    agent = Agent(
        model=OpenAIResponsesModel("gpt-5.5", client=server.client()),
        tools=registry(),
        code_mode=CodeMode(hosted=True),
    )
    CALLS.clear()
    result = await agent.generate("Add 1 and 2, and greet Ada.")
    assert result.text == "The sum is 3, and: hello Ada."
    assert CALLS == [("add", (1, 2)), ("greet", "Ada")]  # run here, through the run's pipeline
    sent = server.body(0)["tools"]
    assert [t.get("allowed_callers") for t in sent] == [["programmatic"], ["programmatic"], None]
    assert "run_python" not in str(sent)  # agentkit's own code tool is not offered: the vendor runs programs
    assert server.body(1)["tools"] == sent  # every request of the run says the same


async def test_calls_of_a_vendor_run_program_are_tagged_with_it_in_events() -> None:
    from agentkit import Agent
    from agentkit.events import ToolCallEvent, ToolResultEvent
    from agentkit.messages import AssistantMessage, ToolCall
    from agentkit.testing import FunctionModel

    caller = {"type": "code_execution_20260120", "tool_id": "srvtoolu_1"}

    def turn(messages: Any, info: Any) -> Any:
        if len(messages) > 2:
            return "done"
        return AssistantMessage(
            tool_calls=[ToolCall("t1", "add", {"a": 1, "b": 2}, provider_details={"caller": caller})]
        )

    stream = Agent(model=FunctionModel(turn), tools=registry()).stream("x")
    events = [e async for e in stream]
    assert [(e.tool_name, e.caller) for e in events if isinstance(e, ToolCallEvent)] == [("add", "srvtoolu_1")]
    assert [e.caller for e in events if isinstance(e, ToolResultEvent)] == ["srvtoolu_1"]


async def test_hosted_falls_back_to_the_sandbox_on_other_vendors() -> None:
    from agentkit import Agent
    from agentkit.codemode import CodeMode
    from agentkit.messages import AssistantMessage, ToolCall
    from agentkit.testing import FunctionModel

    seen: list[list[str]] = []

    def turn(messages: Any, info: Any) -> Any:
        seen.append([d.key for d in info.tools])
        if len(messages) > 2:
            return "done"
        return AssistantMessage(tool_calls=[ToolCall("p", "run_python", {"code": "await add(1, 1)"})])

    result = await Agent(model=FunctionModel(turn), tools=registry(), code_mode=CodeMode(hosted=True)).generate("x")
    assert seen[0] == ["run_python"] and result.tool_results[0].output["result"] == 2
