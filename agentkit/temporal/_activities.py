"""The two activities every agent's workflow runs: one model request, one tool call.

Both take and return JSON data only (neutral messages and results through `agentkit.runs`' codec), find
the agent by id in the worker's table, and do the I/O the workflow must not: the vendor request, the
tool's function. A tool that suspends, or a client tool's call, comes back as a marker the workflow turns
into the same pause as in-process runs.
"""

from __future__ import annotations as _annotations

from typing import Any

from temporalio import activity

from ..codemode._run import durable_tools
from ..context import ToolContext
from ..exceptions import ClientCallRequested, ToolSuspended
from ..messages import ToolCall
from ..runs._codec import decode_messages, decode_settings, encode_response, encode_results
from ._agent import lookup

__all__ = ["call_tool", "model_request"]


@activity.defn(name="agentkit.model_request")
async def model_request(request: dict[str, Any]) -> dict[str, Any]:
    """One model turn: ``{"agent", "messages", "settings"}`` -> the response as JSON data."""
    agent = lookup(request["agent"]).agent
    model = agent.resolve_model()
    messages = decode_messages(request["messages"])
    sent, _ = durable_tools(agent)  # with code mode: the code tool in place of the tools it replaces
    response = await model.request(messages, sent, decode_settings(request["settings"]))
    return encode_response(response, sent)


@activity.defn(name="agentkit.call_tool")
async def call_tool(request: dict[str, Any]) -> dict[str, Any]:
    """One tool call: ``{"agent", "call", "retry", "resumed", "resume_data"}`` -> its result, or a pause marker."""
    durable = lookup(request["agent"])
    agent = durable.agent
    raw = request["call"]
    call = ToolCall(raw["id"], raw["name"], raw["arguments"])
    ctx: ToolContext[Any] = ToolContext(deps=durable.deps, agent=agent, retry=int(request.get("retry", 0)))
    if request.get("resumed"):
        ctx.resume_data = request.get("resume_data")
    try:
        # the agent's error policy, as in-process runs apply it (its transform policy: redacted inputs)
        redacts = agent.transform is not None and agent.transform.input is not None
        _, tools = durable_tools(agent)  # with code mode: its code tool too
        result = await tools.call(
            call, deps=durable.deps, context=ctx, mask_error_details=agent.mask_error_details, redact_input=redacts
        )
    except ToolSuspended as signal:
        return {"suspended": {"payload": signal.payload, "schema": signal.schema}}
    except ClientCallRequested:
        return {"client": True}
    return {"result": encode_results([result], tools)[0]}
