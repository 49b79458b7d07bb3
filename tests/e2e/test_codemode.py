"""Code mode against a real llama-server: the model is forced to call the code tool, its program calls two tools.

The model (Qwen2.5-Coder-0.5B, temperature 0) writes the program; the program runs in the sandbox and each
of its calls goes through the run. What is asserted is the protocol: the forced call reached the code tool
with a program, the program's calls ran validated through the pipeline (tagged with their caller), and the
server accepted the program's result in the next turn.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentkit import Agent, RunLimits, tool
from agentkit.codemode import CodeMode
from agentkit.events import ToolCallEvent, ToolResultEvent
from agentkit.models import ModelSettings

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

INSTRUCTIONS = (
    "You answer by calling run_python with a short Python program that awaits the functions. To add 20 and 1, "
    "then double the sum, the program is exactly:\nx = await add(a=20, b=1)\nawait double(n=x)"
)


async def test_a_forced_program_calls_two_tools(openai_model: Any) -> None:
    ran: list[tuple[str, int]] = []

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        ran.append(("add", a + b))
        return a + b

    @tool
    def double(n: int) -> int:
        """Double an integer."""
        ran.append(("double", 2 * n))
        return 2 * n

    agent = Agent(
        instructions=INSTRUCTIONS,
        model=openai_model,
        tools=[add, double],
        code_mode=CodeMode(),
        limits=RunLimits(max_steps=2),
        model_settings=ModelSettings(temperature=0, max_tokens=200),
    )
    # "required", not the tool's name: llama-server ignores a named tool_choice (E2E.md) and then may answer in text
    stream = agent.stream("Add 20 and 1, then double the sum.", tool_choice="required")
    events = [e async for e in stream]
    result = stream.result
    programs = [c for c in result.tool_calls if c.name == "run_python"]
    assert programs and "await" in programs[0].arguments_dict()["code"], programs
    nested = [e for e in events if isinstance(e, ToolCallEvent) and e.caller is not None]
    assert {e.tool_name for e in nested} == {"add", "double"}, [e.input for e in nested]
    assert {e.caller for e in nested} <= {c.id for c in programs}  # each tagged with the program that made it
    assert ("add", 21) in ran and ("double", 42) in ran, ran
    done = [e for e in events if isinstance(e, ToolResultEvent) and e.tool_name == "run_python"]
    assert done and done[0].output["result"] == 42, done
    assert len(result.steps) == 2  # the server took the program's result and answered (or called again)
