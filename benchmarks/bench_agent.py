"""Agent loop overhead: a two-step run with a scripted model (it calls `async def add` once, then answers).

    python benchmarks/bench_agent.py            # full run
    python benchmarks/bench_agent.py --quick    # fewer repetitions

What is compared, all measured in this run, interleaved, as CPU time of this process (a shared machine's
other processes do not inflate it), best of the repeats:

* agentkit: `Agent.generate` on `FunctionModel` (no hooks, limits, deferred tools, instrumentation).
* the floor: a hand-written dict loop doing the same two steps with nothing of agentkit's: the same script
  over dict messages (the scripted turns, the tool call), awaited as a loop awaits its model client (as
  agentkit awaits `Model.request`), the tool's JSON arguments validated and the function awaited through
  one pydantic `TypeAdapter`, its result checked against its return annotation (as agentkit checks every
  result against the tool's output schema) and serialized with `to_json`, the messages appended to the
  history. agentkit's `FunctionModel` (what it builds per turn: the tool definitions it hands the
  function, the response and its usage) counts on agentkit's side.
* the minimal floor of earlier figures, printed beside it: the same loop with the model a plain function
  and the result unchecked (less work than the run is asked to do).
* for continuity with earlier figures: the floor that made the same `FunctionModel.request` calls (which
  flattered agentkit: half of the model's work was in both).
* peers, each running the same two steps with its own scripted model, where installed (`pip install -e
  '.[bench]'`): openai-agents (`Runner.run`, tracing off), pydantic-ai (`Agent.run` on its `FunctionModel`),
  and a hand-written loop over langchain-core (a fake chat model, `@tool`, `ainvoke`).

A second table runs the same two steps with 10 and with 10,000 registered tools, on a scripted model that,
like a vendor model with its cached payload, does not walk the tools: a run's set-up must not cost
O(registered tools) (issue 18), so the ratio stays near 1.

The target is <= 8x the dict floor (issue 18). Timing never fails the script: machines here are shared and
noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import TypeAdapter
from pydantic_core import to_json

from agentkit import Registry, ToolCall, tool
from agentkit.agent import Agent
from agentkit.messages import (
    AssistantMessage,
    Message,
    ModelResponse,
    TextPart,
    ToolResult,
    ToolResultsMessage,
    Usage,
    UserMessage,
)
from agentkit.models import Model, ModelSettings
from agentkit.testing import FunctionInfo, FunctionModel

TARGET_RATIO = 8.0
"""Issue 18: a two-step `FunctionModel` run within 8x the hand-written dict loop."""
PROMPT = "What is 2 + 3?"
ANSWER = "The sum is 5."


async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


CALL = AssistantMessage(tool_calls=[ToolCall("call_1", "add", '{"a": 2, "b": 3}')])


def turn(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
    last = messages[-1]
    if isinstance(last, ToolResultsMessage):
        return f"The sum is {last.results[0].text}."
    return CALL


def dict_floor(*, same_work: bool = True) -> Callable[[], Awaitable[str]]:
    """The least a loop can do for the same two steps, by hand, over dicts (see the module docstring).

    `same_work`: the model is awaited (a loop awaits its model client, as agentkit awaits `Model.request`)
    and the tool's result is checked against its return annotation (as agentkit checks every result
    against the tool's output schema). Without it, the minimal floor of earlier figures: a plain function
    for the model, the result unchecked.
    """
    tools = {"add": TypeAdapter(add)}
    returns = {"add": TypeAdapter(int)}  # `add`'s return annotation
    call = {"id": "call_1", "name": "add", "arguments": '{"a": 2, "b": 3}'}

    def turn_over_dicts(messages: list[dict[str, Any]]) -> dict[str, Any]:  # `turn`, over dicts
        last = messages[-1]
        if last["role"] == "tool":
            return {"role": "assistant", "content": f"The sum is {last['content']}."}
        return {"role": "assistant", "content": "", "tool_calls": [call]}

    async def model(messages: list[dict[str, Any]]) -> dict[str, Any]:
        return turn_over_dicts(messages)

    async def run() -> str:
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": "Add numbers."},
            {"role": "user", "content": PROMPT},
        ]
        while True:
            message = await model(messages)
            messages.append(message)
            calls = message.get("tool_calls")
            if not calls:
                return str(message["content"])
            for made in calls:
                name = made["name"]
                output = returns[name].validate_python(await tools[name].validate_json(made["arguments"]))
                messages.append({"role": "tool", "tool_call_id": made["id"], "content": to_json(output).decode()})

    async def minimal() -> str:
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": "Add numbers."},
            {"role": "user", "content": PROMPT},
        ]
        while True:
            message = turn_over_dicts(messages)
            messages.append(message)
            calls = message.get("tool_calls")
            if not calls:
                return str(message["content"])
            for made in calls:
                output = await tools[made["name"]].validate_json(made["arguments"])
                messages.append({"role": "tool", "tool_call_id": made["id"], "content": to_json(output).decode()})

    return run if same_work else minimal


def floor_for(model: FunctionModel, registry: Registry) -> Callable[[], Awaitable[str]]:
    """The earlier floor: the same two steps making agentkit's own `FunctionModel.request` calls."""
    adapter = TypeAdapter(add)
    settings = ModelSettings()

    async def run() -> str:
        messages: list[Message] = [UserMessage(PROMPT)]
        while True:
            response = await model.request(messages, registry, settings)
            message = response.message
            messages.append(message)
            if not message.tool_calls:
                return message.text
            results = []
            for call in message.tool_calls:
                output = await adapter.validate_json(call.arguments)
                results.append(ToolResult(call.id, call.name, [TextPart(to_json(output).decode())], output))
            messages.append(ToolResultsMessage(results))

    return run


class Scripted(Model):
    """`turn` as a model that never walks its tools (a vendor model reuses its cached payload)."""

    @property
    def name(self) -> str:
        return "scripted"

    async def request(self, messages: Any, tools: Registry, settings: ModelSettings) -> ModelResponse:
        reply = turn(list(messages), FunctionInfo([], settings))
        message = reply if isinstance(reply, AssistantMessage) else AssistantMessage(text=reply)
        reason = "tool_calls" if message.tool_calls else "stop"
        return ModelResponse(message=message, usage=Usage(requests=1), finish_reason=reason, model_name="scripted")


def many_tools(count: int) -> Registry:
    """`add` and `count - 1` other small tools."""
    registry = Registry({"add": tool(add)})
    for i in range(count - 1):

        def other(x: int) -> int:
            return x

        registry.add(f"tool_{i}", tool(description=f"Tool number {i}.")(other))
    return registry


async def registry_size(number: int, repeats: int) -> None:
    """The same run with 10 and with 10,000 registered tools: a run costs the same at any registry size."""
    agents = {
        count: Agent(id=f"bench{count}", instructions="Add numbers.", model=Scripted(), tools=many_tools(count))
        for count in (10, 10_000)
    }
    for agent in agents.values():
        result = await agent.generate(PROMPT)
        assert result.text == ANSWER and result.status == "complete", result
    best = dict.fromkeys(agents, float("inf"))
    for _ in range(repeats):
        for count, agent in agents.items():
            best[count] = min(best[count], await cpu_per_run(lambda a=agent: a.generate(PROMPT), number))
    small, large = best[10], best[10_000]
    print(f"registry size, same two-step run on a scripted model, CPU time per run, best of {repeats} x {number}")
    print(f"{'  10 registered tools':<52} {small * 1e6:9.1f} us")
    print(f"{'  10,000 registered tools':<52} {large * 1e6:9.1f} us   ratio {large / small:5.2f}x   target ~1x (flat)")


# ---- peers ------------------------------------------------------------------------------------------


def openai_agents_run() -> Callable[[], Awaitable[str]] | str:
    """openai-agents' `Runner.run` with a scripted `Model`, tracing off; or why it cannot run here."""
    try:
        from agents import Agent as OAAgent
        from agents import ModelResponse, RunConfig, Runner, Usage, function_tool
        from agents.models.interface import Model as OAModel
        from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText
    except ImportError:
        return "not installed (pip install -e '.[bench]')"

    class Scripted(OAModel):
        async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: A002 - the interface names it
            done = isinstance(input, list) and any(
                isinstance(item, dict) and item.get("type") == "function_call_output" for item in input
            )
            if done:
                text = ResponseOutputText(text=ANSWER, type="output_text", annotations=[])
                out: Any = ResponseOutputMessage(
                    id="msg_1", content=[text], role="assistant", status="completed", type="message"
                )
            else:
                out = ResponseFunctionToolCall(
                    arguments='{"a": 2, "b": 3}', call_id="call_1", name="add", type="function_call", id="fc_1"
                )
            return ModelResponse(output=[out], usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    agent = OAAgent(name="bench", instructions="Add numbers.", tools=[function_tool(add)], model=Scripted())
    config = RunConfig(tracing_disabled=True)

    async def run() -> str:
        result = await Runner.run(agent, PROMPT, run_config=config)
        return str(result.final_output)

    return run


def pydantic_ai_run() -> Callable[[], Awaitable[str]] | str:
    """pydantic-ai's `Agent.run` on its own `FunctionModel`; or why it cannot run here."""
    try:
        from pydantic_ai import Agent as PAAgent
        from pydantic_ai.messages import ModelResponse, ToolCallPart, ToolReturnPart
        from pydantic_ai.messages import TextPart as PAText
        from pydantic_ai.models.function import FunctionModel as PAFunctionModel
    except ImportError:
        return "not installed (pip install -e '.[bench]')"

    def scripted(messages: list[Any], info: Any) -> Any:
        last = messages[-1].parts[-1]
        if isinstance(last, ToolReturnPart):
            return ModelResponse(parts=[PAText(f"The sum is {last.content}.")])
        return ModelResponse(parts=[ToolCallPart("add", '{"a": 2, "b": 3}', tool_call_id="call_1")])

    agent = PAAgent(PAFunctionModel(scripted), instructions="Add numbers.", tools=[add])

    async def run() -> str:
        return (await agent.run(PROMPT)).output

    return run


def langchain_run() -> Callable[[], Awaitable[str]] | str:
    """A hand-written loop over langchain-core: a fake chat model, `@tool`, `ainvoke`; or why not."""
    try:
        from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
        from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
        from langchain_core.tools import tool as lc_tool
    except ImportError:
        return "not installed (pip install -e '.[bench]')"

    lc_add = lc_tool(add)
    tools = {"add": lc_add}
    script = [
        AIMessage(content="", tool_calls=[{"name": "add", "args": {"a": 2, "b": 3}, "id": "call_1"}]),
        AIMessage(content=ANSWER),
    ]
    model = FakeMessagesListChatModel(responses=script)  # replays the script in turn (no bind_tools: a fake)

    async def run() -> str:
        messages: list[Any] = [SystemMessage("Add numbers."), HumanMessage(PROMPT)]
        while True:
            reply = await model.ainvoke(messages)
            messages.append(reply)
            if not reply.tool_calls:
                return str(reply.content)
            for call in reply.tool_calls:
                output = await tools[call["name"]].ainvoke(call["args"])
                messages.append(ToolMessage(str(output), tool_call_id=call["id"]))

    return run


# ---- measuring --------------------------------------------------------------------------------------


async def cpu_per_run(fn: Callable[[], Awaitable[Any]], number: int) -> float:
    start = time.process_time()
    for _ in range(number):
        await fn()
    return (time.process_time() - start) / number


async def main(quick: bool) -> None:
    registry = Registry({"add": tool(add)})
    model = FunctionModel(turn)
    agent = Agent(id="bench", instructions="Add numbers.", model=model, tools=registry)
    contenders: dict[str, Callable[[], Awaitable[Any]]] = {
        "floor": dict_floor(),
        "agentkit": lambda: agent.generate(PROMPT),
        "minimal floor": dict_floor(same_work=False),
        "floor with FunctionModel": floor_for(model, registry),
    }
    missing: dict[str, str] = {}
    for name, make in (
        ("openai-agents", openai_agents_run),
        ("pydantic-ai", pydantic_ai_run),
        ("langchain-core loop", langchain_run),
    ):
        made = make()
        if isinstance(made, str):
            missing[name] = made
        else:
            contenders[name] = made

    result = await agent.generate(PROMPT)
    assert result.text == ANSWER and result.status == "complete", result
    for name, fn in contenders.items():  # every contender does the same two steps and gets the same answer
        answer = await fn()
        text = answer.text if name == "agentkit" else answer
        assert text == ANSWER, (name, answer)

    number, repeats = (200, 3) if quick else (1000, 7)
    best = dict.fromkeys(contenders, float("inf"))
    for _ in range(repeats):  # interleaved, so a burst of load hits every contender alike
        for name, fn in contenders.items():
            best[name] = min(best[name], await cpu_per_run(fn, number))

    floor, ours, earlier = best["floor"], best["agentkit"], best["floor with FunctionModel"]
    ok = "ok" if ours / floor <= TARGET_RATIO else "OVER TARGET"
    print(f"two-step run, CPU time per run, best of {repeats} x {number}")
    print(
        f"{'agentkit Agent.generate (FunctionModel, async add)':<52} {ours * 1e6:9.1f} us   floor {floor * 1e6:7.1f} us"
        f"   ratio {ours / floor:5.2f}x   target <= {TARGET_RATIO:g}x  [{ok}]"
    )
    print(f"{'  floor: a dict loop, pydantic validate+call+to_json':<52} {floor * 1e6:9.1f} us")
    minimal = best["minimal floor"]
    print(
        f"{'  minimal floor: model not awaited, result unchecked':<52} {minimal * 1e6:9.1f} us   "
        f"agentkit {ours / minimal:5.2f}x it (earlier figures' floor)"
    )
    print(
        f"{'  earlier floor: the same FunctionModel calls':<52} {earlier * 1e6:9.1f} us   "
        f"agentkit {ours / earlier:5.2f}x it"
    )
    for name in [n for n in contenders if n not in ("floor", "agentkit", "minimal floor", "floor with FunctionModel")]:
        peer = best[name]
        print(
            f"{'  peer ' + name + ' (same run)':<52} {peer * 1e6:9.1f} us   ratio {peer / floor:5.1f}x   "
            f"{peer / ours:5.1f}x agentkit's time"
        )
    for name, why in missing.items():
        print(f"{'  peer ' + name:<52} {why}")
    await registry_size(number, repeats)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    asyncio.run(main(parser.parse_args().quick))
