"""Shared by the code mode tests: a registry of small tools and a way to run a program through it."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from agentkit import Registry, tool
from agentkit.codemode import CodeLimits, CodeMode
from agentkit.messages import ToolCall, ToolResult

CALLS: list[tuple[str, Any]] = []


@tool
async def add(a: int, b: int) -> int:
    """Add two numbers."""
    CALLS.append(("add", (a, b)))
    return a + b


@tool
def greet(name: str) -> dict[str, str]:
    """Greet someone."""
    CALLS.append(("greet", name))
    return {"text": f"hello {name}"}


def registry(**extra: Any) -> Registry:
    return Registry({"add": add, "greet": greet, **extra})


async def run_code(code: str, reg: Registry | None = None, **mode: Any) -> ToolResult:
    """`code` run by the code tool of `reg` (called on its own: no agent run)."""
    limits = mode.pop("limits", CodeLimits(timeout=2.0))
    deps = mode.pop("deps", None)
    offered = CodeMode(limits=limits, **mode).apply(reg if reg is not None else registry())
    return await offered.call(ToolCall("prog", "run_python", {"code": code}), deps=deps)


@dataclass
class Overlap:
    """A tool that sleeps and counts how many of its calls run at once (`peak`)."""

    running: int = 0
    peak: int = 0
    tool: Any = field(init=False)

    def __post_init__(self) -> None:
        @tool
        async def work(n: int) -> int:
            """Sleep a little, then answer twice n."""
            self.running += 1
            self.peak = max(self.peak, self.running)
            await asyncio.sleep(0.05)
            self.running -= 1
            return n * 2

        self.tool = work
