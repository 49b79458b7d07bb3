"""AG-UI: every event we emit validates against ag-ui-protocol's own models; interrupts and resumes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from ag_ui.core import Event, EventType
from pydantic import TypeAdapter

from agentkit import Agent, UserMessage
from agentkit.testing import FunctionModel
from agentkit.ui import MemoryRunStore
from agentkit.ui.agui import APPROVAL_SCHEMA, agui_messages_to_history, open_agui_stream, parse_input

from . import demo_agent
from .helpers import SECRET, kitchen_sink, new_thread

EVENTS: TypeAdapter[Any] = TypeAdapter(Event)


async def run(agent: Agent, body: dict[str, Any], store: MemoryRunStore) -> list[dict[str, Any]]:
    """The run's events as the wire carries them, each re-validated from its JSON by ag-ui-protocol."""
    out = []
    async for frame in open_agui_stream(agent, body, store=store):
        assert frame.startswith("data: ") and frame.endswith("\n\n")
        data = json.loads(frame[len("data: ") :])
        EVENTS.validate_python(data)  # raises on anything the protocol's models reject
        out.append(data)
    check_sequence(out)
    return out


def check_sequence(events: list[dict[str, Any]]) -> None:
    """The lifecycle rules an AG-UI client enforces: run, step, text and tool-call brackets."""
    assert events[0]["type"] == "RUN_STARTED"
    assert events[-1]["type"] in ("RUN_FINISHED", "RUN_ERROR")
    assert all(e["type"] not in ("RUN_STARTED", "RUN_FINISHED", "RUN_ERROR") for e in events[1:-1])
    steps: set[tuple[str | None, str]] = set()
    texts: set[str] = set()
    calls: dict[str, str] = {}
    subagents: set[str] = set()
    for e in events:
        kind, sub = e["type"], e.get("subagentRunId")
        if sub is not None and kind not in ("SUBAGENT_STARTED", "SUBAGENT_FINISHED", "SUBAGENT_ERROR"):
            assert sub in subagents, f"{kind} attributed to a subagent that is not running"
        if kind == "STEP_STARTED":
            assert (sub, e["stepName"]) not in steps
            steps.add((sub, e["stepName"]))
        elif kind == "STEP_FINISHED":
            steps.remove((sub, e["stepName"]))
        elif kind == "TEXT_MESSAGE_START":
            texts.add(e["messageId"])
        elif kind == "TEXT_MESSAGE_CONTENT":
            assert e["messageId"] in texts
        elif kind == "TEXT_MESSAGE_END":
            texts.remove(e["messageId"])
        elif kind == "TOOL_CALL_START":
            assert e["toolCallId"] not in calls
            calls[e["toolCallId"]] = "open"
        elif kind == "TOOL_CALL_ARGS":
            assert calls[e["toolCallId"]] == "open"
        elif kind == "TOOL_CALL_END":
            assert calls[e["toolCallId"]] == "open"
            calls[e["toolCallId"]] = "ended"
        elif kind == "TOOL_CALL_RESULT" and e["toolCallId"] in calls:
            assert calls[e["toolCallId"]] == "ended"
        elif kind == "SUBAGENT_STARTED":
            subagents.add(e["subagentRunId"])
        elif kind in ("SUBAGENT_FINISHED", "SUBAGENT_ERROR"):
            subagents.remove(e["subagentRunId"])
    assert not texts and not subagents
    if events[-1]["type"] == "RUN_FINISHED":
        assert not steps and all(state == "ended" for state in calls.values())


def body(thread: str, run: str, messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"threadId": thread, "runId": run, "messages": messages, **extra}


def user(text: str, id: str = "u1") -> dict[str, Any]:
    return {"id": id, "role": "user", "content": text}


def of_type(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


def interrupt_ids(events: list[dict[str, Any]]) -> dict[str, str]:
    """Call id -> interrupt id, from the run's RUN_FINISHED (the ids a resume must answer by)."""
    return {i["toolCallId"]: i["id"] for i in events[-1]["outcome"]["interrupts"]}


def answer(events: list[dict[str, Any]], call_id: str, **entry: Any) -> list[dict[str, Any]]:
    """One resume entry for `call_id`'s interrupt (resolved with `payload`, unless `entry` says otherwise)."""
    return [{"interruptId": interrupt_ids(events)[call_id], "status": "resolved", **entry}]


async def test_every_event_of_the_kitchen_sink_run_validates() -> None:
    events = await run(kitchen_sink(), body(new_thread(), "r1", [user("go")]), MemoryRunStore())
    kinds = {e["type"] for e in events}
    assert kinds >= {
        "RUN_STARTED",
        "STEP_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "CUSTOM",
        "STEP_FINISHED",
        "SUBAGENT_STARTED",
        "SUBAGENT_FINISHED",
        "RUN_FINISHED",
    }
    args = {}
    for e in of_type(events, "TOOL_CALL_ARGS"):
        args[e["toolCallId"]] = args.get(e["toolCallId"], "") + e["delta"]
    assert args["c_forecast"] == '{"CITY": "PARIS"}'  # the input_delta transform's deltas
    assert json.loads(args["c_broken"]) == {"reason": "no"}  # no delta transform: the whole input once
    results = {e["toolCallId"]: e for e in of_type(events, "TOOL_CALL_RESULT")}
    assert json.loads(results["c_forecast"]["content"])["temperatures"] == [18, 21]
    assert results["c_broken"]["content"] == "cannot: no"
    assert results["c_broken"]["metadata"] == {"agentkit": {"error": True, "errorKind": "tool_error"}}
    assert results["c_hidden"]["content"].startswith("Output withheld: transform 'output' failed")
    assert "could not be serialized" in results["c_opaque"]["content"]
    sub = of_type(events, "SUBAGENT_STARTED")[0]
    assert sub["name"] == "helper" and sub["parentToolCallId"] == "c_helper"
    attributed = [e for e in events if e.get("subagentRunId") == sub["subagentRunId"]]
    assert {e["type"] for e in attributed} >= {
        "STEP_STARTED",
        "TOOL_CALL_START",
        "TOOL_CALL_RESULT",
        "TEXT_MESSAGE_CONTENT",
    }
    assert of_type(events, "SUBAGENT_FINISHED")[0]["result"] == "The helper is done."
    finished = events[-1]
    assert finished["outcome"]["type"] == "interrupt"
    pause_key, call = finished["outcome"]["interrupts"][0]["id"].split(":")
    assert call == "c_pay" and pause_key.startswith("pause_") and len(pause_key) > 24  # unguessable, server-made
    assert finished["outcome"]["interrupts"] == [
        {
            "id": f"{pause_key}:c_pay",
            "reason": "tool_call",
            "message": "Approve the call to 'pay'?",
            "toolCallId": "c_pay",
            "responseSchema": APPROVAL_SCHEMA,
            "metadata": {"agentkit": {"toolName": "pay", "payload": {"amount": 5}}},
        }
    ]
    progress = of_type(events, "CUSTOM")[0]
    assert progress["name"] == "agentkit.tool_progress" and progress["value"]["data"]["at"] == "2026-05-01"
    step = of_type(events, "STEP_FINISHED")[0]
    assert (
        step["metadata"]["agentkit"]["finishReason"] == "tool_calls" and step["metadata"]["agentkit"]["toolCalls"] == 5
    )
    assert SECRET not in json.dumps(events)


async def test_approve_then_the_resumed_run_reports_the_result_and_only_its_own_usage() -> None:
    store, thread = MemoryRunStore(), new_thread()
    first = await run(demo_agent.agent, body(thread, "r1", [user("refund 42")]), store)
    assert first[-1]["usage"] == [{"inputTokens": 240, "outputTokens": 24, "totalTokens": 264}]
    resume = answer(first, "call_refund", payload={"approved": True})
    before = len(demo_agent.REFUNDS)
    second = await run(demo_agent.agent, body(thread, "r2", [], resume=resume), store)
    assert len(demo_agent.REFUNDS) == before + 1
    assert of_type(second, "TOOL_CALL_START") == []  # the call is answered against its original id
    assert of_type(second, "TOOL_CALL_RESULT")[0]["toolCallId"] == "call_refund"
    assert second[-1]["outcome"] == {"type": "success"} and second[-1]["result"] == "Done: refunded 19.99 on order 42."
    assert second[-1]["usage"] == [{"inputTokens": 240, "outputTokens": 12, "totalTokens": 252}]
    again = await run(demo_agent.agent, body(thread, "r3", [], resume=resume), store)
    assert again[-1]["type"] == "RUN_ERROR" and "already resumed" in again[-1]["message"]
    assert len(demo_agent.REFUNDS) == before + 1


@pytest.mark.parametrize(
    ("entry", "answer"),
    [
        ({"status": "resolved", "payload": {"approved": False, "reason": "no"}}, "no refund"),
        ({"status": "cancelled"}, "no refund"),
    ],
)
async def test_deny_and_cancel_both_deny(entry: dict[str, Any], answer: str) -> None:
    store, thread = MemoryRunStore(), new_thread()
    first = await run(demo_agent.agent, body(thread, "r1", [user("refund 42")]), store)
    before = len(demo_agent.REFUNDS)
    resume = [{"interruptId": interrupt_ids(first)["call_refund"], **entry}]
    events = await run(demo_agent.agent, body(thread, "r2", [], resume=resume), store)
    assert len(demo_agent.REFUNDS) == before
    result = of_type(events, "TOOL_CALL_RESULT")[0]
    assert result["metadata"]["agentkit"]["errorKind"] == "denied"
    assert answer in events[-1]["result"]


@pytest.mark.parametrize(
    ("resume", "message"),
    [
        ({"call": "other", "payload": {"approved": True}}, "no decision for the pending"),
        ({"payload": {"ok": True}}, "payload must be"),
        ({"payload": {"approved": "false"}}, "payload must be"),
        ({"payload": {"approved": True, "editedArgs": {}}}, "editedArgs is not supported"),
    ],
)
async def test_bad_resumes_are_run_errors_and_leave_the_interrupt_open(resume: dict[str, Any], message: str) -> None:
    store, thread = MemoryRunStore(), new_thread()
    first = await run(demo_agent.agent, body(thread, "r1", [user("refund 42")]), store)
    key = interrupt_ids(first)["call_refund"].split(":")[0]
    entry = {"interruptId": f"{key}:{resume.get('call', 'call_refund')}", "status": "resolved"}
    events = await run(
        demo_agent.agent, body(thread, "r2", [], resume=[{**entry, "payload": resume["payload"]}]), store
    )
    assert [e["type"] for e in events] == ["RUN_STARTED", "RUN_ERROR"]
    assert message in events[-1]["message"] and events[-1]["code"] == "invalid_input"
    ok = answer(first, "call_refund", payload={"approved": False})
    assert (await run(demo_agent.agent, body(thread, "r3", [], resume=ok), store))[-1]["type"] == "RUN_FINISHED"


async def test_new_input_on_a_thread_with_open_interrupts_is_refused_naming_none() -> None:
    store, thread = MemoryRunStore(), new_thread()
    first = await run(demo_agent.agent, body(thread, "r1", [user("refund 42")]), store)
    events = await run(demo_agent.agent, body(thread, "r2", [user("something else", "u2")]), store)
    assert events[-1]["type"] == "RUN_ERROR" and "waiting for answers to its interrupts" in events[-1]["message"]
    assert "call_refund" not in json.dumps(events) and interrupt_ids(first)["call_refund"] not in json.dumps(events)


async def test_only_the_client_that_got_the_interrupts_can_answer_them() -> None:
    """Issue 17 §1.3: a second client that knows the thread id cannot approve another client's refund."""
    store, thread = MemoryRunStore(), new_thread()
    first = await run(demo_agent.agent, body(thread, "r1", [user("refund 42")]), store)
    before = len(demo_agent.REFUNDS)
    approve = {"status": "resolved", "payload": {"approved": True}}
    guesses = [
        [{"interruptId": "call_refund", **approve}],  # the call id alone (what the thread used to be keyed by)
        [{"interruptId": "pause_0123456789abcdef01234567:call_refund", **approve}],  # a made-up key
        [{"interruptId": f"{thread}:call_refund", **approve}],
    ]
    for attempt, resume in enumerate(guesses):
        events = await run(demo_agent.agent, body(thread, f"x{attempt}", [], resume=resume), store)
        assert events[-1]["type"] == "RUN_ERROR" and events[-1]["code"] == "invalid_input"
        assert interrupt_ids(first)["call_refund"] not in json.dumps(events)  # the real id is never listed
    other_thread = await run(
        demo_agent.agent, body(new_thread(), "x9", [], resume=answer(first, "call_refund", **approve)), store
    )
    assert other_thread[-1]["type"] == "RUN_ERROR"  # the key belongs to its own thread
    assert len(demo_agent.REFUNDS) == before
    done = await run(demo_agent.agent, body(thread, "r2", [], resume=answer(first, "call_refund", **approve)), store)
    assert done[-1]["type"] == "RUN_FINISHED" and len(demo_agent.REFUNDS) == before + 1


async def test_an_invalid_body_is_a_run_error_naming_the_field() -> None:
    events = await run(demo_agent.agent, {"threadId": "t", "runId": "r"}, MemoryRunStore())
    assert events[-1]["type"] == "RUN_ERROR" and "messages" in events[-1]["message"]


async def test_a_failing_run_is_a_masked_run_error() -> None:
    def boom(messages: Any, info: Any) -> str:
        raise RuntimeError(SECRET)

    events = await run(Agent(model=FunctionModel(boom)), body("t", "r", [user("x")]), MemoryRunStore())
    assert events[-1] == {
        "type": "RUN_ERROR",
        "message": "The agent run failed (RuntimeError).",
        "code": "RuntimeError",
    }


async def test_the_next_turn_continues_from_the_recorded_history() -> None:
    store, thread = MemoryRunStore(), new_thread()
    first = await run(demo_agent.agent, body(thread, "r1", [user("refund 42")]), store)
    ok = answer(first, "call_refund", payload={"approved": True})
    second = await run(demo_agent.agent, body(thread, "r2", [], resume=ok), store)
    last_text = of_type(second, "TEXT_MESSAGE_START")[-1]["messageId"]
    client_view = [user("refund 42"), {"id": last_text, "role": "assistant", "content": "Done."}, user("thanks", "u2")]
    _, run_input = parse_input(body(thread, "r3", client_view))
    assert run_input.anchor_id == last_text and run_input.tail == [UserMessage("thanks")]
    recorded = await store.history(last_text)
    assert recorded is not None and any(
        c.arguments_dict().get("card") == "4111-1111" for m in recorded for c in getattr(m, "tool_calls", [])
    )


def test_messages_convert_to_a_neutral_history() -> None:
    from ag_ui.core import RunAgentInput

    request = RunAgentInput.model_validate(
        body(
            "t",
            "r",
            [
                {"id": "s", "role": "system", "content": "ignored"},
                {
                    "id": "u",
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "look"},
                        {"type": "image", "source": {"type": "url", "value": "https://x/y.png"}},
                    ],
                },
                {
                    "id": "a",
                    "role": "assistant",
                    "content": "ok",
                    "toolCalls": [
                        {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": '{"q": 1}'}}
                    ],
                },
                {"id": "t1", "role": "tool", "toolCallId": "c1", "content": "found"},
            ],
        )
    )
    history = agui_messages_to_history(request.messages)
    assert len(history) == 3
    assert history[1].tool_calls[0].arguments_dict() == {"q": 1}  # type: ignore[union-attr]
    assert history[2].results[0].name == "lookup" and history[2].results[0].text == "found"  # type: ignore[union-attr]


def test_event_types_cover_the_protocol_names_we_use() -> None:
    assert EventType.RUN_FINISHED.value == "RUN_FINISHED"


async def test_suspensions_and_client_calls_are_interrupts_answered_by_resume_entries() -> None:
    from agentkit import ToolCall, ToolContext, client_tool, tool
    from agentkit.messages import AssistantMessage, Message, ToolResultsMessage

    @tool
    def book(ctx: ToolContext[Any], flight: str) -> str:
        """Book a seat (asks which)."""
        seat = ctx.suspend(f"Which seat on {flight}?", schema={"type": "string", "pattern": "^[0-9]+[A-F]$"})
        return f"seat {seat}"

    locate = client_tool(
        "locate",
        input_schema={"type": "object", "properties": {}},
        output_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    )

    def turn(messages: list[Message], info: Any) -> AssistantMessage | str:
        if isinstance(messages[-1], ToolResultsMessage):
            return " / ".join(r.text for r in messages[-1].results)
        return AssistantMessage(
            tool_calls=[ToolCall("c_book", "book", {"flight": "LH1"}), ToolCall("c_loc", "locate", {})]
        )

    agent = Agent(model=FunctionModel(turn), tools=[book, locate], store=MemoryRunStore())
    store, thread = MemoryRunStore(), new_thread()
    first = await run(agent, body(thread, "r1", [user("book and locate")]), store)
    finished = first[-1]
    assert finished["type"] == "RUN_FINISHED" and finished["metadata"]["agentkit"]["status"] == "suspended"
    interrupts = {i["toolCallId"]: i for i in finished["outcome"]["interrupts"]}
    ids = interrupt_ids(first)
    assert interrupts["c_book"]["reason"] == "input_required"
    assert interrupts["c_book"]["responseSchema"]["pattern"] == "^[0-9]+[A-F]$"
    assert interrupts["c_book"]["metadata"]["agentkit"]["payload"] == "Which seat on LH1?"
    assert interrupts["c_loc"]["reason"] == "client_tool" and interrupts["c_loc"]["responseSchema"]["required"] == [
        "city"
    ]
    bad = [
        {"interruptId": ids["c_book"], "status": "resolved", "payload": "row 12"},
        {"interruptId": ids["c_loc"], "status": "resolved", "payload": {"city": "Oslo"}},
    ]
    refused = await run(agent, body(thread, "r2", [], resume=bad), store)
    assert refused[-1]["type"] == "RUN_ERROR" and "does not fit" in refused[-1]["message"]  # the pause stays open
    good = [
        {"interruptId": ids["c_book"], "status": "resolved", "payload": "12A"},
        {"interruptId": ids["c_loc"], "status": "resolved", "payload": {"city": "Oslo"}},
    ]
    done = await run(agent, body(thread, "r3", [], resume=good), store)
    assert done[-1]["metadata"]["agentkit"]["status"] == "complete"
    assert done[-1]["result"] == 'seat 12A / {"city":"Oslo"}'
