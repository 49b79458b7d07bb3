"""The application's code inside a run (hooks, tools): a `CancelledError` of its own is its failure.

A hook or a tool may raise `asyncio.CancelledError` for reasons of its own (it awaited something that was
cancelled, or raised it by mistake). That is a failure of that code, for which the run has an answer (an
error result, a `HookError`), not a cancellation of the run: only a cancellation of the run's own task
stops the run. `settle` tells the two apart and raises `OwnCancellation` for the first.
"""

from __future__ import annotations as _annotations

import asyncio
import inspect
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

__all__ = ["OwnCancellation", "call_user", "settle", "unwrapped"]

T = TypeVar("T")


class OwnCancellation(Exception):  # noqa: N818 - it carries a CancelledError, it is not one
    """The `CancelledError` the application's code raised of its own (in `error`)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


def unwrapped(exc: BaseException) -> BaseException:
    """The error to report for `exc`: the code's own `CancelledError` rather than its carrier."""
    return exc.error if isinstance(exc, OwnCancellation) else exc


async def call_user(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``, awaited when it returns an awaitable, through `settle`."""
    try:
        value = fn(*args)
    except asyncio.CancelledError as exc:  # raised synchronously: it can only be the code's own
        raise OwnCancellation(exc) from exc
    return await settle(value) if inspect.isawaitable(value) else value


if sys.version_info >= (3, 11):

    async def settle(value: Awaitable[T]) -> T:
        """Await `value`; a `CancelledError` while the run's task is not being cancelled is `OwnCancellation`."""
        try:
            return await value
        except asyncio.CancelledError as exc:
            task = asyncio.current_task()
            if task is None or task.cancelling():
                raise  # the run itself is being cancelled
            raise OwnCancellation(exc) from exc

else:  # Python 3.10 has no Task.cancelling(): the code runs in a task of its own, awaited through a waiter
    # that records whether the run's task cancelled it (`Task.cancel` cancels the future its task awaits)

    class _Waiter(asyncio.Future[Any]):
        from_outside = False

        def cancel(self, msg: Any = None) -> bool:
            self.from_outside = True
            return super().cancel(msg)

    async def settle(value: Awaitable[T]) -> T:
        """Await `value`; a `CancelledError` while the run's task is not being cancelled is `OwnCancellation`."""
        inner = asyncio.ensure_future(value)
        waiter = _Waiter()

        def done(_: asyncio.Future[Any]) -> None:
            if not waiter.done():
                waiter.set_result(None)

        inner.add_done_callback(done)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.from_outside:  # the run is cancelled: so is the code, which may clean up first
                inner.cancel()
                await asyncio.gather(inner, return_exceptions=True)
            raise
        if inner.cancelled():
            try:
                inner.result()
            except asyncio.CancelledError as exc:
                raise OwnCancellation(exc) from exc
        return inner.result()
