"""The activities every agent's workflow runs: one model request, one tool call, a program's segment, MCP tools.

They take and return JSON data only (neutral messages and results through `agentkit.runs`' codec),
find the agent by id in the worker's table, and do the I/O the workflow must not: the vendor request,
the tool's function, the MCP session. A tool that suspends, or a client tool's call, comes back as a
marker the workflow turns into the same pause as in-process runs.

While they work they heartbeat in the background (`heartbeating`), so Temporal notices a dead worker
after the heartbeat timeout instead of the attempt's whole timeout; progress a tool reports with
`ToolContext.emit` rides on those heartbeats, for `TemporalRun.events` to read. Results are checked
against the payload limit before they are handed to Temporal (one over it would never be accepted).
"""

from __future__ import annotations as _annotations

import asyncio
import contextlib
import contextvars
import json
from collections import deque
from collections.abc import AsyncGenerator
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from ..codemode._run import durable_tools
from ..context import ToolContext
from ..exceptions import AgentSetupError, ClientCallRequested, ToolSuspended
from ..messages import ToolCall, ToolResult
from ..runs._codec import decode_settings, encode_response, encode_results
from ._agent import TemporalAgent, lookup
from ._history import fetch
from ._options import size_of, too_large

__all__ = ["call_tool", "list_mcp_tools", "model_request", "run_program"]

_PROGRESS_KEPT = 50  # progress events a heartbeat carries (the newest): a reader polling slower misses older ones


class _Progress:
    """What a tool reported with `ToolContext.emit`, numbered, for the heartbeat details."""

    def __init__(self, call: ToolCall) -> None:
        self.call = call
        self.events: deque[dict[str, Any]] = deque(maxlen=_PROGRESS_KEPT)
        self.count = 0

    def __call__(self, value: Any) -> None:
        from ..ui._serialize import jsonable

        data, error = jsonable(value)
        self.count += 1
        self.events.append({"seq": self.count, "data": data, "transform_error": error})

    def details(self) -> dict[str, Any]:
        return {"call_id": self.call.id, "tool_name": self.call.name, "progress": list(self.events)}


@contextlib.asynccontextmanager
async def heartbeating(progress: _Progress | None = None) -> AsyncGenerator[None, None]:
    """Heartbeat in the background while the block runs: every quarter of the heartbeat timeout.

    The first beat comes after that quarter, not at once: an attempt that never beats still times out
    after the heartbeat timeout (counted from its start), and most calls end before a beat is due, so
    they cost the server nothing. Timer callbacks, not a task: nothing is made for a call that ends sooner.
    """
    timeout = activity.info().heartbeat_timeout
    if not timeout:
        yield
        return
    interval = max(timeout.total_seconds() / 4, 0.05)
    loop = asyncio.get_running_loop()
    context = contextvars.copy_context()  # the activity's context: `activity.heartbeat` needs it
    handle: list[asyncio.TimerHandle] = []

    def beat() -> None:
        if progress is not None:
            activity.heartbeat(progress.details())
        else:
            activity.heartbeat()
        handle[0] = loop.call_later(interval, beat, context=context)

    handle.append(loop.call_later(interval, beat, context=context))
    try:
        yield
    finally:
        handle[0].cancel()


def _durable(agent_id: str) -> TemporalAgent:
    try:
        return lookup(agent_id)
    except AgentSetupError as exc:  # the same in every attempt: say so once, do not retry
        raise ApplicationError(str(exc), type="AgentSetupError", non_retryable=True) from None


@activity.defn(name="agentkit.model_request")
async def model_request(request: dict[str, Any]) -> dict[str, Any]:
    """One model turn: ``{"agent", "history", "settings"}`` -> the response as JSON data.

    ``history`` references the messages the workflow holds (see `agentkit.temporal._history`).
    """
    durable = _durable(request["agent"])
    limit = durable.limits.payload
    async with heartbeating():
        await durable.open_mcp()
        agent = durable.agent
        messages = await fetch(request["history"], page_limit=limit // 2)
        sent, _ = durable_tools(agent)  # with code mode: the code tool in place of the tools it replaces
        response = await agent.resolve_model().request(messages, sent, decode_settings(request["settings"]))
    data = encode_response(response, sent)
    size = size_of(data)
    if size > limit:
        message = too_large("the model's response", size, limit, "ask for a shorter answer (max_tokens)")
        raise ApplicationError(message, type="TemporalLimitError", non_retryable=True)
    return data


@activity.defn(name="agentkit.call_tool")
async def call_tool(request: dict[str, Any]) -> dict[str, Any]:
    """One tool call: ``{"agent", "call", "retry", "resumed", "resume_data", "effect_key"}`` -> result or pause."""
    durable = _durable(request["agent"])
    agent = durable.agent
    raw = request["call"]
    call = ToolCall(raw["id"], raw["name"], raw["arguments"])
    progress = _Progress(call)
    ctx: ToolContext[Any] = ToolContext(
        deps=durable.deps,
        call_id=call.id,
        tool_name=call.name,
        agent=agent,
        retry=int(request.get("retry", 0)),
        on_progress=progress,
    )
    if request.get("resumed"):
        ctx.resume_data = request.get("resume_data")
    try:
        async with heartbeating(progress):
            await durable.open_mcp()
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
    encoded = encode_results([result], tools)[0]
    outcome: dict[str, Any] = {"result": encoded}
    same = _output_in_content(result, encoded)
    if same is not None:  # written once: the workflow reads the output back from the content
        del encoded["output"]
        outcome["output"] = same
    size = size_of(outcome)
    limit = durable.limits.payload
    if size > limit:  # the model hears it, and the run goes on
        fix = "ask for less (a page, a summary), or have the tool store large data and return a reference"
        error = ToolResult.error(call, too_large(f"The result of {call.name!r}", size, limit, fix), "tool_error")
        outcome = {"result": encode_results([error], tools)[0]}
    return outcome


def _output_in_content(result: ToolResult, encoded: dict[str, Any]) -> str | None:
    """``"text"`` or ``"json"`` when the result's content is its output (as text, or as JSON text), else None."""
    output = encoded.get("output")
    if output is None or result.is_error:
        return None
    text = result.text
    if output == text:
        return "text"
    if isinstance(output, (dict, list)) and text[:1] in ("{", "["):
        try:
            if json.loads(text) == output:
                return "json"
        except ValueError:
            return None
    return None


@activity.defn(name="agentkit.run_program")
async def run_program(request: dict[str, Any]) -> dict[str, Any]:
    """One segment of a code-mode program: ``{"agent", "tool", "call_id", "code", "state", "results"}`` -> outcome.

    The sandbox runs the program (``code``, or the paused ``state`` given ``results`` for calls it waits on)
    until it ends or waits on calls it has no results for; those the workflow makes, each an activity.
    """
    from ..codemode._segments import decode_results, encode_outcome, run_segment

    durable = _durable(request["agent"])
    _, tools = durable_tools(durable.agent)
    item = tools.get(request["tool"])
    code_tool = getattr(item, "_code_tool", None)
    if code_tool is None:
        message = f"{request['tool']!r} is not the code tool of agent {request['agent']!r} on this worker"
        raise ApplicationError(message, type="AgentSetupError", non_retryable=True)
    async with heartbeating():
        outcome = await run_segment(
            request.get("code"),
            code_tool.module.functions,
            code_tool.mode.limits,
            request["call_id"],
            request.get("state"),
            decode_results(request.get("results") or {}),
        )
    return encode_outcome(outcome)


@activity.defn(name="agentkit.list_mcp_tools")
async def list_mcp_tools(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The tools of the agent's MCP servers, as definitions: ``{"agent"}`` -> ``[{key, description, ...}]``."""
    durable = _durable(request["agent"])
    async with heartbeating():
        return await durable.mcp_definitions()
