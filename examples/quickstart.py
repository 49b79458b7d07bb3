"""agentkit's main job, offline: tools from plain functions, an agent run, every vendor's payload side by side.

Two plain functions become tools, an agent runs them, and the same registry becomes each vendor's
payload, with what differs between vendors grouped so that the differences stand out.

    python examples/quickstart.py            # the best model available, see below
    python examples/quickstart.py --local    # also set up the local LLM server if needed (minutes, once)
    python examples/quickstart.py --scripted # the scripted offline model, whatever else is available
    python examples/quickstart.py --full     # also print each vendor's whole payload

The model, first match wins: OPENAI_API_KEY set -> OpenAI; ANTHROPIC_API_KEY set -> Anthropic; a local
llama.cpp server already built on this machine (or `--local`) -> that server through the official
`openai` client; otherwise a scripted model (`FunctionModel`) whose turns are written below. Whichever
answers, the tools really run, every call is validated, and the messages are the ones a vendor would get.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from agentkit import Agent, Registry, tool
from agentkit.messages import AssistantMessage, Message, ToolCall, ToolResultsMessage, UserMessage
from agentkit.models import Model, ModelSettings
from agentkit.providers import get_provider, provider_names
from agentkit.testing import FunctionInfo, FunctionModel


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
    celsius = 8.0 + len(city) % 10  # a stand-in for a weather service
    return Weather(city=city, temperature=celsius if unit == "c" else round(celsius * 9 / 5 + 32, 1), unit=unit)


@tool
async def convert(amount: float, rate: float = 1.08) -> float:
    """Convert an amount of money with an exchange rate.

    Args:
        amount: The amount to convert.
        rate: Units of the target currency per unit of the source currency.
    """
    return round(amount * rate, 2)


tools = Registry({"weather": get_weather, "convert-currency": convert})  # keys are the names models see

QUESTION = "I land in Lisbon tonight. How warm is it there in Fahrenheit, and what are 250 EUR in USD at 1.08?"


# ---- the model ----------------------------------------------------------------------------------------


def scripted_turn(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
    """The scripted model: what a capable model does with this question, written out.

    Turn 1 asks for both facts at once (two parallel calls); turn 2 answers from the tool results it got.
    """
    last = messages[-1]
    if not isinstance(last, ToolResultsMessage):
        return AssistantMessage(
            tool_calls=[
                ToolCall(id="call_1", name="weather", arguments={"city": "Lisbon", "unit": "f"}),
                ToolCall(id="call_2", name="convert-currency", arguments={"amount": 250, "rate": 1.08}),
            ]
        )
    weather, money = (result.output for result in last.results)
    return f"Lisbon is at {weather.temperature:g} °F tonight, and 250 EUR are {money:.2f} USD at 1.08."


def local_harness() -> Any:
    """The checkout's local LLM harness (dev/local_llm.py), or None outside a checkout."""
    root = Path(__file__).resolve().parents[1]
    if not (root / "dev" / "local_llm.py").is_file():
        return None
    sys.path.insert(0, str(root))  # a developer tool of the checkout, not part of the installed package
    from dev import local_llm

    return local_llm


@contextlib.asynccontextmanager
async def choose_model(args: argparse.Namespace) -> AsyncIterator[tuple[Model | str, str]]:
    """The model to run, and an honest line about what it is."""
    if not args.scripted and os.environ.get("OPENAI_API_KEY"):
        yield "openai:gpt-4o-mini", "OpenAI's gpt-4o-mini (OPENAI_API_KEY is set)"
        return
    if not args.scripted and os.environ.get("ANTHROPIC_API_KEY"):
        yield "anthropic:claude-haiku-4-5", "Anthropic's claude-haiku-4-5 (ANTHROPIC_API_KEY is set)"
        return
    local = None if args.scripted else local_harness()
    if local is not None and (args.local or (local.llama_server_binary() and local.cached_model_path())):
        import openai

        from agentkit.providers.openai import OpenAIChatModel

        with local.LlamaServer.start(log=local.Reporter()) as server:  # its log goes to a file, not here
            async with openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="local") as client:
                note = f"Qwen2.5-Coder-0.5B on a local llama.cpp server ({server.base_url}); small, it judges poorly"
                yield OpenAIChatModel("local", client=client), note
        return
    why = "--scripted" if args.scripted else "no API key and no local server; --local sets one up"
    note = f"a scripted model ({why}): its turns are written in this file, everything else is real"
    yield FunctionModel(scripted_turn, name="scripted"), note


async def run_agent(model: Model | str) -> list[Message]:
    """Ask the question; return the whole conversation."""
    instructions = "Use the tools to get facts. Once the tool results are there, reply in one plain sentence."
    agent = Agent(name="assistant", instructions=instructions, model=model, tools=tools)
    if isinstance(model, FunctionModel):
        return (await agent.generate(QUESTION)).messages
    # Real models: the first turn must call tools; a second agent without tools then answers, since small
    # local models keep calling tools after every result.
    settings = ModelSettings(temperature=0)
    first = await agent.generate(QUESTION, tool_choice="required", max_steps=1, model_settings=settings)
    writer = Agent(name="writer", instructions="Reply to the user in one plain sentence.", model=model)
    return (await writer.generate(first.messages, max_steps=1, model_settings=settings)).messages


def show_conversation(messages: list[Message]) -> None:
    """Each turn on one line: the question, the calls, what the tools returned, the answer."""
    for message in messages:
        if isinstance(message, UserMessage) and isinstance(message.content, str):
            print(f"  user       {message.content}")
        elif isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                print(f"  model  ->  {call.name}({json.dumps(call.arguments_dict())})")
            if message.text.strip():
                print(f"  model      {message.text.strip()[:300]}")
        elif isinstance(message, ToolResultsMessage):
            for result in message.results:
                flag = "error: " if result.is_error else ""
                print(f"  tool   <-  {flag}{result.text[:200]}")


# ---- the vendors side by side --------------------------------------------------------------------------

SCHEMA_KEYS = ("parameters", "input_schema", "parametersJsonSchema", "inputSchema")


def tool_entries(node: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """(path, entry) of every tool definition in a payload: a dict with a name and a schema key."""
    if isinstance(node, dict):
        if "name" in node and any(key in node for key in SCHEMA_KEYS):
            yield path, node
            return
        for key, value in node.items():
            yield from tool_entries(value, f"{path}.{key}" if path else key)
    elif isinstance(node, list):
        for value in node:
            yield from tool_entries(value, f"{path}[]")


def leaves(node: Any, path: str = "") -> Iterator[str]:
    """``path: value`` for the request options around the tool list (the tool list itself skipped)."""
    if isinstance(node, dict) and node and not any(key in node for key in ("name",) + SCHEMA_KEYS):
        for key, value in node.items():
            if not (isinstance(value, list) and any(True for _ in tool_entries(value))):
                yield from leaves(value, f"{path}.{key}" if path else key)
    elif not isinstance(node, list):
        yield f"{path}: {json.dumps(node)}"


def aspects(vendor: str) -> dict[str, str]:
    """What one vendor's payload for `tools` looks like, aspect by aspect."""
    payload = get_provider(vendor).format_tools(tools, tool_choice="required", aliases=True)
    (where, weather), (_, currency) = tool_entries(payload)
    schema_key = next(key for key in SCHEMA_KEYS if key in weather)
    schema = weather[schema_key]
    if schema_key == "inputSchema" and "json" in schema:
        schema_key, schema = "inputSchema.json", schema["json"]
    unit = schema["properties"]["unit"]
    if "unit" in schema.get("required", ()):
        optional = f'required, may be null (null means "c"): {json.dumps(unit.get("type"))}'
    elif "default" in unit:
        optional = 'optional, "default": "c" in the schema'
    else:
        optional = "optional, the default only in its description"
    strict = weather.get("strict", payload.get("strict_tools"))
    request_strict = "strict_tools" in payload
    return {
        "where the tools go": f"{where}: {{{', '.join(weather)}}}",
        "the schema is under": schema_key,
        'the key "convert-currency" is sent as': json.dumps(currency["name"]),
        'the optional "unit" parameter': optional,
        "strict decoding": f"strict_tools: {json.dumps(strict)} (whole request)"
        if request_strict
        else (f"strict: {json.dumps(strict)} (per tool)" if strict is not None else "no strict flag sent"),
        'tool_choice="required" is sent as': ", ".join(
            leaf for leaf in leaves(payload) if not leaf.startswith("strict_tools")
        )
        or "nothing: the vendor has no tool_choice",
    }


NOTES = {
    'the key "convert-currency" is sent as': "a name a vendor's rules reject gets a stable alias, mapped back to "
    "the key when calls come in",
    'the optional "unit" parameter': "strict modes make every parameter required: null stands for the default",
}


def show_vendors(full: bool) -> None:
    """One block per aspect; vendors that send the same thing share a line, so differences stand out."""
    vendors = provider_names()
    table = {vendor: aspects(vendor) for vendor in vendors}
    for aspect in table[vendors[0]]:
        groups: dict[str, list[str]] = {}
        for vendor in vendors:
            groups.setdefault(table[vendor][aspect], []).append(vendor)
        if len(groups) == 1:
            print(f"\n  {aspect}: the same for all: {next(iter(groups))}")
            continue
        print(f"\n  {aspect}" + (f"  ({NOTES[aspect]})" if aspect in NOTES else ""))
        width = min(max(len(value) for value in groups), 72)
        for value, members in groups.items():
            print(f"    {value:<{width}}  {', '.join(members)}")
    if full:
        for vendor in vendors:
            payload = get_provider(vendor).format_tools(tools, tool_choice="required", aliases=True)
            print(f"\n-- {vendor}\n{json.dumps(payload, indent=2)}")


NEXT = """
== Where next
  agentkit dev examples/approval.py:agent        a run in your browser: its approval, its steps, payloads
  agentkit lint examples/quickstart.py:tools     what each vendor loses or rejects of these tools
  docs/tools.md, docs/agents.md, docs/output.md  tools, the agent loop, typed answers
  examples/                                      more scripts: approvals, pauses, UI streams, MCP, tests"""


async def main() -> None:
    """The tools, an agent run, then the vendors' payloads side by side."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--local", action="store_true", help="set up the local LLM server if it is missing")
    parser.add_argument("--scripted", "--test", action="store_true", help="use the scripted offline model")
    parser.add_argument("--full", action="store_true", help="also print every vendor's whole payload")
    args = parser.parse_args()

    print("== 1. Two plain functions, two tools (schemas from the type hints, descriptions from the docstrings)")
    for key, item in tools.items():
        params = ", ".join(
            f"{name}{'' if name in item.input_schema.get('required', ()) else '?'}"
            for name in item.input_schema["properties"]
        )
        print(f"  {key:<17} {item.description.splitlines()[0]}  ({params})")

    async with choose_model(args) as (model, note):
        print(f"\n== 2. An agent run. The model: {note}")
        show_conversation(await run_agent(model))

    print("\n== 3. The same registry as each vendor's tools payload (tool_choice='required'); what differs")
    show_vendors(args.full)
    if not args.full:
        print("\n  (--full prints every payload whole)")
    print(NEXT)


if __name__ == "__main__":
    asyncio.run(main())
