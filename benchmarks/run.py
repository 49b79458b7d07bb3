"""agentkit benchmarks: each figure is printed beside a floor measured in the same run, as a ratio.

    python benchmarks/run.py            # full run
    python benchmarks/run.py --quick    # fewer repetitions (CI prints figures, never fails on them)

Machines here are shared and noisy: the ratio to the floor is the figure that means something. Each
measurement takes the best of several repeats (the least disturbed one).
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from pydantic import BaseModel, TypeAdapter
from pydantic_core import to_json

TARGETS = {
    "import": 1.6,
    "decorate_us": 100.0,
    "first_schema": 1.2,
    "registry_call": 4.0,
    "format_tools_cached": 2.0,
}


def best_of(fn: Callable[[], float], repeats: int) -> float:
    return min(fn() for _ in range(repeats))


def per_call(fn: Callable[[], Any], number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number


async def per_await(fn: Callable[[], Awaitable[Any]], number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        await fn()
    return (time.perf_counter() - start) / number


def report(name: str, value: float, floor: float, target_key: str, unit: str = "ratio") -> None:
    ratio = value / floor
    target = TARGETS[target_key]
    figure = value * 1e6 if unit == "us" else ratio
    ok = "ok" if figure <= target else "OVER TARGET"
    unit_text = "x" if unit == "ratio" else " us"
    print(
        f"{name:<48} {value * 1e6:10.1f} us   floor {floor * 1e6:10.1f} us   ratio {ratio:5.2f}x"
        f"   target <= {target:g}{unit_text}  [{ok}]"
    )


# ---- the 6-parameter tool of the issue -------------------------------------------------------------


class Filters(BaseModel):
    """Search filters."""

    tags: list[str] = []
    min_score: float = 0.0


def make_function() -> Callable[..., Any]:
    """A fresh 6-parameter function each time, so no cache is shared between measurements."""

    def search(
        query: str,
        limit: int = 10,
        threshold: float | None = None,
        mode: Literal["fast", "exact"] = "fast",
        tags: list[str] = [],  # noqa: B006 - only read
        filters: Filters | None = None,
    ) -> list[str]:
        """Search the documents.

        Args:
            query: What to look for.
            limit: At most this many results.
            threshold: Minimum relevance.
            mode: Search strategy.
            tags: Only documents with these tags.
            filters: Extra filters.
        """
        return []

    return search


def bench_import(repeats: int) -> None:
    def run(code: str) -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        return time.perf_counter() - start

    empty = best_of(lambda: run("pass"), repeats)
    pydantic = best_of(lambda: run("from pydantic import BaseModel, TypeAdapter"), repeats) - empty
    agentkit = best_of(lambda: run("import agentkit"), repeats) - empty
    report("import agentkit  vs  import pydantic BaseModel+TypeAdapter", agentkit, pydantic, "import")


def bench_definition(repeats: int, number: int) -> None:
    from agentkit import Tool

    functions = [make_function() for _ in range(number * repeats)]
    it = iter(functions)
    decorate = best_of(lambda: per_call(lambda: Tool(next(it)), number), repeats)
    floor_fns = iter([make_function() for _ in range(number * repeats)])
    signature_floor = best_of(lambda: per_call(lambda: TypeAdapter(next(floor_fns)), number), repeats)
    report("@tool on a 6-parameter function (schema unread)", decorate, signature_floor, "decorate_us", unit="us")

    tools = iter([Tool(make_function()) for _ in range(number * repeats)])
    first_read = best_of(lambda: per_call(lambda: next(tools).input_schema, number), repeats)
    adapters = iter([make_function() for _ in range(number * repeats)])
    floor = best_of(lambda: per_call(lambda: TypeAdapter(next(adapters)).json_schema(), number), repeats)
    report("first input_schema read  vs  TypeAdapter(fn).json_schema()", first_read, floor, "first_schema")


def bench_call(repeats: int, number: int) -> None:
    from agentkit import Registry, ToolCall, tool

    async def add(a: int, b: int) -> int:
        return a + b

    registry = Registry([tool(add)])
    call = ToolCall(id="call_1", name="add", arguments='{"a": 1, "b": 2}')
    adapter = TypeAdapter(add)
    raw = b'{"a": 1, "b": 2}'

    async def floor_once() -> bytes:
        return to_json(await adapter.validate_json(raw))

    async def main() -> None:
        result = await registry.call(call)
        assert not result.is_error and result.output == 3
        for _ in range(200):  # warm up both paths
            await registry.call(call)
            await floor_once()
        ours = min([await per_await(lambda: registry.call(call), number) for _ in range(repeats)])
        floor = min([await per_await(floor_once, number) for _ in range(repeats)])
        report("await registry.call(add, JSON args)  vs  validate_json+to_json", ours, floor, "registry_call")

    asyncio.run(main())


def bench_format_tools(repeats: int, size: int) -> None:
    from agentkit import Registry, Tool
    from agentkit.providers import get_provider, provider_names

    registry = Registry()
    schemas = []
    for i in range(size):
        schema = {
            "type": "object",
            "properties": {"q": {"type": "string", "description": f"query {i}"}, "n": {"type": "integer"}},
            "required": ["q"],
        }
        schemas.append((f"tool_{i}", f"Tool number {i}.", schema))
        registry.add(f"tool_{i}", Tool.from_json_schema(f"tool_{i}", schema, description=f"Tool number {i}."))

    def floor_once() -> dict[str, Any]:
        return {
            "tools": [
                {"type": "function", "function": {"name": n, "description": d, "parameters": s}} for n, d, s in schemas
            ]
        }

    floor = best_of(lambda: per_call(floor_once, 20), repeats)
    for name in provider_names():
        try:
            provider = get_provider(name)
        except ImportError:
            continue
        fresh = Registry({k: Tool.from_json_schema(k, s, description=d) for k, d, s in schemas})
        start = time.perf_counter()
        provider.format_tools(fresh)
        first = time.perf_counter() - start
        cached = best_of(lambda p=provider: per_call(lambda: p.format_tools(registry), 20), repeats)  # type: ignore[misc]
        print(f"  first build {name:<17} {first * 1e3:8.1f} ms for {size} tools")
        report(f"format_tools[{name}] x{size}, repeated  vs  building dicts", cached, floor, "format_tools_cached")
        per_tool = _per_tool_cache_path(provider, registry, repeats)
        print(f"  new registry, same tools {name:<17} {per_tool * 1e6:10.1f} us  ({per_tool / floor:4.2f}x floor)")


def _per_tool_cache_path(provider: Any, registry: Any, repeats: int) -> float:
    """A new Registry of the same tools each call: the payload cache misses, the per-tool cache hits."""
    from agentkit import Registry

    provider.format_tools(registry)
    fresh = iter([Registry(dict(registry.items())) for _ in range(5 * repeats)])
    return best_of(lambda: per_call(lambda: provider.format_tools(next(fresh)), 5), repeats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    repeats = 3 if args.quick else 7
    number = 200 if args.quick else 1000
    print(f"python {sys.version.split()[0]}; best of {repeats}; ratios are against the floor measured now")
    bench_import(repeats)
    bench_definition(repeats, number)
    bench_call(repeats, number * 5)
    bench_format_tools(repeats, 1000)


if __name__ == "__main__":
    main()
