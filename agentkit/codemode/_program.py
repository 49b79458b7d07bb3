"""One program run in the Monty sandbox: its tool calls dispatched, its pauses dumped, its errors told.

The program runs in a `monty` worker subprocess (never in this interpreter). Every call of a tool
function suspends the worker; the host starts the call (`Dispatch`) and answers with a pending future,
so calls the program awaits together run together. When every task of the program waits on calls and
some of those calls paused (an approval, a suspension, a client tool), the calls still running finish,
their results go into the program, and the worker's state is dumped: `Paused.state` (JSON) is all it
takes to continue, in this process or another (`resume`). Calls answered before the dump are in the dump:
nothing runs twice.

Anything else the program does that reaches the host (imports of modules the sandbox lacks, files,
environment variables, names that are not its functions) is refused with the error Python would give.
"""

from __future__ import annotations as _annotations

import asyncio
import atexit
import base64
import contextlib
import os
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Union

from pydantic_core import to_jsonable_python

from .._exit import settle
from ._limits import CodeLimits
from ._stubs import FunctionSpec

if TYPE_CHECKING:
    from pydantic_monty import ExternalResult

__all__ = [
    "Dispatch",
    "Failed",
    "Finished",
    "NestedCall",
    "Outcome",
    "Paused",
    "ProgramOutcome",
    "Raised",
    "Returned",
    "Waiting",
    "answered_by",
    "run_program",
]

STATE_VERSION = 1


@dataclass(frozen=True)
class NestedCall:
    """A call the program made: `id` is ``<program call id>/<n>``, unique in the run."""

    id: str
    key: str
    arguments: dict[str, Any]
    seq: int
    """The sandbox's id for the call (what its pending future is answered by)."""


@dataclass(frozen=True)
class Returned:
    """The call's value, as the program receives it (JSON data)."""

    value: Any


@dataclass(frozen=True)
class Raised:
    """The call failed: raised in the program as `exc_type` (a builtin exception name) with `message`."""

    exc_type: str
    message: str


@dataclass(frozen=True)
class Waiting:
    """The call paused the run; `record` is what the caller needs to answer it later (JSON-ready)."""

    record: Any


Outcome = Union[Returned, Raised, Waiting]
Dispatch = Callable[[NestedCall], Awaitable[Outcome]]
"""Runs one nested call (or answers a paused one again on resume)."""


@dataclass
class Finished:
    """The program ran to its end; `value` is its last expression (JSON data)."""

    value: Any
    printed: str
    calls: int


@dataclass
class Failed:
    """The program raised, broke a limit, or did not parse: `message` says where and why."""

    message: str
    printed: str
    calls: int
    line: int | None = None


@dataclass
class Paused:
    """The program waits on paused calls; `state` (JSON) continues it with `run_program(..., state=...)`."""

    state: dict[str, Any]
    waiting: list[tuple[NestedCall, Waiting]]
    printed: str
    calls: int


ProgramOutcome = Union[Finished, Failed, Paused]


def answered_by(results: Mapping[str, Returned | Raised]) -> Dispatch:
    """A dispatch that makes no call: it answers the calls in `results` (by id) and leaves the rest waiting.

    For a durable engine: each `run_program` with it is one segment of the program (an activity), ending
    when the program waits on calls it made; the engine runs those calls itself (each an activity, through
    the run's pipeline) and starts the next segment with the paused state and their outcomes. Every
    segment's state is data in the engine's history, so the program survives the loss of any worker.
    """

    async def dispatch(call: NestedCall) -> Outcome:
        found = results.get(call.id)
        return found if found is not None else Waiting(None)

    return dispatch


# ---- the worker pool ------------------------------------------------------------------------------

_POOL: dict[str, Any] = {}
_POOL_LOCK = threading.Lock()


async def _pool() -> Any:
    """The process's pool of sandbox workers (made on first use; it serves every event loop)."""
    found = _POOL.get("pool")
    if found is not None:
        return found
    from pydantic_monty import AsyncMonty

    pool = AsyncMonty(min_processes=1, max_processes=max(2, os.cpu_count() or 2))
    await pool.__aenter__()
    with _POOL_LOCK:
        kept = _POOL.setdefault("pool", pool)
    if kept is not pool:
        await pool.__aexit__(None, None, None)  # another task made one meanwhile
    else:
        atexit.register(_close_pool)
    return kept


def _close_pool() -> None:
    """At exit, before the interpreter finalizes: close the pool, then let its runtime's threads leave Python.

    A thread of the sandbox's (tokio) runtime wakes an event loop by writing to its socket, which releases
    the GIL; if the main thread then runs on into finalization before that thread has the GIL back,
    CPython stops the thread mid-call and the process aborts (SIGABRT, about one short code-mode script in
    fifteen here). Closing the pool ends its work; the pause hands the GIL to a thread still waiting for it
    (the pool's own last wake-up), which then returns to the runtime.
    """
    pool = _POOL.pop("pool", None)
    if pool is None:
        return
    with contextlib.suppress(Exception):  # exiting anyway: a pool that cannot close is left to the OS
        asyncio.run(asyncio.wait_for(pool.__aexit__(None, None, None), _CLOSE_WAIT))
    settle()  # the pool's own last wake-up may still wait for the GIL


_CLOSE_WAIT = 5.0
"""Seconds the pool may take to close at exit."""


def _checkout(pool: Any, limits: CodeLimits) -> Any:
    return pool.checkout(
        script_name="program.py",
        limits={
            "max_feed_duration_secs": limits.timeout,
            "max_memory": limits.max_memory,
            "max_recursion_depth": limits.max_recursion,
            "max_suspensions": 4 * limits.max_calls + 1000,
        },
        os_policy={"sleep": "zero", "random_start": {"seed": 0}},
    )


# ---- running --------------------------------------------------------------------------------------


class _Printed:
    """Collects the program's output up to a size; the rest is counted, not kept."""

    def __init__(self, limit: int, start: str = "") -> None:
        self.limit = limit
        self.parts: list[str] = [start] if start else []
        self.size = len(start)
        self.dropped = 0

    def __call__(self, stream: str, text: str) -> None:
        room = self.limit - self.size
        if room <= 0:
            self.dropped += len(text)
            return
        kept = text[:room]
        self.parts.append(kept)
        self.size += len(kept)
        self.dropped += len(text) - len(kept)

    @property
    def text(self) -> str:
        out = "".join(self.parts)
        if self.dropped:
            out += f"\n[... {self.dropped} more characters of output cut]"
        return out


@dataclass
class _Run:
    functions: Mapping[str, FunctionSpec]
    dispatch: Dispatch
    limits: CodeLimits
    caller_id: str
    printed: _Printed
    calls: int = 0
    tasks: dict[int, asyncio.Task[Outcome]] = field(default_factory=lambda: {})
    made: dict[int, NestedCall] = field(default_factory=lambda: {})
    waiting: dict[int, Waiting] = field(default_factory=lambda: {})

    def start_call(self, snap: Any) -> ExternalResult:
        """The answer to a function call the program made: a pending future, or an exception."""
        spec = self.functions.get(snap.function_name)
        if spec is None:
            # not one of its functions (a forged name, a builtin the sandbox lacks): nothing reaches the host
            return {"exc_type": "NameError", "message": f"name {snap.function_name!r} is not defined"}
        if self.calls >= self.limits.max_calls:
            return {
                "exc_type": "RuntimeError",
                "message": f"this program made {self.calls} tool calls, its limit (CodeLimits.max_calls)",
            }
        try:
            arguments = spec.arguments(tuple(snap.args), dict(snap.kwargs))
            arguments = to_jsonable_python(arguments, fallback=repr)
        except TypeError as exc:
            return {"exc_type": "TypeError", "message": str(exc)}
        self.calls += 1
        call = NestedCall(f"{self.caller_id}/{self.calls}", spec.key, arguments, snap.call_id)
        self.launch(call)
        return {"future": ...}

    def launch(self, call: NestedCall) -> None:
        self.made[call.seq] = call
        self.tasks[call.seq] = asyncio.ensure_future(self.dispatch(call))

    async def settle(self, pending: list[int]) -> dict[int, Any] | None:
        """Answers for some of `pending` (waiting for one to finish if none has); None: only paused calls left."""
        while True:
            ready: dict[int, Any] = {}
            running: list[asyncio.Task[Outcome]] = []
            for seq in pending:
                task = self.tasks.get(seq)
                if task is None:
                    continue
                if not task.done():
                    running.append(task)
                    continue
                outcome = task.result()
                if isinstance(outcome, Waiting):
                    self.waiting[seq] = outcome
                    del self.tasks[seq]
                elif isinstance(outcome, Returned):
                    ready[seq] = {"return_value": outcome.value}
                    del self.tasks[seq]
                else:
                    ready[seq] = {"exc_type": outcome.exc_type, "message": outcome.message}
                    del self.tasks[seq]
            if ready:
                return ready
            if not running:
                return None
            await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)

    async def drain(self) -> None:
        """Wait for calls the program started but never awaited (they ran; they are not left running)."""
        left = [task for task in self.tasks.values() if not task.done()]
        if left:
            await asyncio.gather(*left, return_exceptions=True)
        self.tasks.clear()

    def cancel(self) -> None:
        for task in self.tasks.values():
            task.cancel()


async def run_program(
    code: str | None,
    functions: Mapping[str, FunctionSpec],
    dispatch: Dispatch,
    limits: CodeLimits,
    caller_id: str,
    *,
    state: Mapping[str, Any] | None = None,
) -> ProgramOutcome:
    """Run `code` (or continue the paused program `state`), calling tools through `dispatch`.

    On resume every call that was waiting is dispatched again (the dispatcher holds the answers), in the
    order the program made them.
    """
    from pydantic_monty import MontyError

    pool = await _pool()
    printed = _Printed(limits.max_output, str(state.get("printed", "")) if state is not None else "")
    run = _Run(functions, dispatch, limits, caller_id, printed, calls=int(state["calls"]) if state else 0)
    try:
        async with _checkout(pool, limits) as session:
            if state is None:
                assert code is not None
                snap = await session.feed_start(code, print_callback=printed, external_lookup=_lookups(functions))
            else:
                blob = base64.b64decode(state["dump"])
                snap = await session.load_snapshot(blob, print_callback=printed, external_lookup=_lookups(functions))
                for item in state["waiting"]:
                    run.launch(NestedCall(item["id"], item["key"], dict(item["arguments"]), int(item["seq"])))
            return await _drive(run, snap)
    except MontyError as exc:
        await run.drain()
        message, line = _told(exc, limits)
        return Failed(message, printed.text, run.calls, line)
    except BaseException:
        run.cancel()
        raise


def _lookups(functions: Mapping[str, FunctionSpec]) -> dict[str, Any]:
    """Placeholders that make a function's name a value (``f = tool; await f()``); calls never reach them."""

    def never(*_args: Any, **_kwargs: Any) -> Any:  # pragma: no cover - calls are answered by hand
        raise RuntimeError("unreachable")

    return dict.fromkeys(functions, never)


async def _drive(run: _Run, snap: Any) -> ProgramOutcome:
    from pydantic_monty import AsyncFunctionSnapshot, AsyncNameLookupSnapshot, MontyComplete

    while True:
        if isinstance(snap, MontyComplete):
            await run.drain()
            value = to_jsonable_python(snap.output, fallback=repr)
            return Finished(value, run.printed.text, run.calls)
        if isinstance(snap, AsyncNameLookupSnapshot):
            known = snap.variable_name in run.functions and snap.object_id is None
            snap = await (snap.resume_auto() if known else snap.resume())
        elif isinstance(snap, AsyncFunctionSnapshot):
            if snap.is_os_function:
                snap = await snap.resume_not_handled()  # files, environment, clocks: the sandbox's refusal
            else:
                snap = await snap.resume(run.start_call(snap))
        else:  # every task of the program waits on calls
            answers = await run.settle(list(snap.pending_call_ids))
            if answers is None:
                return _paused(run, snap)
            snap = await snap.resume(answers)


def _paused(run: _Run, snap: Any) -> Paused:
    waiting = [(run.made[seq], run.waiting[seq]) for seq in sorted(run.waiting)]
    state = {
        "v": STATE_VERSION,
        "dump": base64.b64encode(snap.dump()).decode("ascii"),
        "waiting": [{"id": c.id, "key": c.key, "arguments": c.arguments, "seq": c.seq} for c, _ in waiting],
        "printed": run.printed.text,
        "calls": run.calls,
    }
    return Paused(state, waiting, run.printed.text, run.calls)


def _told(exc: Exception, limits: CodeLimits) -> tuple[str, int | None]:
    """What the model is told of a failed program: the line, the exception and its message."""
    from pydantic_monty import MontyCrashedError, MontyRuntimeError, MontySyntaxError

    if isinstance(exc, MontyCrashedError):
        return (
            "The program's sandbox stopped (it ran out of memory or stack, or past its time): simplify the program.",
            None,
        )
    if not isinstance(exc, (MontyRuntimeError, MontySyntaxError)):
        return f"The program could not run: {exc}", None
    message = exc.display("type-msg")
    if message.startswith("TimeoutError:") and "time limit exceeded" in message:
        message = (
            f"TimeoutError: the program ran longer than its limit ({limits.timeout:g} s of execution, not counting "
            "tool calls); an endless loop?"
        )
    elif message.startswith("MemoryError:") and "memory limit exceeded" in message:
        message = f"MemoryError: the program used more than its memory limit ({limits.max_memory} bytes)"
    frames = [f for f in exc.traceback() if f.filename in ("program.py", "<python-input-0>")] or exc.traceback()
    if not frames:
        return message, None
    last = frames[-1]
    where = f"Line {last.line}"
    if last.function_name:
        where += f", in {last.function_name}"
    source = f"\n    {last.source_line.strip()}" if last.source_line else ""
    return f"{where}: {message}{source}", last.line
