"""OpenTelemetry spans of agent runs, read back from opentelemetry-sdk's in-memory exporter."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import Decision, Sampler, SamplingResult
from opentelemetry.trace import StatusCode
from pydantic import BaseModel

import agentkit
from agentkit import (
    Agent,
    AssistantMessage,
    ModelResponse,
    Registry,
    ToolCall,
    ToolResultsMessage,
    ToolTransform,
    Usage,
    tool,
)
from agentkit.exceptions import AgentSetupError, ModelHTTPError
from agentkit.instrumentation import InstrumentationSettings
from agentkit.output import Output
from agentkit.testing import FunctionModel

SECRET = "s3cr3t-value"


@tool
def find(city: str) -> str:
    """Find a city."""
    raise ValueError(f"no city {city}")


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def answer(text: str, usage: Usage, model: str, calls: list[ToolCall] | None = None) -> ModelResponse:
    return ModelResponse(
        AssistantMessage(text, tool_calls=calls or []),
        usage=usage,
        finish_reason="tool_calls" if calls else "stop",
        model_name=model,
        response_id=f"resp-{model}-{len(calls or [])}",
    )


def helper_turn(messages: list[Any], info: Any) -> ModelResponse:
    if not isinstance(messages[-1], ToolResultsMessage):
        return answer("", Usage(5, 2, 1), "claude-x", [ToolCall("h1", "add", {"a": 1, "b": 2})])
    return answer("3", Usage(7, 1, 1), "claude-x")


def boss_turn(messages: list[Any], info: Any) -> ModelResponse:
    if len(messages) <= 2:  # the instructions, the prompt
        calls = [ToolCall("c1", "find", {"city": SECRET}), ToolCall("c2", "agent-helper", {"prompt": "add 1 and 2"})]
        return answer("Looking.", Usage(100, 20, 1, cache_read_tokens=60, reasoning_tokens=8), "gpt-4o-2024", calls)
    return answer("It is 3.", Usage(150, 10, 1), "gpt-4o-2024")


def agents(transform: Any = None, **options: Any) -> Agent:
    helper = Agent(id="helper", model=FunctionModel(helper_turn, name="anthropic:claude-x"), tools=[add])
    return Agent(
        id="boss",
        name="Boss",
        instructions="Be brief.",
        model=FunctionModel(boss_turn, name="openai:gpt-4o"),
        tools=Registry([find], transform=transform),
        agents={"helper": helper},
        **options,
    )


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    agentkit.instrument(tracer_provider=provider)
    try:
        yield memory
    finally:
        agentkit.uninstrument()


def tree(spans: tuple[ReadableSpan, ...]) -> list[tuple[int, str]]:
    """(depth, name) in start order."""
    by_id = {s.context.span_id: s for s in spans}

    def depth(span: ReadableSpan) -> int:
        parent = span.parent
        return 0 if parent is None or parent.span_id not in by_id else 1 + depth(by_id[parent.span_id])

    return [(depth(s), s.name) for s in sorted(spans, key=lambda s: s.start_time or 0)]


def named(spans: tuple[ReadableSpan, ...], name: str) -> ReadableSpan:
    [span] = [s for s in spans if s.name == name]
    return span


async def test_the_span_tree_of_a_two_step_run_with_a_tool_error_and_a_subagent(
    exporter: InMemorySpanExporter,
) -> None:
    result = await agents().generate("What is 1 + 2?")
    assert result.text == "It is 3."
    spans = exporter.get_finished_spans()
    by_start = tree(spans)
    assert by_start[:2] == [(0, "invoke_agent Boss"), (1, "chat gpt-4o")]
    # the two calls of step 0 run concurrently: their spans are siblings under the run
    assert sorted(by_start[2:4]) == [(1, "execute_tool agent-helper"), (1, "execute_tool find")]
    assert by_start[4:] == [
        (2, "invoke_agent helper"),
        (3, "chat claude-x"),
        (3, "execute_tool add"),
        (3, "chat claude-x"),
        (1, "chat gpt-4o"),
    ]
    assert len({s.context.trace_id for s in spans}) == 1  # one trace

    run = named(spans, "invoke_agent Boss")
    assert run.attributes is not None
    assert dict(run.attributes) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "Boss",
        "gen_ai.agent.id": "boss",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o",
        "gen_ai.usage.input_tokens": 100 + 150 + 5 + 7,  # the subagent's tokens count in the parent's run
        "gen_ai.usage.output_tokens": 20 + 10 + 2 + 1,
        "gen_ai.usage.cache_read.input_tokens": 60,
        "gen_ai.usage.reasoning.output_tokens": 8,
        "agentkit.run.status": "complete",
        "agentkit.run.steps": 2,
    }

    first_chat = sorted((s for s in spans if s.name == "chat gpt-4o"), key=lambda s: s.start_time or 0)[0]
    assert first_chat.attributes is not None
    assert dict(first_chat.attributes) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o",
        "gen_ai.request.stream": False,
        "gen_ai.response.model": "gpt-4o-2024",
        "gen_ai.response.id": "resp-gpt-4o-2024-2",
        "gen_ai.response.finish_reasons": ("tool_calls",),
        "gen_ai.usage.input_tokens": 100,
        "gen_ai.usage.output_tokens": 20,
        "gen_ai.usage.cache_read.input_tokens": 60,
        "gen_ai.usage.reasoning.output_tokens": 8,
    }

    failed = named(spans, "execute_tool find")
    assert failed.status.status_code is StatusCode.ERROR
    assert failed.attributes is not None
    assert failed.attributes["gen_ai.tool.name"] == "find"
    assert failed.attributes["gen_ai.tool.call.id"] == "c1"
    assert failed.attributes["error.type"] == "ValueError"
    assert failed.attributes["agentkit.tool.error_kind"] == "exception"
    sub = named(spans, "execute_tool agent-helper")
    assert sub.status.status_code is StatusCode.UNSET
    assert named(spans, "invoke_agent helper").attributes["gen_ai.provider.name"] == "anthropic"  # type: ignore[index]
    # no content unless asked for
    content_keys = ("gen_ai.input", "gen_ai.output", "gen_ai.tool.call.a", "gen_ai.system_instructions")
    assert not any(key.startswith(content_keys) for s in spans for key in s.attributes or {})
    assert not any(SECRET in str(value) for s in spans for value in (s.attributes or {}).values())


async def test_content_is_recorded_when_asked_and_redacted_inputs_stay_redacted() -> None:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    settings = InstrumentationSettings(tracer_provider=provider, include_content=True)
    hide = ToolTransform(input=lambda args: {"city": "***"})
    await agents(instrument=settings, transform=hide).generate("What is 1 + 2?")
    spans = memory.get_finished_spans()

    first_chat = sorted((s for s in spans if s.name == "chat gpt-4o"), key=lambda s: s.start_time or 0)
    attributes = first_chat[1].attributes or {}
    assert json.loads(str(attributes["gen_ai.system_instructions"])) == [{"type": "text", "content": "Be brief."}]
    history = json.loads(str(attributes["gen_ai.input.messages"]))
    assert [m["role"] for m in history] == ["user", "assistant", "tool"]
    assert history[0]["parts"] == [{"type": "text", "content": "What is 1 + 2?"}]
    assert history[1]["parts"][1] == {"type": "tool_call", "id": "c1", "name": "find", "arguments": {"city": "***"}}
    assert history[2]["parts"][1] == {"type": "tool_call_response", "id": "c2", "response": "3"}
    output = json.loads(str(attributes["gen_ai.output.messages"]))
    assert output == [
        {"role": "assistant", "parts": [{"type": "text", "content": "It is 3."}], "finish_reason": "stop"}
    ]

    tool_span = named(spans, "execute_tool find").attributes or {}
    assert json.loads(str(tool_span["gen_ai.tool.call.arguments"])) == {"city": "***"}
    assert "withheld" in str(tool_span["gen_ai.tool.call.result"])
    assert not any(SECRET in str(value) for s in spans for value in (s.attributes or {}).values())


async def test_an_agent_that_opts_out_is_not_traced_nor_are_its_subagents(exporter: InMemorySpanExporter) -> None:
    await agents(instrument=False).generate("What is 1 + 2?")
    assert exporter.get_finished_spans() == ()


async def test_nothing_is_traced_unless_turned_on() -> None:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    await agents().generate("What is 1 + 2?")  # instrument() not called: no tracer is even made
    assert memory.get_finished_spans() == ()
    assert not agentkit.is_instrumented()


async def test_a_streamed_run_is_traced_the_same_way(exporter: InMemorySpanExporter) -> None:
    stream = agents().stream("What is 1 + 2?")
    async for _ in stream:
        pass
    spans = exporter.get_finished_spans()
    assert sorted(name for _, name in tree(spans)) == sorted(
        [
            "invoke_agent Boss",
            "chat gpt-4o",
            "execute_tool find",
            "execute_tool agent-helper",
            "invoke_agent helper",
            "chat claude-x",
            "execute_tool add",
            "chat claude-x",
            "chat gpt-4o",
        ]
    )
    assert all(s.attributes["gen_ai.request.stream"] is True for s in spans if s.name.startswith("chat"))  # type: ignore[index]


async def test_a_failing_model_request_marks_its_span_and_the_run(exporter: InMemorySpanExporter) -> None:
    def broken(messages: list[Any], info: Any) -> str:
        raise ConnectionError("down")

    with pytest.raises(ConnectionError):
        await Agent(id="x", model=FunctionModel(broken, name="openai:gpt-4o")).generate("hi")
    spans = exporter.get_finished_spans()
    assert [s.name for s in spans] == ["chat gpt-4o", "invoke_agent x"]
    for span in spans:
        assert span.status.status_code is StatusCode.ERROR
        assert span.events[0].name == "exception"


def test_bad_instrument_values_are_refused() -> None:
    with pytest.raises(AgentSetupError, match="instrument= takes"):
        Agent(instrument="yes")  # type: ignore[arg-type]
    with pytest.raises(AgentSetupError, match="not both"):
        agentkit.instrument(InstrumentationSettings(), include_content=True)


async def test_a_structured_run_asks_each_chat_for_json_output(exporter: InMemorySpanExporter) -> None:
    # gen_ai.output.type: the output type the request asks for (GenAI semantic conventions)
    class Sum(BaseModel):
        total: int

    def turn(messages: list[Any], info: Any) -> ModelResponse:
        if not isinstance(messages[-1], ToolResultsMessage):
            return answer("", Usage(1, 1, 1), "m", [ToolCall("c1", "add", {"a": 1, "b": 2})])
        return answer('{"total": 3}', Usage(1, 1, 1), "m")

    for mode in ("native", "tool"):
        exporter.clear()
        agent = Agent(model=FunctionModel(turn, name="openai:m"), tools=[add], output_type=Output(Sum, mode=mode))
        assert (await agent.generate("1 + 2?")).output == Sum(total=3)
        chats = [s for s in exporter.get_finished_spans() if s.name.startswith("chat")]
        assert len(chats) == 2 and all((s.attributes or {}).get("gen_ai.output.type") == "json" for s in chats)
    exporter.clear()
    await Agent(model=FunctionModel(turn, name="openai:m"), tools=[add]).generate("1 + 2?")
    assert all("gen_ai.output.type" not in (s.attributes or {}) for s in exporter.get_finished_spans())


def _refused(messages: list[Any], info: Any) -> ModelResponse:
    body = {"error": {"message": f"Incorrect API key provided: {SECRET}", "prompt": "my card is 4111"}}
    raise ModelHTTPError("openai:gpt-4o", 401, body)


def _span_text(span: ReadableSpan) -> str:
    events = [(e.name, dict(e.attributes or {})) for e in span.events]
    return json.dumps([dict(span.attributes or {}), events, span.status.description], default=str)


@pytest.mark.parametrize("include_content", [False, True])
async def test_a_failed_request_records_the_vendors_body_only_with_content(include_content: bool) -> None:
    """Issue 17 §4.4: without ``include_content`` the chat and run spans carried the vendor's error body."""
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    settings = InstrumentationSettings(tracer_provider=provider, include_content=include_content)
    agent = Agent(name="Boss", model=FunctionModel(_refused, name="openai:gpt-4o"), instrument=settings)
    with pytest.raises(ModelHTTPError):
        await agent.generate("hi")
    spans = memory.get_finished_spans()
    assert [s.name for s in spans] == ["chat gpt-4o", "invoke_agent Boss"]
    for span in spans:
        text = _span_text(span)
        assert span.status.status_code is StatusCode.ERROR
        assert (span.attributes or {})["error.type"] == "ModelHTTPError"
        [event] = span.events
        assert event.name == "exception" and "agentkit.exceptions.ModelHTTPError" in text
        if include_content:
            assert SECRET in text and "4111" in text
        else:
            assert SECRET not in text and "4111" not in text and "Incorrect API key" not in text
            summary = "ModelHTTPError from model 'openai:gpt-4o': HTTP 401 (auth)"
            assert span.status.description == summary and (event.attributes or {})["exception.message"] == summary


async def test_spans_a_sampler_drops_cost_no_content_and_the_run_is_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    from opentelemetry.sdk.trace.sampling import ALWAYS_OFF

    from agentkit import _otel

    serialized: list[Any] = []
    real = _otel._json  # pyright: ignore[reportPrivateUsage]

    def recording(value: Any) -> str:
        serialized.append(value)
        return real(value)

    monkeypatch.setattr(_otel, "_json", recording)
    memory = InMemorySpanExporter()
    provider = TracerProvider(sampler=ALWAYS_OFF)
    provider.add_span_processor(SimpleSpanProcessor(memory))
    settings = InstrumentationSettings(tracer_provider=provider, include_content=True)
    result = await agents(instrument=settings).generate("What is 1 + 2?")
    assert result.text == "It is 3."
    assert memory.get_finished_spans() == ()
    # only the agent's instructions (a start attribute, which samplers may read); no message, argument or
    # result is serialized for a span nobody records
    assert serialized == [[{"type": "text", "content": "Be brief."}]]


async def test_attributes_made_once_follow_the_model_and_the_settings_of_each_run(
    exporter: InMemorySpanExporter,
) -> None:
    from agentkit.models import ModelSettings

    agent = agents()
    await agent.generate("What is 1 + 2?", model_settings=ModelSettings(max_tokens=50))
    with agent.override(model=FunctionModel(boss_turn, name="anthropic:claude-y")):
        await agent.generate("What is 1 + 2?")
    await agent.generate("What is 1 + 2?")
    runs = sorted(
        (s for s in exporter.get_finished_spans() if s.name == "invoke_agent Boss"), key=lambda s: s.start_time or 0
    )
    models = [(s.attributes or {})["gen_ai.request.model"] for s in runs]
    assert models == ["gpt-4o", "claude-y", "gpt-4o"]
    chats = sorted(
        (s for s in exporter.get_finished_spans() if s.name == "chat gpt-4o"), key=lambda s: s.start_time or 0
    )
    assert [(s.attributes or {}).get("gen_ai.request.max_tokens") for s in chats] == [50, 50, None, None]


async def test_spans_are_current_inside_and_the_context_is_restored_after_a_failure(
    exporter: InMemorySpanExporter,
) -> None:
    # spans are made current by hand (attach / detach), not by start_as_current_span: none may leak
    from opentelemetry import trace

    seen: list[str] = []

    def broken(messages: list[Any], info: Any) -> str:
        seen.append(trace.get_current_span().name)  # type: ignore[attr-defined]  # an SDK span has a name
        raise ConnectionError("down")

    before = trace.get_current_span()
    with pytest.raises(ConnectionError):
        await Agent(id="x", model=FunctionModel(broken, name="openai:gpt-4o")).generate("hi")
    assert seen == ["chat gpt-4o"]
    assert trace.get_current_span() is before
    assert all(s.end_time is not None for s in exporter.get_finished_spans())
    await agents().generate("What is 1 + 2?")
    assert trace.get_current_span() is before


async def test_debug_records_and_spans_together(
    exporter: InMemorySpanExporter, caplog: pytest.LogCaptureFixture
) -> None:
    # DEBUG on: the model request is logged around its chat span (without DEBUG the span's coroutine is awaited alone)
    import logging

    with caplog.at_level(logging.DEBUG, logger="agentkit.agent"):
        assert (await agents().generate("What is 1 + 2?")).text == "It is 3."
    answered = [r for r in caplog.records if "answered in" in r.getMessage()]
    assert len(answered) == 4 and {r.model for r in answered} == {"openai:gpt-4o", "anthropic:claude-x"}  # type: ignore[attr-defined]
    assert sorted(s.name for s in exporter.get_finished_spans() if s.name.startswith("chat")) == [
        "chat claude-x",
        "chat claude-x",
        "chat gpt-4o",
        "chat gpt-4o",
    ]


class _Seen(Sampler):
    """A sampler that records what each span offers it at creation, then records (or drops) the span."""

    def __init__(self, drop: bool = False) -> None:
        self.decision = Decision.DROP if drop else Decision.RECORD_AND_SAMPLE
        self.offered: dict[str, dict[str, Any]] = {}

    def should_sample(
        self, parent_context: Any, trace_id: int, name: str, kind: Any = None, attributes: Any = None, *more: Any
    ) -> SamplingResult:
        self.offered[name] = dict(attributes or {})
        return SamplingResult(self.decision, attributes if self.decision is Decision.RECORD_AND_SAMPLE else None)

    def get_description(self) -> str:
        return "seen"


async def test_a_users_sampler_sees_the_sampling_attributes_at_creation() -> None:
    # GenAI conventions: operation, provider, request model and server are to be given at span creation
    sampler = _Seen()
    provider = TracerProvider(sampler=sampler)
    settings = InstrumentationSettings(tracer_provider=provider)
    model = FunctionModel(boss_turn, name="openai:gpt-4o")
    model.base_url = "https://api.example.com/v1"  # type: ignore[attr-defined]  # as a vendor model has one
    agent = Agent(id="boss", name="Boss", model=model, tools=[find], instrument=settings)
    await agent.generate("Where?")
    chat = sampler.offered["chat gpt-4o"]
    assert {k: chat[k] for k in ("gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.request.model")} == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o",
    }
    assert (chat["server.address"], chat["server.port"]) == ("api.example.com", 443)
    run = sampler.offered["invoke_agent Boss"]
    assert (run["gen_ai.operation.name"], run["gen_ai.agent.name"], run["gen_ai.request.model"]) == (
        "invoke_agent",
        "Boss",
        "gpt-4o",
    )
    tool_span = sampler.offered["execute_tool find"]
    assert (tool_span["gen_ai.operation.name"], tool_span["gen_ai.tool.name"]) == ("execute_tool", "find")


async def test_a_span_the_users_sampler_drops_gets_no_attribute_work(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentkit import _otel

    built: list[str] = []
    for name in ("_usage", "_response"):
        real = getattr(_otel, name)
        monkeypatch.setattr(_otel, name, lambda value, real=real, name=name: built.append(name) or real(value))
    sampler = _Seen(drop=True)
    memory = InMemorySpanExporter()
    provider = TracerProvider(sampler=sampler)
    provider.add_span_processor(SimpleSpanProcessor(memory))
    result = await agents(instrument=InstrumentationSettings(tracer_provider=provider)).generate("What is 1 + 2?")
    assert result.text == "It is 3."
    assert memory.get_finished_spans() == ()
    assert "chat gpt-4o" in sampler.offered  # offered, then dropped: no end attributes made for it
    assert built == []


def test_content_is_serialized_as_json_dumps_would() -> None:
    # one encoder made once, not one per json.dumps call: the very same text
    from agentkit import _otel

    class Opaque:
        def __repr__(self) -> str:
            return "<opaque>"

    value = [{"role": "user", "parts": [{"type": "text", "content": "Größe? 名前", "n": 1.5, "x": Opaque()}]}]
    assert _otel._json(value) == json.dumps(value, default=repr, ensure_ascii=False)  # pyright: ignore[reportPrivateUsage]
    assert '"<opaque>"' in _otel._json(value) and "Größe" in _otel._json(value)  # pyright: ignore[reportPrivateUsage]


async def test_tool_definitions_are_serialized_once_per_registry_state(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentkit import _otel

    serialized: list[Any] = []
    real = _otel._json  # pyright: ignore[reportPrivateUsage]
    monkeypatch.setattr(_otel, "_json", lambda value: serialized.append(value) or real(value))
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    settings = InstrumentationSettings(tracer_provider=provider, include_content=True)
    tools = Registry([add])
    agent = Agent(model=FunctionModel(helper_turn, name="openai:m"), tools=tools, instrument=settings)
    await agent.generate("1 + 2?")
    await agent.generate("1 + 2?")
    expected = [{"type": "function", "name": "add", "description": "Add two numbers."}]
    chats = [s for s in memory.get_finished_spans() if s.name.startswith("chat")]
    assert len(chats) == 4
    assert all(json.loads(str((s.attributes or {})["gen_ai.tool.definitions"])) == expected for s in chats)
    assert [value for value in serialized if value == expected] == [expected]  # four chats, one serialization
    tools.add("find", find)  # the registry changes: its definitions are serialized again
    memory.clear()
    await agent.generate("1 + 2?")
    first = memory.get_finished_spans()[0].attributes or {}
    assert [d["name"] for d in json.loads(str(first["gen_ai.tool.definitions"]))] == ["add", "find"]
