"""`AgentStream`: a run's events, as they happen, turned into an async iterator."""

from __future__ import annotations as _annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Generic

from ..events import AgentEvent
from ..exceptions import UsageError
from .results import OutputT, RunResult

__all__ = ["AgentStream", "Emit"]

Emit = Callable[[AgentEvent], None]
"""How a run hands each event to its stream."""


class AgentStream(Generic[OutputT]):
    """The async iterator `Agent.stream` returns: typed events, then `result`.

    ```python
    stream = agent.stream("Weather in Paris?")
    async for event in stream:
        ...
    stream.result.text
    ```

    Leaving the loop early cancels the run (tools still running are cancelled too).
    """

    def __init__(self, start: Callable[[Emit], Awaitable[RunResult[Any]]]) -> None:
        self._start = start
        self._result: RunResult[OutputT] | None = None
        self._iterator: AsyncIterator[AgentEvent] | None = None

    def __aiter__(self) -> AsyncIterator[AgentEvent]:
        if self._iterator is None:
            self._iterator = self._events()
        return self._iterator

    @property
    def result(self) -> RunResult[OutputT]:
        """The run's result, once every event has been consumed."""
        if self._result is None:
            raise UsageError("the stream has not finished: iterate it to the end (or await get_result())")
        return self._result

    async def get_result(self) -> RunResult[OutputT]:
        """Consume the remaining events and return the result."""
        async for _ in self:
            pass
        return self.result

    async def _events(self) -> AsyncIterator[AgentEvent]:
        queue: asyncio.Queue[Any] = asyncio.Queue()
        done = object()
        sink = _Sink(queue.put_nowait)
        task = asyncio.ensure_future(self._start(sink))
        # Fires after the run's last event is queued, so "done" is always the last item.
        task.add_done_callback(lambda _: queue.put_nowait(done))
        try:
            while True:
                item = await queue.get()
                if item is done:
                    break
                yield item
            self._result = task.result()  # re-raises what ended the run
        finally:
            if not task.done():
                sink.closed = True
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task


class _Sink:
    """The `Emit` of a stream: once the consumer left, every further event cancels the run instead.

    Closing cancels the run's task, but a cancellation can be lost on its way: before Python 3.12,
    `asyncio.wait_for` (which reads a model stream under its idle timeout) returns the read's result and
    drops a cancellation that arrives as the read completes. The run then goes on, and its next event
    (every tool call and every model request is announced by one first) raises here, so no tool starts
    and no further request is sent.
    """

    __slots__ = ("closed", "deliver")

    def __init__(self, deliver: Callable[[AgentEvent], None]) -> None:
        self.deliver = deliver
        self.closed = False

    def __call__(self, event: AgentEvent) -> None:
        if self.closed:
            raise asyncio.CancelledError("the stream was closed")
        self.deliver(event)
