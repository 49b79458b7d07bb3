"""The worker threads sync tools run on: bounded, separate from the event loop's default executor.

Python cannot stop a thread. A sync tool that times out (or whose call is cancelled) keeps running
until its function returns; with a plain pool, a pool's worth of such calls would leave no thread
for the next tool, which would then wait for them. Here an abandoned call gives its slot back at
once: the call goes on in its own thread, which ends when the function returns, while new calls get
a fresh thread.

Limits (`ToolThreads.max_workers`, `ToolThreads.max_abandoned`): at most `max_workers` calls run at
once (more wait for a slot, in order); at most `max_abandoned` abandoned calls are let go of their
slot, beyond which an abandoned call keeps its slot until it returns, so the threads of the process
never exceed ``max_workers + max_abandoned``. Threads are daemons: abandoned calls never keep the
process from exiting. `tool_threads()` is the process-wide pool.
"""

from __future__ import annotations as _annotations

import asyncio
import contextlib
import contextvars
import os
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

__all__ = ["ThreadStats", "ToolThreads", "tool_threads"]

T = TypeVar("T")


@dataclass(frozen=True)
class ThreadStats:
    """A snapshot of a `ToolThreads` pool."""

    running: int
    """Calls holding a slot (running and not abandoned)."""
    waiting: int
    """Calls waiting for a slot."""
    abandoned: int
    """Timed-out or cancelled calls still running, without a slot."""
    threads: int
    """Worker threads alive (running, abandoned or idle)."""


class _Job:
    __slots__ = ("abandoned", "args", "context", "fn", "future", "loop", "started")

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...], loop: asyncio.AbstractEventLoop) -> None:
        self.fn = fn
        self.args = args
        self.loop = loop
        self.future: asyncio.Future[Any] = loop.create_future()
        self.context = contextvars.copy_context()  # as asyncio.to_thread does
        self.started = False
        self.abandoned = False

    def run(self) -> None:
        try:
            value = self.context.run(self.fn, *self.args)
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task, whatever it is
            self._settle(None, exc)
        else:
            self._settle(value, None)

    def _settle(self, value: Any, error: BaseException | None) -> None:
        def settle() -> None:
            if self.future.done():
                return
            if error is not None:
                self.future.set_exception(error)
            else:
                self.future.set_result(value)

        with contextlib.suppress(RuntimeError):  # a closed loop: nobody is waiting any more
            self.loop.call_soon_threadsafe(settle)


class ToolThreads:
    """A bounded pool of daemon threads for sync tools, where abandoned calls do not starve new ones."""

    def __init__(self, max_workers: int = 32, max_abandoned: int = 64, *, idle_timeout: float = 60.0) -> None:
        if max_workers < 1 or max_abandoned < 0:
            raise ValueError("ToolThreads needs max_workers >= 1 and max_abandoned >= 0")
        self.max_workers = max_workers
        """Calls that may run at once; more wait for a slot."""
        self.max_abandoned = max_abandoned
        """Abandoned calls that give their slot back; beyond that they keep it until they return."""
        self.idle_timeout = idle_timeout
        self._lock = threading.Lock()
        self._waiting: deque[_Job] = deque()
        self._idle: list[tuple[threading.Event, list[_Job]]] = []
        self._running = 0
        self._abandoned = 0
        self._threads = 0

    def stats(self) -> ThreadStats:
        """How many calls run, wait and were abandoned, and how many threads there are."""
        with self._lock:
            return ThreadStats(self._running, len(self._waiting), self._abandoned, self._threads)

    async def run(self, fn: Callable[..., T], /, *args: Any) -> T:
        """``fn(*args)`` on a worker thread. Cancelling the await (a timeout, say) abandons the call."""
        job = _Job(fn, args, asyncio.get_running_loop())
        with self._lock:
            if self._running < self.max_workers:
                self._running += 1
                self._dispatch(job)
            else:
                self._waiting.append(job)
        try:
            return cast(T, await job.future)
        except asyncio.CancelledError:
            self._abandon(job)
            raise

    # ---- inside the lock ------------------------------------------------------------------------------

    def _dispatch(self, job: _Job) -> None:
        """Hand a job that holds a slot to an idle thread, or to a new one."""
        job.started = True
        if self._idle:
            wake, slot = self._idle.pop()
            slot.append(job)
            wake.set()
            return
        self._threads += 1
        threading.Thread(target=self._work, args=(job,), name="agentkit-tool", daemon=True).start()

    def _next(self) -> _Job | None:
        while self._waiting and self._running < self.max_workers:
            job = self._waiting.popleft()
            if job.future.done():  # cancelled while waiting
                continue
            self._running += 1
            return job
        return None

    # ---- outside the lock -----------------------------------------------------------------------------

    def _abandon(self, job: _Job) -> None:
        with self._lock:
            if not job.started:
                with contextlib.suppress(ValueError):  # already taken off by `_next`
                    self._waiting.remove(job)
                return
            if job.abandoned or self._abandoned >= self.max_abandoned:
                return  # past the limit the call keeps its slot until it returns
            job.abandoned = True
            self._running -= 1
            self._abandoned += 1
            follow = self._next()
            if follow is not None:
                self._dispatch(follow)

    def _work(self, first: _Job) -> None:
        job = first
        while True:
            if not job.future.done():
                job.run()
            with self._lock:
                if job.abandoned:
                    self._abandoned -= 1
                else:
                    self._running -= 1
                following = self._next()
                if following is not None:
                    following.started = True
                    job = following
                    continue
                if len(self._idle) >= self.max_workers:
                    self._threads -= 1
                    return
                wake, slot = threading.Event(), list[_Job]()
                self._idle.append((wake, slot))
            woken = wake.wait(self.idle_timeout)
            with self._lock:
                if not woken and not slot:
                    try:
                        self._idle.remove((wake, slot))
                    except ValueError:  # claimed between the timeout and the lock
                        pass
                    else:
                        self._threads -= 1
                        return
                if not slot:
                    self._threads -= 1
                    return
                job = slot[0]

    def reset_after_fork(self) -> None:
        """In a forked child: a new lock and no jobs or threads (the parent's threads do not exist there)."""
        self._lock = threading.Lock()
        self._waiting.clear()
        self._idle = []
        self._running = self._abandoned = self._threads = 0


_POOL = ToolThreads()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_POOL.reset_after_fork)


def tool_threads() -> ToolThreads:
    """The process-wide pool sync tools (and off-loop argument validation) run on.

    Its limits can be changed at any time: ``tool_threads().max_workers = 8``.
    """
    return _POOL
