"""agentkit's Anthropic model, through the official ``anthropic`` client, against a real llama-server.

llama-server speaks the Messages API too (``/v1/messages``: tools, ``tool_choice``, ``tool_use`` /
``tool_result`` blocks, streaming with ``input_json_delta``). It converts each request to its OpenAI form
and drops ``tool_choice: {"type": "none"}`` on the way (only ``auto``, ``any`` and ``tool`` are mapped),
so the final turns here cannot be forced to text: the tests assert that they are complete and valid.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentkit.exceptions import ModelAPIError, ModelHTTPError
from agentkit.messages import UserMessage
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


async def test_any_tool_call_reaches_the_function(anthropic_model: Any) -> None:
    await forced_call(anthropic_model)


async def test_streamed_call_is_assembled_from_input_json_deltas(anthropic_model: Any) -> None:
    await streamed_call(anthropic_model)


async def test_tool_result_round_trip_finishes_with_text(anthropic_model: Any) -> None:
    history = await round_trip(anthropic_model, none_honoured=False)
    # the result went back in Anthropic's format: a tool_result block in a user turn, linked by tool_use_id
    registry, _ = weather_tools()
    body = anthropic_model.payload(history[:4], registry, ModelSettings())
    call_id = history[2].tool_calls[0].id
    assert body["system"]
    assistant, results = body["messages"][1], body["messages"][2]
    assert any(b["type"] == "tool_use" and b["id"] == call_id for b in assistant["content"])
    assert results["role"] == "user" and results["content"][0]["type"] == "tool_result"
    assert results["content"][0]["tool_use_id"] == call_id


async def test_streamed_round_trip(anthropic_model: Any) -> None:
    await round_trip(anthropic_model, stream=True, none_honoured=False)


async def test_parallel_calls_round_trip(anthropic_model: Any) -> None:
    await parallel_calls(anthropic_model, none_honoured=False)


async def test_grammar_tripping_output_is_a_model_http_error(anthropic_model: Any) -> None:
    registry, _ = weather_tools()
    with pytest.raises(ModelHTTPError) as info:
        await anthropic_model.request(
            [UserMessage(GRAMMAR_TRIP)], registry, ModelSettings(temperature=0, max_tokens=100)
        )
    error = info.value
    assert (error.status_code, error.kind, error.model_name) == (500, "server_error", "anthropic:local")
    assert "format" in str(error.body), error.body


async def test_context_overflow_is_a_400(anthropic_model: Any) -> None:
    registry, _ = weather_tools()
    with pytest.raises(ModelHTTPError) as info:
        await anthropic_model.request([UserMessage("hello " * 5000)], registry, ModelSettings())
    assert (info.value.status_code, info.value.kind) == (400, "bad_request")
    assert "context" in str(info.value.body), info.value.body


async def test_streamed_grammar_trip_is_a_model_error(anthropic_model: Any) -> None:
    registry, _ = weather_tools()
    with pytest.raises(ModelAPIError) as info:
        async for _ in anthropic_model.stream([UserMessage(GRAMMAR_TRIP)], registry, ModelSettings(temperature=0)):
            pass
    assert "format" in str(info.value), info.value


async def test_agent_generate_runs_real_round_trips(anthropic_model: Any) -> None:
    await agent_run(anthropic_model)
