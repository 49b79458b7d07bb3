"""Structured output on scripted models: every output form, the three modes, retries, validators, stop-at tools."""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
import pickle
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict

from agentkit import Agent, ModelRetry, UserMessage, tool
from agentkit.events import OutputDeltaEvent, OutputEvent, ToolCallEvent, ToolCallStartEvent
from agentkit.exceptions import AgentSetupError, OutputValidationError, UnknownToolError, UsageError
from agentkit.limits import RunLimits
from agentkit.messages import AssistantMessage, ToolResultsMessage
from agentkit.output import Output
from agentkit.testing import FunctionInfo, FunctionModel, TestModel, ToolCallChunk
from tests.agent_helpers import call, calls, scripted


class Weather(BaseModel):
    """Weather in a city."""

    city: str
    temp: int
    unit: Literal["c", "f"] = "c"


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Movie(TypedDict):
    title: str
    year: int


class Cat(BaseModel):
    meows: int


class Dog(BaseModel):
    barks: int


@tool
def get_temp(city: str) -> int:
    """The temperature in a city."""
    return 21


WEATHER = json.dumps({"city": "Paris", "temp": 21})


# ---- every form an output type takes ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("output_type", "answer", "expected"),
    [
        (Weather, WEATHER, Weather(city="Paris", temp=21)),
        (Point, '{"x": 1, "y": 2}', Point(1, 2)),
        (Movie, '{"title": "Alien", "year": 1979}', {"title": "Alien", "year": 1979}),
        (list[int], '{"response": [1, 2, 3]}', [1, 2, 3]),
        (int, '{"response": 42}', 42),
        (bool, '{"response": false}', False),
        (Literal["yes", "no"], '{"response": "no"}', "no"),
        ([Cat, Dog], '{"response": {"barks": 3}}', Dog(barks=3)),
        ((Cat, Dog), '{"response": {"barks": 3}}', Dog(barks=3)),
        (Output([Cat, Dog]), '{"response": {"barks": 3}}', Dog(barks=3)),  # issue 17 §2.4: a TypeError
        (Output([Cat, Dog], mode="tool"), '{"response": {"meows": 2}}', Cat(meows=2)),
        (Output((Cat, Dog), mode="prompted"), '{"response": {"meows": 2}}', Cat(meows=2)),
        (Output([Cat]), '{"meows": 2}', Cat(meows=2)),  # one type is that type
        (Cat | Dog, '{"response": {"meows": 1}}', Cat(meows=1)),
        (dict[str, int], '{"response": {"a": 1}}', {"a": 1}),
    ],
)
async def test_each_output_form_comes_back_validated(output_type: Any, answer: str, expected: Any) -> None:
    model, _ = scripted(answer)
    result = await Agent(model=model, output_type=output_type).generate("go")
    assert result.status == "complete"
    assert result.output == expected and type(result.output) is type(expected)
    assert result.text == answer  # the raw answer stays


async def test_the_default_output_is_the_text() -> None:
    model, script = scripted("plain words")
    result = await Agent(model=model).generate("go")
    assert result.output == result.text == "plain words"
    assert script.infos[0].output is None  # nothing asked of the model


async def test_tools_first_then_the_typed_answer() -> None:
    def turn(messages: list[Any], info: FunctionInfo) -> AssistantMessage | str:
        if not isinstance(messages[-1], ToolResultsMessage):
            return calls(call("get_temp", {"city": "Paris"}))
        temp = int(messages[-1].results[0].text)
        return json.dumps({"city": "Paris", "temp": temp})

    result = await Agent(model=FunctionModel(turn), tools=[get_temp], output_type=Weather).generate("weather?")
    assert result.output == Weather(city="Paris", temp=21)
    assert [r.output for r in result.tool_results] == [21]


async def test_the_request_carries_the_output_schema_in_the_mode_asked() -> None:
    seen: list[FunctionInfo] = []

    def turn(messages: list[Any], info: FunctionInfo) -> str:
        seen.append(info)
        return WEATHER

    for mode in ("auto", "native", "prompted"):
        await Agent(model=FunctionModel(turn), output_type=Output(Weather, mode=mode)).generate("go")
    assert [i.output.mode for i in seen if i.output] == ["native", "native", "prompted"]
    output = seen[0].output
    assert output is not None and output.definition.key == "final_result"
    assert output.definition.input_schema["properties"]["unit"] == {
        "default": "c",
        "enum": ["c", "f"],
        "type": "string",
    }
    assert seen[2].output is not None and "JSON Schema" in (seen[2].output.prompt or "")


async def test_markdown_fences_and_a_leading_sentence_are_read_past() -> None:
    model, _ = scripted(f"Here it is:\n```json\n{WEATHER}\n```")
    result = await Agent(model=model, output_type=Weather).generate("go")
    assert result.output == Weather(city="Paris", temp=21)


# ---- tool mode ---------------------------------------------------------------------------------------


async def test_tool_mode_sends_the_output_tool_and_requires_a_call() -> None:
    seen: list[FunctionInfo] = []

    def turn(messages: list[Any], info: FunctionInfo) -> AssistantMessage:
        seen.append(info)
        if len(seen) == 1:
            return calls(call("get_temp", {"city": "Paris"}))
        return calls(call("final_result", {"city": "Paris", "temp": 21}))

    agent = Agent(model=FunctionModel(turn), tools=[get_temp], output_type=Output(Weather, mode="tool"))
    result = await agent.generate("go", active_tools=["get_temp"])
    assert result.output == Weather(city="Paris", temp=21)
    assert [i.tool_keys for i in seen] == [["get_temp", "final_result"]] * 2
    assert [i.settings.tool_choice for i in seen] == ["required", "required"]
    assert seen[0].settings.active_tools == ("get_temp", "final_result")
    assert json.loads(result.text) == {"city": "Paris", "temp": 21}
    # the answer's call is answered in the history, so the conversation can go on on any vendor
    assert isinstance(result.messages[-1], ToolResultsMessage)
    assert result.messages[-1].results[0].text == "Final answer received."


async def test_tool_mode_with_tool_choice_none_names_the_output_tool() -> None:
    model, script = scripted(calls(call("final_result", {"city": "Oslo", "temp": -3})))
    agent = Agent(model=model, tools=[get_temp], output_type=Output(Weather, mode="tool"))
    result = await agent.generate("go", tool_choice="none")
    assert result.output.city == "Oslo"
    assert script.infos[0].settings.tool_choice == "final_result"


async def test_tool_mode_invalid_arguments_go_back_as_an_error_result() -> None:
    model, script = scripted(
        calls(call("final_result", {"city": "Paris", "temp": "warm"}, "a1")),
        calls(call("final_result", {"city": "Paris", "temp": 20}, "a2")),
    )
    result = await Agent(model=model, output_type=Output(Weather, mode="tool")).generate("go")
    assert result.output.temp == 20
    first = result.steps[0].results[0]
    assert first.is_error and first.error_kind == "invalid_arguments"
    assert "$.temp" in first.text and "Input should be a valid integer" in first.text


async def test_tool_mode_accepts_a_valid_text_answer_and_otherwise_asks_for_the_call() -> None:
    model, script = scripted("I think it is warm.", WEATHER)
    result = await Agent(model=model, output_type=Output(Weather, mode="tool")).generate("go")
    assert result.output.temp == 21
    retry = script.seen[1][-1]
    assert isinstance(retry, UserMessage) and "calling the tool 'final_result'" in str(retry.content)


async def test_an_output_name_taken_by_a_tool_is_refused() -> None:
    agent = Agent(model=TestModel(), tools={"final_result": get_temp}, output_type=Output(Weather, mode="tool"))
    with pytest.raises(AgentSetupError, match="already a tool's key"):
        await agent.generate("go")
    with pytest.raises(AgentSetupError, match="an output name is 1 to 64"):
        Agent(output_type=Output(Weather, name="final result"))


# ---- retries -----------------------------------------------------------------------------------------


async def test_an_invalid_answer_goes_back_with_json_paths_then_succeeds() -> None:
    model, script = scripted('{"city": "Paris", "temp": "warm"}', WEATHER)
    result = await Agent(model=model, output_type=Weather).generate("go")
    assert result.output.temp == 21
    assert len(result.steps) == 2
    retry = script.seen[1][-1]
    assert isinstance(retry, UserMessage)
    assert "$.temp: Input should be a valid integer (got 'warm')" in str(retry.content)
    assert isinstance(result.messages[2], UserMessage)  # the retry is part of the conversation


async def test_a_key_the_output_type_lacks_goes_back_as_an_error_in_every_mode() -> None:
    # the schema sent says additionalProperties: false; an extra key is an error to fix, not dropped silently
    extra = '{"city": "Paris", "temp": 21, "humidity": 80}'
    model, script = scripted(extra, WEATHER)
    result = await Agent(model=model, output_type=Weather).generate("go")
    assert result.output == Weather(city="Paris", temp=21) and len(result.steps) == 2
    assert "$.humidity: Unexpected argument" in str(script.seen[1][-1].content)
    answers = [calls(call("final_result", json.loads(answer))) for answer in (extra, WEATHER)]
    model, _ = scripted(*answers)
    result = await Agent(model=model, output_type=Output(Weather, mode="tool")).generate("go")
    assert result.output == Weather(city="Paris", temp=21) and len(result.steps) == 2


async def test_an_answer_retry_is_logged_at_debug_like_a_tool_retry(caplog: pytest.LogCaptureFixture) -> None:
    model, _ = scripted('{"city": "Paris", "temp": "warm"}', WEATHER)
    with caplog.at_level(logging.DEBUG, logger="agentkit.agent"):
        await Agent(id="w", model=model, output_type=Weather).generate("go")
    [record] = [r for r in caplog.records if "does not fit" in r.getMessage()]
    assert record.getMessage() == (
        "agent 'w': the answer does not fit the output 'final_result' (1 problem); retry 1 of 2 for the answer"
    )


async def test_a_spent_budget_raises_with_the_raw_answer_and_the_errors() -> None:
    model, _ = scripted(*['{"city": 1}'] * 5)
    agent = Agent(model=model, output_type=Weather, limits=RunLimits(retries=1))
    with pytest.raises(OutputValidationError) as caught:
        await agent.generate("go")
    error = caught.value
    assert error.raw == '{"city": 1}'
    assert {e.path for e in error.errors} == {"$.city", "$.temp"}
    assert len(error.result.steps) == 2  # one try and one retry
    assert "Weather" in str(error) and "RunLimits(retries=...)" in str(error)
    copied = pickle.loads(pickle.dumps(error))
    assert copied.raw == error.raw and copied.errors == error.errors


async def test_the_run_wide_budget_counts_answers_too() -> None:
    model, _ = scripted("nope", "nope", "nope")
    with pytest.raises(OutputValidationError, match="max_retries"):
        await Agent(model=model, output_type=Weather, limits=RunLimits(retries=5, max_retries=1)).generate("go")


async def test_a_tool_mode_budget_raises_the_output_error() -> None:
    model, _ = scripted(*[calls(call("final_result", {"city": "x"}, f"c{i}")) for i in range(4)])
    with pytest.raises(OutputValidationError) as caught:
        await Agent(model=model, output_type=Output(Weather, mode="tool"), limits=RunLimits(retries=1)).generate("go")
    assert json.loads(caught.value.raw) == {"city": "x"}
    assert [e.path for e in caught.value.errors] == ["$.temp"]


# ---- output validators -------------------------------------------------------------------------------


async def test_validators_run_after_the_schema_sync_and_async_and_may_replace_the_value() -> None:
    seen: list[Any] = []

    def known_city(value: Weather) -> None:
        seen.append(value)
        if value.city != "Paris":
            raise ModelRetry("Only Paris is covered; answer for Paris.")

    async def in_fahrenheit(value: Weather) -> Weather:
        return value.model_copy(update={"temp": value.temp * 9 // 5 + 32, "unit": "f"})

    model, script = scripted(json.dumps({"city": "Rome", "temp": 30}), WEATHER)
    agent = Agent(model=model, output_type=Output(Weather, validators=[known_city, in_fahrenheit]))
    result = await agent.generate("go")
    assert result.output == Weather(city="Paris", temp=69, unit="f")
    assert [w.city for w in seen] == ["Rome", "Paris"]
    assert "Only Paris is covered" in str(script.seen[1][-1].content)


async def test_validators_need_an_output_type_and_functions() -> None:
    with pytest.raises(AgentSetupError, match="need an output_type"):
        Agent(output_type=Output(str, validators=[print]))
    with pytest.raises(AgentSetupError, match="functions of the output value"):
        Agent(output_type=Output(Weather, validators=["nope"]))  # type: ignore[list-item]


# ---- per call ----------------------------------------------------------------------------------------


async def test_a_per_call_output_type_replaces_the_agents() -> None:
    model, _ = scripted('{"response": [1, 2]}', WEATHER)
    agent = Agent(model=model, output_type=Weather)
    listed = await agent.generate("go", output_type=list[int])
    assert listed.output == [1, 2]
    assert (await agent.generate("go")).output.city == "Paris"


def test_a_type_no_model_can_be_asked_for_fails_when_the_agent_is_made() -> None:
    class Opaque:
        pass

    with pytest.raises(AgentSetupError, match="output_type=.*Opaque cannot be asked of a model"):
        Agent(output_type=Opaque)
    with pytest.raises(AgentSetupError, match="output_type=\\[\\]"):
        Agent(output_type=[])
    with pytest.raises(AgentSetupError, match="Output\\(\\[\\]\\): no output types"):
        Output([])


# ---- runs that end without an answer ----------------------------------------------------------------


async def test_a_structured_run_that_runs_out_of_steps_has_no_output() -> None:
    model, _ = scripted(calls(call("get_temp", {"city": "Paris"})))
    result = await Agent(model=model, tools=[get_temp], output_type=Weather, limits=RunLimits(max_steps=1)).generate(
        "go"
    )
    assert result.status == "max_steps" and not result.has_output
    with pytest.raises(UsageError, match="without an answer of its output type"):
        _ = result.output


async def test_an_approval_pause_keeps_the_output_type_through_pickle() -> None:
    @tool(requires_approval=True)
    def book(city: str) -> str:
        """Book a trip."""
        return f"booked {city}"

    model, _ = scripted(calls(call("book", {"city": "Paris"}, "b1")), WEATHER)
    agent = Agent(model=model, tools=[book], output_type=Weather)
    paused = await agent.generate("go")
    assert paused.status == "awaiting_approval" and not paused.has_output
    resumed = await agent.resume(pickle.loads(pickle.dumps(paused)), {"b1": True})
    assert resumed.output == Weather(city="Paris", temp=21)


# ---- stop at tools -----------------------------------------------------------------------------------


async def test_stop_at_tools_returns_the_calls_result_without_another_turn() -> None:
    model, script = scripted(calls(call("get_temp", {"city": "Paris"})))
    agent = Agent(model=model, tools=[get_temp], output_type=Output(str, stop_at_tools=["get_temp"]))
    result = await agent.generate("go")
    assert result.status == "complete" and len(script.seen) == 1
    assert result.output == result.text == "21"  # a text run's output is text
    model, _ = scripted(calls(call("get_temp", {"city": "Oslo"})))
    typed = await Agent(model=model, tools=[get_temp], output_type=int).generate("go", stop_at_tools=["get_temp"])
    assert typed.output == 21


async def test_a_tool_option_ends_the_run_and_a_failed_call_does_not() -> None:
    @tool(ends_run=True)
    def lookup(city: str) -> Weather:
        """Look the weather up."""
        if city == "Atlantis":
            raise ModelRetry("No such city.")
        return Weather(city=city, temp=18)

    model, script = scripted(calls(call("lookup", {"city": "Atlantis"})), calls(call("lookup", {"city": "Oslo"}, "c2")))
    result = await Agent(model=model, tools=[lookup], output_type=Weather).generate("go")
    assert result.output == Weather(city="Oslo", temp=18)
    assert len(script.seen) == 2


async def test_a_stop_tool_whose_result_breaks_the_output_type_is_a_setup_error() -> None:
    model, _ = scripted(calls(call("get_temp", {"city": "Paris"})))
    agent = Agent(model=model, tools=[get_temp], output_type=Output(Weather, stop_at_tools=["get_temp"]))
    with pytest.raises(AgentSetupError, match="tool 'get_temp' ends the run .* does not fit the output type Weather"):
        await agent.generate("go")


def test_stop_at_tools_must_name_tools() -> None:
    with pytest.raises(UnknownToolError, match="get_tmp"):
        Agent(tools=[get_temp], output_type=Output(str, stop_at_tools=["get_tmp"]))
    with pytest.raises(AgentSetupError, match="list of tool keys"):
        Agent(tools=[get_temp], output_type=Output(str, stop_at_tools="get_temp"))  # type: ignore[arg-type]


# ---- streaming ---------------------------------------------------------------------------------------


async def test_a_streamed_answer_sends_partial_values_then_the_output() -> None:
    async def stream(messages: list[Any], info: FunctionInfo) -> Any:
        for piece in ['{"ci', 'ty": "Par', 'is", "te', 'mp": 2', "1}"]:
            yield piece

    agent = Agent(model=FunctionModel(stream_fn=stream), output_type=Weather)
    events = [e async for e in agent.stream("go")]
    partials = [e.partial for e in events if isinstance(e, OutputDeltaEvent)]
    assert partials == [{}, {"city": "Par"}, {"city": "Paris"}, {"city": "Paris", "temp": 21}]
    finals = [e.output for e in events if isinstance(e, OutputEvent)]
    assert finals == [Weather(city="Paris", temp=21)]
    assert events[-1].kind == "finish"


async def test_a_streamed_output_tool_call_is_output_events_not_tool_events() -> None:
    async def stream(messages: list[Any], info: FunctionInfo) -> Any:
        yield ToolCallChunk(0, name="final_result", call_id="f1")
        yield ToolCallChunk(0, args='{"city": "Oslo", ')
        yield ToolCallChunk(0, args='"temp": -2}')

    agent = Agent(model=FunctionModel(stream_fn=stream), output_type=Output(Weather, mode="tool"))
    stream_ = agent.stream("go")
    events = [e async for e in stream_]
    assert not [e for e in events if isinstance(e, (ToolCallStartEvent, ToolCallEvent))]
    assert [e.partial for e in events if isinstance(e, OutputDeltaEvent)] == [
        {"city": "Oslo"},
        {"city": "Oslo", "temp": -2},
    ]
    assert stream_.result.output == Weather(city="Oslo", temp=-2)


async def test_test_model_answers_every_mode_from_the_schema() -> None:
    for mode in ("auto", "native", "tool", "prompted"):
        result = await Agent(model=TestModel(), tools=[get_temp], output_type=Output(Weather, mode=mode)).generate("go")
        assert isinstance(result.output, Weather), mode
        assert [s.tool_calls[0].name for s in result.steps if s.tool_calls][:1] == ["get_temp"]


async def test_copies_of_a_finished_result_keep_the_output() -> None:
    model, _ = scripted(WEATHER)
    result = await Agent(model=model, output_type=Weather).generate("go")
    for duplicate in (copy.deepcopy(result), pickle.loads(pickle.dumps(result))):
        assert duplicate.output == result.output


async def test_null_for_an_optional_field_reads_as_its_default() -> None:
    model, _ = scripted('{"city": "Paris", "temp": 3, "unit": null}')
    result = await Agent(model=model, output_type=Weather).generate("go")
    assert result.output.unit == "c"


async def test_history_with_a_typed_answer_continues_on_the_next_call() -> None:
    model, script = scripted(WEATHER, "ok")
    agent = Agent(model=model, output_type=Weather)
    first = await agent.generate("go")
    more = await agent.generate([*first.messages, UserMessage("and tomorrow?")], output_type=str)
    assert more.output == "ok"
    assert script.infos[1].output is None


async def test_an_output_type_with_unhashable_metadata_works() -> None:
    model, _ = scripted('{"response": 3}')
    result = await Agent(model=model, output_type=Output(Annotated[int, {"unit": "cm"}], mode="tool")).generate("go")
    assert result.output == 3


async def test_runs_of_one_typed_agent_share_its_plan_but_never_its_answers() -> None:
    """A run's answer reader starts empty although the plan (made once per agent and model) is shared."""
    answers = iter(['{"city": 1}', '{"city": "Paris", "temp": "warm"}', '{"city": "Rome", "temp": 21.0}'])
    seen: list[tuple[Any, Any]] = []

    def turn(messages: list[Any], info: FunctionInfo) -> str:
        seen.append((info.settings.output, [d.key for d in info.tools]))
        return next(answers)

    agent = Agent(model=FunctionModel(turn), output_type=Weather, limits=RunLimits(retries=0))
    with pytest.raises(OutputValidationError) as first:
        await agent.generate("go")
    assert first.value.raw == '{"city": 1}'
    with pytest.raises(OutputValidationError) as second:
        await agent.generate("go")
    assert second.value.raw == '{"city": "Paris", "temp": "warm"}'  # the first run's answer is not kept
    assert [e.path for e in second.value.errors] == ["$.temp"]
    result = await agent.generate("go")
    assert result.output == Weather(city="Rome", temp=21.0)
    assert seen[0] == seen[1] == seen[2] and seen[0][0] is not None  # every run asked for the output the same way


async def test_runs_of_one_output_tool_agent_each_send_the_output_tool() -> None:
    sent: list[tuple[list[str], str]] = []

    def turn(messages: list[Any], info: FunctionInfo) -> Any:
        sent.append(([d.key for d in info.tools], info.settings.tool_choice))
        return calls(call("final_result", {"city": "Oslo", "temp": 3.0}, f"c{len(sent)}"))

    agent = Agent(model=FunctionModel(turn), tools=[get_temp], output_type=Output(Weather, mode="tool"))
    outputs = [(await agent.generate("go")).output for _ in range(3)]
    assert outputs == [Weather(city="Oslo", temp=3.0)] * 3
    assert sent == [(["get_temp", "final_result"], "required")] * 3
