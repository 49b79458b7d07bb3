"""Calling an MCP tool as a task (``execution.taskSupport: "required"``, the 2025-11-25 tasks).

The call is sent with a ``task`` field; the server answers at once with a task id, works in the
background, and is asked for the task's status (``tasks/get``, at the interval it suggests, within
bounds) until it ends; then ``tasks/result`` gives the tool's result. Each status the server reports
reaches the tool's progress stream (`ToolContext.emit`, as ``{"task": id, "status": ..., "message":
...}``). A call cancelled on agentkit's side (a timeout, a closed run) sends ``tasks/cancel``, so the
server stops working for nobody. A server that answers a task request with a plain result is taken
at its word.
"""

from __future__ import annotations as _annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..exceptions import ToolError

if TYPE_CHECKING:
    from mcp import ClientSession
    from mcp import types as mcp_types

__all__ = ["TASK_TTL_MS", "call_as_task"]

TASK_TTL_MS = 3_600_000
"""How long the server is asked to keep a task and its result (one hour)."""

_POLL = (0.05, 5.0)  # seconds between two status requests, at least and at most
_CANCEL_WAIT = 5.0


async def call_as_task(
    session: ClientSession,
    name: str,
    arguments: dict[str, Any],
    *,
    server: str,
    on_status: Callable[[dict[str, Any]], None] | None = None,
) -> mcp_types.CallToolResult:
    """Run one tool call as an MCP task and return its result.

    Raises:
        ToolError: the task was cancelled by the server, or its result could not be had.
        MCPError: the server refused a request (handled by the caller, like a plain call's).
    """
    from mcp import types
    from pydantic import TypeAdapter

    params = types.CallToolRequestParams(name=name, arguments=arguments, task=types.TaskMetadata(ttl=TASK_TTL_MS))
    # The SDK's send_request checks a tools/call answer as a plain result, which a task's is not (an SDK
    # gap): this one request goes straight through the session's dispatcher, as send_request's own do.
    dispatcher: Any = session._dispatcher  # pyright: ignore[reportPrivateUsage]
    raw = await dispatcher.send_raw_request(
        "tools/call", params.model_dump(by_alias=True, mode="json", exclude_none=True), {}
    )
    first: Any = TypeAdapter(types.CreateTaskResult | types.CallToolResult).validate_python(raw, by_name=False)
    if isinstance(first, types.CallToolResult):
        return first
    task: Any = first.task
    try:
        while task.status in ("working", "input_required"):
            if on_status is not None:
                on_status({"task": task.task_id, "status": task.status, "message": task.status_message})
            interval = (task.poll_interval or 1000) / 1000
            await asyncio.sleep(min(max(interval, _POLL[0]), _POLL[1]))
            task = await session.send_request(
                types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task.task_id)), types.GetTaskResult
            )
    except asyncio.CancelledError:
        await _cancel(session, task.task_id)
        raise
    if on_status is not None:
        on_status({"task": task.task_id, "status": task.status, "message": task.status_message})
    if task.status == "cancelled":
        raise ToolError(f"MCP server {server!r} cancelled the task running {name!r}: {task.status_message or ''}")
    payload = types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=task.task_id))
    return await session.send_request(payload, types.CallToolResult)


async def _cancel(session: ClientSession, task_id: str) -> None:
    """Tell the server to stop the task (bounded, and never raising: the call is being cancelled already)."""
    from mcp import types

    request = types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=task_id))
    with contextlib.suppress(Exception):
        await asyncio.wait_for(asyncio.shield(session.send_request(request, types.CancelTaskResult)), _CANCEL_WAIT)
