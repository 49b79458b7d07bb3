"""Estimated cost of requests and runs, from the genai-prices table (never a price written here)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import genai_prices

from agentkit import Agent, AssistantMessage, ModelResponse, ToolCall, Usage, UserMessage, tool
from agentkit.costs import estimate_cost, response_cost, total_cost
from agentkit.testing import FunctionModel

USAGE = Usage(input_tokens=10_000, output_tokens=2_000, requests=1)


def table_price(usage: Usage, model: str, provider: str, **extra: int) -> Decimal:
    """What genai-prices itself says, for comparison."""
    counts = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens, **extra}
    price: Decimal = genai_prices.calc_price(genai_prices.Usage(**counts), model, provider_id=provider).total_price
    return price


def test_a_known_model_is_priced_as_the_table_says() -> None:
    assert estimate_cost(USAGE, "openai:gpt-4o") == table_price(USAGE, "gpt-4o", "openai")
    assert estimate_cost(USAGE, "anthropic:claude-sonnet-4-5") == table_price(USAGE, "claude-sonnet-4-5", "anthropic")
    assert estimate_cost(USAGE, "gemini:gemini-2.5-flash") == table_price(USAGE, "gemini-2.5-flash", "google")
    assert estimate_cost(USAGE, "gpt-4o", provider="openai-responses") == table_price(USAGE, "gpt-4o", "openai")


def test_cached_input_is_priced_at_the_cache_rates() -> None:
    cached = Usage(input_tokens=10_000, output_tokens=2_000, cache_read_tokens=8_000)
    price = estimate_cost(cached, "openai:gpt-4o")
    assert price == table_price(cached, "gpt-4o", "openai", cache_read_tokens=8_000)
    full = estimate_cost(USAGE, "openai:gpt-4o")
    assert price is not None and full is not None and price < full
    written = Usage(input_tokens=10_000, output_tokens=2_000, cache_write_tokens=8_000)
    assert estimate_cost(written, "anthropic:claude-sonnet-4-5") == table_price(
        written, "claude-sonnet-4-5", "anthropic", cache_write_tokens=8_000
    )


def test_unknown_models_and_endpoints_are_none() -> None:
    assert estimate_cost(USAGE, "openai:no-such-model-here") is None
    assert estimate_cost(USAGE, "ollama:llama3.2") is None  # a local model: no price, not zero
    assert estimate_cost(USAGE, "test") is None
    # an OpenAI-compatible server on this machine is not OpenAI, whatever the model is called
    assert estimate_cost(USAGE, "openai:gpt-4o", provider_url="http://127.0.0.1:8080/v1") is None
    # ... while another provider's endpoint is priced as that provider
    groq = estimate_cost(
        USAGE, "llama-3.1-8b-instant", provider="openai", provider_url="https://api.groq.com/openai/v1"
    )
    assert groq is not None and groq > 0


def _answer(model: str, usage: Usage, provider: str | None = "openai") -> ModelResponse:
    return ModelResponse(
        AssistantMessage("done"), usage=usage, model_name=model, provider_name=provider, provider_url=None
    )


def test_a_response_is_priced_by_its_model_and_vendor() -> None:
    assert response_cost(_answer("gpt-4o-2024-08-06", USAGE)) == table_price(USAGE, "gpt-4o-2024-08-06", "openai")
    assert _answer("gpt-4o", USAGE).cost() == estimate_cost(USAGE, "openai:gpt-4o")
    assert _answer("gpt-4o", USAGE, provider=None).cost() is None  # a test double names no vendor


def test_a_total_is_none_when_any_part_is_unknown() -> None:
    known = _answer("gpt-4o", USAGE)
    assert total_cost([known, known]) == 2 * table_price(USAGE, "gpt-4o", "openai")
    assert total_cost([known, _answer("made-up", USAGE)]) is None
    assert total_cost([]) == 0


async def test_a_run_costs_its_requests_and_its_subagents_requests() -> None:
    def worker_turn(messages: list[object], info: object) -> ModelResponse:
        return _answer("claude-sonnet-4-5", Usage(3_000, 500, 1), provider="anthropic")

    worker = Agent(id="worker", model=FunctionModel(worker_turn))

    def boss_turn(messages: list[object], info: object) -> ModelResponse:
        if len(messages) == 1:
            call = ToolCall("c1", "agent-worker", {"prompt": "do it"})
            return ModelResponse(
                AssistantMessage(tool_calls=[call]), usage=USAGE, model_name="gpt-4o", provider_name="openai"
            )
        return _answer("gpt-4o", USAGE)

    boss = Agent(id="boss", model=FunctionModel(boss_turn), agents={"worker": worker})
    result = await boss.generate("go")
    assert len(result.responses) == 3  # two own steps, one of the subagent
    expected = 2 * table_price(USAGE, "gpt-4o", "openai") + table_price(
        Usage(3_000, 500), "claude-sonnet-4-5", "anthropic"
    )
    assert result.cost() == expected
    assert result.usage.input_tokens == 23_000


async def test_a_test_model_run_has_no_cost() -> None:
    result = await Agent(model="test").generate("hi")
    assert result.cost() is None


async def test_a_paused_runs_snapshot_keeps_what_its_cost_and_ids_need() -> None:
    from agentkit import RunSnapshot
    from agentkit.runs import MemoryRunStore

    @tool(requires_approval=True)
    def refund(order: str) -> str:
        """Refund an order."""
        return "refunded"

    def worker_turn(messages: list[object], info: object) -> ModelResponse:
        return _answer("claude-sonnet-4-5", Usage(3_000, 500, 1, cache_write_tokens=1_000), provider="anthropic")

    worker = Agent(id="worker", model=FunctionModel(worker_turn))

    def boss_turn(messages: list[Any], info: object) -> ModelResponse:
        last = messages[-1]
        if isinstance(last, UserMessage):
            calls = [ToolCall("c1", "agent-worker", {"prompt": "check"})]
        elif last.results[0].name == "agent-worker":
            calls = [ToolCall("c2", "refund", {"order": "42"})]
        else:
            return _answer("gpt-4o", USAGE)
        response = _answer("gpt-4o", Usage(1_000, 100, 1, cache_read_tokens=400, reasoning_tokens=30))
        response.message.tool_calls = calls
        response.request_id, response.response_id = "req_1", "chatcmpl-1"
        return response

    store = MemoryRunStore()
    boss = Agent(id="boss", model=FunctionModel(boss_turn), agents={"worker": worker}, tools=[refund], store=store)
    paused = await boss.generate("go")
    assert paused.status == "awaiting_approval"
    before = paused.cost()
    assert before is not None and before > 0
    loaded = RunSnapshot.from_json(paused.snapshot().to_json())
    assert loaded.usage == paused.usage  # the cache and reasoning details too
    done = await boss.resume(loaded, {"c2": True})
    first = done.steps[0].response
    assert (first.request_id, first.response_id, first.provider_name) == ("req_1", "chatcmpl-1", "openai")
    assert len(done.responses) == 4  # three steps of its own, one of the subagent (from the snapshot)
    assert done.cost() == before + table_price(USAGE, "gpt-4o", "openai")
