"""Code mode in agent runs: each call a program makes is a real call of the run, and a pause survives the process."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from agentkit import Agent, Hooks, ToolContext, tool
from agentkit.codemode import CodeMode
from agentkit.events import (
    ApprovalRequestedEvent,
    ToolCallEvent,
    ToolErrorEvent,
    ToolResultEvent,
)
from agentkit.exceptions import AlreadyResumedError, ApprovalError
from agentkit.hooks import Deny
from agentkit.limits import RunLimits
from agentkit.messages import AssistantMessage, Message, ToolCall, ToolResultsMessage
from agentkit.runs import RunSnapshot
from agentkit.testing import FunctionInfo, FunctionModel

from .agent_helpers import make_agent
from .helpers import Overlap

ROOT = Path(__file__).resolve().parents[2]


def program_model(code: str, seen: list[list[str]] | None = None) -> FunctionModel:
    """A model that answers with one program, then with the program's result."""

    def turn(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
        if seen is not None:
            seen.append([d.key for d in info.tools])
        last = messages[-1]
        if isinstance(last, ToolResultsMessage):
            return last.results[0].text
        return AssistantMessage(tool_calls=[ToolCall("p1", "run_python", {"code": code})])

    return FunctionModel(turn)


@tool
def double(n: int) -> int:
    """Twice n."""
    return 2 * n


@tool
def square(n: int) -> int:
    """n squared."""
    return n * n


async def test_a_scripted_program_runs_its_calls_through_the_run() -> None:
    seen: list[list[str]] = []
    code = "import asyncio\na, b = await asyncio.gather(double(3), square(4))\nprint(a, b)\na + b"
    agent = Agent(model=program_model(code, seen), tools=[double, square], code_mode=CodeMode())
    stream = agent.stream("go")
    events = [e async for e in stream]
    assert stream.result.status == "complete"
    assert seen[0] == ["run_python"]  # the model is offered the code tool in place of the tools
    calls = [e for e in events if isinstance(e, ToolCallEvent)]
    assert [(c.tool_name, c.caller) for c in calls] == [("run_python", None), ("double", "p1"), ("square", "p1")]
    assert [c.call_id for c in calls[1:]] == ["p1/1", "p1/2"]
    results = [e for e in events if isinstance(e, ToolResultEvent)]
    assert {(r.tool_name, r.output, r.caller) for r in results if r.caller} == {
        ("double", 6, "p1"),
        ("square", 16, "p1"),
    }
    final = await agent.generate("go")
    assert final.text == "Result: 22\nPrinted:\n6 16\n"
    assert final.tool_results[0].output == {"result": 22, "printed": "6 16\n"}


async def test_beside_keeps_the_tools_offered_and_a_hidden_tool_is_not_callable_directly() -> None:
    seen: list[list[str]] = []
    agent = Agent(
        model=program_model("1", seen), tools=[double, square], code_mode=CodeMode(tools=["square"], replace=False)
    )
    await agent.generate("go")
    assert seen[0] == ["double", "square", "run_python"]

    def direct(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
        if isinstance(messages[-1], ToolResultsMessage):
            return messages[-1].results[0].text
        return AssistantMessage(tool_calls=[ToolCall("d1", "square", {"n": 2})])

    hidden = Agent(model=FunctionModel(direct), tools=[double, square], code_mode=CodeMode(tools=["square"]))
    result = await hidden.generate("go")
    assert result.tool_results[0].error_kind == "unknown_tool"  # only programs call it


async def test_a_per_run_code_mode() -> None:
    agent = Agent(model=program_model("await double(21)"), tools=[double])
    result = await agent.generate("go", code_mode=CodeMode())
    assert result.text == "Result: 42"


async def test_invalid_arguments_raise_with_the_json_path_message_and_count_as_the_run_s_calls() -> None:
    code = "try:\n    await double('x')\nexcept ValueError as e:\n    m = str(e)\nm"
    agent = Agent(model=program_model(code), tools=[double], code_mode=CodeMode())
    result = await agent.generate("go")
    assert "$.n: Input should be a valid integer" in result.text


async def test_hooks_and_budgets_hold_for_calls_inside_programs() -> None:
    def deny_square(ctx: ToolContext[Any], call: ToolCall) -> Deny | None:
        return Deny("squares are off today") if call.name == "square" else None

    code = "try:\n    await square(2)\nexcept PermissionError as e:\n    m = str(e)\n[await double(1), m]"
    hooked = Agent(
        model=program_model(code),
        tools=[double, square],
        code_mode=CodeMode(),
        hooks=[Hooks(before_tool_call=deny_square)],
    )
    result = await hooked.generate("go")
    assert result.tool_results[0].output["result"] == [2, "This call to 'square' was denied: squares are off today."]

    code = "out = []\nfor i in range(3):\n    try:\n        out.append(await double(i))\n"
    code += "    except RuntimeError as e:\n        out.append('budget')\nout"
    budgeted = Agent(
        model=program_model(code), tools=[double], code_mode=CodeMode(), limits=RunLimits(max_tool_calls=3)
    )  # the program's own call counts too: two of its calls fit
    result = await budgeted.generate("go")
    assert result.tool_results[0].output["result"] == [0, 2, "budget"]


async def test_the_run_s_concurrency_cap_holds_without_deadlock() -> None:
    probe = Overlap()
    code = "import asyncio\nawait asyncio.gather(*[work(i) for i in range(4)])"
    limits = RunLimits(max_concurrency=2)
    agent = Agent(model=program_model(code), tools=[probe.tool], code_mode=CodeMode(), limits=limits)
    result = await asyncio.wait_for(agent.generate("go"), 30)
    assert result.text == "Result: [0, 2, 4, 6]"
    assert probe.peak == 2


# ---- the acceptance case ------------------------------------------------------------------------


def _ledger(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


async def test_acceptance_pause_inside_a_program_resumes_in_another_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = tmp_path / "ledger.txt"
    monkeypatch.setenv("AGENTKIT_CM_LEDGER", str(ledger))
    agent = make_agent()
    stream = agent.stream("pay 50")
    events = [e async for e in stream]
    paused = stream.result
    assert paused.status == "awaiting_approval"
    assert _ledger(ledger) == ["lookup"]  # tool one ran; tool two waits; tool three not reached
    [pending] = paused.pending
    assert (pending.kind, pending.tool_name, pending.call_id) == ("approval", "transfer", "prog1/2")
    assert pending.payload == {"account": "****", "amount": 50}  # the display sees the transformed input
    asked = [e for e in events if isinstance(e, ApprovalRequestedEvent)]
    assert [(a.tool_name, a.caller, a.payload) for a in asked] == [
        ("transfer", "prog1", {"account": "****", "amount": 50})
    ]
    shown = [e.input for e in events if isinstance(e, ToolCallEvent) and e.tool_name == "transfer"]
    assert shown == [{"account": "****", "amount": 50}]
    text = paused.snapshot().to_json()
    assert "DE89370400440532013000" not in str([e for e in events if getattr(e, "tool_name", "") == "transfer"])

    script = textwrap.dedent(
        """
        import asyncio, json, sys
        from agentkit.events import ToolResultEvent
        from agentkit.runs import RunSnapshot
        from tests.codemode.agent_helpers import make_agent

        async def main():
            snapshot = RunSnapshot.from_json(sys.stdin.read())
            stream = make_agent().resume_stream(snapshot, {"prog1/2": True})
            events = [e async for e in stream]
            shown = [e.output for e in events if isinstance(e, ToolResultEvent) and e.tool_name == "transfer"]
            print(json.dumps({"status": stream.result.status, "text": stream.result.text, "shown": shown}))
        asyncio.run(main())
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", script], input=text, capture_output=True, text=True, env=env, cwd=ROOT, timeout=120
    )
    assert done.returncode == 0, done.stderr
    import json

    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["status"] == "complete"
    assert seen["text"].startswith('done: Result: {"status": "sent", "note": "notified: sent"}')
    assert seen["shown"] == [{"status": "sent"}]  # the display sees the transformed output only
    assert _ledger(ledger) == ["lookup", "transfer", "notify"]  # each tool ran once in all

    with pytest.raises(AlreadyResumedError):  # the same copy again: refused, nothing runs
        await make_agent().resume(RunSnapshot.from_json(text), {"prog1/2": True})
    assert _ledger(ledger) == ["lookup", "transfer", "notify"]


async def test_acceptance_a_denial_is_catchable_in_the_program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ledger = tmp_path / "ledger.txt"
    monkeypatch.setenv("AGENTKIT_CM_LEDGER", str(ledger))
    agent = make_agent()
    paused = await agent.generate("pay 50")
    with pytest.raises(ApprovalError, match="no answer for the call 'prog1/2'"):
        await agent.resume(paused, {})
    stream = agent.resume_stream(paused, {"prog1/2": False})
    events = [e async for e in stream]
    final = stream.result
    assert final.status == "complete"
    assert "denied: The user denied this call to 'transfer'" in final.text
    assert _ledger(ledger) == ["lookup", "notify"]  # transfer never ran
    denied = [e for e in events if isinstance(e, ToolErrorEvent) and e.tool_name == "transfer"]
    assert [(d.error_kind, d.caller) for d in denied] == [("denied", "prog1")]


# ---- suspensions and client tools inside programs -------------------------------------------------


async def test_a_suspension_inside_a_program_pauses_the_run_and_its_answer_returns_to_the_program() -> None:
    from agentkit.exceptions import ResumeError

    asked: list[int] = []

    @tool
    def ask_size(ctx: ToolContext[Any], item: str) -> str:
        """Ask the user which size they want."""
        asked.append(1)
        answer = ctx.suspend({"question": f"Which size of {item}?"}, schema={"type": "string"})
        return f"{item} in {answer}"

    code = "import asyncio\nshirt, cap = await asyncio.gather(ask_size('shirt'), double(4))\n[shirt, cap]"
    agent = Agent(model=program_model(code), tools=[ask_size, double], code_mode=CodeMode())
    paused = await agent.generate("buy a shirt")
    assert paused.status == "suspended"
    [pending] = paused.pending
    assert (pending.kind, pending.call_id, pending.request) == (
        "suspension",
        "p1/1",
        {"question": "Which size of shirt?"},
    )
    with pytest.raises(ResumeError, match="does not fit"):
        await agent.resume(paused, {"p1/1": 42})  # refused before anything runs: the pause is not spent
    done = await agent.resume(RunSnapshot.from_json(paused.snapshot().to_json()), {"p1/1": "L"})
    assert done.tool_results[0].output["result"] == ["shirt in L", 8]  # double(4) ran once, beside the pause
    assert asked == [1, 1]  # a suspended tool runs again from the start with its answer, as always


async def test_a_client_tool_inside_a_program_waits_for_the_caller() -> None:
    from agentkit import ToolError, client_tool

    pick = client_tool("pick_file", input_schema={"type": "object", "properties": {}}, output_schema={"type": "string"})
    code = "try:\n    f = await pick_file()\nexcept RuntimeError as e:\n    f = 'none: ' + str(e)\nf"
    agent = Agent(model=program_model(code), tools=[pick], code_mode=CodeMode())
    paused = await agent.generate("summarise a file")
    assert paused.status == "awaiting_client" and paused.pending[0].call_id == "p1/1"
    done = await agent.resume(paused, {"p1/1": "notes.txt"})
    assert done.tool_results[0].output["result"] == "notes.txt"
    paused = await agent.generate("summarise a file")
    declined = await agent.resume(paused, {"p1/1": ToolError("the user closed the dialog")})
    assert declined.tool_results[0].output["result"] == "none: the user closed the dialog"


async def test_the_spans_of_a_program_s_calls_are_children_of_the_program_s_span() -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    import agentkit

    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    agentkit.instrument(tracer_provider=provider)
    try:
        code = "import asyncio\nawait asyncio.gather(double(1), square(2))"
        await Agent(model=program_model(code), tools=[double, square], code_mode=CodeMode()).generate("go")
    finally:
        agentkit.uninstrument()
    spans = {s.name: s for s in memory.get_finished_spans()}
    program = spans["execute_tool run_python"]
    for name in ("execute_tool double", "execute_tool square"):
        assert spans[name].parent is not None and spans[name].parent.span_id == program.context.span_id


def test_request_payload_shows_the_code_tool_in_place_of_the_tools() -> None:
    from agentkit.testing import request_payload

    agent = Agent(model="openai:gpt-4o", tools=[double, square], code_mode=CodeMode(tools=["square"]))
    body = request_payload(agent, "go")
    assert [t["function"]["name"] for t in body["tools"]] == ["double", "run_python"]
    assert "async def square(n: int) -> int:" in body["tools"][1]["function"]["description"]
    hosted = Agent(model="openai-responses:gpt-5.5", tools=[double, square], code_mode=CodeMode(hosted=True))
    sent = request_payload(hosted, "go")["tools"]
    assert [t.get("allowed_callers") for t in sent] == [["programmatic"], ["programmatic"], None]
