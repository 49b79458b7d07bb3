"""agentkit.testing: TestModel, FunctionModel, argument generation, payload snapshots, contract tests."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from inline_snapshot import snapshot
from pydantic import BaseModel, Field

from agentkit import Registry, Tool, ToolCall, ToolError, UnknownToolError, tool
from agentkit.agent import Agent
from agentkit.messages import AssistantMessage, Message, ModelResponse, ToolResultsMessage, Usage
from agentkit.models import ModelSettings
from agentkit.testing import (
    FunctionInfo,
    FunctionModel,
    TestModel,
    ToolDefinition,
    check_tool_contract,
    generate_arguments,
    request_payload,
)

from .agent_helpers import call, calls
from .zoo import ZOO, zoo_registry


def _valid(item: Tool[..., Any], args: Any) -> bool:
    checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
    return jsonschema.Draft202012Validator(item.input_schema, format_checker=checker).is_valid(args)


@pytest.mark.parametrize("item", ZOO, ids=lambda t: t.id)
def test_generated_arguments_are_schema_valid_for_every_zoo_tool(item: Tool[..., Any]) -> None:
    for seed in range(25):
        args = generate_arguments(item.input_schema, seed=seed)
        assert _valid(item, args), (seed, args)
        item.schema.validate_arguments(item.id, args)  # agentkit accepts them too


def test_generation_is_deterministic_per_seed_and_varies_across_seeds() -> None:
    schema = ZOO[0].input_schema
    assert generate_arguments(schema, seed=7) == generate_arguments(schema, seed=7)
    assert len({repr(generate_arguments(schema, seed=s)) for s in range(10)}) > 5


def test_generation_covers_nullable_enum_const_bounds_and_unique_items() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": ["integer", "null"], "exclusiveMinimum": 5, "maximum": 7},
            "x": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 0.001},
            "tag": {"enum": ["a", "b"]},
            "kind": {"const": "k"},
            "ids": {"type": "array", "items": {"enum": [1, 2, 3]}, "minItems": 3, "uniqueItems": True},
            "when": {"type": "string", "format": "date-time"},
            "who": {"type": "string", "format": "email"},
            "word": {"type": "string", "minLength": 3, "maxLength": 4},
        },
        "required": ["n", "x", "tag", "kind", "ids", "when", "who", "word"],
        "additionalProperties": False,
    }
    checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
    for seed in range(30):
        args = generate_arguments(schema, seed=seed)
        jsonschema.validate(args, schema, format_checker=checker)
    with pytest.raises(ValueError, match="does not describe an object"):
        generate_arguments({"type": "string"})


# ---- TestModel ------------------------------------------------------------------------------------


async def test_testmodel_calls_every_tool_then_summarises() -> None:
    result = await Agent(model=TestModel(seed=1), tools=zoo_registry()).generate("go")
    assert [c.name for c in result.steps[0].tool_calls] == list(zoo_registry())
    assert all(not r.is_error for r in result.tool_results), [r.text for r in result.tool_results if r.is_error]
    assert result.status == "complete" and len(result.steps) == 2
    # a line per call, `key: result`, JSON results as JSON (issue 22 §5.2: it was escaped JSON inside JSON)
    lines = result.text.splitlines()
    assert [line.split(": ", 1)[0] for line in lines] == list(zoo_registry())
    assert lines[0] == 'get_weather: {"temp": 20.0, "days": 1.0}' and "\\" not in result.text
    assert result.usage.requests == 2 and result.usage.input_tokens > 0


async def test_testmodel_summarises_failed_calls_as_errors() -> None:
    @tool
    def broken(n: int) -> int:
        """Always fails."""
        raise ToolError("out of stock")

    result = await Agent(model=TestModel(), tools=[broken]).generate("go")
    assert result.text == "broken: error: out of stock"


async def test_testmodel_uses_the_examples_a_schema_documents() -> None:
    """Regression (issue 22 §5.2): the README's run asked for the weather in "dafjlly", not the docstring's "Paris"."""

    @tool
    def weather(city: str, days: int = 1, unit: str = "c", code: str = "x") -> str:
        """The weather.

        Args:
            city: City name, e.g. "Paris".
            days: How many days, e.g. 3.
            unit: for example `f`.
            code: An ISO code such as 99 (not a string: the example does not fit, so it is not used).
        """
        return f"{city} {days} {unit} {code}"

    result = await Agent(model=TestModel(), tools=[weather]).generate("go")
    arguments = result.tool_calls[0].arguments
    assert (arguments["city"], arguments["days"], arguments["unit"]) == ("Paris", 3, "f")
    assert arguments["code"] != 99 and isinstance(arguments["code"], str)  # generated: still valid
    assert result.text.startswith("weather: Paris 3 f ")

    class Trip(BaseModel):
        destination: str = Field(examples=["Lisbon"])

    answer = await Agent(model=TestModel(), output_type=Trip).generate("go")
    assert answer.output == Trip(destination="Lisbon")


async def test_testmodel_respects_call_tools_active_tools_and_tool_choice() -> None:
    tools = zoo_registry()
    chosen = await Agent(model=TestModel(call_tools=["search"], text="fine"), tools=tools).generate("x")
    assert [c.name for c in chosen.tool_calls] == ["search"] and chosen.text == "fine"
    skipped = await Agent(model=TestModel(call_tools=["search", "draw"]), tools=tools).generate(
        "x", active_tools=["draw"]
    )
    assert [c.name for c in skipped.tool_calls] == ["draw"]  # registered, but not active: not called
    active = await Agent(model=TestModel(), tools=tools).generate("x", active_tools=["draw", "catalogue"])
    assert [c.name for c in active.tool_calls] == ["draw", "catalogue"]
    named = await Agent(model=TestModel(), tools=tools).generate("x", tool_choice="search")
    assert [c.name for c in named.tool_calls] == ["search"]
    none = await Agent(model=TestModel(), tools=tools).generate("x", tool_choice="none")
    assert none.tool_calls == [] and none.text == "success (no tool calls)"


async def test_testmodel_is_deterministic_with_a_seed() -> None:
    tools = zoo_registry()
    one = await Agent(model=TestModel(seed=5), tools=tools).generate("x")
    two = await Agent(model=TestModel(seed=5), tools=tools).generate("x")
    other = await Agent(model=TestModel(seed=6), tools=tools).generate("x")
    args = [c.arguments for c in one.tool_calls]
    assert args == [c.arguments for c in two.tool_calls]
    assert args != [c.arguments for c in other.tool_calls]


# ---- FunctionModel --------------------------------------------------------------------------------


async def test_functionmodel_receives_messages_and_tool_definitions() -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    seen: list[FunctionInfo] = []

    async def turn(messages: list[Message], info: FunctionInfo) -> ModelResponse | AssistantMessage:
        seen.append(info)
        if isinstance(messages[-1], ToolResultsMessage):
            return ModelResponse(AssistantMessage(text="3"), Usage(10, 2, 1), "stop")
        return calls(call("plus", {"a": 1, "b": 2}))

    result = await Agent(model=FunctionModel(turn), tools={"plus": add}).generate("x")
    assert result.text == "3" and result.usage.input_tokens == 10
    assert seen[0].tools == [ToolDefinition("plus", "Add two integers.", add.input_schema, {"type": "integer"})]
    assert seen[0].tool_keys == ["plus"]
    with pytest.raises(TypeError, match="returns a str, AssistantMessage or ModelResponse"):
        await Agent(model=FunctionModel(lambda m, i: 42)).generate("x")  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError, match="needs fn=, stream_fn=, or both"):
        FunctionModel()


async def test_functionmodel_stream_fn_alone_serves_generate_too() -> None:
    async def stream_fn(messages: list[Message], info: FunctionInfo) -> Any:
        if isinstance(messages[-1], ToolResultsMessage):
            yield "it is "
            yield messages[-1].results[0].text
            return
        yield ToolCall("c1", "echo", {"text": "sunny"})

    @tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    agent = Agent(model=FunctionModel(stream_fn=stream_fn), tools=[echo])
    assert (await agent.generate("x")).text == "it is sunny"
    assert (await agent.stream("x").get_result()).text == "it is sunny"


# ---- payload snapshots ----------------------------------------------------------------------------


@tool
def weather(city: str) -> str:
    """Fetch the weather for a city.

    Args:
        city: City name.
    """
    return f"sunny in {city}"


def test_request_payload_is_the_providers_request_for_the_agents_next_turn() -> None:
    agent = Agent(instructions="Be brief.", model="openai:gpt-4o-mini", tools={"weather": weather})
    assert request_payload(agent, "Weather in Paris?") == snapshot(
        {
            "model": "gpt-4o-mini",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Weather in Paris?"},
            ],
            "tools": [
                {
                    "type": "function",
                    "function": {
                        "name": "weather",
                        "description": "Fetch the weather for a city.",
                        "parameters": {
                            "additionalProperties": False,
                            "properties": {"city": {"description": "City name.", "type": "string"}},
                            "required": ["city"],
                            "type": "object",
                        },
                        "strict": True,
                    },
                }
            ],
            "tool_choice": "auto",
        }
    )
    anthropic = request_payload(agent, "hi", provider="anthropic", model_name="claude-x", tool_choice="weather")
    assert anthropic["model"] == "claude-x" and anthropic["system"]
    assert anthropic["tool_choice"] == {"type": "tool", "name": "weather"}


async def test_request_payload_continues_a_result_and_needs_a_provider_for_test_models() -> None:
    agent = Agent(model=TestModel(), tools={"weather": weather})
    result = await agent.generate("x")
    body = request_payload(agent, result, provider="openai", model_name="gpt-4o")
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "tool", "assistant"]
    with pytest.raises(NotImplementedError, match="cannot show its payload"):
        request_payload(agent, "x")


# ---- contract tests -------------------------------------------------------------------------------


@pytest.mark.parametrize("item", [t for t in ZOO if t.id in ("search", "catalogue")], ids=lambda t: t.id)
def test_contract_check_passes_sound_zoo_tools(item: Tool[..., Any]) -> None:
    report = check_tool_contract(item, max_examples=10)
    assert report.examples >= 1 and report.returned + len(report.refused) == report.examples


def test_contract_check_finds_a_crash_on_valid_arguments() -> None:
    # the zoo's `draw` squares an unbounded float: a huge radius overflows
    draw = next(t for t in ZOO if t.id == "draw")
    with pytest.raises(OverflowError):
        check_tool_contract(draw, max_examples=30, shrink=False)


def test_contract_check_finds_a_result_breaking_the_output_schema() -> None:
    @tool(output_schema={"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}})
    def negative(x: int) -> dict[str, int]:
        """Returns a negative n for large x."""
        return {"n": -1 if x > 10 else x}

    with pytest.raises(AssertionError, match="negative"):
        check_tool_contract(negative, max_examples=50)


async def test_contract_check_from_async_code_and_refusals_are_listed() -> None:
    @tool
    async def picky(word: str) -> int:
        """Refuses empty words."""
        if not word:
            raise ToolError("empty word")
        return len(word)

    report = check_tool_contract(picky, max_examples=20)
    assert report.examples == report.returned + len(report.refused)
    assert set(report.refused) <= {"empty word"}


@pytest.mark.parametrize(
    ("vendor", "expected"),
    [
        ("anthropic:claude-x", {"model": "claude-x", "max_tokens": 4096}),
        ("openai:gpt-x", {"model": "gpt-x"}),
        ("ollama:qwen", {"model": "qwen", "stream": False}),
        ("bedrock:anthropic.claude", {}),
    ],
)
def test_request_payload_is_what_the_vendor_client_would_send(vendor: str, expected: dict[str, Any]) -> None:
    from agentkit import tool as make_tool
    from agentkit.agent import Agent

    @make_tool
    def weather(city: str) -> str:
        return city

    agent = Agent(name="a", instructions="Be brief.", model=vendor, tools=[weather])
    body = request_payload(agent, "Weather in Paris?")
    assert expected.items() <= body.items()
    assert "model" not in body or vendor.startswith(("anthropic", "openai", "ollama"))
    assert json.dumps(body)  # JSON-ready, no SDK objects


async def test_testmodel_call_tools_with_an_unknown_key_is_an_error_naming_it() -> None:
    tools = zoo_registry()
    with pytest.raises(UnknownToolError) as info:
        await Agent(model=TestModel(call_tools=["serach"]), tools=tools).generate("x")
    message = str(info.value)
    assert "'serach'" in message and "Did you mean 'search'?" in message
    assert all(repr(key) in message for key in tools)  # the registered keys are listed
    with pytest.raises(TypeError, match=r"call_tools=\['search'\]"):
        TestModel(call_tools="search")
    with pytest.raises(TypeError, match="registry keys"):
        TestModel(call_tools=[1])  # type: ignore[list-item]


async def test_function_model_info_lists_the_tools_sent_with_its_request_even_when_read_later() -> None:
    """`FunctionInfo.tools` is listed on first read: what it lists is still what that request was sent."""
    kept: list[FunctionInfo] = []

    def fn(messages: list[Message], info: FunctionInfo) -> str:
        kept.append(info)  # read after the registry has changed
        return "done"

    def one(x: int) -> int:
        return x

    registry = Registry({"one": tool(one)})
    model = FunctionModel(fn)
    await model.request([], registry, ModelSettings())
    await model.request([], registry, ModelSettings(active_tools=("one",)))
    registry.add("two", tool(one))
    assert [info.tool_keys for info in kept] == [["one"], ["one"]]
    assert kept[0] == FunctionInfo([registry["one"].definition("one")], ModelSettings())
    assert kept[0].tools is kept[0].tools  # one list, as a field: a function may change it
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = kept[0].nothing  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue]


async def test_function_model_gives_an_unread_info_again_but_never_a_list_someone_read() -> None:
    """The last info is reused while it says the same and nobody read its `tools` (a read list is the reader's)."""
    seen: list[FunctionInfo] = []

    def fn(messages: list[Message], info: FunctionInfo) -> str:
        seen.append(info)
        return "done"

    def one(x: int) -> int:
        return x

    registry = Registry({"one": tool(one)})
    model = FunctionModel(fn)
    settings = ModelSettings()
    await model.request([], registry, settings)
    await model.request([], registry, settings)
    assert seen[1] is seen[0]  # unread, the same tools and settings: the same info
    seen[1].tools.append(seen[1].tools[0])  # a function reads (and changes) its list
    await model.request([], registry, settings)
    assert seen[2] is not seen[1] and seen[2].tool_keys == ["one"]  # a fresh one, with its own list
    await model.request([], registry, ModelSettings())
    assert seen[3] is not seen[2]  # other settings: another info
    registry.add("two", tool(one))
    await model.request([], registry, ModelSettings())
    assert seen[4].tool_keys == ["one", "two"]  # the registry changed: what this request was sent
