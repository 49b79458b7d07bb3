"""Tool-result caching (`@tool(cache=...)`, `agentkit.cache`; issue 19 §3.1), through FunctionModel runs."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentkit import Agent, tool
from agentkit.cache import ToolCache
from agentkit.events import AgentEvent, ToolResultEvent
from agentkit.exceptions import ToolDefinitionError
from agentkit.messages import AssistantMessage, Message, ToolCall, UserMessage
from agentkit.runs import MemoryRunStore
from agentkit.testing import FunctionInfo, FunctionModel

from .agent_helpers import call, calls, scripted
from .test_tracing import exporter  # noqa: F401  # pyright: ignore[reportUnusedImport]  # the fixture


class Clock:
    """A clock tests move by hand (no sleeps)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def each_run_calls(*made: ToolCall) -> FunctionModel:
    """A model that makes `made` in the first turn of every run, then answers "done"."""

    def reply(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
        return calls(*made) if isinstance(messages[-1], UserMessage) else "done"

    return FunctionModel(reply)


def calling(rate: Any, *made: ToolCall) -> Agent[Any, Any]:
    """An agent whose every run calls `made` in its first turn, with `rate` as its tool."""
    return Agent(model=each_run_calls(*made), tools=[rate], store=MemoryRunStore())


def rate_tool(cache: Any) -> tuple[Any, list[tuple[str, str]]]:
    ran: list[tuple[str, str]] = []

    @tool(cache=cache)
    def rate(base: str, quote: str = "USD") -> float:
        """The exchange rate."""
        ran.append((base, quote))
        return 1.5

    return rate, ran


async def events_of(agent: Agent[Any, Any], prompt: str = "go", **options: Any) -> list[AgentEvent]:
    stream = agent.stream(prompt, **options)
    return [event async for event in stream]


def outcomes(events: list[AgentEvent]) -> list[str | None]:
    return [e.cache for e in events if isinstance(e, ToolResultEvent)]


# ---- hits and misses ----------------------------------------------------------------------------------------


async def test_identical_calls_hit_whatever_their_key_order_or_defaults_and_others_miss() -> None:
    rate, ran = rate_tool(True)
    model, _ = scripted(
        calls(call("rate", {"base": "EUR", "quote": "USD"}, id="a")),
        calls(call("rate", '{"quote": "USD", "base": "EUR"}', id="b")),  # JSON text, other key order
        calls(call("rate", {"base": "EUR"}, id="c")),  # the default makes it the same call
        calls(call("rate", {"base": "EUR", "quote": "GBP"}, id="d")),
    )
    agent = Agent(model=model, tools=[rate], store=MemoryRunStore())
    events = await events_of(agent)
    assert ran == [("EUR", "USD"), ("EUR", "GBP")]
    assert outcomes(events) == ["miss", "hit", "hit", "miss"]
    results = [e for e in events if isinstance(e, ToolResultEvent)]
    assert [e.call_id for e in results] == ["a", "b", "c", "d"] and all(e.output == 1.5 for e in results)


async def test_errors_are_never_kept() -> None:
    tries: list[int] = []

    @tool(cache=True)
    def flaky(n: int) -> int:
        """Fails the first time."""
        tries.append(n)
        if len(tries) == 1:
            raise RuntimeError("down")
        return n

    model, _ = scripted(calls(call("flaky", {"n": 1}, id="a")), calls(call("flaky", {"n": 1}, id="b")))
    result = await Agent(model=model, tools=[flaky], store=MemoryRunStore()).generate("go")
    assert tries == [1, 1] and result.steps[1].results[0].output == 1


async def test_a_tool_without_cache_is_never_cached() -> None:
    ran: list[str] = []

    @tool
    def plain(city: str) -> str:
        """Not marked pure."""
        ran.append(city)
        return city

    model, _ = scripted(calls(call("plain", {"city": "Oslo"}, id="a")), calls(call("plain", {"city": "Oslo"}, id="b")))
    events = await events_of(Agent(model=model, tools=[plain], store=MemoryRunStore()))
    assert ran == ["Oslo", "Oslo"] and outcomes(events) == [None, None]


async def test_a_key_function_decides_which_calls_share_an_entry() -> None:
    ran: list[str] = []

    @tool(cache=ToolCache(key=lambda args: args["city"].lower()))
    def weather(city: str) -> str:
        """The weather."""
        ran.append(city)
        return "sunny"

    model, _ = scripted(
        calls(call("weather", {"city": "Paris"}, id="a")), calls(call("weather", {"city": "PARIS"}, id="b"))
    )
    await Agent(model=model, tools=[weather], store=MemoryRunStore()).generate("go")
    assert ran == ["Paris"]


async def test_a_key_function_that_raises_fails_the_call_and_never_runs_it() -> None:
    ran: list[str] = []

    @tool(cache=ToolCache(key=lambda args: args["missing"]))
    def weather(city: str) -> str:
        """The weather."""
        ran.append(city)
        return "sunny"

    model, _ = scripted(calls(call("weather", {"city": "Paris"}, id="a")))
    result = await Agent(model=model, tools=[weather], store=MemoryRunStore()).generate("go")
    [answer] = result.steps[0].results
    assert ran == [] and answer.is_error and answer.error_kind == "cache_key" and "KeyError" in answer.text


async def test_invalid_arguments_get_the_usual_error_uncached() -> None:
    rate, ran = rate_tool(True)
    model, _ = scripted(calls(call("rate", {"base": 3}, id="a")))
    result = await Agent(model=model, tools=[rate], store=MemoryRunStore()).generate("go")
    assert ran == [] and result.steps[0].results[0].error_kind == "invalid_arguments"


# ---- TTL (an injected clock) --------------------------------------------------------------------------------


async def test_an_entry_expires_after_its_ttl() -> None:
    clock = Clock()
    rate, ran = rate_tool(ToolCache(ttl=10, scope="process", clock=clock))
    agent = calling(rate, call("rate", {"base": "EUR"}))
    await agent.generate("1")
    clock.now += 9.9
    await agent.generate("2")  # still fresh
    assert len(ran) == 1
    clock.now += 0.1
    assert outcomes(await events_of(agent)) == ["miss"]  # expired at ttl
    assert len(ran) == 2


def test_a_ttl_in_seconds_is_shorthand_for_a_run_cache() -> None:
    rate, _ = rate_tool(30)
    assert rate.cache is not None and rate.cache.ttl == 30 and rate.cache.scope == "run"


# ---- scopes -------------------------------------------------------------------------------------------------


async def test_the_run_scope_is_one_run() -> None:
    rate, ran = rate_tool(ToolCache(scope="run"))
    agent = calling(rate, call("rate", {"base": "EUR"}, id="a"), call("rate", {"base": "EUR"}, id="b"))
    await agent.generate("1")
    assert len(ran) == 1  # the second call of the run hit
    await agent.generate("2")
    assert len(ran) == 2  # a new run starts empty


async def test_the_session_scope_is_shared_by_runs_of_one_session_id() -> None:
    rate, ran = rate_tool(ToolCache(scope="session"))
    agent = calling(rate, call("rate", {"base": "EUR"}))
    await agent.generate("1", session_id="thread-a")
    await agent.generate("2", session_id="thread-a")
    assert len(ran) == 1
    await agent.generate("3", session_id="thread-b")
    assert len(ran) == 2
    await agent.generate("4")  # no session: the run's own
    await agent.generate("5")
    assert len(ran) == 4


async def test_the_process_scope_is_shared_by_every_agent() -> None:
    rate, ran = rate_tool(ToolCache(scope="process"))
    first = calling(rate, call("rate", {"base": "EUR"}))
    second = calling(rate, call("rate", {"base": "EUR"}))
    await first.generate("1")
    await second.generate("2", session_id="other")
    assert len(ran) == 1


# ---- single flight ------------------------------------------------------------------------------------------


async def test_concurrent_identical_calls_run_once() -> None:
    started, release = asyncio.Event(), asyncio.Event()
    ran: list[str] = []

    @tool(cache=True)
    async def slow(city: str) -> str:
        """Slow."""
        ran.append(city)
        started.set()
        await release.wait()
        return f"weather in {city}"

    made = [call("slow", {"city": "Oslo"}, id=f"s{i}") for i in range(3)] + [call("slow", {"city": "Rome"}, id="r")]
    model, _ = scripted(calls(*made))
    agent = Agent(model=model, tools=[slow], store=MemoryRunStore())

    async def collect() -> list[AgentEvent]:
        return await events_of(agent)

    run = asyncio.ensure_future(collect())
    await started.wait()
    await asyncio.sleep(0)
    release.set()
    events = await asyncio.wait_for(run, 5)
    assert sorted(ran) == ["Oslo", "Rome"]
    results = {e.call_id: (e.output, e.cache) for e in events if isinstance(e, ToolResultEvent)}
    assert [results[f"s{i}"][0] for i in range(3)] == ["weather in Oslo"] * 3
    assert sorted(results[f"s{i}"][1] or "" for i in range(3)) == ["hit", "hit", "miss"]


async def test_a_failure_is_shared_by_the_concurrent_calls_but_never_kept() -> None:
    ran: list[int] = []

    @tool(cache=True)
    async def once(n: int) -> int:
        """The first call fails."""
        ran.append(n)
        await asyncio.sleep(0)  # the identical call joins this one meanwhile
        if len(ran) == 1:
            raise RuntimeError("first fails")
        return n

    model, _ = scripted(
        calls(call("once", {"n": 1}, id="a"), call("once", {"n": 1}, id="b")),
        calls(call("once", {"n": 1}, id="c")),
    )
    result = await Agent(model=model, tools=[once], store=MemoryRunStore()).generate("go")
    assert [r.is_error for r in result.steps[0].results] == [True, True]  # ran once, both answered by it
    assert ran == [1, 1] and result.steps[1].results[0].output == 1  # the error was not kept


# ---- invalidation -------------------------------------------------------------------------------------------


async def test_invalidate_drops_one_entry_and_clear_drops_all() -> None:
    rate, ran = rate_tool(ToolCache(scope="process"))
    agent = calling(rate, call("rate", {"base": "EUR"}, id="a"), call("rate", {"base": "JPY"}, id="b"))
    await agent.generate("1")
    assert len(ran) == 2
    assert rate.cache.invalidate({"base": "EUR", "quote": "USD"}) == 1  # canonical: the default spelled out
    await agent.generate("2")
    assert ran[2:] == [("EUR", "USD")]
    assert rate.cache.clear() == 2
    await agent.generate("3")
    assert len(ran) == 5


async def test_invalidate_reaches_a_live_runs_entries() -> None:
    rate, ran = rate_tool(ToolCache(scope="run"))

    @tool
    def refresh() -> str:
        """Invalidate the rate."""
        assert rate.cache is not None
        rate.cache.invalidate({"base": "EUR"})
        return "refreshed"

    model, _ = scripted(
        calls(call("rate", {"base": "EUR"}, id="a")),
        calls(call("refresh", {}, id="r")),
        calls(call("rate", {"base": "EUR"}, id="b")),
    )
    await Agent(model=model, tools=[rate, refresh], store=MemoryRunStore()).generate("go")
    assert len(ran) == 2


# ---- definition-time refusals -------------------------------------------------------------------------------


@pytest.mark.parametrize("policy", [True, lambda args: True], ids=["always", "a-policy"])
def test_a_tool_that_requires_approval_cannot_be_cached(policy: Any) -> None:
    with pytest.raises(ToolDefinitionError, match=r"cache= cannot be combined with requires_approval="):

        @tool(cache=True, requires_approval=policy)
        def refund(order: str) -> str:
            """Refund an order."""
            return order


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: ToolCache(ttl=0), "ttl= must be a positive number"),
        (lambda: ToolCache(scope="thread"), "scope= is one of run, session, process"),  # type: ignore[arg-type]
        (lambda: ToolCache(key="city"), "key= must be a function"),  # type: ignore[arg-type]
        (lambda: tool(cache="yes")(lambda: 1), "cache= takes ToolCache"),  # type: ignore[call-overload]
    ],
)
def test_bad_cache_options_are_refused_by_name(make: Any, message: str) -> None:
    with pytest.raises(ToolDefinitionError, match=message):
        make()


def test_one_tool_cache_serves_one_tool() -> None:
    shared = ToolCache()

    def city(name: str) -> str:
        return name

    def town(name: str) -> str:
        return name

    tool(cache=shared)(city)
    with pytest.raises(ToolDefinitionError, match="give each tool its own ToolCache"):
        tool(cache=shared)(town)


# ---- spans --------------------------------------------------------------------------------------------------


async def test_the_tool_span_says_hit_or_miss(exporter: InMemorySpanExporter) -> None:  # noqa: F811 - the fixture
    rate, _ = rate_tool(True)
    model, _ = scripted(calls(call("rate", {"base": "EUR"}, id="a")), calls(call("rate", {"base": "EUR"}, id="b")))
    await Agent(model=model, tools=[rate], store=MemoryRunStore()).generate("go")
    spans = [s for s in exporter.get_finished_spans() if s.name == "execute_tool rate"]
    assert [s.attributes.get("agentkit.tool.cache") for s in spans if s.attributes is not None] == ["miss", "hit"]


def test_key_of_is_canonical_json() -> None:
    rate, _ = rate_tool(True)
    assert rate.cache is not None
    key = rate.cache.key_of('{"quote":"USD","base":"EUR"}')
    assert key == rate.cache.key_of({"base": "EUR"}) and json.loads(str(key)) == {"base": "EUR", "quote": "USD"}


async def test_a_durable_engine_keeps_only_run_scoped_entries_without_a_ttl() -> None:
    from agentkit._agent.hooks import ExecutionHooks, current_hooks

    process, ran_process = rate_tool(ToolCache(scope="process"))
    plain_run, ran_run = rate_tool(ToolCache(scope="run"))
    made = (call("rate", {"base": "EUR"}, id="a"), call("rate", {"base": "EUR"}, id="b"))
    token = current_hooks.set(ExecutionHooks(durable=True))  # a replaying engine (Temporal) is in charge
    try:
        await calling(process, *made).generate("1")
        await calling(plain_run, *made).generate("1")
    finally:
        current_hooks.reset(token)
    assert len(ran_process) == 2  # a replay could see another run's entries: never kept there
    assert len(ran_run) == 1  # the run's own entries replay the same
