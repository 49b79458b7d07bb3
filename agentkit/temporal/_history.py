"""The conversation of a model request, handed to its activity by reference: Temporal's history stays linear.

Were each ``agentkit.model_request`` activity to take the whole conversation as its input, the workflow's
history would hold every message once per later turn: quadratic (180 steps: 51.6 MB of history for 412 KB
of messages), until the server terminates the run at its history limit. Instead the workflow keeps the
messages of each request it waits for and sends only a reference (workflow id, run id, request number,
message count). The activity finds the messages

* in this process's `LIVE` table, where the workflow published them: the usual case (a worker runs a
  run's workflow and its activities), with no copy and no encoding at all; or else
* by asking the workflow, with the ``agentkit.history`` query, in pages under the payload limit.
  A query is answered from the workflow's memory (or by replaying it, on any worker) and is not written
  to the history.

So each message is written to the history once: as the input of the workflow, or as the result of the
activity that produced it (a model turn, a tool call).
"""

from __future__ import annotations as _annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..runs._codec import decode_messages, encode_messages
from ._options import size_of

if TYPE_CHECKING:
    from ..messages import Message
    from ..tools import Tool

__all__ = ["HISTORY_QUERY", "LIVE", "fetch", "page", "publish", "withdraw"]

HISTORY_QUERY = "agentkit.history"
"""The workflow's query for the messages of a model request it waits for (paged)."""

Key = tuple[str, str, int]
"""(workflow id, run id, request number)."""

_MAX_LIVE = 4096  # requests in flight in this process; an evicted one is fetched by the query instead
LIVE: OrderedDict[Key, tuple[Message, ...]] = OrderedDict()
"""The messages of the model requests in flight whose workflow runs in this process."""
_lock = threading.Lock()  # workflows run on the worker's workflow threads, activities on its event loop


def publish(key: Key, messages: tuple[Message, ...]) -> None:
    """Make a request's messages available to its activity in this process."""
    with _lock:
        LIVE[key] = messages
        if len(LIVE) > _MAX_LIVE:
            LIVE.popitem(last=False)


def withdraw(key: Key) -> None:
    """The request is answered: forget its messages."""
    with _lock:
        LIVE.pop(key, None)


def page(messages: Sequence[Message], start: int, limit: int, tools: Mapping[str, Tool[..., Any]]) -> dict[str, Any]:
    """``messages[start:]`` encoded, as many as fit in `limit` bytes (at least one); ``next``: where to go on."""
    out: list[Any] = []
    size = 0
    index = start
    while index < len(messages):
        encoded = encode_messages([messages[index]], tools)[0]
        size += size_of(encoded)
        if out and size > limit:
            break
        out.append(encoded)
        index += 1
    return {"messages": out, "next": index if index < len(messages) else None}


async def fetch(reference: Mapping[str, Any], page_limit: int) -> list[Message]:
    """The messages of the model request `reference` names: from this process, else from its workflow."""
    key: Key = (reference["workflow_id"], reference["run_id"], int(reference["request"]))
    with _lock:
        found = LIVE.get(key)
    if found is not None:
        return list(found)
    from temporalio import activity

    handle = activity.client().get_workflow_handle(key[0], run_id=key[1])
    messages: list[Message] = []
    start: int | None = 0
    while start is not None:
        data = await handle.query(HISTORY_QUERY, {"request": key[2], "start": start, "limit": page_limit})
        messages.extend(decode_messages(data["messages"]))
        start = data["next"]
    if len(messages) != int(reference["count"]):
        raise RuntimeError(f"the workflow sent {len(messages)} messages for request {key}, not {reference['count']}")
    return messages
