"""Exiting with the threads of Rust extensions' runtimes out of Python.

A thread of such a runtime (Temporal's core, for one) that wakes an event loop writes to the loop's socket,
which releases the GIL. If the main thread then runs on into finalization before that thread has the GIL
back, CPython stops the thread in the middle of the call and the process aborts (SIGABRT), after the
program's work is done. `settle_at_exit` has the interpreter let go of the GIL briefly at exit, before it
finalizes, so a thread waiting for it returns to its runtime first. (Code mode's sandbox pool closes itself
at exit and does the same: `agentkit.codemode._program`.)
"""

from __future__ import annotations as _annotations

import atexit
import threading
import time

__all__ = ["settle", "settle_at_exit"]

_SETTLE = 0.05
"""Seconds the main thread lets go of the GIL at exit."""
_REGISTERED: list[bool] = []
_LOCK = threading.Lock()


def settle() -> None:
    """Let go of the GIL for a moment, so a runtime thread waiting for it gets it and returns to its runtime."""
    time.sleep(_SETTLE)


def settle_at_exit() -> None:
    """`settle` at exit (registered once per process; cheap to call again)."""
    if _REGISTERED:
        return
    with _LOCK:
        if not _REGISTERED:
            _REGISTERED.append(True)
            atexit.register(settle)
