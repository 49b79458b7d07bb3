"""A program run in segments, for a durable engine: the sandbox in one place, each nested call in another.

`run_program` runs a program and its nested calls together, in this process. A durable engine (Temporal)
must record every nested call as a step of its own, so `segmented` runs the program one segment at a time
instead: a segment (`Segment`, an activity on Temporal) runs the sandbox until the program waits on calls
it made, answering none of them (`answered_by`), and gives back the paused state; the engine then makes
those calls through the run's dispatcher (each its own activity, through the run's pipeline, in parallel
where the program awaits several) and starts the next segment with their outcomes. Every segment's state
is data in the engine's history, so a lost worker loses nothing that ran.

A call that pauses the run (an approval, a suspension, a client tool) is held; once the program waits
only on held calls, the program pauses exactly as in `run_program`: `Paused.state` lists those calls, and
a resume dispatches them again with their answers before the next segment.

`encode_outcome`/`decode_outcome` carry a segment's outcome as JSON data; `encode_results` the answers.
"""

from __future__ import annotations as _annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from typing import Any, Protocol, Union

from ._limits import CodeLimits
from ._program import (
    Dispatch,
    Failed,
    Finished,
    NestedCall,
    Paused,
    ProgramOutcome,
    Raised,
    Returned,
    Waiting,
    run_program,
)
from ._stubs import FunctionSpec

__all__ = [
    "ProgramRunner",
    "Segment",
    "current_runner",
    "decode_outcome",
    "decode_results",
    "encode_outcome",
    "encode_results",
    "segmented",
]

Segment = Callable[
    [str, Union[str, None], Union[Mapping[str, Any], None], Mapping[str, Union[Returned, Raised]]],
    Awaitable[ProgramOutcome],
]
"""Runs the sandbox once: ``(caller_id, code, state, results)`` -> the outcome (calls without results wait)."""


class ProgramRunner(Protocol):
    """How the code tool runs a program: `run_program`'s signature."""

    def __call__(
        self,
        code: str | None,
        functions: Mapping[str, FunctionSpec],
        dispatch: Dispatch,
        limits: CodeLimits,
        caller_id: str,
        *,
        state: Mapping[str, Any] | None = None,
    ) -> Awaitable[ProgramOutcome]:
        """Run `code` (or continue `state`), calling tools through `dispatch`."""
        ...


current_runner: ContextVar[ProgramRunner | None] = ContextVar("agentkit_program_runner", default=None)
"""The runner of the programs of the run in this context (None: `run_program`, in this process)."""


def _calls_of(state: Mapping[str, Any]) -> list[NestedCall]:
    return [NestedCall(w["id"], w["key"], dict(w["arguments"]), int(w["seq"])) for w in state["waiting"]]


def segmented(segment: Segment) -> ProgramRunner:
    """A runner that runs each stretch of the program with `segment` and each nested call with the dispatcher."""

    async def run(
        code: str | None,
        functions: Mapping[str, FunctionSpec],
        dispatch: Dispatch,
        limits: CodeLimits,
        caller_id: str,
        *,
        state: Mapping[str, Any] | None = None,
    ) -> ProgramOutcome:
        held: dict[str, tuple[NestedCall, Waiting]] = {}
        results: dict[str, Returned | Raised] = {}
        if state is None:
            outcome = await segment(caller_id, code, None, {})
            if not isinstance(outcome, Paused):
                return outcome
            state = outcome.state
        todo = _calls_of(state)  # on resume: the held calls, answered now by the dispatcher
        while True:
            outcomes = await asyncio.gather(*(dispatch(call) for call in todo))
            for call, got in zip(todo, outcomes, strict=True):
                if isinstance(got, Waiting):
                    held[call.id] = (call, got)
                else:
                    results[call.id] = got
            waiting = _calls_of(state)
            answers = {c.id: results.pop(c.id) for c in waiting if c.id in results}
            if not answers:  # every call the program waits on waits for a person: the run pauses
                printed, calls = str(state.get("printed", "")), int(state.get("calls", 0))
                return Paused(dict(state), [held[c.id] for c in waiting], printed, calls)
            outcome = await segment(caller_id, None, state, answers)
            if not isinstance(outcome, Paused):
                return outcome
            state = outcome.state
            todo = [c for c in _calls_of(state) if c.id not in held]

    return run


async def run_segment(
    code: str | None,
    functions: Mapping[str, FunctionSpec],
    limits: CodeLimits,
    caller_id: str,
    state: Mapping[str, Any] | None,
    results: Mapping[str, Returned | Raised],
) -> ProgramOutcome:
    """One segment, where the sandbox is: the program until it waits on calls it has no results for."""
    from ._program import answered_by

    return await run_program(code, functions, answered_by(results), limits, caller_id, state=state)


# ---- as JSON data -----------------------------------------------------------------------------------


def encode_results(results: Mapping[str, Returned | Raised]) -> dict[str, Any]:
    """Nested calls' outcomes as JSON data (by call id)."""
    return {
        k: {"value": v.value} if isinstance(v, Returned) else {"exc_type": v.exc_type, "message": v.message}
        for k, v in results.items()
    }


def decode_results(data: Mapping[str, Any]) -> dict[str, Returned | Raised]:
    """`encode_results` read back."""
    return {
        k: Returned(v["value"]) if "value" in v else Raised(str(v["exc_type"]), str(v["message"]))
        for k, v in data.items()
    }


def encode_outcome(outcome: ProgramOutcome) -> dict[str, Any]:
    """A segment's outcome as JSON data (a paused one's waiting calls are in its state)."""
    if isinstance(outcome, Finished):
        return {"finished": {"value": outcome.value, "printed": outcome.printed, "calls": outcome.calls}}
    if isinstance(outcome, Failed):
        body = {"message": outcome.message, "printed": outcome.printed, "calls": outcome.calls, "line": outcome.line}
        return {"failed": body}
    return {"paused": outcome.state}


def decode_outcome(data: Mapping[str, Any]) -> ProgramOutcome:
    """`encode_outcome` read back."""
    if "finished" in data:
        body = data["finished"]
        return Finished(body["value"], str(body["printed"]), int(body["calls"]))
    if "failed" in data:
        body = data["failed"]
        line = body.get("line")
        return Failed(
            str(body["message"]), str(body["printed"]), int(body["calls"]), None if line is None else int(line)
        )
    state = dict(data["paused"])
    waiting = [(call, Waiting(None)) for call in _calls_of(state)]
    return Paused(state, waiting, str(state.get("printed", "")), int(state.get("calls", 0)))
