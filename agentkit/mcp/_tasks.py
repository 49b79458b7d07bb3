"""Calling an MCP tool as a task: the 2025-11-25 tasks, and the 2026-07-28 tasks extension (SEP-2663).

**2025-11-25** (``execution.taskSupport: "required"``):
The call is sent with a ``task`` field; the server answers at once with a task id, works in the
background, and is asked for the task's status (``tasks/get``, at the interval it suggests, within
bounds) until it ends; then ``tasks/result`` gives the tool's result. Each status the server reports
reaches the tool's progress stream (`ToolContext.emit`, as ``{"task": id, "status": ..., "message":
...}``). A call cancelled on agentkit's side (a timeout, a closed run) sends ``tasks/cancel``, so the
server stops working for nobody. A server that answers a task request with a plain result is taken
at its word.

**2026-07-28**: the client advertises ``io.modelcontextprotocol/tasks``; a server may then answer any
``tools/call`` with a task (``resultType: "task"``). The call polls ``tasks/get`` (backing off from 50 ms
to the server's ``pollIntervalMs``) until the task completes, fails or is cancelled; input the task asks
for goes through the same elicitation path as a plain call (``tasks/update``), and a question the run
must pause on cancels the task (the call starts afresh on resume, as a plain call's does).
"""

from __future__ import annotations as _annotations

import asyncio
import contextlib
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..exceptions import ToolError

if TYPE_CHECKING:
    from mcp import ClientSession
    from mcp import types as mcp_types

__all__ = ["TASKS_EXTENSION", "TASK_TTL_MS", "call_as_task", "follow_task", "is_task", "session_extensions"]

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


# ---- the 2026-07-28 tasks extension (SEP-2663, io.modelcontextprotocol/tasks) ---------------------------

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
"""The extension agentkit's client advertises on 2026-07-28 connections: a server may then run a call as a
task, answering ``tools/call`` with ``resultType: "task"``; the call polls ``tasks/get`` to the result."""


@functools.lru_cache(maxsize=1)
def _wire() -> Any:
    """The SEP-2663 wire models (pydantic, built on first use: `mcp` is imported lazily)."""
    from typing import Literal

    import mcp_types
    from pydantic import ConfigDict, Field

    class Fields(mcp_types.Result):
        model_config = ConfigDict(populate_by_name=True)
        task_id: str = Field(alias="taskId")
        status: str
        status_message: str | None = Field(default=None, alias="statusMessage")
        poll_interval_ms: int | None = Field(default=None, alias="pollIntervalMs")

    class Created(Fields):
        result_type: Literal["task"] = Field(alias="resultType")

    class Detailed(Fields):
        result: dict[str, Any] | None = None
        error: dict[str, Any] | None = None
        input_requests: dict[str, Any] | None = Field(default=None, alias="inputRequests")

    class Target(mcp_types.RequestParams):
        model_config = ConfigDict(populate_by_name=True)
        task_id: str = Field(serialization_alias="taskId")

    class Update(Target):
        input_responses: dict[str, Any] = Field(serialization_alias="inputResponses")

    class Get(mcp_types.Request[Target, Literal["tasks/get"]]):
        method: Literal["tasks/get"] = "tasks/get"
        params: Target

    class Cancel(mcp_types.Request[Target, Literal["tasks/cancel"]]):
        method: Literal["tasks/cancel"] = "tasks/cancel"
        params: Target

    class Answer(mcp_types.Request[Update, Literal["tasks/update"]]):
        method: Literal["tasks/update"] = "tasks/update"
        params: Update

    return type(
        "Wire",
        (),
        {
            "Created": Created,
            "Detailed": Detailed,
            "Target": Target,
            "Update": Update,
            "Get": Get,
            "Cancel": Cancel,
            "Answer": Answer,
        },
    )


def session_extensions() -> dict[str, Any]:
    """The ``extensions`` and ``result_claims`` keyword arguments of a `ClientSession` that drives SEP-2663 tasks."""
    from mcp.client.extension import ResultClaim

    async def unused(result: Any, context: Any) -> Any:  # agentkit polls the task itself (allow_claimed)
        raise NotImplementedError

    claim = ResultClaim(
        result_type="task", model=_wire().Created, resolve=unused, protocol_versions=frozenset({"2026-07-28"})
    )
    return {"extensions": {TASKS_EXTENSION: {}}, "result_claims": {TASKS_EXTENSION: [claim]}}


def is_task(result: Any) -> bool:
    """Whether a ``tools/call`` answer is a SEP-2663 task (to poll with `follow_task`)."""
    return isinstance(result, _wire().Created)


async def follow_task(
    session: ClientSession,
    created: Any,
    *,
    name: str,
    server: str,
    on_status: Callable[[dict[str, Any]], None] | None,
    answer: Callable[[dict[str, Any]], Any],
) -> mcp_types.CallToolResult:
    """Poll a SEP-2663 task to its result; input it asks for is answered by `answer` (``tasks/update``).

    `answer` returns the responses for the task's input requests, or None when the run pauses instead
    (then the task is cancelled, and the call starts afresh on resume).
    """
    from mcp import types

    wire = _wire()
    task: Any = created
    delay = _POLL[0]
    try:
        while True:
            if on_status is not None:
                on_status({"task": task.task_id, "status": task.status, "message": task.status_message})
            if task.status == "completed" and getattr(task, "result", None) is not None:
                return types.CallToolResult.model_validate(task.result, by_name=False)
            if task.status == "failed":
                error: dict[str, Any] = getattr(task, "error", None) or {}
                raise ToolError(f"The MCP task running {name!r} failed: {error.get('message', error)}")
            if task.status == "cancelled":
                raise ToolError(f"MCP server {server!r} cancelled the task running {name!r}.")
            requests = getattr(task, "input_requests", None)
            if task.status == "input_required" and requests:
                responses = await answer(requests)
                if responses is None:
                    await _cancel_sep2663(session, task.task_id)
                    text = f"The MCP tool {name!r} is waiting for input."
                    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
                update = wire.Answer(params=wire.Update(task_id=task.task_id, input_responses=responses))
                await session.send_request(update, types.Result)
                delay = _POLL[0]
            else:
                ceiling = (task.poll_interval_ms or 1000) / 1000
                await asyncio.sleep(min(delay, max(ceiling, _POLL[0]), _POLL[1]))
                delay *= 2
            task = await session.send_request(wire.Get(params=wire.Target(task_id=task.task_id)), wire.Detailed)
    except asyncio.CancelledError:
        await _cancel_sep2663(session, task.task_id)
        raise


async def _cancel_sep2663(session: ClientSession, task_id: str) -> None:
    from mcp import types

    wire = _wire()
    request = wire.Cancel(params=wire.Target(task_id=task_id))
    with contextlib.suppress(Exception):
        await asyncio.wait_for(asyncio.shield(session.send_request(request, types.Result)), _CANCEL_WAIT)
