"""The agent the UI tests (node, AG-UI, browser) talk to: a scripted model, two tools, one approval.

Turn 1: some text, then `lookup_order` (a pydantic output with a datetime and a Decimal: dumped as JSON,
never a repr). Turn 2: `refund`, which needs approval (displays see the card number masked).
Turn 3: the answer, which says whether the refund ran. A prompt mentioning a note adds `add_note` (no
approval needed) to the refund's turn: the mixed turn. Each turn reports usage with cache and reasoning
details, and names a priced model (gpt-4o-mini on OpenAI), so the timeline has a cost to show.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from pydantic import BaseModel

from agentkit import (
    Agent,
    AssistantMessage,
    ModelResponse,
    ToolCall,
    ToolResultsMessage,
    ToolTransform,
    Usage,
    UserMessage,
    tool,
)
from agentkit.messages import Message
from agentkit.testing import FunctionInfo, FunctionModel


class Order(BaseModel):
    order_id: str
    total: Decimal
    placed: dt.datetime
    card: str


def _mask(value: dict[str, Any]) -> dict[str, Any]:
    """What a display shows of a payload: the card number masked."""
    return {k: ("****" + str(v)[-4:] if k == "card" else v) for k, v in value.items()}


@tool(transform=ToolTransform(output=lambda order: _mask(order.model_dump(mode="json"))))
def lookup_order(order_id: str) -> Order:
    """Look an order up.

    Args:
        order_id: The order number.
    """
    return Order(order_id=order_id, total=Decimal("19.99"), placed=dt.datetime(2026, 1, 2, 3, 4, 5), card="4111-1111")


REFUNDS: list[str] = []
NOTES: list[str] = []


@tool
def add_note(order_id: str, text: str) -> str:
    """Add a note to an order (needs no approval).

    Args:
        order_id: The order number.
        text: The note.
    """
    NOTES.append(text)
    return f"noted on order {order_id}"


@tool(requires_approval=True, transform=ToolTransform(input=_mask))
def refund(order_id: str, amount: float, card: str) -> str:
    """Refund an order to the card it was paid with.

    Args:
        order_id: The order number.
        amount: How much to refund.
        card: The card to refund to.
    """
    REFUNDS.append(order_id)
    return f"refunded {amount} on order {order_id}"


def script(messages: list[Message], info: FunctionInfo) -> ModelResponse:
    """One model turn, decided from the conversation so far, with made-up token counts for the timeline."""
    last = messages[-1]
    if not isinstance(last, ToolResultsMessage):
        turn = AssistantMessage("Let me look that up.", [ToolCall("call_lookup", "lookup_order", {"order_id": "42"})])
    elif last.results[0].name == "lookup_order":
        arguments = {"order_id": "42", "amount": 19.99, "card": "4111-1111"}
        calls = [ToolCall("call_refund", "refund", arguments)]
        asked = " ".join(str(m.content) for m in messages if isinstance(m, UserMessage))
        if "note" in asked:  # a turn mixing a call that needs approval with one that does not
            calls.append(ToolCall("call_note", "add_note", {"order_id": "42", "text": "refund asked"}))
        turn = AssistantMessage("", calls)
    elif last.results[0].is_error:
        turn = AssistantMessage("Understood: no refund was made.")
    else:
        turn = AssistantMessage(f"Done: {last.results[0].text}.")
    # made-up counts, with a cache hit and some reasoning; priced as gpt-4o-mini (the timeline shows the cost)
    usage = Usage(40 * len(messages), 12, 1, cache_read_tokens=32, reasoning_tokens=4)
    finish = "tool_calls" if turn.tool_calls else "stop"
    return ModelResponse(turn, usage, finish, "gpt-4o-mini", provider_name="openai")


agent = Agent(
    id="support",
    name="Support desk",
    instructions="Help with orders.",
    model=FunctionModel(script, name="scripted-support"),
    tools=[lookup_order, refund, add_note],
)
