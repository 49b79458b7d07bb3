"""Structured output's cost: a two-step run ending in a typed answer, against the same run ending in text.

    python benchmarks/bench_output.py            # full run
    python benchmarks/bench_output.py --quick    # fewer repetitions

Both runs make the same `FunctionModel` turns (a call of `async def add`, then an answer) and the same
`Registry.call`; the typed run's answer is the JSON of a small pydantic model, validated as the agent's
`output_type`. The floor is the text run, measured in the same process, each call timed in turn with the
typed ones: the figure is the ratio (the issue's target is <= 1.3x). A second line is the output tool's run;
the last, what pydantic's own `validate_json` of the answer costs, for scale. Timing never fails the
script: machines here are shared and noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import Any, Literal

from pydantic import BaseModel, TypeAdapter

from agentkit import Registry, ToolCall, tool
from agentkit.agent import Agent
from agentkit.messages import AssistantMessage, Message, ToolResultsMessage
from agentkit.output import Output
from agentkit.testing import FunctionInfo, FunctionModel

TARGET_RATIO = 1.3


class Sum(BaseModel):
    """The answer: a sum and how sure the model is."""

    total: int
    terms: list[int]
    confidence: Literal["low", "high"] = "high"


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


CALL = AssistantMessage(tool_calls=[ToolCall("call_1", "add", '{"a": 2, "b": 3}')])
ANSWER = json.dumps({"total": 5, "terms": [2, 3], "confidence": "high"})


def text_turn(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
    last = messages[-1]
    if isinstance(last, ToolResultsMessage):
        return f"The sum is {last.results[0].text}."
    return CALL


def typed_turn(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
    last = messages[-1]
    if isinstance(last, ToolResultsMessage):
        return ANSWER
    return CALL


def tool_turn(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
    last = messages[-1]
    if isinstance(last, ToolResultsMessage) and last.results[0].name == "add":
        return AssistantMessage(tool_calls=[ToolCall("call_2", "final_result", ANSWER)])
    return CALL


async def measure(fns: list[Any], samples: int) -> list[float]:
    """A low quantile of the time of one call of each of `fns`, the calls interleaved one by one.

    Machines here are shared: a best-of-chunks minimum lands one function in a quiet moment and the other
    in a busy one. Timing single calls in turn and taking each one's 20th percentile compares like with like.
    """
    times: list[list[float]] = [[] for _ in fns]
    clock = time.perf_counter
    for _ in range(samples):
        for i, fn in enumerate(fns):
            start = clock()
            await fn()
            times[i].append(clock() - start)
    return [sorted(t)[len(t) // 5] for t in times]


def line(name: str, value: float, floor: float, target: float | None) -> None:
    ratio = value / floor
    verdict = "" if target is None else f"   target <= {target:g}x  [{'ok' if ratio <= target else 'OVER TARGET'}]"
    print(f"{name:<52} {value * 1e6:10.1f} us   floor {floor * 1e6:10.1f} us   ratio {ratio:5.2f}x{verdict}")


async def main(quick: bool) -> None:
    registry = Registry({"add": add})
    text = Agent(id="bench", instructions="Add numbers.", model=FunctionModel(text_turn), tools=registry)
    typed = Agent(
        id="bench", instructions="Add numbers.", model=FunctionModel(typed_turn), tools=registry, output_type=Sum
    )
    as_tool = Agent(
        id="bench",
        instructions="Add numbers.",
        model=FunctionModel(tool_turn),
        tools=registry,
        output_type=Output(Sum, mode="tool"),
    )
    assert (await text.generate("What is 2 + 3?")).text == "The sum is 5."
    assert (await typed.generate("What is 2 + 3?")).output == Sum(total=5, terms=[2, 3])
    assert (await as_tool.generate("What is 2 + 3?")).output == Sum(total=5, terms=[2, 3])

    samples = 1_500 if quick else 5_000
    floor, native, tool_mode = await measure(
        [lambda: text.generate("What is 2 + 3?"), lambda: typed.generate("What is 2 + 3?"),
         lambda: as_tool.generate("What is 2 + 3?")],
        samples,
    )  # fmt: skip
    line("two-step run, typed answer (native) vs text", native, floor, TARGET_RATIO)
    line("two-step run, typed answer (output tool) vs text", tool_mode, floor, None)
    adapter = TypeAdapter(Sum)
    start = time.perf_counter()
    for _ in range(samples):
        adapter.validate_json(ANSWER)
    validate = (time.perf_counter() - start) / samples
    print(f"  for scale: pydantic validate_json of the answer alone {validate * 1e6:8.1f} us")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    asyncio.run(main(parser.parse_args().quick))
