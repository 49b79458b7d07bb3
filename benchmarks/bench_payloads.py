"""Tool payloads at scale, side by side with openai-agents and pydantic-ai (issue 9 §2).

    python benchmarks/bench_payloads.py            # 1,000 tools for time, 10,000 for memory
    python benchmarks/bench_payloads.py --quick    # fewer repeats, 2,000 tools for memory

Every figure is printed beside a floor or a peer measured in the same run, and says what it compares:

* FIRST build of a 1,000-tool OpenAI Chat payload of six-parameter tools (`benchmarks.run.make_function`:
  a nested model, an enum, optional and defaulted parameters, a return type), input schemas already built,
  default strict handling (the strict rewrite included), against openai-agents building the same
  function-tool list from the same schemas. openai-agents rewrites a schema for strict when its
  ``FunctionTool`` is made, so two peer figures are printed: making the tools (strict rewrite) plus
  converting them, which is the same work, and converting alone. ``strict=False`` is printed against the
  floor of building the entry dicts (its target: under 10 ms).
* a NEW registry of the same tools (per-definition caches hit, the list assembled) against the floor of
  building the 1,000 entry dicts; REPEATED ``format_tools`` with unchanged inputs (a payload cache hit)
  is printed on its own, in microseconds: it returns what was built before, which no floor does.
* MEMORY per tool at N six-parameter tools once the OpenAI payload is built, against the floor of what a
  schema costs anyway (a ``TypeAdapter`` and its JSON Schema per function) and against pydantic-ai building
  the same OpenAI tool list. Each is measured with tracemalloc in a fresh process.

The peers come from the ``bench`` extra (``pip install -e '.[bench]'``); a peer that is not installed is
reported as such. Nothing here fails on timing.
"""

from __future__ import annotations

import argparse
import copy
import functools
import gc
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

SIZE = 1000


def six_parameter_tools(size: int) -> list[tuple[str, str, Callable[..., Any]]]:
    """`size` fresh six-parameter functions (`benchmarks.run.make_function`: a nested model, an enum,
    optional and defaulted parameters, a documented docstring, a result type), keyed and described."""
    from benchmarks.run import make_function

    return [(f"search_{i}", f"Search the documents, shard {i}.", make_function()) for i in range(size)]


def best(fn: Callable[[], float], repeats: int) -> float:
    return min(fn() for _ in range(repeats))


def timed(fn: Callable[[], Any]) -> float:
    """CPU seconds `fn` takes (other processes on a shared machine do not inflate them), the cyclic garbage
    collector paused (as timeit does), for ours and peers alike."""
    gc.collect()
    gc.disable()
    try:
        start = time.process_time()
        fn()
        return time.process_time() - start
    finally:
        gc.enable()


def line(label: str, seconds: float, against: float, what: str) -> None:
    print(f"  {label:<60} {seconds * 1e3:9.2f} ms   {seconds / against:6.2f}x {what}")


# ---- time ----------------------------------------------------------------------------------------------


def agentkit_tools(size: int) -> Any:
    """A registry of the six-parameter tools, input schemas built (as a ready FunctionTool carries its own)."""
    from agentkit import Registry, Tool

    registry = Registry({k: Tool(fn, description=d) for k, d, fn in six_parameter_tools(size)})
    for item in registry.values():
        _ = item.input_schema  # built before the timer; the output schema is left as a tool leaves it
    return registry


@functools.cache
def _schemas(size: int) -> tuple[tuple[str, str, dict[str, Any]], ...]:
    return tuple((k, item.description, item.input_schema) for k, item in agentkit_tools(size).items())


def ready_schemas(size: int) -> list[tuple[str, str, dict[str, Any]]]:
    """The same tools' input schemas, each a private deep copy (openai-agents rewrites its schema in place)."""
    return [(k, d, copy.deepcopy(s)) for k, d, s in _schemas(size)]


def floor_dicts(size: int) -> float:
    entries = ready_schemas(size)

    def build() -> Any:
        return [
            {"type": "function", "function": {"name": n, "description": d, "parameters": s, "strict": False}}
            for n, d, s in entries
        ]

    return timed(build)


def openai_agents_figures(size: int, repeats: int) -> tuple[float, float] | None:
    """openai-agents on the same ready schemas: making the tools (its strict rewrite) + converting, and
    converting alone. Each schema is its own copy, made before the timer."""
    try:
        from agents import FunctionTool
        from agents.models.chatcmpl_converter import Converter
    except ImportError:
        return None

    async def invoke(ctx: Any, args: str) -> str:
        return ""

    def make(entries: list[tuple[str, str, dict[str, Any]]]) -> list[Any]:
        return [
            FunctionTool(name=n, description=d, params_json_schema=s, on_invoke_tool=invoke, strict_json_schema=True)
            for n, d, s in entries
        ]

    inputs = [ready_schemas(size) for _ in range(repeats)]
    both = min(timed(lambda e=e: [Converter.tool_to_openai(t) for t in make(e)]) for e in inputs)  # type: ignore[misc]
    tools = make(ready_schemas(size))
    convert = best(lambda: timed(lambda: [Converter.tool_to_openai(t) for t in tools]), repeats)
    return both, convert


def bench_time(repeats: int) -> None:
    from agentkit import Registry
    from agentkit.providers.openai import OpenAIChatProvider

    floor = best(lambda: floor_dicts(SIZE), repeats)
    registries = [agentkit_tools(SIZE) for _ in range(repeats)]
    first = min(timed(lambda r=r: OpenAIChatProvider().format_tools(r)) for r in registries)  # type: ignore[misc]
    loose_registries = [agentkit_tools(SIZE) for _ in range(repeats)]
    loose = min(timed(lambda r=r: OpenAIChatProvider().format_tools(r, strict=False)) for r in loose_registries)  # type: ignore[misc]
    print(f"FIRST build of a {SIZE}-tool OpenAI Chat payload, six-parameter tools (input schemas already built)")
    peers = openai_agents_figures(SIZE, repeats)
    if peers is None:
        print("  openai-agents is not installed (pip install -e '.[bench]'): no peer figure")
        line("agentkit, default strict handling", first, floor, "the floor (building the dicts)")
    else:
        both, convert = peers
        line("agentkit, default strict handling", first, both, "openai-agents making + converting (target <= 2x)")
        line("agentkit, default strict handling", first, convert, "openai-agents converting ready tools")
        line("openai-agents: FunctionTool(strict) + tool_to_openai", both, floor, "the floor")
        line("openai-agents: tool_to_openai of ready tools", convert, floor, "the floor")
    line("agentkit, strict=False (target: under 10 ms)", loose, floor, "the floor")
    line("floor: building the entry dicts", floor, floor, "the floor")

    provider = OpenAIChatProvider()
    registry = registries[0]
    provider.format_tools(registry)
    hit = best(lambda: timed(lambda: [provider.format_tools(registry) for _ in range(20)]) / 20, repeats)
    fresh = [Registry(dict(registry.items())) for _ in range(repeats)]
    again = min(timed(lambda r=r: provider.format_tools(r)) for r in fresh)  # type: ignore[misc]
    print(f"REPEATED format_tools, {SIZE} tools")
    line("a new registry of the same tools (definition caches hit)", again, floor, "the floor (building the dicts)")
    # a cache hit returns the payload built before: no floor does that work, so it gets no ratio
    print(f"  {'unchanged inputs (payload cache hit: nothing is built)':<60} {hit * 1e6:9.2f} us")


# ---- memory (each in a fresh process) --------------------------------------------------------------------

_MEMORY = r"""
import gc, sys, tracemalloc
sys.path.insert(0, {root!r})
from benchmarks.run import make_function
size, kind = {size}, {kind!r}
functions = [make_function() for _ in range(size)]
gc.collect()
tracemalloc.start()
if kind == "agentkit":
    from agentkit import Registry, Tool
    from agentkit.providers.openai import OpenAIChatProvider
    registry = Registry({{f"search_{{i}}": Tool(fn) for i, fn in enumerate(functions)}})
    gc.collect(); registry_only = tracemalloc.get_traced_memory()[0]
    payload = OpenAIChatProvider().format_tools(registry)
elif kind == "floor":
    from pydantic import TypeAdapter
    adapters = [TypeAdapter(fn) for fn in functions]
    schemas = [a.json_schema() for a in adapters]
    registry_only = 0
elif kind == "pydantic-ai":
    from pydantic_ai import Tool
    from pydantic_ai.models import ModelRequestParameters
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    model = OpenAIChatModel("gpt-4.1", provider=OpenAIProvider(api_key="bench"))
    tools = [Tool(fn, name=f"search_{{i}}") for i, fn in enumerate(functions)]
    gc.collect(); registry_only = tracemalloc.get_traced_memory()[0]
    params = model.customize_request_parameters(ModelRequestParameters(function_tools=[t.tool_def for t in tools]))
    payload = [model._map_tool_definition(d, {{}}) for d in params.function_tools]
gc.collect()
print(registry_only / size, tracemalloc.get_traced_memory()[0] / size)
"""


def memory_per_tool(kind: str, size: int) -> tuple[float, float] | None:
    root = str(Path(__file__).resolve().parents[1])
    code = _MEMORY.format(root=root, size=size, kind=kind)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root)
    if done.returncode != 0:
        if "ModuleNotFoundError" in done.stderr:
            return None
        raise RuntimeError(done.stderr)
    before, after = (float(x) for x in done.stdout.split())
    return before, after


def bench_memory(size: int) -> None:
    print(f"MEMORY per tool at {size:,} six-parameter tools, OpenAI Chat payload built (tracemalloc)")
    floor = memory_per_tool("floor", size)
    ours = memory_per_tool("agentkit", size)
    peer = memory_per_tool("pydantic-ai", size)
    assert floor is not None and ours is not None
    kib = 1024
    print(f"  {'floor: TypeAdapter + its JSON Schema per function':<60} {floor[1] / kib:9.1f} KiB")
    print(f"  {'agentkit: registry, schemas not built yet':<60} {ours[0] / kib:9.1f} KiB")
    print(f"  {'agentkit: payload built':<60} {ours[1] / kib:9.1f} KiB   {ours[1] / floor[1]:5.2f}x the floor")
    if peer is None:
        print("  pydantic-ai is not installed (pip install -e '.[bench]'): no peer figure")
    else:
        label = "pydantic-ai: Tools + OpenAI tool list built"
        print(f"  {label:<60} {peer[1] / kib:9.1f} KiB   {peer[1] / floor[1]:5.2f}x the floor")
        print(f"  agentkit uses {ours[1] / peer[1]:.2f}x pydantic-ai's memory per tool")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repeats, fewer tools for memory")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}; {json.dumps({'quick': args.quick})}")
    bench_time(3 if args.quick else 5)
    bench_memory(2000 if args.quick else 10_000)


if __name__ == "__main__":
    main()
