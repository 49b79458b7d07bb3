"""Running questions on a model (agentkit.evals._runner, _api): judging, retry with feedback, repair, concurrency."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import pytest

from agentkit.evals import EvalCase, bfcl_cases, consistent, evaluate, load_cases, run_case, run_cases, sample
from agentkit.evals._selftest import _oracle
from agentkit.messages import AssistantMessage, Message, ToolCall, ToolResultsMessage
from agentkit.providers.openai import OpenAIChatModel
from agentkit.testing import FunctionInfo, FunctionModel
from tests.evals.fixtures import CASES, tools
from tests.providers.openai.test_chat import httpx_module, sdk_client


def oracle_model(case: EvalCase) -> FunctionModel:
    """A model that answers `case` with its expected calls (the first acceptable value of each argument)."""

    def turn(messages: list[Message], info: FunctionInfo) -> AssistantMessage:
        calls = _oracle(case.specs(), case.expected, keep_optional=True)
        return AssistantMessage(
            tool_calls=[ToolCall(f"c{i}", n, json.dumps(a)) for i, call in enumerate(calls) for n, a in call.items()]
        )

    return FunctionModel(turn)


async def test_expected_answers_pass_in_every_bfcl_category() -> None:
    # (a few BFCL answers break BFCL's own rules, `consistent`: those fail there too)
    cases = [c for c in sample(bfcl_cases(), 120, seed=1) if c.expected and consistent(c.specs(), c.expected)]
    results = [await run_case(oracle_model(case), case) for case in cases]
    assert {r.category for r in results} == {c.category for c in bfcl_cases()} - {"irrelevance"}
    failed = [(r.id, r.detail) for r in results if not r.passed]
    assert failed == []


async def test_a_text_answer_fails_where_a_call_is_expected_and_passes_where_none_fits() -> None:
    silent = FunctionModel(lambda messages, info: "I cannot help with that.")
    simple = bfcl_cases("bfcl:simple")[0]
    irrelevant = bfcl_cases("bfcl:irrelevance")[0]
    result = await run_case(silent, simple)
    assert (result.passed, result.error, result.text) == (False, "no_call", "I cannot help with that.")
    assert (await run_case(silent, irrelevant)).passed


async def test_a_failed_request_is_that_questions_model_error_and_the_run_goes_on() -> None:
    calls = 0

    def flaky(messages: list[Message], info: FunctionInfo) -> str:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise RuntimeError("HTTP 500 from the server\nmore lines")
        return "no"

    cases = bfcl_cases("bfcl:irrelevance")[:3]
    results = await run_cases(FunctionModel(flaky), cases, concurrency=1)
    assert [r.passed for r in results] == [True, False, True]
    assert (results[1].error, results[1].detail) == ("model_error", "RuntimeError: HTTP 500 from the server")


async def test_retry_sends_the_validation_error_back_once_and_keeps_valid_calls(tmp_path: Path) -> None:
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(CASES))
    pair = load_cases(path, tools)[1]  # Rome and Oslo
    seen: list[list[Message]] = []

    def turn(messages: list[Message], info: FunctionInfo) -> AssistantMessage:
        seen.append(messages)
        if len(seen) == 1:  # Oslo's days as text: invalid
            return AssistantMessage(
                tool_calls=[
                    ToolCall("a", "weather.get", '{"city": "Rome"}'),
                    ToolCall("b", "weather.get", '{"city": "Oslo", "days": "one"}'),
                ]
            )
        return AssistantMessage(tool_calls=[ToolCall("c", "weather.get", '{"city": "Oslo", "days": 1}')])

    result = await run_case(FunctionModel(turn), pair, retry=True)
    assert (result.first_passed, result.retried, result.passed) == (False, True, True)
    assert [json.loads(a)["city"] for _, a in result.calls] == ["Rome", "Oslo"]
    feedback = seen[1][-1]
    assert isinstance(feedback, ToolResultsMessage)
    ok, error = feedback.results
    assert (ok.is_error, ok.text) == (False, "ok")
    assert error.is_error and "days" in error.text and "Fix the arguments" in error.text
    # without retry: judged once, no second request
    seen.clear()
    once = await run_case(FunctionModel(turn), pair)
    assert (once.passed, once.first_passed, len(seen)) == (False, None, 1)


async def test_retry_is_not_asked_when_every_call_is_valid() -> None:
    case = bfcl_cases("bfcl:simple")[0]
    result = await run_case(oracle_model(case), case, retry=True)
    assert (result.passed, result.first_passed, result.retried) == (True, True, False)


async def test_repair_fixes_reported_slips_only(tmp_path: Path) -> None:
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(CASES))
    paris = load_cases(path, tools)[0]
    sloppy = FunctionModel(
        lambda m, i: AssistantMessage(
            tool_calls=[ToolCall("a", "weather.get", "{'city': 'Paris', 'unit': 'fahrenheit', 'days': '2',}")]
        )
    )
    plain = await run_case(sloppy, paris)
    assert (plain.passed, plain.error, plain.repairs) == (False, "malformed_arguments", ())
    repaired = await run_case(sloppy, paris, repair=True)
    assert repaired.passed
    assert repaired.repairs == (
        "weather.get: read single-quoted (Python) syntax as JSON, read the string '2' at /days as an integer",
    )


async def test_concurrency_is_bounded() -> None:
    running = peak = 0

    async def turn(messages: list[Message], info: FunctionInfo) -> str:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01)
        running -= 1
        return "no"

    seen: list[int] = []
    cases = bfcl_cases("bfcl:irrelevance")[:12]
    results = await run_cases(FunctionModel(turn), cases, concurrency=3, progress=lambda d, t, r: seen.append(d))
    assert peak == 3 and seen == list(range(1, 13)) and [r.id for r in results] == [c.id for c in cases]
    with pytest.raises(ValueError, match="at least 1"):
        await run_cases(FunctionModel(turn), cases, concurrency=0)


async def test_dotted_names_are_aliased_on_the_wire_and_scored_by_their_bfcl_names() -> None:
    """Through the official OpenAI SDK: the request says math_factorial, the score says math.factorial."""
    httpx = httpx_module()
    case = next(c for c in bfcl_cases("bfcl:simple") if c.id == "simple_python_1")
    assert case.expected_tools == ("math.factorial",)
    sent: list[dict[str, Any]] = []

    def handler(request: Any) -> Any:
        body = json.loads(request.content)
        sent.append(body)
        name = body["tools"][0]["function"]["name"]
        call = {"id": "call_1", "type": "function", "function": {"name": name, "arguments": '{"number": 5}'}}
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        choice = {"index": 0, "message": message, "finish_reason": "tool_calls"}
        return httpx.Response(
            200, json={"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": [choice]}
        )

    model = OpenAIChatModel("local", client=sdk_client(handler))
    report = await evaluate(model, [case])
    assert sent[0]["tools"][0]["function"]["name"] == "math_factorial"
    assert sent[0]["tool_choice"] == "auto" and sent[0]["temperature"] == 0.0
    assert report.results[0].passed and report.results[0].calls[0][0] == "math.factorial"
    assert report.tools["math.factorial"].passed == 1


async def test_a_strict_null_is_read_as_left_out() -> None:
    """The strict rendering makes optional arguments nullable; agentkit's reading drops the null (BFCL's "")."""
    httpx = httpx_module()
    case = next(c for c in bfcl_cases("bfcl:simple") if c.id == "simple_python_0")
    arguments = '{"base": 10, "height": 5, "unit": null}'

    def handler(request: Any) -> Any:
        body = json.loads(request.content)
        assert body["tools"][0]["function"]["strict"] is True
        assert body["tools"][0]["function"]["parameters"]["properties"]["unit"]["type"] == ["string", "null"]
        call = {
            "id": "call_1",
            "type": "function",
            "function": {"name": "calculate_triangle_area", "arguments": arguments},
        }
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        return httpx.Response(
            200,
            json={
                "id": "x",
                "object": "chat.completion",
                "created": 1,
                "model": "m",
                "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
            },
        )

    result = await run_case(OpenAIChatModel("local", client=sdk_client(handler)), copy.copy(case))
    assert result.passed, result.detail
