"""agentkit's main job, offline: tools from plain functions, a registry, a real agent run, every vendor's payload.

    python examples/quickstart.py            # the best model available, see below
    python examples/quickstart.py --local    # also set up the local LLM server if needed (~4 min, once)
    python examples/quickstart.py --test     # the offline TestModel, whatever else is available

The model, first match wins: OPENAI_API_KEY set -> OpenAI; ANTHROPIC_API_KEY set -> Anthropic; a local
llama.cpp server already built on this machine (or `--local`) -> that server through the official
`openai` client; otherwise agentkit's TestModel, which calls the tools with schema-valid arguments.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator
from typing import Literal

from pydantic import BaseModel, Field

from agentkit import Agent, Registry, tool
from agentkit.models import Model, ModelSettings
from agentkit.providers import get_provider, provider_names
from agentkit.testing import TestModel


class Weather(BaseModel):
    """The weather in a city."""

    city: str
    temperature: float = Field(description="Degrees in the requested unit.")
    unit: Literal["c", "f"]


@tool
def get_weather(city: str, unit: Literal["c", "f"] = "c") -> Weather:
    """Fetch the current weather for a city.

    Args:
        city: City name, e.g. "Paris".
        unit: Temperature unit.
    """
    celsius = 8.0 + len(city) % 10
    return Weather(city=city, temperature=celsius if unit == "c" else celsius * 9 / 5 + 32, unit=unit)


@tool
async def convert(amount: float, rate: float = 1.08) -> float:
    """Convert an amount of money with an exchange rate.

    Args:
        amount: The amount to convert.
        rate: Units of the target currency per unit of the source currency.
    """
    return round(amount * rate, 2)


tools = Registry({"weather": get_weather, "convert-currency": convert})


@contextlib.asynccontextmanager
async def choose_model(args: argparse.Namespace) -> AsyncIterator[tuple[Model | str, str]]:
    """The model to run, and why it was chosen."""
    if not args.test and os.environ.get("OPENAI_API_KEY"):
        yield "openai:gpt-4o-mini", "OPENAI_API_KEY is set"
        return
    if not args.test and os.environ.get("ANTHROPIC_API_KEY"):
        yield "anthropic:claude-haiku-4-5", "ANTHROPIC_API_KEY is set"
        return
    if not args.test:
        from agentkit import _local_llm as local

        available = local.llama_server_binary() is not None and local.cached_model_path() is not None
        if available or args.local:
            import openai

            from agentkit.providers.openai import OpenAIChatModel

            with local.LlamaServer.start() as server:
                client = openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="local")
                yield OpenAIChatModel("local", client=client), f"a local llama.cpp server at {server.base_url}"
            return
    reason = "--test" if args.test else "no API key and no local server (add --local to set one up)"
    yield TestModel(seed=7, text="Done: the tools were called with schema-valid arguments."), reason


async def main() -> None:
    """Run the agent once, then show what each vendor would be sent for the same registry."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--local", action="store_true", help="set up the local LLM server if it is missing")
    parser.add_argument("--test", action="store_true", help="use the offline TestModel")
    args = parser.parse_args()

    print("== The tools (schemas from type hints and docstrings)")
    for key, item in tools.items():
        print(f"- {key} ({item.id}): {item.description.splitlines()[0]}")
        print(f"  input:  {json.dumps(item.input_schema)}")
        print(f"  output: {json.dumps(item.output_schema)}")

    async with choose_model(args) as (model, reason):
        name = model if isinstance(model, str) else model.name
        print(f"\n== An agent run on {name} ({reason})")
        agent = Agent(
            name="assistant",
            instructions="Use the tools to get facts. Once a tool result is there, reply in one plain sentence.",
            model=model,
            tools=tools,
        )
        # Step 1: the model must call a tool; the tool runs and its result joins the history.
        settings = ModelSettings(temperature=0)  # small local models call tools reliably only when greedy
        question = "What is the weather in Lisbon, in Fahrenheit?"
        first = await agent.generate(question, tool_choice="required", max_steps=1, model_settings=settings)
        # Step 2: the same provider-neutral history continues in a second agent (no tools), which answers.
        writer = Agent(name="writer", instructions="Reply to the user in one plain sentence.", model=model)
        result = await writer.generate(first.messages, max_steps=1, model_settings=settings)
        for step in first.steps:
            for call, outcome in zip(step.tool_calls, step.results, strict=False):
                flag = "error" if outcome.is_error else "ok"
                print(f"  tool call: {call.name}({json.dumps(call.arguments_dict())}) -> {flag}: {outcome.text}")
        print(f"  answer: {result.text.strip()[:300]}")
        usage = first.usage + result.usage
        print(f"  {len(result.messages)} messages; {usage.requests} requests, {usage.total_tokens} tokens")

    print("\n== The same registry, as each vendor's request fragment (names the vendor rejects are aliased)")
    for vendor in provider_names():
        payload = get_provider(vendor).format_tools(tools, tool_choice="required", aliases=True)
        print(f"-- {vendor}\n{json.dumps(payload)}")


if __name__ == "__main__":
    asyncio.run(main())
