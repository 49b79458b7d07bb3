"""Tool-result cache: what a hit costs, beside a dict lookup (issue 19 §5).

    python benchmarks/bench_cache.py            # full run
    python benchmarks/bench_cache.py --quick    # fewer repetitions

What is compared, all measured in this run, interleaved, as CPU time of this process, best of the repeats:

* agentkit hit: the pipeline's cache step (`agentkit._agent._cache.through_cache`) answering a call of a
  ``cache=ToolCache(scope="process")`` tool from its cache: the call's key (its JSON arguments validated,
  defaults applied, as canonical JSON: made once per argument text, then remembered), the entry looked up
  and checked for expiry, the result re-addressed to the call.
* floor (dict lookup): ``entries[arguments_text]`` with the call's argument text as the key, the least a
  cache can do (no validation, no canonical key: ``{"b":1,"a":2}`` and ``{"a":2,"b":1}`` would miss).
* floor (hand-written): the same work written out: the argument text's key (validated once per text by
  one pydantic `TypeAdapter` of a dataclass of the parameters, defaults applied, ``json.dumps(sort_keys=
  True)``; then looked up), the entry looked up and checked for expiry, a copy of the result for the call.
* whole runs: a two-step `Agent.generate` (the model calls the tool once, then answers) with the tool
  cached and hitting, beside the same run with the tool uncached (the run's own overhead dominates).

Timing never fails the script (machines here are shared and noisy); it asserts what it computes.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import time
from collections.abc import Awaitable, Callable
from types import SimpleNamespace
from typing import Any, cast

from pydantic import TypeAdapter

from agentkit import ToolCall, tool
from agentkit._agent._cache import through_cache  # the step measured
from agentkit._agent.hooks import IN_PROCESS
from agentkit.agent import Agent
from agentkit.cache import ToolCache
from agentkit.messages import AssistantMessage, Message, TextPart, ToolResult, ToolResultsMessage
from agentkit.testing import FunctionInfo, FunctionModel

ARGUMENTS = '{"quote": "USD", "base": "EUR"}'


@dataclasses.dataclass
class RateArguments:
    """`rate`'s arguments, for the hand-written floor's validation."""

    base: str
    quote: str = "USD"
    precision: int = 4


def rate(base: str, quote: str = "USD", precision: int = 4) -> float:
    """The exchange rate from base to quote."""
    return round(1.0842, precision)


async def cpu_per_call(fn: Callable[[], Awaitable[Any]], number: int) -> float:
    start = time.process_time()
    for _ in range(number):
        await fn()
    return (time.process_time() - start) / number


def cache_step() -> tuple[
    Callable[[], Awaitable[ToolResult]], Callable[[], Awaitable[Any]], Callable[[], Awaitable[Any]]
]:
    """The agentkit hit, and the two floors, each answering the same call from a warm cache."""
    cached = tool(cache=ToolCache(scope="process"))(rate)
    call = ToolCall("call_1", "rate", ARGUMENTS)
    answer = ToolResult("call_0", "rate", [TextPart("1.0842")], 1.0842)
    config = cast(
        Any, SimpleNamespace(options=SimpleNamespace(session_id=None), emit=None, tracing=None, engine=IN_PROCESS)
    )
    state = cast(Any, SimpleNamespace(memo=None))

    async def run() -> ToolResult:
        return answer

    async def hit() -> ToolResult:
        return await through_cache(config, state, cached, call, run)

    plain: dict[str, ToolResult] = {ARGUMENTS: answer}

    async def lookup() -> ToolResult:
        return plain[call.arguments]  # type: ignore[index]

    adapter = TypeAdapter(RateArguments)
    keys: dict[str, str] = {}
    hand: dict[str, tuple[float | None, ToolResult]] = {}

    def key_of(arguments: str) -> str:
        key = keys.get(arguments)
        if key is None:  # validated once per argument text, defaults applied, as canonical JSON
            validated = dataclasses.asdict(adapter.validate_json(arguments))
            key = keys[arguments] = json.dumps(validated, sort_keys=True, separators=(",", ":"))
        return key

    async def by_hand() -> ToolResult:
        expires, found = hand[key_of(ARGUMENTS)]
        if expires is not None and time.monotonic() >= expires:
            raise AssertionError("never expires here")
        return dataclasses.replace(found, call_id=call.id)

    hand[key_of(ARGUMENTS)] = (None, answer)
    return hit, lookup, by_hand


def runs() -> tuple[Callable[[], Awaitable[Any]], Callable[[], Awaitable[Any]]]:
    """Two-step runs: the tool cached (every run after the first hits), and the same tool uncached."""

    def turn(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
        last = messages[-1]
        if isinstance(last, ToolResultsMessage):
            return f"The rate is {last.results[0].text}."
        return AssistantMessage(tool_calls=[ToolCall("call_1", "rate", ARGUMENTS)])

    cached = Agent(id="cached", model=FunctionModel(turn), tools=[tool(cache=ToolCache(scope="process"))(rate)])
    plain = Agent(id="plain", model=FunctionModel(turn), tools=[tool(rate)])
    return (lambda: cached.generate("rate?")), (lambda: plain.generate("rate?"))


async def main(quick: bool) -> None:
    hit, lookup, by_hand = cache_step()
    first = await hit()  # the first call misses and fills the cache
    assert (await hit()).output == 1.0842 and (await lookup()).output == 1.0842 and (await by_hand()).output == 1.0842
    assert first.output == 1.0842
    cached_run, plain_run = runs()
    assert (await cached_run()).text == (await plain_run()).text == "The rate is 1.0842."
    step_number, run_number, repeats = (2000, 100, 3) if quick else (20000, 1000, 7)
    best: dict[str, float] = {}
    for _ in range(repeats):
        for name, fn, number in (
            ("agentkit hit", hit, step_number),
            ("floor: dict lookup", lookup, step_number),
            ("floor: hand-written", by_hand, step_number),
            ("run, cached tool", cached_run, run_number),
            ("run, uncached tool", plain_run, run_number),
        ):
            took = await cpu_per_call(fn, number)
            best[name] = min(best.get(name, took), took)
    print(f"cache hit cost (CPU per call, best of {repeats}):")
    for name in ("agentkit hit", "floor: dict lookup", "floor: hand-written"):
        print(f"  {name:<22} {best[name] * 1e6:8.2f} us")
    print(f"  ratio to the dict lookup:  {best['agentkit hit'] / best['floor: dict lookup']:6.1f}x")
    print(f"  ratio to the hand-written: {best['agentkit hit'] / best['floor: hand-written']:6.2f}x")
    print("two-step runs (CPU per run):")
    for name in ("run, cached tool", "run, uncached tool"):
        print(f"  {name:<22} {best[name] * 1e6:8.1f} us")
    print(f"  cached / uncached:         {best['run, cached tool'] / best['run, uncached tool']:6.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    asyncio.run(main(parser.parse_args().quick))
