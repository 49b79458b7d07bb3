"""agentkit's OpenAI Chat model, through the official ``openai`` client, against a real llama-server."""

from __future__ import annotations

from typing import Any

import pytest

from agentkit.exceptions import ModelAPIError, ModelHTTPError
from agentkit.messages import AssistantMessage, ToolCall, ToolResult, ToolResultsMessage, UserMessage
from agentkit.models import ModelSettings
from tests.e2e._llama import (
    GRAMMAR_TRIP,
    agent_run,
    forced_call,
    parallel_calls,
    round_trip,
    streamed_call,
    weather_tools,
)

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]  # one busy CPU thread: see conftest.REQUEST_TIMEOUT


async def test_required_call_reaches_the_function(openai_model: Any) -> None:
    await forced_call(openai_model)


async def test_streamed_call_is_assembled_from_real_deltas(openai_model: Any) -> None:
    await streamed_call(openai_model)


async def test_tool_result_round_trip_finishes_with_text(openai_model: Any) -> None:
    history = await round_trip(openai_model)
    # the result went back in OpenAI's format: a role "tool" message linked by tool_call_id
    registry, _ = weather_tools()
    body = openai_model.payload(history[:4], registry, ModelSettings())
    call_id = history[2].tool_calls[0].id
    tool_messages = [m for m in body["messages"] if m["role"] == "tool"]
    assert tool_messages and tool_messages[0]["tool_call_id"] == call_id
    assert body["messages"][2]["tool_calls"][0]["id"] == call_id


async def test_streamed_round_trip(openai_model: Any) -> None:
    await round_trip(openai_model, stream=True)


async def test_parallel_calls_round_trip(openai_model: Any) -> None:
    await parallel_calls(openai_model)


async def test_grammar_tripping_output_is_a_model_http_error(openai_model: Any) -> None:
    registry, _ = weather_tools()
    with pytest.raises(ModelHTTPError) as info:
        await openai_model.request([UserMessage(GRAMMAR_TRIP)], registry, ModelSettings(temperature=0, max_tokens=100))
    error = info.value
    assert (error.status_code, error.kind, error.model_name) == (500, "server_error", "openai:local")
    assert error.body["error"]["type"] == "server_error", error.body  # the whole body, as the server sent it
    assert "format" in error.body["error"]["message"]
    assert error.headers.get("content-type", "").startswith("application/json")


async def test_unparseable_history_is_a_model_http_error(openai_model: Any) -> None:
    """A history holding a call whose arguments are not JSON (as a model may write them) -> HTTP 500, no model run."""
    registry, _ = weather_tools()
    bad = ToolCall(id="call_1", name="get_weather", arguments='{"city": Paris}')
    history = [
        UserMessage("Weather in Paris?"),
        AssistantMessage(tool_calls=[bad]),
        ToolResultsMessage([ToolResult.error(bad, "invalid arguments", "invalid_arguments")]),
    ]
    with pytest.raises(ModelHTTPError) as info:
        await openai_model.request(history, registry, ModelSettings(temperature=0))
    assert info.value.status_code == 500
    assert "parse tool call arguments" in info.value.body["error"]["message"]


async def test_context_overflow_is_a_400(openai_model: Any) -> None:
    registry, _ = weather_tools()
    with pytest.raises(ModelHTTPError) as info:
        await openai_model.request([UserMessage("hello " * 5000)], registry, ModelSettings())
    assert (info.value.status_code, info.value.kind) == (400, "bad_request")
    assert info.value.body["error"]["type"] == "exceed_context_size_error"


async def test_streamed_grammar_trip_is_a_model_error(openai_model: Any) -> None:
    """The same failure in a stream: the server's error arrives after the stream has started."""
    registry, _ = weather_tools()
    with pytest.raises(ModelAPIError) as info:
        async for _ in openai_model.stream([UserMessage(GRAMMAR_TRIP)], registry, ModelSettings(temperature=0)):
            pass
    assert "format" in str(info.value), info.value


async def test_agent_generate_runs_real_round_trips(openai_model: Any) -> None:
    await agent_run(openai_model)
