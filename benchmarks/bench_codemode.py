"""Code mode against direct tool calls: model turns and request bytes, cost per call, pause and resume.

    python benchmarks/bench_codemode.py            # full run
    python benchmarks/bench_codemode.py --quick    # fewer repetitions

1. A task of 10 dependent calls (each call's argument is the previous call's result): as direct calls the
   model needs 11 turns; as one program, 2. Request bytes are the OpenAI Chat bodies agentkit would send for
   those turns (built by the provider, offline), summed. Target: >= 5x fewer turns.
2. Cost per call: the same chain of N calls made inside one program (the floor's program with no call
   subtracted) against N direct calls, each in its own model turn through the same loop (a scripted model:
   the model's own latency is not counted). Target: a nested call costs <= 1.5x a direct one.
   Beside them, the floor of the sandbox itself: the same program run by `pydantic-monty` alone (no
   agentkit), each call paused at as a pending future and resumed with its value, as agentkit must (any
   call may pause the run, so none is answered in place). Nested minus that floor is agentkit's part.
3. Pause and resume: a run whose call needs approval, paused, snapshotted to JSON, read back and resumed to
   its end; the call made inside a program against the same call made directly, and against the sandbox's
   own floor (one call paused at, the worker's state dumped, loaded into another session and resumed).

The scripts assert what they compute; timing never fails the script.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import Callable, Sequence
from typing import Any

from agentkit import Agent, RunLimits, tool
from agentkit.codemode import CodeLimits, CodeMode
from agentkit.messages import AssistantMessage, Message, ModelResponse, ToolCall, ToolResultsMessage
from agentkit.models import ModelSettings
from agentkit.providers import get_provider
from agentkit.registry import Registry
from agentkit.runs import MemoryRunStore, RunSnapshot
from agentkit.testing import FunctionInfo, FunctionModel

KEY = b"benchmark-key-32-bytes-long....."
MODE = CodeMode(limits=CodeLimits(max_calls=10_000, timeout=30))


@tool
def step(n: int) -> int:
    """The next value after n (a stand-in for a lookup whose answer feeds the next one)."""
    return n + 1


@tool(requires_approval=True)
def approve_me(n: int) -> int:
    """A call a person approves."""
    return n


class Measured(FunctionModel):
    """A scripted model that also adds up the bytes of the OpenAI Chat body each request would be."""

    def __init__(self, fn: Any) -> None:
        super().__init__(fn)
        self.turns = 0
        self.bytes = 0

    async def request(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> ModelResponse:
        self.turns += 1
        body = get_provider("openai").build_request(messages, tools)
        self.bytes += len(json.dumps(body))
        return await super().request(messages, tools, settings)


def direct_turns(count: int) -> Callable[[list[Message], FunctionInfo], AssistantMessage | str]:
    """The model making `count` dependent calls, one per turn, then answering."""

    def turn(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
        results = [m for m in messages if isinstance(m, ToolResultsMessage)]
        if len(results) == count:
            return f"The value is {results[-1].results[0].text if results else 0}."
        value = int(results[-1].results[0].text) if results else 0
        return AssistantMessage(tool_calls=[ToolCall(f"c{len(results)}", "step", {"n": value})])

    return turn


Turn = Callable[[list[Message], FunctionInfo], "AssistantMessage | str"]


def program_turns(count: int, tool_name: str = "step") -> Turn:
    """The model writing one program that makes `count` dependent calls, then answering."""
    code = f"n = 0\nfor i in range({count}):\n    n = await {tool_name}(n)\nn"

    def turn(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
        last = messages[-1]
        if isinstance(last, ToolResultsMessage):
            return f"The value is {last.results[0].text}."
        return AssistantMessage(tool_calls=[ToolCall("prog", "run_python", {"code": code})])

    return turn


def monty_chain(count: int, repeats: int) -> float:
    """Best time of the program of `program_turns(count)` run by pydantic-monty alone, each call answered
    through a pending future (the host's answer is the value the tool would give)."""
    from pydantic_monty import AsyncFunctionSnapshot, AsyncMonty, AsyncNameLookupSnapshot, MontyComplete

    code = f"n = 0\nfor i in range({count}):\n    n = await step(n)\nn"

    async def never(n: int) -> int:  # a name the program can look up; its calls are answered by hand
        raise AssertionError("unreachable")

    async def once(pool: Any) -> None:
        async with pool.checkout(script_name="program.py") as session:
            snap = await session.feed_start(code, external_lookup={"step": never})
            args: dict[int, int] = {}
            while not isinstance(snap, MontyComplete):
                if isinstance(snap, AsyncNameLookupSnapshot):
                    snap = await snap.resume_auto()
                elif isinstance(snap, AsyncFunctionSnapshot):
                    args[snap.call_id] = snap.args[0]
                    snap = await snap.resume({"future": ...})
                else:
                    snap = await snap.resume({i: {"return_value": args.pop(i) + 1} for i in snap.pending_call_ids})
            assert snap.output == count, snap.output

    async def timed() -> float:
        async with AsyncMonty(min_processes=1, max_processes=2) as pool:
            await once(pool)  # a warm worker, as agentkit's pool keeps one
            times = []
            for _ in range(repeats):
                start = time.perf_counter()
                await once(pool)
                times.append(time.perf_counter() - start)
            return min(times)

    return asyncio.run(timed())


def monty_pause(repeats: int) -> float:
    """Best time of pydantic-monty alone pausing a one-call program, dumping it, loading it elsewhere, resuming."""
    from pydantic_monty import AsyncFunctionSnapshot, AsyncMonty, AsyncNameLookupSnapshot, MontyComplete

    async def never(n: int) -> int:
        raise AssertionError("unreachable")

    async def once(pool: Any) -> None:
        lookup = {"approve_me": never}
        async with pool.checkout(script_name="program.py") as session:
            snap = await session.feed_start("await approve_me(1)", external_lookup=lookup)
            while not hasattr(snap, "pending_call_ids"):
                if isinstance(snap, AsyncFunctionSnapshot):
                    snap = await snap.resume({"future": ...})
                else:
                    assert isinstance(snap, AsyncNameLookupSnapshot), snap
                    snap = await snap.resume_auto()
            blob, ids = snap.dump(), list(snap.pending_call_ids)
        async with pool.checkout(script_name="program.py") as session:
            snap = await session.load_snapshot(blob, external_lookup=lookup)
            done = await snap.resume({i: {"return_value": 1} for i in ids})
            assert isinstance(done, MontyComplete) and done.output == 1, done

    async def timed() -> float:
        async with AsyncMonty(min_processes=1, max_processes=2) as pool:
            await once(pool)
            times = []
            for _ in range(repeats):
                start = time.perf_counter()
                await once(pool)
                times.append(time.perf_counter() - start)
            return min(times)

    return asyncio.run(timed())


def best(fn: Callable[[], Any], repeats: int) -> float:
    """Best time of `repeats` runs of the coroutine function `fn`, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        asyncio.run(fn())
        times.append(time.perf_counter() - start)
    return min(times)


def turns_and_bytes() -> None:
    direct = Measured(direct_turns(10))
    coded = Measured(program_turns(10))
    limits = RunLimits(max_steps=20)
    a = asyncio.run(Agent(model=direct, tools=[step], limits=limits).generate("Step ten times from 0."))
    b = asyncio.run(Agent(model=coded, tools=[step], code_mode=MODE).generate("Step ten times from 0."))
    assert a.text == "The value is 10." and b.text == "The value is Result: 10.", (a.text, b.text)
    print("1. 10 dependent calls: model turns and request bytes (OpenAI Chat bodies, summed)")
    print(f"   {'direct calls':<22}{direct.turns:>6} turns {direct.bytes:>10,} bytes")
    print(f"   {'one program':<22}{coded.turns:>6} turns {coded.bytes:>10,} bytes")
    print(
        f"   fewer turns: {direct.turns / coded.turns:5.1f}x (target >= 5x)   "
        f"fewer bytes: {direct.bytes / coded.bytes:5.2f}x"
    )


def cost_per_call(count: int, repeats: int) -> None:
    limits = RunLimits(max_steps=count + 2)
    direct = Agent(model=FunctionModel(direct_turns(count)), tools=[step], limits=limits)
    coded = Agent(model=FunctionModel(program_turns(count)), tools=[step], code_mode=MODE)
    empty = Agent(model=FunctionModel(program_turns(0)), tools=[step], code_mode=MODE)
    none = Agent(model=FunctionModel(direct_turns(0)), tools=[step])
    asyncio.run(coded.generate("warm the sandbox pool"))
    t_direct = best(lambda: direct.generate("go"), repeats)
    t_none = best(lambda: none.generate("go"), repeats)
    t_coded = best(lambda: coded.generate("go"), repeats)
    t_empty = best(lambda: empty.generate("go"), repeats)
    per_direct = (t_direct - t_none) / count
    per_nested = (t_coded - t_empty) / count
    per_floor = (monty_chain(count, repeats) - monty_chain(0, repeats)) / count
    ours = per_nested - per_floor
    print(f"2. cost per call, {count} dependent calls (the run without calls subtracted from each)")
    print(f"   {'direct (a turn each)':<34}{per_direct * 1e6:>9.0f} us per call")
    print(f"   {'inside one program':<34}{per_nested * 1e6:>9.0f} us per call")
    print(f"   {'floor: pydantic-monty alone':<34}{per_floor * 1e6:>9.0f} us per call")
    print(f"   {'agentkit (program minus floor)':<34}{ours * 1e6:>9.0f} us per call")
    print(
        f"   ratio to direct {per_nested / per_direct:5.2f}x (target <= 1.5x); "
        f"to the floor {per_nested / per_floor:5.2f}x; agentkit's part to direct {ours / per_direct:5.2f}x"
    )


def pause_and_resume(repeats: int) -> None:
    def direct_turn(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
        if isinstance(messages[-1], ToolResultsMessage):
            return "done"
        return AssistantMessage(tool_calls=[ToolCall("c1", "approve_me", {"n": 1})])

    direct = Agent(id="b", model=FunctionModel(direct_turn), tools=[approve_me], store=MemoryRunStore(key=KEY))
    coded = Agent(
        id="b",
        model=FunctionModel(program_turns(1, "approve_me")),
        tools=[approve_me],
        code_mode=MODE,
        store=MemoryRunStore(key=KEY),
    )
    sizes: dict[str, int] = {}

    def cycle(agent: Agent[Any, Any], call_id: str, label: str) -> Callable[[], Any]:
        async def run() -> None:
            paused = await agent.generate("go")
            assert paused.status == "awaiting_approval"
            text = paused.snapshot().to_json()
            sizes[label] = len(text)
            done = await agent.resume(RunSnapshot.from_json(text), {call_id: True})
            assert done.status == "complete", done.status

        return run

    t_direct = best(cycle(direct, "c1", "direct"), repeats)
    t_coded = best(cycle(coded, "prog/1", "program"), repeats)
    print("3. pause, snapshot to JSON, read back, resume to the end (one call needing approval)")
    print(f"   {'direct call':<22}{t_direct * 1e3:>9.2f} ms   snapshot {sizes['direct']:>7,} bytes")
    print(f"   {'inside a program':<22}{t_coded * 1e3:>9.2f} ms   snapshot {sizes['program']:>7,} bytes")
    t_floor = monty_pause(repeats)
    print(f"   {'floor: pydantic-monty alone':<22}{t_floor * 1e3:>9.2f} ms   (pause, dump, load, resume)")
    print(
        f"   ratio to direct {t_coded / t_direct:5.2f}x; program minus floor to direct "
        f"{(t_coded - t_floor) / t_direct:5.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    quick = parser.parse_args().quick
    count, repeats = (50, 3) if quick else (200, 7)
    turns_and_bytes()
    cost_per_call(count, repeats)
    pause_and_resume(repeats)


if __name__ == "__main__":
    main()
