"""A suspension of a tool with redacted inputs shows nothing unless a `suspension` transform says what (issue 17 §1.4).

The tool masks the card number in its input, then asks a question quoting it: the question must reach no
display (stream event, pending item, snapshot payload, Vercel data part, AG-UI interrupt) unshaped.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentkit import Agent, AssistantMessage, ToolCall, ToolContext, ToolResultsMessage, ToolTransform, tool
from agentkit.events import SuspendedEvent
from agentkit.messages import Message
from agentkit.runs import MemoryRunStore
from agentkit.testing import FunctionModel
from agentkit.ui.agui import open_agui_stream
from agentkit.ui.vercel import open_ui_message_stream

CARD = "4111111111111111"


def _mask(args: dict[str, Any]) -> dict[str, Any]:
    return {**args, "card": "****" + str(args.get("card", ""))[-4:]}


def _agent(suspension: Any = None) -> Agent:
    @tool(transform=ToolTransform(input=_mask, suspension=suspension))
    def charge(ctx: ToolContext[Any], card: str) -> str:
        """Charge a card (asks the user to confirm it)."""
        ctx.suspend({"question": f"Is {card} your card?"}, schema={"type": "boolean"})
        return "charged"

    def turn(messages: list[Message], info: Any) -> AssistantMessage | str:
        if isinstance(messages[-1], ToolResultsMessage):
            return "done"
        return AssistantMessage(tool_calls=[ToolCall("c1", "charge", {"card": CARD})])

    return Agent(id="shop", model=FunctionModel(turn), tools=[charge], store=MemoryRunStore())


def _body(text: str) -> dict[str, Any]:
    return {"messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": text}]}]}


async def test_the_stream_the_pending_item_and_the_snapshot_withhold_the_question() -> None:
    stream = _agent().stream("pay")
    events = [event async for event in stream]
    (asked,) = [e for e in events if isinstance(e, SuspendedEvent)]
    assert asked.payload is None and asked.transform_error is not None
    assert "suspension withheld: the tool's input is redacted" in asked.transform_error
    (pending,) = stream.result.pending
    assert pending.payload is None and pending.transform_error == asked.transform_error  # type: ignore[union-attr]
    assert pending.request == {"question": f"Is {CARD} your card?"}  # type: ignore[union-attr]  # the app's own copy
    payloads = [p["payload"] for p in json.loads(stream.result.snapshot().to_json())["pending"]]
    assert payloads == [None]
    assert CARD not in "".join(repr(e) for e in events if not isinstance(e, SuspendedEvent) or e.payload)


async def test_a_suspension_transform_decides_what_is_shown() -> None:
    stream = _agent(suspension=lambda asked: {"question": "Is the card ending in 1111 yours?"}).stream("pay")
    (asked,) = [e async for e in stream if isinstance(e, SuspendedEvent)]
    assert asked.payload == {"question": "Is the card ending in 1111 yours?"} and asked.transform_error is None


async def test_neither_ui_protocol_sends_the_question() -> None:
    vercel = "".join(
        [frame async for frame in await open_ui_message_stream(_agent(), _body("pay"), store=MemoryRunStore())]
    )
    assert "data-agentkit-suspension" in vercel and CARD not in vercel
    body = {"threadId": "t1", "runId": "r1", "messages": [{"id": "u1", "role": "user", "content": "pay"}]}
    body.update(state={}, tools=[], context=[], forwardedProps={})
    agui = "".join([frame async for frame in open_agui_stream(_agent(), body, store=MemoryRunStore())])
    assert '"reason":"input_required"' in agui and CARD not in agui


@pytest.mark.parametrize("redacted", ["input", "output"])
async def test_progress_and_suspensions_follow_one_rule(redacted: str) -> None:
    from agentkit._agent.display import tool_made

    rules = ToolTransform(**{redacted: lambda value: "***"})
    for target in ("progress", "suspension"):
        assert tool_made(rules, target, CARD) == (
            None,
            f"{target} withheld: the tool's {redacted} is redacted and it has no {target!r} transform",
        )
        assert tool_made(ToolTransform(), target, CARD) == (CARD, None)
