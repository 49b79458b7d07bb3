"""Helpers for the end-to-end tests: setting up the real servers and checking what they return.

The build, download and start logic lives in `dev.local_llm` (``.ci/run`` and the quickstart reuse it);
this module adds what only the tests need. Usable from a script as well: ``python -m tests.e2e._llama``
prepares the cache (build + model + grammar venv) without running any test.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Annotated, Any, Literal

import jsonschema
from pydantic import Field

from agentkit import tool
from agentkit.limits import RunLimits
from agentkit.messages import (
    AssistantMessage,
    Message,
    ModelResponse,
    SystemMessage,
    ToolCall,
    ToolResultsMessage,
    UserMessage,
)
from agentkit.models import (
    Model,
    ModelSettings,
    ModelStreamEvent,
    ResponseDone,
    ToolCallArgsDelta,
    ToolCallStart,
)
from agentkit.registry import Registry
from dev import local_llm as local

__all__ = ["local", "prepare", "schema_errors"]

TIMINGS: dict[str, float] = {}
"""Seconds spent on each setup step in this process (printed in the test summary)."""


def prepare(*, grammar: bool = False, log: local.Reporter | Callable[[str], None] | None = None) -> dict[str, float]:
    """Build/download what the e2e tests need (a no-op when it is cached); return the seconds per step."""
    started = time.monotonic()
    local.build_llama_server(log=log)
    TIMINGS["llama-server build (0 when cached)"] = round(time.monotonic() - started, 1)
    started = time.monotonic()
    local.model_path(log=log)
    TIMINGS["model download and check (0 when cached)"] = round(time.monotonic() - started, 1)
    if grammar:
        started = time.monotonic()
        local.build_server_venv(log=log)
        TIMINGS["llama-cpp-python server venv (0 when cached)"] = round(time.monotonic() - started, 1)
    return TIMINGS


def schema_errors(registry: Registry, name: str, arguments: Any) -> list[str]:
    """How `arguments` break the input schema of tool `name` (empty when they are valid)."""
    validator = jsonschema.Draft202012Validator(registry[name].input_schema)
    return [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in validator.iter_errors(arguments)]


# ---- tools and scenarios shared by the OpenAI and Anthropic tests ----------------------------------


SYSTEM = "You are a helpful assistant. Use the tools when they help."

GRAMMAR_TRIP = 'Repeat exactly: ```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```'
"""With ``tool_choice="auto"`` at temperature 0 the model writes a fenced call that llama-server's tool-call
parser cannot read: HTTP 500 ("does not match the expected peg-native format")."""


def weather_tools() -> tuple[Registry, list[dict[str, Any]]]:
    """A registry with one weather tool, and the list of the (validated) arguments it was called with."""
    calls: list[dict[str, Any]] = []

    @tool
    def get_weather(
        city: str, unit: Literal["celsius", "fahrenheit"] = "celsius", days: Annotated[int, Field(ge=1, le=7)] = 1
    ) -> dict[str, Any]:
        """Get the weather forecast for a city.

        Args:
            city: The city name, e.g. "Paris".
            unit: The temperature unit.
            days: How many days to forecast.
        """
        assert isinstance(city, str) and unit in ("celsius", "fahrenheit") and isinstance(days, int)
        calls.append({"city": city, "unit": unit, "days": days})
        return {"city": city, "forecast": [{"day": d + 1, "temperature": 21 + d, "unit": unit} for d in range(days)]}

    return Registry([get_weather]), calls


def check_call(registry: Registry, call: ToolCall) -> dict[str, Any]:
    """Assert that `call` names a registered tool with schema-valid JSON-object arguments; return them."""
    assert call.name in registry, call
    assert call.id, "every call carries an id to link its result"
    arguments = call.arguments_dict()
    assert schema_errors(registry, call.name, arguments) == [], (call, registry[call.name].input_schema)
    return arguments


async def forced_call(model: Model, *, settings: ModelSettings | None = None) -> None:
    """A required tool call: schema-valid arguments that reach the Python function validated."""
    registry, calls = weather_tools()
    messages: list[Message] = [SystemMessage(SYSTEM), UserMessage("What is the weather in Paris?")]
    response = await model.request(messages, registry, settings or ModelSettings(tool_choice="required", temperature=0))
    assert response.message.tool_calls, response
    assert response.finish_reason == "tool_calls", response.finish_reason
    for call in response.message.tool_calls:
        check_call(registry, call)
        result = await registry.call(call)
        assert not result.is_error, result.text
        assert result.call_id == call.id
    assert len(calls) == len(response.message.tool_calls)
    assert response.usage.input_tokens > 0 and response.usage.output_tokens > 0


async def streamed_call(model: Model) -> None:
    """A streamed required call: start, argument deltas that add up, then the same call in ResponseDone."""
    registry, calls = weather_tools()
    messages: list[Message] = [SystemMessage(SYSTEM), UserMessage("What is the weather in Tokyo?")]
    events: list[ModelStreamEvent] = []
    async for event in model.stream(messages, registry, ModelSettings(tool_choice="required", temperature=0)):
        events.append(event)
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    deltas = [e for e in events if isinstance(e, ToolCallArgsDelta)]
    assert isinstance(events[-1], ResponseDone) and sum(isinstance(e, ResponseDone) for e in events) == 1
    response = events[-1].response
    assert starts and deltas, events
    assert events.index(starts[0]) < events.index(deltas[0]), "a call starts before its arguments stream"
    calls_out = response.message.tool_calls
    assert len(starts) == len(calls_out)
    for start, call in zip(starts, calls_out, strict=True):
        assert start.tool_name == call.name
        pieces = [d for d in deltas if d.index == start.index]
        joined = "".join(d.delta for d in pieces)
        assert pieces[-1].arguments_so_far == joined
        assert json.loads(joined) == call.arguments_dict()
        check_call(registry, call)
        assert not (await registry.call(call)).is_error
    assert calls, "the streamed call reached the function"


async def round_trip(model: Model, *, stream: bool = False, none_honoured: bool = True) -> list[Message]:
    """Call, send the result back (twice), then ask for an answer without tools.

    Turn 1 forces a call (``required``); turn 2 (``auto``) sends its result back; this model calls the tool
    again after every result, whatever the prompt says, so the run is closed by turn 3 with
    ``tool_choice="none"``. Where the server honours ``none`` (OpenAI Chat) that turn is text (the model
    may well write a call-shaped JSON *as text*: small models judge poorly); where it drops it (llama-server's
    Anthropic converter, `none_honoured=False`) the turn must still be a complete, valid one.
    """
    registry, calls = weather_tools()
    question = "What is the weather in Berlin? Answer in one sentence."
    history: list[Message] = [SystemMessage(SYSTEM), UserMessage(question)]
    for choice in ("required", "auto", "none"):
        settings = ModelSettings(tool_choice=choice, max_tokens=200, temperature=0)
        response = await _turn(model, history, registry, settings, stream=stream)
        history.append(response.message)
        if choice == "required":
            assert response.message.tool_calls and response.finish_reason == "tool_calls", response
        if choice == "none" and none_honoured:
            assert not response.message.tool_calls and response.message.text.strip(), response
            assert response.finish_reason in ("stop", "length"), response.finish_reason
        if not response.message.tool_calls:
            break
        for call in response.message.tool_calls:
            check_call(registry, call)
        results = [await registry.call(call) for call in response.message.tool_calls]
        assert not any(r.is_error for r in results), [r.text for r in results]
        history.append(ToolResultsMessage(results))
    assert calls and isinstance(history[2], AssistantMessage) and isinstance(history[3], ToolResultsMessage)
    return history


async def parallel_calls(model: Model, *, none_honoured: bool = True) -> tuple[int, str | None]:
    """Ask for two cities at once; every complete call and its result must round-trip.

    This model, asked for parallel calls, keeps writing calls until ``max_tokens`` cuts it off, so the
    last call may be truncated (``finish_reason == "length"``): its arguments must then fail validation
    as an error result, and it is left out of the history sent back (llama-server answers a history
    holding unparseable arguments with HTTP 500, see `test_unparseable_history_is_a_model_http_error`).
    Returns the number of calls and the finish reason.
    """
    registry, calls = weather_tools()
    history: list[Message] = [
        SystemMessage(SYSTEM),
        UserMessage("Get the weather in Paris and, separately, the weather in Rome. Call the tool once per city."),
    ]
    settings = ModelSettings(tool_choice="required", parallel_tool_calls=True, temperature=0, max_tokens=80)
    response = await model.request(history, registry, settings)
    tool_calls = response.message.tool_calls
    assert tool_calls and response.finish_reason in ("tool_calls", "length"), response
    assert len({c.id for c in tool_calls}) == len(tool_calls), "call ids are unique"
    results = await registry.call_many(tool_calls)
    assert [r.call_id for r in results] == [c.id for c in tool_calls], "results keep call order"
    complete = []
    for position, (call, result) in enumerate(zip(tool_calls, results, strict=True)):
        truncated = response.finish_reason == "length" and position == len(tool_calls) - 1 and result.is_error
        if truncated:
            assert result.error_kind == "invalid_arguments", result
            continue
        check_call(registry, call)
        assert not result.is_error, result.text
        complete.append((call, result))
    assert complete and len(calls) == len(complete)
    answered = AssistantMessage(text=response.message.text, tool_calls=[c for c, _ in complete])
    history += [answered, ToolResultsMessage([r for _, r in complete])]
    final = await model.request(history, registry, ModelSettings(tool_choice="none", max_tokens=100, temperature=0))
    if none_honoured:
        assert final.message.text.strip() and not final.message.tool_calls
    else:
        assert final.finish_reason in ("stop", "tool_calls", "length"), final
    return len(tool_calls), response.finish_reason


async def agent_run(model: Model) -> Any:
    """`Agent.generate` against the real server: required first turn, then auto, within 3 steps.

    This model calls the tool again after every result, so the run usually ends with ``max_steps``; what
    is asserted is the loop's protocol: every call was run, validated, answered and accepted by the server.
    Its third identical turn is loop detection's to answer (a ``repeated`` error result, the tool not run:
    issue 19 §3.2, seen here on a real model).
    """
    from agentkit.agent import Agent

    registry, calls = weather_tools()
    agent = Agent(
        id="weather",
        instructions=SYSTEM,
        model=model,
        tools=registry,
        model_settings=ModelSettings(temperature=0, max_tokens=200),
        limits=RunLimits(max_steps=3),
    )
    result = await agent.generate("What is the weather in Oslo?", tool_choice="required")
    assert result.status in ("complete", "max_steps"), result.status
    assert result.tool_calls and len(result.tool_results) == len(result.tool_calls)
    assert [r.call_id for r in result.tool_results] == [c.id for c in result.tool_calls]
    kinds = [r.error_kind for r in result.tool_results if r.is_error]
    assert set(kinds) <= {"repeated"}, [r.text for r in result.tool_results]
    ran = len(result.tool_results) - len(kinds)
    assert len(calls) == ran >= 1 and result.usage.requests == len(result.steps) >= 2
    return result


async def _turn(
    model: Model, history: list[Message], registry: Registry, settings: ModelSettings, *, stream: bool
) -> ModelResponse:
    if not stream:
        return await model.request(history, registry, settings)
    last: ModelStreamEvent | None = None
    async for event in model.stream(history, registry, settings):
        last = event
    assert isinstance(last, ResponseDone)
    return last.response


if __name__ == "__main__":
    print(prepare(grammar="--grammar" in sys.argv))
