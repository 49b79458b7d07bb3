"""`segmented`: a program run one segment at a time, its calls made between segments (what Temporal runs)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agentkit.codemode import CodeLimits
from agentkit.codemode._program import Finished, NestedCall, Outcome, Paused, Raised, Returned, Waiting, run_program
from agentkit.codemode._segments import (
    decode_outcome,
    decode_results,
    encode_outcome,
    encode_results,
    run_segment,
    segmented,
)
from agentkit.codemode._stubs import build_stubs

from .helpers import registry
from .test_program import PROGRAM

FUNCTIONS = build_stubs(registry()).functions


class Segments:
    """Segments run here, through JSON as an engine's history would carry them; their inputs are kept."""

    def __init__(self) -> None:
        self.seen: list[tuple[bool, list[str]]] = []

    async def __call__(
        self, caller: str, code: str | None, state: Mapping[str, Any] | None, results: Mapping[str, Returned | Raised]
    ) -> Any:
        self.seen.append((code is not None, sorted(results)))
        state = json.loads(json.dumps(state)) if state is not None else None
        answers = decode_results(json.loads(json.dumps(encode_results(results))))
        outcome = await run_segment(code, FUNCTIONS, CodeLimits(), caller, state, answers)
        return decode_outcome(json.loads(json.dumps(encode_outcome(outcome))))


async def test_segments_give_what_one_run_gives_and_each_call_is_made_once_between_them() -> None:
    made: list[str] = []

    async def dispatch(call: NestedCall) -> Outcome:
        made.append(call.id)
        if call.key == "greet":
            return Raised("PermissionError", "no")
        return Returned(call.arguments["a"] + call.arguments["b"])

    segments = Segments()
    outcome = await segmented(segments)(PROGRAM, FUNCTIONS, dispatch, CodeLimits(), "c1")
    assert isinstance(outcome, Finished)
    assert outcome.value == {"a": 3, "b": "denied: no", "c": 13} and outcome.printed == "start\n"
    assert made == ["c1/1", "c1/2", "c1/3"]
    # the first segment runs the code; each next one continues the state with the results of its calls
    assert segments.seen == [(True, []), (False, ["c1/1"]), (False, ["c1/2"]), (False, ["c1/3"])]
    whole = await run_program(PROGRAM, FUNCTIONS, dispatch, CodeLimits(), "c1")
    assert isinstance(whole, Finished) and whole.value == outcome.value


async def test_a_held_call_pauses_the_program_once_the_calls_beside_it_are_in_and_a_resume_answers_it() -> None:
    made: list[str] = []

    async def dispatch(call: NestedCall) -> Outcome:
        made.append(call.id)
        if call.key == "greet":
            return Waiting({"pending": call.id})  # a call that waits for a person
        return Returned(call.arguments["a"] + call.arguments["b"])

    code = "import asyncio\nx, y = await asyncio.gather(add(1, 1), greet('a'))\nz = await add(x, 1)\n[x, y, z]"
    segments = Segments()
    paused = await segmented(segments)(code, FUNCTIONS, dispatch, CodeLimits(), "p")
    assert isinstance(paused, Paused)
    assert [(c.id, w.record) for c, w in paused.waiting] == [("p/2", {"pending": "p/2"})]
    assert made == ["p/1", "p/2"]
    # the add beside the held call was given to the program before it paused: its state waits on greet only
    assert [w["id"] for w in paused.state["waiting"]] == ["p/2"]
    assert segments.seen == [(True, []), (False, ["p/1"])]
    state = json.loads(json.dumps(paused.state))  # into the run's snapshot and back

    async def answered(call: NestedCall) -> Outcome:
        made.append(call.id)
        return Returned("hi") if call.key == "greet" else Returned(call.arguments["a"] + call.arguments["b"])

    done = await segmented(Segments())(None, FUNCTIONS, answered, CodeLimits(), "p", state=state)
    assert isinstance(done, Finished) and done.value == [2, "hi", 3]
    assert made == ["p/1", "p/2", "p/2", "p/3"]  # on resume only the held call is made again (with its answer)


async def test_a_program_that_fails_in_a_later_segment_fails_with_its_line() -> None:
    async def dispatch(call: NestedCall) -> Outcome:
        return Returned(call.arguments["a"] + call.arguments["b"])

    code = "a = await add(1, 2)\nb = a / 0\nb"
    outcome = await segmented(Segments())(code, FUNCTIONS, dispatch, CodeLimits(), "f")
    data = encode_outcome(outcome)
    assert "ZeroDivisionError" in data["failed"]["message"] and data["failed"]["line"] == 2, data
