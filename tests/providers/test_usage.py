"""Usage details through every vendor's codec: cache reads and writes, reasoning, response ids.

Each vendor has one recorded answer with prompt caching and/or reasoning (``usage_details.json`` beside
its other fixtures, written from the vendor's reference), as a whole response and as a stream. Both go
through the vendor's own codec (`Provider.parse_response`, and its `StreamDecoder` event by event) and
must give the same `Usage`, with the totals the vendor bills: `Usage.input_tokens` holds cached input,
`Usage.output_tokens` holds reasoning.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentkit import Usage
from agentkit.messages import ModelResponse
from agentkit.models import ResponseDone
from agentkit.providers import get_provider
from tests.providers.common import read_fixture

HERE = Path(__file__).parent
CASES = {
    "openai": HERE / "openai/fixtures/chat",
    "openai-responses": HERE / "openai/fixtures/responses",
    "anthropic": HERE / "anthropic/fixtures/codec",
    "gemini": HERE / "gemini/fixtures/codec",
    "bedrock": HERE / "bedrock/fixtures/codec",
    "mistral": HERE / "mistral/fixtures/codec",
    "cohere": HERE / "cohere/fixtures/codec",
    "ollama": HERE / "ollama/fixtures/codec",
}
# the response id each vendor puts in the body (Bedrock and Ollama send none)
RESPONSE_IDS = {
    "openai": ("chatcmpl-usage01", "chatcmpl-usage02"),
    "openai-responses": ("resp_usage01", "resp_usage02"),
    "anthropic": ("msg_01UsageDetails", "msg_01UsageStream"),
    "gemini": ("mUsageResp01xYz", "mUsageResp02xYz"),
    "bedrock": (None, None),
    "mistral": ("cmpl-usage01", "cmpl-usage02"),
    "cohere": ("c0usage1-0000-4000-8000-000000000001", "c0usage2-0000-4000-8000-000000000002"),
    "ollama": (None, None),
}


def case(vendor: str) -> dict[str, Any]:
    data: dict[str, Any] = read_fixture(CASES[vendor], "usage_details", drop_source=True)
    return data


def expected(vendor: str) -> Usage:
    return Usage(requests=1, **case(vendor)["expected"])


def streamed(vendor: str) -> ModelResponse:
    decoder = get_provider(vendor).decoder(registry=None)
    for event in case(vendor)["stream"]:
        decoder.decode(event)
    decoder.flush()
    return decoder.response()


@pytest.mark.parametrize("vendor", list(CASES))
def test_a_whole_response_reports_cache_and_reasoning_tokens(vendor: str) -> None:
    response = get_provider(vendor).parse_response(case(vendor)["response"])
    assert response.usage == expected(vendor)
    assert response.message.text == "Paris is 21 C."
    assert response.response_id == RESPONSE_IDS[vendor][0]


@pytest.mark.parametrize("vendor", list(CASES))
def test_a_stream_reports_the_same_usage_as_the_whole_response(vendor: str) -> None:
    response = streamed(vendor)
    assert response.usage == expected(vendor)
    assert response.message.text == "Paris is 21 C."
    assert response.response_id == RESPONSE_IDS[vendor][1]


def test_the_details_are_parts_of_the_totals() -> None:
    # Anthropic and Bedrock count cache traffic apart from their input count: the total holds it
    for vendor in CASES:
        usage = expected(vendor)
        assert usage.cache_read_tokens + usage.cache_write_tokens <= usage.input_tokens, vendor
        assert usage.reasoning_tokens <= usage.output_tokens, vendor


def test_bedrock_reads_the_request_id_boto3_keeps_in_the_response_metadata() -> None:
    response = get_provider("bedrock").parse_response(case("bedrock")["response"])
    assert response.request_id == "5a7c1f0e-2b3d-4c5e-8f90-1a2b3c4d5e6f"


def test_usage_sums_every_detail() -> None:
    one = Usage(10, 5, 1, cache_read_tokens=4, cache_write_tokens=3, reasoning_tokens=2)
    assert one + one == Usage(20, 10, 2, cache_read_tokens=8, cache_write_tokens=6, reasoning_tokens=4)
    assert (one + one).total_tokens == 30


@pytest.mark.parametrize(
    "usage",
    [
        {"prompt_tokens": None, "completion_tokens": "12", "prompt_tokens_details": None},
        {"prompt_tokens": -3, "completion_tokens": True, "completion_tokens_details": {"reasoning_tokens": None}},
        {"prompt_tokens_details": "cached", "completion_tokens_details": []},
    ],
)
def test_unreadable_counts_are_zero_not_a_crash(usage: dict[str, Any]) -> None:
    data = {**case("openai")["response"], "usage": usage}
    assert get_provider("openai").parse_response(data).usage == Usage(requests=1)


def test_a_streamed_turn_ends_with_the_usage_of_the_last_event() -> None:
    # ResponseDone is what the model client yields; the loop sums its usage: nothing is counted twice
    response = streamed("openai")
    done = ResponseDone(response)
    assert done.response.usage.cache_read_tokens == 1920
