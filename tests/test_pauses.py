"""More reasons to pause than approvals: suspension, client tools, cancellation and background calls."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agentkit import (
    Agent,
    AssistantMessage,
    Registry,
    RunSnapshot,
    ToolContext,
    ToolError,
    ToolResultsMessage,
    ToolTransform,
    UserMessage,
    client_tool,
    tool,
)
from agentkit._agent.hooks import BACKGROUND
from agentkit.agent import PendingBackground, PendingClientCall, PendingSuspension
from agentkit.events import BackgroundResultEvent, ClientToolCallEvent, SuspendedEvent, ToolResultEvent
from agentkit.exceptions import AlreadyResumedError, ResumeError, ToolSuspended
from agentkit.messages import Message
from agentkit.runs import MemoryRunStore
from agentkit.testing import FunctionInfo, FunctionModel

from .agent_helpers import call, calls, scripted
from .durable_helpers import ledger_lines, make_tools


@pytest.fixture
def ledger(tmp_path: Path) -> str:
    return str(tmp_path / "ledger.txt")


def booking_agent(ledger: str, *, transform: ToolTransform | None = None) -> Agent:
    model, _ = scripted(calls(call("book", {"flight": "LH1"}), call("note", {"text": "asked"})), "all done")
    return Agent(
        id="support", model=model, tools=Registry(make_tools(ledger), transform=transform), store=MemoryRunStore()
    )


# ---- suspension ------------------------------------------------------------------------------------


async def test_a_suspended_call_pauses_the_run_and_resumes_with_validated_data(ledger: str) -> None:
    agent = booking_agent(ledger, transform=ToolTransform(suspension=lambda p: {"asks": p["question"].upper()}))
    result = await agent.generate("book me")
    assert result.status == "suspended"
    (pending,) = result.pending
    assert isinstance(pending, PendingSuspension) and pending.call_id == "c_book" and pending.kind == "suspension"
    assert pending.request == {"question": "Which seat on LH1?"}  # raw, for the application
    assert pending.payload == {"asks": "WHICH SEAT ON LH1?"}  # shaped by the suspension transform, for displays
    assert pending.schema is not None and pending.schema["required"] == ["row", "letter"]
    assert ledger_lines(ledger) == ["note asked"]  # the turn's other call ran, once
    assert [r.call_id for r in result.steps[-1].results] == ["c_note"]
    with pytest.raises(ResumeError, match=r"'c_book' \('book'\) does not fit.*\$\.row"):
        await agent.resume(result, {"c_book": {"row": "twelve", "letter": "A"}})
    with pytest.raises(ResumeError, match="no answer for the pending call"):
        await agent.resume(result, {})
    done = await agent.resume(
        RunSnapshot.from_json(result.snapshot().to_json()), {"c_book": {"row": 12, "letter": "A"}}
    )
    assert done.status == "complete" and done.text == "all done"
    assert ledger_lines(ledger) == ["book LH1 12A", "note asked"]  # nothing ran twice
    answered = done.messages[2]
    assert isinstance(answered, ToolResultsMessage)
    assert [(r.call_id, r.text) for r in answered.results] == [
        ("c_book", "booked LH1 seat 12A"),
        ("c_note", "noted asked"),
    ]
    with pytest.raises(AlreadyResumedError):
        await agent.resume(result, {"c_book": {"row": 1, "letter": "B"}})


async def test_resume_data_is_there_for_tools_that_read_it_themselves() -> None:
    seen: list[Any] = []

    @tool
    def confirm(ctx: ToolContext[Any], action: str) -> str:
        """Confirm an action with the user."""
        if not ctx.resumed:
            ctx.suspend({"confirm": action}, schema={"type": "boolean"})
        seen.append(ctx.resume_data)
        return "confirmed" if ctx.resume_data else "cancelled by the user"

    model, _ = scripted(calls(call("confirm", {"action": "wipe"})), "ok")
    agent = Agent(model=model, tools=[confirm], store=MemoryRunStore())
    paused = await agent.generate("wipe it")
    assert paused.status == "suspended" and paused.pending[0].schema == {"type": "boolean"}  # type: ignore[union-attr]
    with pytest.raises(ResumeError, match="is not of type 'boolean'"):
        await agent.resume(paused, {"c_confirm": "yes"})
    done = await agent.resume(paused, {"c_confirm": False})
    assert seen == [False] and done.tool_results[0].text == "cancelled by the user"


async def test_a_suspension_answered_with_a_tool_error_fails_the_call_without_calling_again(ledger: str) -> None:
    agent = booking_agent(ledger)
    paused = await agent.generate("book me")
    done = await agent.resume(
        RunSnapshot.from_json(paused.snapshot().to_json()), {"c_book": ToolError("The traveller declined a seat.")}
    )
    assert done.status == "complete" and done.text == "all done"
    (declined,) = [r for r in done.tool_results if r.call_id == "c_book"]
    assert declined.is_error and declined.error_kind == "tool_error"
    assert declined.text == "The traveller declined a seat."
    assert ledger_lines(ledger) == ["note asked"]  # the suspended tool did not run again


async def test_suspend_outside_a_run_reaches_the_caller() -> None:
    tools = make_tools("/dev/null")
    book = next(t for t in tools if t.id == "book")
    with pytest.raises(ToolSuspended) as info:
        book.invoke({"flight": "LH1"})
    assert info.value.payload == {"question": "Which seat on LH1?"} and info.value.schema is not None
    assert book.invoke({"flight": "LH1"}, context=ToolContext(resume_data={"row": 3, "letter": "C"})) == (
        "booked LH1 seat 3C"
    )


async def test_the_stream_announces_a_suspension(ledger: str) -> None:
    stream = booking_agent(ledger).stream("book me")
    events = [e async for e in stream]
    suspended = [e for e in events if isinstance(e, SuspendedEvent)]
    assert [(e.call_id, e.payload, e.step) for e in suspended] == [("c_book", {"question": "Which seat on LH1?"}, 0)]
    assert stream.result.status == "suspended" and events[-1].status == "suspended"  # type: ignore[union-attr]


# ---- client tools ----------------------------------------------------------------------------------

GEO = client_tool(
    "geo",
    input_schema={"type": "object", "properties": {"precise": {"type": "boolean"}}, "required": ["precise"]},
    output_schema={"type": "object", "properties": {"lat": {"type": "number"}}, "required": ["lat"]},
    description="Where the user is, from the browser.",
)


async def test_a_client_tool_call_waits_for_the_callers_validated_output() -> None:
    model, script = scripted(calls(call("geo", {"precise": True})), "done")
    agent = Agent(model=model, tools=[GEO], store=MemoryRunStore())
    paused = await agent.generate("where am I?")
    assert paused.status == "awaiting_client"
    (pending,) = paused.pending
    assert isinstance(pending, PendingClientCall)
    assert pending.arguments == {"precise": True} and pending.output_schema == GEO.output_schema
    with pytest.raises(ResumeError, match=r"(?s)client's output for call 'c_geo'.*\$\.lat"):
        await agent.resume(paused, {"c_geo": {"lat": "north"}})
    done = await agent.resume(paused.snapshot(), {"c_geo": {"lat": 48.85}})
    assert done.status == "complete" and done.tool_results[0].output == {"lat": 48.85}
    assert script.seen[-1][-1].results[0].text == '{"lat":48.85}'  # type: ignore[union-attr]


async def test_a_client_can_fail_the_call_and_invalid_arguments_never_reach_it() -> None:
    model, script = scripted(calls(call("geo", {"precise": "yes"})), calls(call("geo", {"precise": False})), "done")
    agent = Agent(model=model, tools=[GEO], store=MemoryRunStore())
    paused = await agent.generate("where?")
    assert paused.status == "awaiting_client" and paused.steps[0].results[0].error_kind == "invalid_arguments"
    done = await agent.resume(paused, {"c_geo_2": ToolError("the user blocked location access")})
    last = done.steps[1].results[0]
    assert last.is_error and last.text == "the user blocked location access" and done.status == "complete"


async def test_a_client_tool_cannot_run_outside_a_run_and_streams_its_call() -> None:
    with pytest.raises(ToolError, match="client tool"):
        await GEO.ainvoke({"precise": True})
    model, _ = scripted(calls(call("geo", {"precise": True})), "done")
    stream = Agent(model=model, tools=[GEO], store=MemoryRunStore()).stream("where?")
    events = [e async for e in stream]
    assert [(e.call_id, e.input) for e in events if isinstance(e, ClientToolCallEvent)] == [
        ("c_geo", {"precise": True})
    ]


async def test_a_turn_with_a_suspension_and_a_client_call_needs_both_answers(ledger: str) -> None:
    model, _ = scripted(calls(call("book", {"flight": "AF2"}), call("geo", {"precise": True})), "both done")
    agent = Agent(model=model, tools=[*make_tools(ledger), GEO], store=MemoryRunStore())
    paused = await agent.generate("go")
    assert paused.status == "suspended" and {p.kind for p in paused.pending} == {"suspension", "client"}
    with pytest.raises(ResumeError, match=r"no answer for the pending call\(s\) \['c_geo'\]"):
        await agent.resume(paused, {"c_book": {"row": 1, "letter": "A"}})
    done = await agent.resume(paused, {"c_book": {"row": 1, "letter": "A"}, "c_geo": {"lat": 1.0}})
    assert done.text == "both done" and [r.call_id for r in done.tool_results] == ["c_book", "c_geo"]


# ---- cancellation ----------------------------------------------------------------------------------


async def test_cancelling_during_a_model_request_stops_at_once_and_resumes() -> None:
    cancel, started, requests = asyncio.Event(), asyncio.Event(), []

    async def slow(messages: list[Message], info: FunctionInfo) -> str:
        requests.append(len(messages))
        if len(requests) == 1:
            started.set()
            await asyncio.sleep(30)  # abandoned when the run is cancelled
        return "answered"

    agent = Agent(model=FunctionModel(slow), store=MemoryRunStore())
    run = asyncio.ensure_future(agent.generate("hi", cancel=cancel))
    await started.wait()
    cancel.set()
    result = await asyncio.wait_for(run, 5)
    assert result.status == "cancelled" and result.steps == [] and result.messages == [UserMessage("hi")]
    resumed = await agent.resume(RunSnapshot.from_json(result.snapshot().to_json()))
    assert resumed.status == "complete" and resumed.text == "answered" and requests == [1, 1]


async def test_running_tools_see_the_cancellation_and_their_results_are_kept() -> None:
    started = asyncio.Event()

    @tool
    async def crawl(ctx: ToolContext[Any], site: str) -> str:
        """Crawl a site until told to stop."""
        started.set()
        await ctx.cancelled.wait()
        return f"stopped crawling {site}"

    model, script = scripted(calls(call("crawl", {"site": "a.example"})), "summary")
    context: ToolContext[Any] = ToolContext()
    agent = Agent(model=model, tools=[crawl], store=MemoryRunStore())
    run = asyncio.ensure_future(agent.generate("crawl", context=context))  # the context's event cancels too
    await started.wait()
    context.cancelled.set()
    result = await asyncio.wait_for(run, 5)
    assert result.status == "cancelled" and len(script.seen) == 1  # no model turn after the cancellation
    assert result.tool_results[0].text == "stopped crawling a.example"  # the tool's answer is in the history
    with pytest.raises(ResumeError, match="takes no answers"):
        await agent.resume(result, {"x": 1})
    resumed = await agent.resume(result)  # a fresh event: the context's is still set
    assert resumed.status == "complete" and resumed.text == "summary"


async def test_a_tool_can_cancel_its_own_run() -> None:
    @tool
    def stop(ctx: ToolContext[Any]) -> str:
        """Stop the run."""
        ctx.cancelled.set()
        return "stopping"

    model, script = scripted(calls(call("stop")), "never")
    result = await Agent(model=model, tools=[stop], store=MemoryRunStore()).generate("go")
    assert result.status == "cancelled" and len(script.seen) == 1


# ---- background calls ------------------------------------------------------------------------------


def background_agent(release: asyncio.Event, turns: list[Any]) -> tuple[Agent, Any]:
    @tool(background=True)
    async def research(topic: str) -> dict[str, str]:
        """Research a topic (slow)."""
        await release.wait()
        return {"topic": topic, "finding": "it is blue"}

    @tool
    def note(text: str) -> str:
        """Write a note."""
        return f"noted {text}"

    model, script = scripted(*turns)
    return Agent(id="researcher", model=model, tools=[research, note], store=MemoryRunStore()), script


async def test_a_background_call_returns_at_once_and_joins_when_done() -> None:
    release = asyncio.Event()
    agent, script = background_agent(release, [calls(call("research", {"topic": "sky"})), "I started it.", "Blue."])
    paused = await agent.generate("research the sky")
    assert paused.status == "awaiting_background" and paused.text == "I started it."
    started = paused.steps[0].results[0]
    assert not started.is_error and "Started in the background" in started.text
    (pending,) = paused.pending
    assert isinstance(pending, PendingBackground) and pending.call_id == "c_research" and not pending.done
    release.set()
    done = await agent.resume(paused)  # waits for the call, adds its result, lets the model report
    assert done.status == "complete" and done.text == "Blue."
    joined = script.seen[-1][-1]
    assert isinstance(joined, UserMessage) and "c_research" in joined.parts[0].text  # type: ignore[union-attr]
    assert '"finding":"it is blue"' in joined.parts[1].text  # type: ignore[union-attr]


async def test_a_background_result_joins_before_the_next_turn_during_the_run() -> None:
    release = asyncio.Event()

    async def turns(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
        if len(messages) == 1:
            return calls(call("research", {"topic": "sea"}))
        if len(messages) == 3:
            release.set()
            await asyncio.sleep(0.05)  # the background call finishes while the model thinks
            return calls(call("note", {"text": "waiting"}))
        return "the sea is blue" if isinstance(messages[-1], UserMessage) else "still waiting"

    agent, _ = background_agent(release, [])
    agent._model = FunctionModel(turns)
    stream = agent.stream("research the sea")
    events = [e async for e in stream]
    result = stream.result
    assert result.status == "complete" and result.text == "the sea is blue"
    joined = [e for e in events if isinstance(e, BackgroundResultEvent)]
    assert [(e.call_id, e.output, e.step) for e in joined] == [
        ("c_research", {"topic": "sea", "finding": "it is blue"}, 2)
    ]
    assert [type(m).__name__ for m in result.messages] == [
        "UserMessage", "AssistantMessage", "ToolResultsMessage", "AssistantMessage", "ToolResultsMessage",
        "UserMessage", "AssistantMessage",
    ]  # fmt: skip
    placeholder = [e for e in events if isinstance(e, ToolResultEvent) and e.call_id == "c_research"]
    assert len(placeholder) == 1 and placeholder[0].output is None


def slow_background_agent(turns: list[Any]) -> tuple[Agent, Any]:
    @tool(background=True)
    async def research(topic: str) -> dict[str, str]:
        """Research a topic (slow)."""
        await asyncio.sleep(0.05)
        return {"topic": topic, "finding": "it is blue"}

    model, script = scripted(*turns)
    return Agent(id="researcher", model=model, tools=[research], store=MemoryRunStore()), script


def test_generate_sync_waits_for_its_background_calls_before_its_event_loop_closes() -> None:
    """Issue 17 §3.3: the call is neither cancelled nor lost; the model gets its result and goes on."""
    agent, script = slow_background_agent([calls(call("research", {"topic": "sky"})), "I started it.", "Blue."])
    result = agent.generate_sync("research the sky")
    assert result.status == "complete" and result.text == "Blue."
    joined = script.seen[-1][-1]
    assert isinstance(joined, UserMessage) and '"finding":"it is blue"' in joined.parts[1].text  # type: ignore[union-attr]
    assert not [key for key in BACKGROUND if key[1] == "c_research"]


def test_a_background_call_cancelled_with_its_event_loop_is_an_error_result_not_a_crash() -> None:
    """The class of §3.3: `asyncio.run(agent.generate(...))` closes the loop while the call runs."""
    agent, script = slow_background_agent([calls(call("research", {"topic": "sky"})), "I started it.", "Noted."])
    paused = asyncio.run(agent.generate("research the sky"))
    assert paused.status == "awaiting_background"
    snapshot = paused.snapshot()  # no bare CancelledError: the call ended, cancelled
    recorded = snapshot.document["state"]["background"]["c_research"]
    assert recorded["is_error"] is True and "cancelled" in recorded["content"][0]["text"]
    for source in (paused, RunSnapshot.from_json(snapshot.to_json())):
        copy = Agent(id="researcher", model=agent.model, tools=agent.tools, store=MemoryRunStore())
        done = asyncio.run(copy.resume(source))
        assert done.status == "complete" and done.text == "Noted."
        told = script.seen[-1][-1]
        assert isinstance(told, UserMessage) and "cancelled" in " ".join(p.text for p in told.parts)  # type: ignore[union-attr]
        script.turns.append("Noted.")


async def test_a_finished_background_result_travels_in_the_snapshot() -> None:
    release = asyncio.Event()
    agent, _ = background_agent(release, [calls(call("research", {"topic": "sky"})), "started", "Blue, it says."])
    paused = await agent.generate("research")
    release.set()
    await asyncio.gather(*[t for (run, _), t in BACKGROUND.items() if run == paused._state.run_id])  # type: ignore[union-attr]
    snapshot = paused.snapshot()
    assert snapshot.document["state"]["background"]["c_research"]["output"]["finding"] == "it is blue"
    BACKGROUND.pop((paused._state.run_id, "c_research"))  # type: ignore[union-attr]  # as in another process
    done = await agent.resume(RunSnapshot.from_json(snapshot.to_json()))
    assert done.text == "Blue, it says."


async def test_a_running_background_call_cannot_be_resumed_elsewhere() -> None:
    release = asyncio.Event()
    agent, _ = background_agent(release, [calls(call("research", {"topic": "sky"})), "started"])
    paused = await agent.generate("research")
    text = paused.snapshot().to_json()
    task = BACKGROUND.pop((paused._state.run_id, "c_research"))  # type: ignore[union-attr]  # "another process"
    with pytest.raises(ResumeError, match="run in another process"):
        await agent.resume(RunSnapshot.from_json(text))
    release.set()
    await task


async def test_cancelling_a_supervisor_stops_its_subagent_and_its_workflow_between_steps() -> None:
    from agentkit import Workflow

    started, requests = asyncio.Event(), []

    async def slow(messages: list[Message], info: FunctionInfo) -> str:
        requests.append(1)
        started.set()
        await asyncio.sleep(30)  # the subagent's model request: abandoned when the parent is cancelled
        return "never"

    helper = Agent(id="helper", model=FunctionModel(slow), store=MemoryRunStore())
    model, script = scripted(calls(call("agent-helper", {"prompt": "dig"})), "summary")
    supervisor = Agent(id="boss", model=model, agents={"helper": helper}, store=MemoryRunStore())
    cancel = asyncio.Event()
    run = asyncio.ensure_future(supervisor.generate("go", cancel=cancel))
    await started.wait()
    cancel.set()
    result = await asyncio.wait_for(run, 5)
    assert result.status == "cancelled" and result.tool_results[0].text == "Agent 'helper' was cancelled."

    ran: list[str] = []

    @tool
    def first(ctx: ToolContext[Any], n: int) -> int:
        """Step one: cancels the run while it works."""
        ran.append("first")
        ctx.cancelled.set()
        return n + 1

    @tool
    def second(n: int) -> int:
        """Step two: must not start."""
        ran.append("second")
        return n * 2

    model, _ = scripted(calls(call("workflow-double", {"n": 1})), "unreachable")
    agent = Agent(model=model, workflows={"double": Workflow("double", [first, second])}, store=MemoryRunStore())
    result = await agent.generate("go")
    assert ran == ["first"] and result.status == "cancelled"
    assert "cancelled before step 'second'" in result.tool_results[0].text


async def test_a_workflow_step_that_suspends_pauses_the_run_and_the_workflow_starts_again() -> None:
    from agentkit import Workflow

    ran: list[str] = []

    @tool
    def quote(item: str) -> int:
        """Step one: price an item."""
        ran.append("quote")
        return 42

    @tool
    def confirm(ctx: ToolContext[Any], price: int) -> str:
        """Step two: ask the user to confirm the price."""
        ok = ctx.suspend({"question": f"Pay {price}?"}, schema={"type": "boolean"})
        ran.append(f"confirm {ok}")
        return "paid" if ok else "not paid"

    model, _ = scripted(calls(call("workflow-buy", {"item": "lamp"})), "done")
    agent = Agent(model=model, workflows={"buy": Workflow("buy", [quote, confirm])}, store=MemoryRunStore())
    paused = await agent.generate("buy a lamp")
    assert paused.status == "suspended" and paused.pending[0].request == {"question": "Pay 42?"}  # type: ignore[union-attr]
    done = await agent.resume(paused, {"c_workflow-buy": True})
    assert done.tool_results[0].output == "paid" and ran == ["quote", "quote", "confirm True"]
