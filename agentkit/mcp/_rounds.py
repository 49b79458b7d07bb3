"""Multi-round-trip tool calls of the 2026-07-28 protocol, on the serving side.

A served tool that suspends (`ToolContext.suspend`) answers ``tools/call`` with ``input_required``: an
elicitation of the question, and a ``requestState`` naming what was asked. The client answers by calling
again with ``inputResponses`` and the state; the answer is checked against the schema asked with (asked
again with the problems, up to three times), then the tool runs again with it as ``ctx.resume_data``.

The state never trusts the client: the `mcp` SDK's `RequestStateBoundary` seals it (AES-256-GCM) and
binds it to the method, the tool, a digest of the arguments and the caller's authenticated identity,
with a time to live; a tampered, replayed-elsewhere or expired state is refused (``-32602``) before the
tool is looked at. Handshake-era connections keep the ``elicitation/create`` back channel.
"""

from __future__ import annotations as _annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from .._jsonish import is_mapping
from ..context import ToolContext
from ..exceptions import ToolSuspended
from ..messages import ToolCall, ToolResult
from ..registry import Registry
from ..runs._answers import check_answer_async

__all__ = ["ANSWER_KEY", "STATE_TTL", "call_in_rounds", "question_of", "state_boundary", "unaskable"]

ANSWER_KEY = "agentkit/answer"
"""The key of the one input request a suspended call makes."""

STATE_TTL = 600.0
"""Seconds a request state stays valid by default (the client must answer within it)."""

_ASKS = 3


def state_boundary(name: str, keys: Sequence[bytes | str] | None, ttl: float) -> Any:
    """The `mcp` server middleware sealing and checking request states (a key of this process without `keys`)."""
    from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity

    security = (
        RequestStateSecurity(keys=list(keys), ttl=ttl) if keys is not None else RequestStateSecurity.ephemeral(ttl=ttl)
    )
    return RequestStateBoundary(security, default_audience=name)


def question_of(registry: Registry, tool: str, payload: Any) -> str:
    """The text of a suspension's question as a display may see it (after the ``suspension`` transform).

    The payload when it is text, or its message/question field. The client is a display like any other: a
    tool whose inputs or outputs are redacted and that has no ``suspension`` transform shows no payload (it
    could quote what is redacted), only that input is needed.
    """
    from .._agent.display import registry_rules, tool_made

    payload, withheld = tool_made(registry_rules(registry, tool), "suspension", payload)
    if withheld is not None:
        return f"The tool {tool!r} needs input ({withheld})."
    if isinstance(payload, str):
        return payload
    if is_mapping(payload) and isinstance(payload.get("message") or payload.get("question"), str):
        return str(payload.get("message") or payload.get("question"))
    return f"The tool {tool!r} needs input: {json.dumps(payload, default=repr)}"


def unaskable(tool: str, schema: Mapping[str, Any] | None) -> str | None:
    """Why a suspension's schema cannot be asked over MCP (elicitation asks for an object), or None."""
    if schema is None or schema.get("type") != "object":
        return f"Tool {tool!r} needs input this MCP server can only ask for as an object (its schema is {schema})."
    return None


def _ask(message: str, schema: Mapping[str, Any], tries: int, problems: Sequence[str]) -> Any:
    from mcp import types

    shown = message if not problems else f"{message}\n\nThe last answer did not fit: {'; '.join(problems)}"
    request = types.ElicitRequest(params=types.ElicitRequestFormParams(message=shown, requested_schema=dict(schema)))
    state = json.dumps({"v": 1, "message": message, "schema": dict(schema), "tries": tries})
    return types.InputRequiredResult(input_requests={ANSWER_KEY: request}, request_state=state)


def _state(text: Any) -> dict[str, Any] | None:
    """The state this server minted (verified by the boundary before it gets here), or None."""
    if not isinstance(text, str):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return dict(value) if is_mapping(value) and value.get("v") == 1 else None


async def call_in_rounds(registry: Registry, call: ToolCall, params: Any, deps: Any) -> ToolResult | Any:
    """One round of a call: its `ToolResult`, or an ``InputRequiredResult`` asking the client."""
    context: ToolContext[Any] | None = None
    state = _state(getattr(params, "request_state", None))
    if state is not None:
        responses: Mapping[str, Any] = getattr(params, "input_responses", None) or {}
        reply: Any = responses.get(ANSWER_KEY)
        action = getattr(reply, "action", None)
        if action != "accept":
            why = "no answer was sent" if action is None else f"the user did not give it ({action})"
            return ToolResult.error(call, f"Tool {call.name!r} needs input, and {why}.", "tool_error")
        content: dict[str, Any] = dict(getattr(reply, "content", None) or {})
        problems = await check_answer_async(state["schema"], content)
        if problems:
            tries = int(state.get("tries", 0)) + 1
            if tries >= _ASKS:
                unfit = "; ".join(problems)
                message = f"Tool {call.name!r} needs input, and {_ASKS} answers did not fit what it asked for: {unfit}"
                return ToolResult.error(call, message, "tool_error")
            return _ask(str(state["message"]), state["schema"], tries, problems)
        context = ToolContext(deps=deps, resume_data=content)
    try:
        return await registry.call(call, deps=deps, context=context)
    except ToolSuspended as signal:
        if context is not None:
            return ToolResult.error(call, f"Tool {call.name!r} asked a second question; it may ask one.", "tool_error")
        refused = unaskable(call.name, signal.schema)
        if refused is not None or signal.schema is None:
            return ToolResult.error(call, refused or "", "tool_error")
        return _ask(question_of(registry, call.name, signal.payload), signal.schema, 0, [])
