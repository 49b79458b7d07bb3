"""Agent.stream: typed events, display transforms (failing closed), subagent forwarding, cancellation."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, Literal

import pytest

from agentkit import ModelRetry, Registry, ToolCall, ToolContext, ToolTransform, tool
from agentkit.agent import Agent
from agentkit.events import (
    AgentEvent,
    FinishEvent,
    StepFinishEvent,
    SubagentEvent,
    TextDeltaEvent,
    ToolCallDeltaEvent,
    ToolCallEvent,
    ToolCallStartEvent,
    ToolErrorEvent,
    ToolProgressEvent,
    ToolResultEvent,
)
from agentkit.messages import Message, ToolResultsMessage
from agentkit.testing import FunctionInfo, FunctionModel, TestModel, ToolCallChunk

from .agent_helpers import call, calls, scripted


def make_lookup() -> Any:
    @tool(id="internal_lookup_v3")  # the id must never show up in events: keys only
    def lookup(user: str, password: str) -> dict[str, str]:
        """Look a user up."""
        return {"user": user, "token": "tok-" + password}

    return lookup


async def chunked(messages: list[Message], info: FunctionInfo) -> AsyncIterator[str | ToolCall | ToolCallChunk]:
    if isinstance(messages[-1], ToolResultsMessage):
        for piece in ("Found ", "the ", "user."):
            yield piece
        return
    yield "Looking up."
    yield ToolCallChunk(0, name="lookup", call_id="c1")
    yield ToolCallChunk(0, '{"user": "ann", ')
    yield ToolCallChunk(0, '"password": "hunter2"}')


async def collect(stream: AsyncIterator[AgentEvent]) -> list[AgentEvent]:
    return [event async for event in stream]


async def test_event_sequence_of_a_streamed_two_step_run() -> None:
    agent = Agent(model=FunctionModel(stream_fn=chunked), tools={"lookup": make_lookup()})
    stream = agent.stream("who is ann?")
    events = await collect(stream)
    kinds = [e.kind for e in events]
    assert kinds == [
        "text-delta",
        "tool-call-start",
        "tool-call",
        "tool-result",
        "step-finish",
        "text-delta",
        "text-delta",
        "text-delta",
        "step-finish",
        "finish",
    ]  # no tool-call-delta: partial arguments are suppressed without an input_delta transform
    assert all(getattr(e, "tool_name", "lookup") == "lookup" for e in events)
    assert "internal_lookup_v3" not in repr(events)
    call_event = events[2]
    assert isinstance(call_event, ToolCallEvent) and call_event.input == {"user": "ann", "password": "hunter2"}
    step_finish = events[4]
    assert isinstance(step_finish, StepFinishEvent) and step_finish.tool_calls == 1
    assert stream.result.text == "Found the user."
    assert "".join(e.text for e in events if isinstance(e, TextDeltaEvent)) == "Looking up.Found the user."
    # generate gives the same result as the stream
    generated = await agent.generate("who is ann?")
    assert generated.text == stream.result.text
    assert generated.messages == stream.result.messages


async def test_transforms_shape_every_display_payload_and_deltas_need_their_own() -> None:
    def redact(args: Any) -> Any:
        return {**args, "password": "***"}

    lookup = make_lookup()
    lookup.transform = ToolTransform(
        input=redact,
        input_delta=lambda d: "." * len(d),
        output=lambda out: {"user": out["user"]},
    )
    agent = Agent(model=FunctionModel(stream_fn=chunked), tools={"lookup": lookup})
    stream = agent.stream("x")
    events = await collect(stream)
    deltas = [e for e in events if isinstance(e, ToolCallDeltaEvent)]
    assert [d.delta for d in deltas] == ["." * len('{"user": "ann", '), "." * len('"password": "hunter2"}')]
    assert next(e for e in events if isinstance(e, ToolCallEvent)).input == {"user": "ann", "password": "***"}
    assert next(e for e in events if isinstance(e, ToolResultEvent)).output == {"user": "ann"}
    assert "hunter2" not in repr(events)
    # the application's result and the model keep the real values
    assert stream.result.tool_results[0].output == {"user": "ann", "token": "tok-hunter2"}
    assert "tok-hunter2" in stream.result.tool_results[0].text


async def test_a_raising_transform_withholds_the_payload_and_says_so() -> None:
    def broken(value: Any) -> Any:
        raise ValueError(f"cannot shape {value}")  # a message quoting the secret must not leak either

    lookup = make_lookup()
    lookup.transform = ToolTransform(input=broken, input_delta=broken, output=broken)
    stream = Agent(model=FunctionModel(stream_fn=chunked), tools={"lookup": lookup}).stream("x")
    events = await collect(stream)
    shaped = [e for e in events if isinstance(e, (ToolCallDeltaEvent, ToolCallEvent, ToolResultEvent))]
    assert len(shaped) == 4
    for event in shaped:
        payload = getattr(event, "delta", getattr(event, "input", getattr(event, "output", None)))
        assert payload is None
        assert event.transform_error is not None and "ValueError" in event.transform_error
    assert "hunter2" not in repr(events)
    assert stream.result.text == "Found the user."  # the run itself is unaffected


async def test_agent_policy_applies_to_all_tools_and_tool_fields_win() -> None:
    @tool(transform=ToolTransform(output=lambda out: f"own:{out}"))
    def own(x: int) -> int:
        """Has its own output transform."""
        return x

    @tool
    def failing(x: int) -> int:
        """Always asks for a retry."""
        raise ModelRetry(f"secret detail {x}")

    policy = ToolTransform(input=lambda args: sorted(args), output=lambda out: "policy", error=lambda message: "failed")
    model, _ = scripted(calls(call("own", {"x": 1}, "o"), call("failing", {"x": 2}, "f")), "ok")
    events = await collect(Agent(model=model, tools=Registry([own, failing], transform=policy)).stream("x"))
    inputs = {e.call_id: e.input for e in events if isinstance(e, ToolCallEvent)}
    assert inputs == {"o": ["x"], "f": ["x"]}  # the policy's input transform fills in for both
    assert [e.output for e in events if isinstance(e, ToolResultEvent)] == ["own:1"]
    error = next(e for e in events if isinstance(e, ToolErrorEvent))
    assert (error.error, error.error_kind, error.call_id) == ("failed", "retry", "f")


async def test_subagent_events_carry_the_generated_tool_name_and_the_agent_id() -> None:
    writer_model, _ = scripted(calls(call("lookup", {"user": "bo", "password": "pw"}, "inner")), "poem")
    writer = Agent(id="writer-7", model=writer_model, tools={"lookup": make_lookup()})
    model, _ = scripted(calls(call("agent-writer", {"prompt": "write"}, "outer")), "supervised")
    stream = Agent(id="boss", model=model, agents={"writer": writer}).stream("x")
    events = await collect(stream)
    forwarded = [e for e in events if isinstance(e, SubagentEvent)]
    assert forwarded and all(
        (e.tool_name, e.agent_id, e.call_id) == ("agent-writer", "writer-7", "outer") for e in forwarded
    )
    inner_kinds = [e.event.kind for e in forwarded]
    assert inner_kinds[-1] == "finish" and "tool-result" in inner_kinds
    inner_call = next(e.event for e in forwarded if isinstance(e.event, ToolCallEvent))
    assert inner_call.tool_name == "lookup"
    # the subagent's events all arrive before the parent's result for that call
    result_at = next(i for i, e in enumerate(events) if isinstance(e, ToolResultEvent))
    assert events.index(forwarded[-1]) < result_at
    assert events[result_at].output == "poem"  # type: ignore[union-attr]
    assert stream.result.text == "supervised"


async def test_progress_events_from_tools() -> None:
    @tool
    async def crawl(ctx: ToolContext, pages: int) -> int:
        """Crawl some pages."""
        for page in range(pages):
            ctx.emit({"page": page})
        return pages

    model, _ = scripted(calls(call("crawl", {"pages": 2}, "c")), "ok")
    events = await collect(Agent(model=model, tools=[crawl]).stream("x"))
    progress = [e for e in events if isinstance(e, ToolProgressEvent)]
    assert [(e.call_id, e.tool_name, e.data) for e in progress] == [
        ("c", "crawl", {"page": 0}),
        ("c", "crawl", {"page": 1}),
    ]


async def test_leaving_the_stream_early_cancels_running_tools() -> None:
    state: dict[str, Any] = {"started": asyncio.Event(), "cancelled": False}

    @tool
    async def forever() -> str:
        """Never finishes."""
        state["started"].set()
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            state["cancelled"] = True
            raise
        return "never"

    model, _ = scripted(calls(call("forever")))
    stream = Agent(model=model, tools=[forever]).stream("x")
    iterator = aiter(stream)
    async for event in iterator:
        if isinstance(event, ToolCallEvent):
            break
    await state["started"].wait()
    await iterator.aclose()  # type: ignore[attr-defined]
    assert state["cancelled"] is True
    with pytest.raises(RuntimeError, match="has not finished"):
        _ = stream.result


async def test_errors_end_the_stream_and_testmodel_streams_too() -> None:
    async def failing(messages: list[Message], info: FunctionInfo) -> AsyncIterator[str]:
        yield "partial"
        raise ConnectionError("vendor went away")

    stream = Agent(model=FunctionModel(stream_fn=failing)).stream("x")
    seen: list[AgentEvent] = []
    with pytest.raises(ConnectionError):
        async for event in stream:
            seen.append(event)
    assert [e.kind for e in seen] == ["text-delta"]

    agent = Agent(model=TestModel(seed=3), tools={"lookup": make_lookup()})
    stream = agent.stream("x")
    events = await collect(stream)
    assert isinstance(events[-1], FinishEvent) and events[-1].status == "complete"
    assert [e.tool_name for e in events if isinstance(e, ToolCallStartEvent)] == ["lookup"]
    assert (await agent.generate("x")).text == stream.result.text  # same seed, same run


async def test_closing_the_stream_after_its_first_event_stops_the_run_at_once() -> None:
    """Issue 17 §3.5: no tool runs and no second (billed) request is sent, on every supported Python.

    Through the official OpenAI SDK over a recorded stream: the client reads each event under its
    stream-idle timeout (`asyncio.wait_for`, which before Python 3.12 can drop a cancellation that
    arrives as the read completes), so closing must stop the run even when that cancellation is lost.
    """
    import openai

    from agentkit.providers.openai import OpenAIChatModel
    from tests.providers.openai.test_client import event_stream, httpx

    ran: list[str] = []

    @tool
    def get_weather(city: str, unit: Literal["c", "f"] = "c", days: int = 1) -> str:
        """Weather in a city."""
        ran.append(city)
        return "sunny"

    requests: list[Any] = []

    def handler(request: Any) -> Any:
        requests.append(request)
        return event_stream("chat_stream")

    client = openai.AsyncOpenAI(
        api_key="sk-test",
        base_url="http://127.0.0.1:8080/v1",
        max_retries=0,
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)),
    )
    agent = Agent(model=OpenAIChatModel("gpt-4.1", client=client), tools=[get_weather])
    for _ in range(5):  # the lost cancellation depends on timing: try several closes
        stream = agent.stream("Weather in Paris and Rome?")
        iterator = aiter(stream)
        async for _event in iterator:
            break
        await iterator.aclose()  # type: ignore[attr-defined]
        for _ in range(20):
            await asyncio.sleep(0)
    assert ran == []
    assert len(requests) == 5  # one request per run, none after the close
