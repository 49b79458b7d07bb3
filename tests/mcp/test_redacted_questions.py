"""A served tool's question reaches the MCP client only as a display may see it (issue 17 §1.4's class).

The MCP client is a display like the UIs: a tool whose input is redacted (an ``input`` transform) and that
has no ``suspension`` transform must not send its question, which may quote the redacted value. Both
protocols: the 2025-11-25 elicitation and the 2026-07-28 ``input_required``. Real HTTP on 127.0.0.1, the
official `mcp` clients.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client

from agentkit import Registry, ToolContext, ToolTransform, tool
from agentkit.mcp import serving_http

from .fixtures.helpers import session_in_task

CARD = "4111111111111111"
CONFIRM = {"type": "object", "properties": {"yes": {"type": "boolean"}}, "required": ["yes"]}


def mask(arguments: dict[str, Any]) -> dict[str, Any]:
    return {**arguments, "card": "****" + arguments["card"][-4:]}


@tool(transform=ToolTransform(input=mask))
def charge(ctx: ToolContext[Any], card: str) -> str:
    """Charge a card (asks first)."""
    ctx.suspend(f"Is {card} your card?", schema=CONFIRM)
    return "charged"


@tool(transform=ToolTransform(input=mask, suspension=lambda question: "Is the card ending 1111 yours?"))
def charge_shown(ctx: ToolContext[Any], card: str) -> str:
    """Charge a card (asks first, with a question made for displays)."""
    ctx.suspend(f"Is {card} your card?", schema=CONFIRM)
    return "charged"


@tool
def refund(ctx: ToolContext[Any], card: str) -> str:
    """Refund to a card (asks first); redacted by the registry's policy, not by the tool."""
    ctx.suspend(f"Refund to {card}?", schema=CONFIRM)
    return "refunded"


SERVED = Registry([charge, charge_shown, refund], transform=ToolTransform(input=mask))


def recording(asked: list[str]) -> Any:
    async def callback(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="decline")

    return callback


async def questions(protocol: str) -> dict[str, str]:
    """The question each tool's call put to a client speaking `protocol`."""
    out: dict[str, str] = {}
    async with serving_http(SERVED) as url:
        for key in ("charge", "charge_shown", "refund"):
            asked: list[str] = []
            if protocol == "2026-07-28":
                async with Client(url, elicitation_callback=recording(asked)) as client:
                    assert client.protocol_version == protocol
                    await client.call_tool(key, {"card": CARD})
            else:
                connect = lambda: streamable_http_client(url)  # noqa: E731 - a factory for the helper
                async with session_in_task(connect, elicitation_callback=recording(asked)) as session:
                    await session.call_tool(key, {"card": CARD})
            assert len(asked) == 1, (key, asked)
            out[key] = asked[0]
    return out


@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
async def test_a_redacted_tools_question_is_withheld_from_the_client(protocol: str) -> None:
    """Regression: the raw question ("Is 4111111111111111 your card?") was sent to the client."""
    asked = await questions(protocol)
    for key in ("charge", "refund"):  # the tool's own transform; the registry's policy
        assert CARD not in asked[key] and "1111" not in asked[key], asked[key]
        assert f"The tool {key!r} needs input" in asked[key] and "suspension withheld" in asked[key]
    assert asked["charge_shown"] == "Is the card ending 1111 yours?"  # its suspension transform decides
