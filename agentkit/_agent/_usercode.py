"""The application's code inside a run (hooks, tools): a `CancelledError` of its own is its failure.

A hook or a tool may raise `asyncio.CancelledError` for reasons of its own (it awaited something that was
cancelled, or raised it by mistake). That is a failure of that code, for which the run has an answer (an
error result, a `HookError`), not a cancellation of the run: only a cancellation of the run's own task
stops the run. `settle` and `call_user` tell the two apart and hand the first back as a value.
"""

from __future__ import annotations as _annotations

import asyncio
import inspect
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

__all__ = ["TELLS_APART", "call_user", "own_cancellation", "settle"]

T = TypeVar("T")


class _Own(Exception):  # noqa: N818 - carries a CancelledError within this module, never out of it
    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


async def call_user(fn: Callable[..., Any], *args: Any) -> tuple[Any, BaseException | None]:
    """``fn(*args)``, awaited when it returns an awaitable: ``(value, None)``, or ``(None, what it raised)``.

    What it raised is an `Exception`, or a `CancelledError` of its own; a cancellation of the run propagates.
    """
    try:
        value = fn(*args)
    except asyncio.CancelledError as exc:  # raised synchronously: it can only be the code's own
        return None, exc
    except Exception as exc:  # noqa: BLE001 - the caller decides what the code's failure means
        return None, exc
    if not inspect.isawaitable(value):
        return value, None
    try:
        return await _awaited(value), None
    except _Own as own:
        return None, own.error
    except Exception as exc:  # noqa: BLE001 - as above
        return None, exc


async def settle(value: Awaitable[T]) -> tuple[T | None, BaseException | None]:
    """Await `value`: ``(result, None)``, or ``(None, error)`` for a `CancelledError` of the code's own.

    Anything else it raises (its signals among them) propagates, and so does a cancellation of the run.
    """
    try:
        return await _awaited(value), None
    except _Own as own:
        return None, own.error


TELLS_APART = sys.version_info >= (3, 11)
"""Whether `own_cancellation` can tell (Python 3.11+: `Task.cancelling`); before, only `settle` can."""


if sys.version_info >= (3, 11):

    def own_cancellation() -> bool:
        """In an ``except CancelledError``: whether it is the awaited code's own, not the run's task's."""
        task = asyncio.current_task()
        return task is not None and not task.cancelling()

    async def _awaited(value: Awaitable[T]) -> T:
        try:
            return await value
        except asyncio.CancelledError as exc:
            if not own_cancellation():
                raise  # the run itself is being cancelled
            raise _Own(exc) from exc

else:  # Python 3.10 has no Task.cancelling(): the code runs in a task of its own, awaited through a waiter
    # that records whether the run's task cancelled it (`Task.cancel` cancels the future its task awaits)

    def own_cancellation() -> bool:
        """Never asked before 3.11 (`TELLS_APART` is False): `settle` tells them apart instead."""
        raise NotImplementedError

    class _Waiter(asyncio.Future[Any]):
        from_outside = False

        def cancel(self, msg: Any = None) -> bool:
            self.from_outside = True
            return super().cancel(msg)

    async def _awaited(value: Awaitable[T]) -> T:
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
                raise _Own(exc) from exc
        return inner.result()
