"""Calls that do not end in a result this turn: suspended ones, client-tool ones, background ones.

`Interrupt` is what a call gives back instead of a `ToolResult` when it suspends or belongs to a client
tool; the loop pauses the run on them after the turn's other calls finish. A background call's result
joins the conversation as a user message (`background_message`): the call itself was already answered
("started") in its own turn, and every vendor accepts a user message before the next model turn.
"""

from __future__ import annotations as _annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from .._json_schema import JsonSchema
from ..messages import ContentPart, TextPart, ToolCall, ToolResult, UserMessage

__all__ = ["Interrupt", "background_message", "background_started", "until_set"]

T = TypeVar("T")


@dataclass(frozen=True)
class Interrupt:
    """A call that paused instead of answering.

    A suspension (`request`, `schema`), a client call, or a program (code mode) waiting on calls that paused
    (`request`: their pending records).
    """

    call: ToolCall
    kind: Literal["suspension", "client", "program"]
    request: Any = None
    schema: JsonSchema | None = None


def background_started(call: ToolCall) -> ToolResult:
    """What the model is told at once for a background call."""
    text = (
        f"Started in the background (call {call.id}). Its result will be sent in a later message when it is "
        "ready; do not call the tool again for it."
    )
    return ToolResult(call_id=call.id, name=call.name, content=[TextPart(text)])


def background_message(result: ToolResult) -> UserMessage:
    """The message that brings a finished background call's result into the conversation."""
    outcome = "failed" if result.is_error else "finished"
    head = TextPart(f"[agentkit] The background call {result.call_id} to {result.name!r} {outcome}:")
    parts: list[ContentPart] = [head, *result.content]
    return UserMessage(parts)


async def until_set(work: Awaitable[T], event: asyncio.Event) -> tuple[bool, T | None]:
    """Await `work` unless `event` is set first: ``(True, result)``, or ``(False, None)`` with `work` cancelled.

    Built on done-callbacks, not `asyncio.wait`, so the order of wake-ups is deterministic (durable engines
    replay this code).
    """
    task = asyncio.ensure_future(work)
    if event.is_set():
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return False, None
    waiter = asyncio.ensure_future(event.wait())
    first: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

    def settle(done: asyncio.Future[Any]) -> None:
        if not first.done():
            first.set_result(done is task)

    task.add_done_callback(settle)
    waiter.add_done_callback(settle)
    try:
        finished = await first
    except BaseException:  # the caller itself was cancelled: so is the work
        task.cancel()
        waiter.cancel()
        raise
    if finished:
        waiter.cancel()
        return True, task.result()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    return False, None
