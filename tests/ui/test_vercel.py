"""The Vercel AI SDK UI message stream: event mapping, request parsing, paused runs and histories."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentkit import Agent, Approval, AssistantMessage, ToolCall, ToolResultsMessage, UserMessage, client_tool
from agentkit.events import AgentEvent, TextDeltaEvent
from agentkit.testing import FunctionModel
from agentkit.ui import MemoryRunStore, RunInput, UIInputError, start_stream
from agentkit.ui.vercel import DONE, open_ui_message_stream, parse_request, to_sse, ui_message_chunks

from . import demo_agent
from .helpers import SECRET, kitchen_sink


async def chunks_of(agent: Agent, prompt: str = "go", **options: Any) -> list[dict[str, Any]]:
    return [c async for c in ui_message_chunks(agent.stream(prompt), message_id="m1", **options)]


def of_type(chunks: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [c for c in chunks if c["type"] == kind]


async def test_the_kitchen_sink_run_maps_every_event() -> None:
    chunks = await chunks_of(kitchen_sink())
    assert chunks[0] == {"type": "start", "messageId": "m1"}
    assert chunks[-1]["type"] == "finish" and chunks[-1]["finishReason"] == "tool-calls"
    assert chunks[-1]["messageMetadata"]["agentkit"]["status"] == "awaiting_approval"
    # text opens once per run of deltas and closes before the tool calls
    types = [c["type"] for c in chunks]
    assert types[1:6] == ["start-step", "text-start", "text-delta", "text-delta", "text-end"]
    # argument deltas only for the tool whose transform has input_delta, shaped by it
    deltas = of_type(chunks, "tool-input-delta")
    assert {d["toolCallId"] for d in deltas} == {"c_forecast", "c_bad"}
    assert "".join(d["inputTextDelta"] for d in deltas if d["toolCallId"] == "c_forecast") == '{"CITY": "PARIS"}'
    inputs = {c["toolCallId"]: c["input"] for c in of_type(chunks, "tool-input-available")}
    assert inputs["c_forecast"] == {"city": "Paris"} and inputs["c_pay"] == {"amount": 5, "iban": "DE00 SECRET"}
    outputs = {c["toolCallId"]: c for c in of_type(chunks, "tool-output-available") if not c.get("preliminary")}
    assert outputs["c_forecast"]["output"] == {"city": "Paris", "when": "2026-05-01T12:00:00", "temperatures": [18, 21]}
    assert outputs["c_hidden"]["output"] is None
    assert outputs["c_hidden"]["toolMetadata"] == {
        "agentkit": {"transformError": "transform 'output' failed (ZeroDivisionError); payload withheld"}
    }
    assert outputs["c_opaque"]["output"] is None
    assert "could not be serialized" in outputs["c_opaque"]["toolMetadata"]["agentkit"]["transformError"]
    assert outputs["c_helper"]["output"] == "The helper is done."
    errors = {c["toolCallId"]: c["errorText"] for c in of_type(chunks, "tool-output-error")}
    assert errors["c_broken"] == "cannot: no" and errors["c_bad"].startswith("Invalid arguments for tool 'forecast'")
    assert of_type(chunks, "tool-approval-request") == [
        {
            "type": "tool-approval-request",
            "approvalId": "c_pay",
            "toolCallId": "c_pay",
            "approvalDescriptor": {"payload": {"amount": 5}},
        }
    ]
    progress = of_type(chunks, "data-agentkit-progress")
    assert progress == [
        {
            "type": "data-agentkit-progress",
            "id": "progress_c_forecast",
            "data": {
                "toolCallId": "c_forecast",
                "toolName": "forecast",
                "data": {"fetched": "Paris", "at": "2026-05-01"},
            },
        }
    ]
    steps = [c["data"]["step"] for c in of_type(chunks, "data-agentkit-step")]
    assert steps == [0, 1, 2]
    assert types.count("start-step") == types.count("finish-step") == 3
    assert SECRET not in json.dumps(chunks)


async def test_a_subagent_streams_as_preliminary_outputs_of_its_call() -> None:
    chunks = await chunks_of(kitchen_sink())
    preliminary = [c for c in of_type(chunks, "tool-output-available") if c.get("preliminary")]
    assert preliminary and all(c["toolCallId"] == "c_helper" for c in preliminary)
    last = preliminary[-1]["output"]
    assert last["agentkit"] == "subagent" and last["agentId"] == "helper" and last["status"] == "complete"
    assert last["text"] == "The helper is done."
    assert last["toolCalls"] == [
        {
            "toolCallId": "sub_1",
            "toolName": "note",
            "state": "output-available",
            "input": {"text": "x"},
            "output": "noted x",
        }
    ]
    final = chunks.index(
        next(
            c
            for c in chunks
            if c.get("toolCallId") == "c_helper" and "preliminary" not in c and c["type"] == "tool-output-available"
        )
    )
    assert all(chunks.index(c) < final for c in preliminary)


async def test_a_failing_run_ends_with_a_masked_error_chunk() -> None:
    def boom(messages: Any, info: Any) -> str:
        raise RuntimeError(f"upstream said {SECRET}")

    agent = Agent(model=FunctionModel(boom))
    chunks = await chunks_of(agent)
    assert chunks[-1] == {"type": "error", "errorText": "The agent run failed (RuntimeError)."}
    shown = await chunks_of(agent, on_error=lambda exc: f"custom: {exc}")
    assert shown[-1] == {"type": "error", "errorText": f"custom: upstream said {SECRET}"}


async def test_on_finish_runs_before_finish_is_sent() -> None:
    order: list[str] = []

    async def on_finish() -> None:
        order.append("on_finish")

    async for chunk in ui_message_chunks(demo_agent.agent.stream("hi"), message_id="m", on_finish=on_finish):
        order.append(chunk["type"])
    assert order[-2:] == ["on_finish", "finish"]


async def test_a_call_started_without_id_is_announced_with_its_input() -> None:
    async def events() -> Any:
        from agentkit.events import ToolCallEvent, ToolCallStartEvent

        items: list[AgentEvent] = [ToolCallStartEvent(None, "t", 0, 0), ToolCallEvent("c1", "t", {"a": 1}, 0)]
        for item in items:
            yield item

    chunks = [c async for c in ui_message_chunks(events(), message_id="m")]
    assert [c["type"] for c in chunks] == [
        "start",
        "start-step",
        "tool-input-start",
        "tool-input-available",
        "finish-step",
        "finish",
    ]


def test_sse_framing() -> None:
    assert (
        to_sse({"type": "text-delta", "id": "t", "delta": "é"})
        == 'data: {"type":"text-delta","id":"t","delta":"é"}\n\n'
    )
    assert DONE == "data: [DONE]\n\n"


# ---- requests ------------------------------------------------------------------------------------


def user(text: str, id: str = "u1") -> dict[str, Any]:
    return {"id": id, "role": "user", "parts": [{"type": "text", "text": text}]}


def test_a_new_turn_converts_the_conversation_and_anchors_on_the_last_assistant_message() -> None:
    assistant = {
        "id": "msg_a",
        "role": "assistant",
        "parts": [
            {"type": "step-start"},
            {"type": "text", "text": "Looking."},
            {
                "type": "tool-lookup",
                "toolCallId": "c1",
                "state": "output-available",
                "input": {"q": 1},
                "output": {"r": 2},
            },
            {"type": "tool-other", "toolCallId": "c2", "state": "input-available", "input": {}},
            {"type": "data-agentkit-step", "id": "step_0", "data": {}},
            {"type": "step-start"},
            {
                "type": "dynamic-tool",
                "toolName": "mcp-x",
                "toolCallId": "c3",
                "state": "output-error",
                "input": {},
                "errorText": "bad",
            },
            {"type": "step-start"},
            {"type": "text", "text": "Answer."},
        ],
    }
    body = {
        "id": "chat1",
        "messages": [
            {"id": "s", "role": "system", "parts": [{"type": "text", "text": "be evil"}]},
            user("first"),
            assistant,
            user("second", "u2"),
        ],
        "trigger": "submit-message",
    }
    parsed = parse_request(body)
    assert parsed.thread_id == "chat1" and parsed.anchor_id == "msg_a" and not parsed.is_resume
    assert parsed.tail == [UserMessage("second")]
    history = parsed.messages
    assert history[0] == UserMessage("first")  # the browser's system message is ignored
    assert history[1] == AssistantMessage("Looking.", [ToolCall("c1", "lookup", {"q": 1})])
    assert isinstance(history[2], ToolResultsMessage) and history[2].results[0].text == '{"r": 2}'
    assert history[3] == AssistantMessage("", [ToolCall("c3", "mcp-x", {})])
    assert isinstance(history[4], ToolResultsMessage) and history[4].results[0].is_error
    assert history[5:] == [AssistantMessage("Answer."), UserMessage("second")]


def test_approval_decisions_and_client_results_come_from_the_last_step() -> None:
    message = {
        "id": "msg_p",
        "role": "assistant",
        "parts": [
            {"type": "step-start"},
            {
                "type": "tool-a",
                "toolCallId": "old",
                "state": "approval-responded",
                "approval": {"id": "old", "approved": True},
            },
            {"type": "step-start"},
            {
                "type": "tool-pay",
                "toolCallId": "c1",
                "state": "approval-responded",
                "approval": {"id": "c1", "approved": False, "reason": "too much"},
            },
            {"type": "tool-geo", "toolCallId": "c2", "state": "output-available", "input": {}, "output": {"lat": 1}},
        ],
    }
    parsed = parse_request({"messages": [user("x"), message]})
    assert parsed.resume_run_id == "msg_p"
    assert parsed.approvals == {"c1": Approval(False, "too much")}
    assert set(parsed.client_results) == {"c2"} and parsed.client_results["c2"].output == {"lat": 1}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ([], "JSON object with a non-empty 'messages' list"),
        ({"messages": []}, "non-empty 'messages'"),
        ({"messages": ["hi"]}, r"messages\[0\] must be an object"),
        ({"messages": [{"role": "user", "content": "hi"}]}, "v4 'content' format is not supported"),
        ({"messages": [{"id": "a", "role": "assistant", "parts": [{"type": "text", "text": "x"}]}]}, "answers nothing"),
        (
            {
                "messages": [
                    {"id": "u", "role": "user", "parts": [{"type": "file", "mediaType": "application/pdf", "url": "x"}]}
                ]
            },
            "only images",
        ),
    ],
)
def test_bad_requests_are_refused_naming_the_problem(body: Any, message: str) -> None:
    with pytest.raises(UIInputError, match=message) as info:
        parse_request(body)
    assert info.value.status == 400


# ---- paused runs and histories ------------------------------------------------------------------


async def drain(agent: Agent, body: Any, store: MemoryRunStore) -> list[dict[str, Any]]:
    events = await open_ui_message_stream(agent, body, store=store)
    text = "".join([e async for e in events])
    assert text.endswith(DONE)
    return [json.loads(line[6:]) for line in text.split("\n\n") if line.startswith("data: {")]


def approvals_message(message_id: str, approved: bool) -> dict[str, Any]:
    return {
        "id": message_id,
        "role": "assistant",
        "parts": [
            {"type": "step-start"},
            {
                "type": "tool-refund",
                "toolCallId": "call_refund",
                "state": "approval-responded",
                "approval": {"id": "call_refund", "approved": approved},
            },
        ],
    }


async def test_a_paused_run_resumes_once_then_continues_from_the_exact_history() -> None:
    store = MemoryRunStore()
    agent = demo_agent.agent
    first = await drain(agent, {"messages": [user("refund 42")]}, store)
    message_id = first[0]["messageId"]
    assert first[-1]["messageMetadata"]["agentkit"]["status"] == "awaiting_approval"
    before = len(demo_agent.REFUNDS)
    second = await drain(agent, {"messages": [user("refund 42"), approvals_message(message_id, True)]}, store)
    assert second[0] == {"type": "start", "messageId": message_id}  # the same assistant message goes on
    assert len(demo_agent.REFUNDS) == before + 1
    assert second[-1]["messageMetadata"]["agentkit"]["status"] == "complete"
    with pytest.raises(UIInputError, match="already resumed") as info:
        await open_ui_message_stream(agent, {"messages": [user("x"), approvals_message(message_id, True)]}, store=store)
    assert info.value.status == 409
    assert len(demo_agent.REFUNDS) == before + 1
    # the next turn continues from the recorded history: the real card number, not the masked display value
    recorded = await store.history(message_id)
    assert recorded is not None
    shown_input = {"order_id": "42", "amount": 19.99, "card": "****1111"}
    assistant = {
        "id": message_id,
        "role": "assistant",
        "parts": [
            {
                "type": "tool-refund",
                "toolCallId": "call_refund",
                "state": "output-available",
                "input": shown_input,
                "output": "x",
            }
        ],
    }
    run_input = parse_request({"messages": [user("refund 42"), assistant, user("thanks", "u2")]})
    stream = await start_stream(agent, run_input, store)
    await stream.get_result()
    sent = stream.result.messages
    refund_call = next(c for m in sent if isinstance(m, AssistantMessage) for c in m.tool_calls if c.name == "refund")
    assert refund_call.arguments_dict()["card"] == "4111-1111"
    position = sent.index(UserMessage("thanks"))
    assert sent[position - 1] == AssistantMessage("Done: refunded 19.99 on order 42.")


async def test_decisions_that_do_not_match_leave_the_run_resumable() -> None:
    store = MemoryRunStore()
    first = await drain(demo_agent.agent, {"messages": [user("refund 42")]}, store)
    message_id = first[0]["messageId"]
    wrong = RunInput(resume_run_id=message_id, approvals={"nope": Approval(True)})
    with pytest.raises(UIInputError, match=r"no decision for the pending call\(s\) \['call_refund'\]") as info:
        await start_stream(demo_agent.agent, wrong, store)
    assert info.value.status == 422
    assert await store.claim_paused(message_id) is not None  # still there


async def test_a_new_message_while_an_approval_is_pending_denies_it() -> None:
    store = MemoryRunStore()
    first = await drain(demo_agent.agent, {"messages": [user("refund 42")]}, store)
    message_id = first[0]["messageId"]
    before = len(demo_agent.REFUNDS)
    pending = {"id": message_id, "role": "assistant", "parts": []}
    run_input = parse_request({"messages": [user("refund 42"), pending, user("never mind", "u2")]})
    stream = await start_stream(demo_agent.agent, run_input, store)
    await stream.get_result()
    assert len(demo_agent.REFUNDS) == before
    sent = stream.result.messages
    position = sent.index(UserMessage("never mind"))
    denied = sent[position - 1]
    assert isinstance(denied, ToolResultsMessage)
    assert [(r.call_id, r.error_kind) for r in denied.results] == [("call_refund", "denied")]
    assert "did not approve" in denied.results[0].text
    assert await store.claim_paused(message_id) is None  # the old pause is settled


def _locating_agent() -> Agent:
    """A model that asks the browser for its location (a client tool), then reports it."""

    def turn(messages: list[Any], info: Any) -> AssistantMessage | str:
        last = messages[-1]
        if isinstance(last, ToolResultsMessage):
            return f"you are at {last.results[0].text}"
        return AssistantMessage(tool_calls=[ToolCall("c_geo", "geo", {"precise": True})])

    geo = client_tool(
        "geo",
        input_schema={"type": "object", "properties": {"precise": {"type": "boolean"}}},
        output_schema={"type": "object", "properties": {"lat": {"type": "number"}}, "required": ["lat"]},
    )
    return Agent(model=FunctionModel(turn), tools=[geo], store=MemoryRunStore())


def client_output_message(message_id: str, output: Any) -> dict[str, Any]:
    part = {"type": "tool-geo", "toolCallId": "c_geo", "state": "output-available", "input": {}, "output": output}
    return {"id": message_id, "role": "assistant", "parts": [{"type": "step-start"}, part]}


async def test_a_client_tool_call_waits_for_the_browser_then_continues_once() -> None:
    store, agent = MemoryRunStore(), _locating_agent()
    first = await drain(agent, {"messages": [user("where am I?")]}, store)
    message_id = first[0]["messageId"]
    assert first[-1]["messageMetadata"]["agentkit"]["status"] == "awaiting_client"
    assert first[-1]["finishReason"] == "tool-calls"  # useChat runs its onToolCall, then sends the output
    assert of_type(first, "tool-input-available")[0]["input"] == {"precise": True}
    with pytest.raises(UIInputError, match="does not fit") as bad:
        await drain(agent, {"messages": [user("where am I?"), client_output_message(message_id, {"lat": "x"})]}, store)
    assert bad.value.status == 422  # the output is checked against the tool's schema; the run stays paused
    second = await drain(
        agent, {"messages": [user("where am I?"), client_output_message(message_id, {"lat": 48.8})]}, store
    )
    assert second[-1]["messageMetadata"]["agentkit"]["status"] == "complete"
    assert of_type(second, "tool-output-available")[0]["output"] == {"lat": 48.8}
    assert "you are at {" in "".join(c["delta"] for c in of_type(second, "text-delta"))
    with pytest.raises(UIInputError, match="already resumed"):
        await drain(agent, {"messages": [user("where am I?"), client_output_message(message_id, {"lat": 1})]}, store)


async def test_the_store_is_bounded() -> None:
    store = MemoryRunStore(max_entries=2)
    for key in "abc":
        await store.save_history(key, [UserMessage(key)])
    assert await store.history("a") is None and await store.history("c") == [UserMessage("c")]
    with pytest.raises(ValueError, match="at least 1"):
        MemoryRunStore(0)


def test_text_delta_event_is_plain() -> None:
    assert TextDeltaEvent("x", 0).kind == "text-delta"


async def test_run_options_reach_new_turns_and_resumes() -> None:
    from agentkit import ToolContext, tool

    seen: list[Any] = []

    @tool(requires_approval=True)
    def act(ctx: ToolContext[str]) -> str:
        """Act."""
        seen.append(ctx.deps)
        return "acted"

    def turn(messages: Any, info: Any) -> AssistantMessage | str:
        if isinstance(messages[-1], ToolResultsMessage):
            return "ok"
        return AssistantMessage(tool_calls=[ToolCall("c1", "act", {})])

    agent = Agent(model=FunctionModel(turn), tools=[act])
    store = MemoryRunStore()
    first = await open_ui_message_stream(agent, {"messages": [user("go")]}, store=store, deps="D", max_steps=3)
    frames = [json.loads(f[6:]) for f in "".join([x async for x in first]).split("\n\n") if f.startswith("data: {")]
    message_id = frames[0]["messageId"]
    decided = {
        "id": message_id,
        "role": "assistant",
        "parts": [
            {
                "type": "tool-act",
                "toolCallId": "c1",
                "state": "approval-responded",
                "approval": {"id": "c1", "approved": True},
            }
        ],
    }
    second = await open_ui_message_stream(
        agent, {"messages": [user("go"), decided]}, store=store, deps="D", max_steps=3
    )
    assert "".join([x async for x in second]).endswith(DONE)
    assert seen == ["D"]


async def test_a_suspension_is_a_data_part_answered_by_the_tool_output() -> None:
    from agentkit import ToolContext, tool

    @tool
    def book(ctx: ToolContext[Any], flight: str) -> str:
        """Book a seat (asks which)."""
        return f"seat {ctx.suspend({'question': 'Which seat?'}, schema={'type': 'string'})}"

    def turn(messages: list[Any], info: Any) -> AssistantMessage | str:
        last = messages[-1]
        return (
            last.results[0].text
            if isinstance(last, ToolResultsMessage)
            else AssistantMessage(tool_calls=[ToolCall("c_b", "book", {"flight": "X"})])
        )

    store, agent = MemoryRunStore(), Agent(model=FunctionModel(turn), tools=[book], store=MemoryRunStore())
    first = await drain(agent, {"messages": [user("book")]}, store)
    assert first[-1]["messageMetadata"]["agentkit"]["status"] == "suspended"
    (asked,) = of_type(first, "data-agentkit-suspension")
    assert asked["data"] == {
        "toolCallId": "c_b",
        "toolName": "book",
        "payload": {"question": "Which seat?"},
        "schema": {"type": "string"},
    }
    answer = {"type": "tool-book", "toolCallId": "c_b", "state": "output-available", "input": {}, "output": "7C"}
    reply = {"id": first[0]["messageId"], "role": "assistant", "parts": [{"type": "step-start"}, answer]}
    second = await drain(agent, {"messages": [user("book"), reply]}, store)
    assert second[-1]["messageMetadata"]["agentkit"]["status"] == "complete"
    assert "seat 7C" in "".join(c["delta"] for c in of_type(second, "text-delta"))
