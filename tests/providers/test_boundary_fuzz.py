"""Tool arguments and vendor responses, fuzzed on every vendor: 0 undocumented exceptions (issue 17 §6).

The fuzzers are in `tests.providers.boundary_fuzz`; ``benchmarks/bench_boundary_fuzz.py`` runs them longer.
Hypothesis draws the seeds (a failing seed replays its case), within a bounded budget.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentkit._jsonish import MAX_DEPTH, nested_deeper
from agentkit._text import json_text
from agentkit.messages import ToolResultsMessage, UserMessage
from agentkit.providers import get_provider

from .boundary_fuzz import VENDORS, Findings, arguments_case, find_arguments, recorded_call, response_case
from .test_clients import aws_environment  # noqa: F401 - the autouse fixture: Bedrock's SDK needs credentials
from .test_malformed_responses import REGISTRY

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)


def fuzzed(examples: int, run: Callable[[random.Random, Findings], object]) -> Findings:
    """`run` on `examples` seeds drawn by hypothesis; a seed that finds an undocumented exception fails."""
    findings = Findings()

    @settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
    @given(SEEDS)
    def case(seed: int) -> None:
        before = len(findings.undocumented)
        run(random.Random(seed), findings)
        assert findings.undocumented[before:] == [], seed

    case()
    return findings


def test_odd_tool_arguments_on_every_vendor_are_answered_and_replayed() -> None:
    findings = fuzzed(300, arguments_case)
    assert findings.cases >= 300 and findings.outcomes["invalid_arguments"] > 0


def test_fuzzed_vendor_responses_through_the_sdks_are_a_turn_or_a_model_api_error() -> None:
    findings = fuzzed(60, lambda rng, found: asyncio.run(response_case(rng, found)))
    assert findings.outcomes["ModelAPIError"] > 0 and sum(findings.outcomes.values()) == findings.cases


@pytest.mark.parametrize("vendor", VENDORS)
def test_arguments_nested_600_deep_are_refused_and_the_next_request_is_shallow(vendor: str) -> None:
    """Gemini's replay compared its kept parts recursively (RecursionError); the others replayed 600 levels."""
    document = recorded_call(vendor)
    parent, key = find_arguments(document)
    deep: Any = "Paris"
    for _ in range(600):  # Python's json (so every SDK) reads it; pydantic-core's parser stops at 200
        deep = {"city": deep}
    parent[key] = json_text(deep) if isinstance(parent[key], str) else deep
    provider = get_provider(vendor)
    response = provider.parse_response(json.loads(json_text(document)), registry=REGISTRY)
    results = asyncio.run(REGISTRY.call_many(response.message.tool_calls))
    assert [result.error_kind for result in results] == ["invalid_arguments"]
    history = [UserMessage("go"), response.message, ToolResultsMessage(results)]
    body = provider.build_request(history, REGISTRY)
    assert not nested_deeper(body, MAX_DEPTH)  # the SDK's encoder (recursive) can send it
