"""Background tools served as tasks: the 2026-07-28 tasks extension (SEP-2663) on agentkit's server.

A tool declared ``@tool(background=True)`` is long-running. When a client opts in to the
``io.modelcontextprotocol/tasks`` extension for a call, the server starts the call in the background and
answers ``tools/call`` at once with a task (``resultType: "task"``); the client asks ``tasks/get`` until it
is ``completed`` (the result inlined), ``failed`` or ``cancelled``, and ``tasks/cancel`` stops it. A client
that does not opt in gets the result on the call, as before. Handshake-era clients are served without
tasks (the `mcp` SDK's server answers ``tools/call`` there with plain results only).

Task ids are unguessable (256 random bits) and bound to the caller's authenticated identity; a task is
kept for `TASK_TTL` after it ends, at most `MAX_TASKS` at once (beyond that the call runs in the
foreground). A background tool that suspends cannot be asked over a task: it fails with that message.
"""

from __future__ import annotations as _annotations

import asyncio
import contextlib
import functools
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from .._jsonish import is_mapping
from ..messages import ToolResult

__all__ = ["MAX_TASKS", "TASK_TTL", "TaskBoard", "install", "task_params", "wants_tasks"]

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
TASK_TTL = 3600.0
"""Seconds a finished task (and its result) is kept for ``tasks/get``."""
MAX_TASKS = 1000
"""Tasks kept at once; a call beyond that runs in the foreground."""
_POLL_MS = 200
_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"


def wants_tasks(ctx: Any) -> bool:
    """Whether the request's client opted in to the tasks extension (its ``_meta`` client capabilities)."""
    node: Any = getattr(ctx, "params", None)
    for key in ("_meta", _CLIENT_CAPABILITIES, "extensions", TASKS_EXTENSION):
        if not is_mapping(node):
            return False
        node = node.get(key)
    return is_mapping(node)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


def _caller() -> str | None:
    from mcp.server.auth.middleware.auth_context import get_access_token

    token = get_access_token()
    return None if token is None else f"{token.client_id}:{getattr(token, 'subject', None)}"


@dataclass
class _Task:
    task_id: str
    caller: str | None
    runner: asyncio.Task[Any]
    created: str = field(default_factory=_now)
    updated: str = field(default_factory=_now)
    status: str = "working"
    message: str | None = None
    result: dict[str, Any] | None = None
    ended: float | None = None

    def wire(self, result_type: str) -> dict[str, Any]:
        data: dict[str, Any] = {
            "resultType": result_type,
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": self.created,
            "lastUpdatedAt": self.updated,
            "ttlMs": int(TASK_TTL * 1000),
            "pollIntervalMs": _POLL_MS,
        }
        if self.message is not None:
            data["statusMessage"] = self.message
        if self.status == "completed" and self.result is not None:
            data["result"] = self.result
        return data


class TaskBoard:
    """One served registry's tasks: started by ``tools/call``, read by ``tasks/get``, stopped by ``tasks/cancel``."""

    def __init__(self) -> None:
        self._tasks: dict[str, _Task] = {}

    def _expire(self) -> None:
        now = time.monotonic()
        for task_id in [t.task_id for t in self._tasks.values() if t.ended is not None and now - t.ended > TASK_TTL]:
            del self._tasks[task_id]

    def start(
        self, run: Callable[[], Awaitable[ToolResult]], finish: Callable[[ToolResult], Any]
    ) -> dict[str, Any] | None:
        """Start `run` in the background; the task's answer to ``tools/call`` (None: too many, run it now)."""
        self._expire()
        if len(self._tasks) >= MAX_TASKS:
            return None
        task_id = secrets.token_urlsafe(32)

        async def work() -> None:
            record = self._tasks[task_id]
            try:
                outcome = await run()
                wire = finish(outcome).model_dump(by_alias=True, mode="json", exclude_none=True)
                record.status, record.result = ("failed" if outcome.is_error else "completed"), wire
                if outcome.is_error:
                    record.message = outcome.text
            except asyncio.CancelledError:
                record.status = "cancelled"
            except Exception as exc:  # noqa: BLE001 - a crashed task is a failed task, the server goes on
                record.status, record.message = "failed", f"{type(exc).__name__}: {exc}"
            record.updated, record.ended = _now(), time.monotonic()

        record = _Task(
            task_id, _caller(), asyncio.get_running_loop().create_task(work(), name=f"agentkit-mcp-task:{task_id[:8]}")
        )
        self._tasks[task_id] = record
        return record.wire("task")

    def _find(self, params: Any) -> _Task:
        from mcp import MCPError, types

        record = self._tasks.get(str(getattr(params, "task_id", "")))
        if record is None or record.caller != _caller():
            raise MCPError(types.INVALID_PARAMS, "Unknown task")
        return record

    async def get(self, ctx: Any, params: Any) -> dict[str, Any]:
        """``tasks/get``: the task's status, with the result once it is completed."""
        record = self._find(params)
        data = record.wire("complete")
        if record.status == "failed":
            data["error"] = {"code": -32603, "message": record.message or "the task failed"}
        return data

    async def cancel(self, ctx: Any, params: Any) -> dict[str, Any]:
        """``tasks/cancel``: stop a working task (an ended one is left as it is)."""
        record = self._find(params)
        if record.status == "working":
            record.runner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await record.runner
        return record.wire("complete")

    async def close(self) -> None:
        """Cancel every task still working (the server is stopping)."""
        for record in self._tasks.values():
            record.runner.cancel()


@functools.lru_cache(maxsize=1)
def task_params() -> type[Any]:
    """The params model of ``tasks/get`` and ``tasks/cancel`` (``{"taskId": ...}``)."""
    import mcp_types
    from pydantic import ConfigDict, Field

    class TaskParams(mcp_types.RequestParams):
        model_config = ConfigDict(populate_by_name=True)
        task_id: str = Field(alias="taskId")

    return TaskParams


def install(server: Any, board: TaskBoard) -> None:
    """Advertise the tasks extension on `server` and serve its ``tasks/get`` and ``tasks/cancel``."""
    server.extensions[TASKS_EXTENSION] = {}
    server.add_request_handler("tasks/get", task_params(), board.get)
    server.add_request_handler("tasks/cancel", task_params(), board.cancel)
