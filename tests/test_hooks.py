"""Hooks around tool calls and model requests, and approval for every call of a run."""

from __future__ import annotations

import asyncio
import dataclasses
import pickle
from typing import Any

import pytest

from agentkit import ToolContext, ToolResult, tool
from agentkit.agent import Agent, RunContext
from agentkit.events import ToolErrorEvent, ToolResultEvent
from agentkit.exceptions import AgentSetupError, ApprovalError, HookError
from agentkit.hooks import Answer, Deny, Hooks, ModelRequest, ReplaceArguments, RunHooks
from agentkit.messages import ModelResponse, SystemMessage, TextPart, ToolCall
from agentkit.registry import Registry

from .agent_helpers import call, calls, scripted

RAN: list[Any] = []


@tool
def transfer(ctx: ToolContext[str], account: str, amount: int) -> str:
    """Move money."""
    RAN.append((ctx.deps, account, amount))
    return f"{amount} to {account}"


@tool(to_model_output=lambda value: f"balance is {value}")
def balance(account: str) -> int:
    """Read a balance."""
    RAN.append(("balance", account))
    return 100


@pytest.fixture(autouse=True)
def _fresh() -> None:
    RAN.clear()


def agent_with(*hooks: RunHooks[Any], turns: Any = None, **options: Any) -> tuple[Agent, Any]:
    model, script = scripted(*(turns or (calls(call("transfer", {"account": "A", "amount": 5})), "done")))
    return Agent(
        model=model, tools=Registry({"transfer": transfer, "balance": balance}), hooks=list(hooks), **options
    ), script


def last_results(script: Any) -> list[ToolResult]:
    return script.seen[-1][-1].results  # type: ignore[no-any-return]


# ---- before and after a tool call -------------------------------------------------------------------


async def test_a_hook_that_returns_none_lets_the_call_run_and_sees_the_tools_context() -> None:
    seen: list[tuple[str, str | None, str | None, Any]] = []

    def look(ctx: ToolContext[str], call: ToolCall) -> None:
        seen.append((call.name, ctx.tool_name, ctx.call_id, ctx.deps))

    agent, _ = agent_with(Hooks(before_tool_call=look))
    result = await agent.generate("go", deps="session-1")
    assert seen == [("transfer", "transfer", "c_transfer", "session-1")]  # keys, never ids; the tool's deps
    assert RAN == [("session-1", "A", 5)] and result.tool_results[0].output == "5 to A"


async def test_a_hook_may_replace_the_arguments_which_are_validated_again() -> None:
    agent, _ = agent_with(Hooks(before_tool_call=lambda ctx, call: ReplaceArguments({"account": "B", "amount": 7})))
    result = await agent.generate("go")
    assert RAN == [(None, "B", 7)] and result.tool_results[0].output == "7 to B"
    assert result.tool_calls[0].arguments == {"account": "A", "amount": 5}  # the history keeps the model's call

    agent, script = agent_with(Hooks(before_tool_call=lambda ctx, call: ReplaceArguments({"account": "B"})))
    result = await agent.generate("go")
    assert RAN == [(None, "B", 7)]  # nothing more ran
    [bad] = result.tool_results
    assert (bad.error_kind, bad.call_id, bad.name) == ("invalid_arguments", "c_transfer", "transfer")
    assert "amount" in bad.text


async def test_a_hook_may_answer_a_call_without_running_it() -> None:
    turns = (calls(call("balance", {"account": "A"})), "done")
    agent, script = agent_with(Hooks(before_tool_call=lambda ctx, call: Answer(42)), turns=turns)
    result = await agent.generate("go")
    assert RAN == []
    [answered] = result.tool_results
    assert answered.output == 42 and answered.text == "balance is 42"  # as if the tool returned it
    assert last_results(script)[0].text == "balance is 42"


async def test_a_hook_may_deny_a_call_with_a_reason_the_model_receives() -> None:
    agent, script = agent_with(Hooks(before_tool_call=lambda ctx, call: Deny("transfers are closed on Sundays.")))
    result = await agent.generate("go")
    assert RAN == []
    [denied] = last_results(script)
    assert (denied.error_kind, denied.text) == (
        "denied",
        "This call to 'transfer' was denied: transfers are closed on Sundays.",
    )
    assert result.text == "done"


async def test_after_a_call_a_hook_may_replace_the_result() -> None:
    def swap(ctx: ToolContext[Any], call: ToolCall, result: ToolResult) -> Any:
        assert result.output == "5 to A"
        return ToolResult(call_id="ignored", name="ignored", content=[TextPart("masked")], output="masked")

    agent, script = agent_with(Hooks(after_tool_call=swap))
    result = await agent.generate("go")
    [replaced] = result.tool_results
    assert (replaced.call_id, replaced.name, replaced.output) == ("c_transfer", "transfer", "masked")
    assert last_results(script)[0].text == "masked"

    agent, _ = agent_with(Hooks(after_tool_call=lambda ctx, call, result: Answer("rounded")))
    assert (await agent.generate("go")).tool_results[0].output == "rounded"


async def test_hooks_run_in_order_async_allowed_each_seeing_the_previous_decision() -> None:
    order: list[str] = []

    class First(RunHooks[Any]):
        async def before_tool_call(self, ctx: ToolContext[Any], call: ToolCall) -> ReplaceArguments:
            await asyncio.sleep(0)
            order.append("first")
            return ReplaceArguments({**call.arguments_dict(), "amount": 1})

        def after_tool_call(self, ctx: ToolContext[Any], call: ToolCall, result: ToolResult) -> None:
            order.append(f"first after {result.output}")

    class Second(RunHooks[Any]):
        def before_tool_call(self, ctx: ToolContext[Any], call: ToolCall) -> None:
            order.append(f"second sees {call.arguments_dict()['amount']}")

        async def after_tool_call(self, ctx: ToolContext[Any], call: ToolCall, result: ToolResult) -> Answer:
            order.append("second after")
            return Answer(f"{result.output}!")

    agent, _ = agent_with(First(), turns=(calls(call("transfer", {"account": "A", "amount": 5})), "done"))
    result = await agent.generate("go", hooks=[Second()])  # the run's hooks come after the agent's
    assert order == ["first", "second sees 1", "first after 1 to A", "second after"]
    assert result.tool_results[0].output == "1 to A!"


async def test_a_hook_that_raises_or_returns_nonsense_fails_that_call_only() -> None:
    def boom(ctx: ToolContext[Any], call: ToolCall) -> None:
        if call.name == "transfer":
            raise RuntimeError("policy service down")

    turns = (calls(call("transfer", {"account": "A", "amount": 5}), call("balance", {"account": "A"})), "done")
    agent, script = agent_with(Hooks(before_tool_call=boom), turns=turns)
    result = await agent.generate("go")
    failed, fine = result.tool_results
    assert (failed.error_kind, failed.exception_type) == ("hook_error", "RuntimeError")
    assert "before_tool_call hook failed (RuntimeError: policy service down)" in failed.text
    assert fine.output == 100 and RAN == [("balance", "A")]
    assert result.text == "done"

    agent, _ = agent_with(Hooks(before_tool_call=lambda ctx, call: "yes"))
    [odd] = (await agent.generate("go")).tool_results
    # never its value: a hook may return an application object holding secrets (issue 17 §4.9)
    assert odd.error_kind == "hook_error" and "returned an object of type str" in odd.text

    def after_boom(ctx: Any, call: Any, result: Any) -> None:
        raise ValueError("x")

    agent, _ = agent_with(Hooks(after_tool_call=after_boom))
    [after] = (await agent.generate("go")).tool_results
    assert after.error_kind == "hook_error" and RAN[-1] == (None, "A", 5)  # it ran; its result was withheld


async def test_a_hook_cannot_change_arguments_into_ones_that_need_approval() -> None:
    @tool(requires_approval=lambda args: args["amount"] > 100)
    def pay(amount: int) -> str:
        """Pay."""
        RAN.append(amount)
        return "paid"

    model, _ = scripted(calls(call("pay", {"amount": 5})), "done")
    hooks = Hooks(before_tool_call=lambda ctx, call: ReplaceArguments({"amount": 500}))
    result = await Agent(model=model, tools=[pay], hooks=[hooks]).generate("go")
    [blocked] = result.tool_results
    assert blocked.error_kind == "denied" and "need approval" in blocked.text and RAN == []


async def test_denials_and_hook_errors_reach_the_stream_as_error_events() -> None:
    agent, _ = agent_with(Hooks(before_tool_call=lambda ctx, call: Deny("no")))
    events = [e async for e in agent.stream("go")]
    [error] = [e for e in events if isinstance(e, ToolErrorEvent)]
    assert (error.tool_name, error.error_kind, error.error) == (
        "transfer",
        "denied",
        "This call to 'transfer' was denied: no.",
    )
    assert not [e for e in events if isinstance(e, ToolResultEvent)]


def test_hooks_need_functions_and_runs_need_hook_objects() -> None:
    with pytest.raises(AgentSetupError, match=r"Hooks\(before_tool_call=...\) must be a function"):
        Hooks(before_tool_call=3)  # type: ignore[arg-type]
    with pytest.raises(AgentSetupError, match=r"Agent\(hooks=...\) takes RunHooks objects"):
        Agent(hooks=[lambda ctx, call: None])  # type: ignore[list-item]
    assert repr(Hooks(after_tool_call=print, before_tool_call=print)) == "Hooks(after_tool_call, before_tool_call)"


# ---- before and after a model request ---------------------------------------------------------------


async def test_a_model_request_hook_may_change_the_request_and_sees_the_response() -> None:
    responses: list[ModelResponse] = []

    def before(ctx: RunContext[Any], request: ModelRequest) -> ModelRequest:
        assert isinstance(request.messages[0], SystemMessage) and request.messages[0].text == "Base."
        tools = request.tools.select(k for k in request.tools if k != "transfer")  # hide a tool
        settings = dataclasses.replace(request.settings, temperature=0.0)
        return dataclasses.replace(
            request,
            messages=[SystemMessage(f"Step {ctx.step}."), *request.messages[1:]],
            tools=tools,
            settings=settings,
        )

    def after(ctx: RunContext[Any], request: ModelRequest, response: ModelResponse) -> None:
        responses.append(response)

    turns = (calls(call("transfer", {"account": "A", "amount": 5})), "done")
    agent, script = agent_with(
        Hooks(before_model_request=before, after_model_response=after), turns=turns, instructions="Base."
    )
    result = await agent.generate("go")
    assert [m[0].text for m in script.seen] == ["Step 0.", "Step 1."]  # type: ignore[union-attr]
    assert [i.tool_keys for i in script.infos] == [["balance"], ["balance"]]
    assert [i.settings.temperature for i in script.infos] == [0.0, 0.0]
    assert RAN == [] and result.tool_results[0].error_kind == "unknown_tool"  # a tool not sent cannot run
    assert [r.message.text for r in responses] == ["", "done"]


async def test_a_model_request_hook_that_fails_stops_the_run_before_sending() -> None:
    def before(ctx: Any, request: Any) -> None:
        raise PermissionError("quota exceeded")

    agent, script = agent_with(Hooks(before_model_request=before))
    with pytest.raises(
        HookError,
        match=r"The before_model_request hook Hooks\(before_model_request\) raised PermissionError: quota exceeded\.",
    ) as info:
        await agent.generate("go")
    assert script.seen == [] and isinstance(info.value.__cause__, PermissionError)
    copy = pickle.loads(pickle.dumps(info.value))
    assert str(copy) == str(info.value)

    agent, _ = agent_with(Hooks(before_model_request=lambda ctx, request: "nope"))
    with pytest.raises(HookError, match="returned an object of type str; return a ModelRequest or None"):
        await agent.generate("go")

    def broken(ctx: Any, request: ModelRequest) -> None:
        request.tools = {}  # type: ignore[assignment]

    agent, _ = agent_with(Hooks(before_model_request=broken))
    with pytest.raises(HookError, match=r"with an unusable tools \(an object of type dict, not a Registry\)"):
        await agent.generate("go")


# ---- approval for every call of a run ---------------------------------------------------------------


async def test_require_approval_per_run_holds_every_call_and_composes_with_tool_policies() -> None:
    turns = (calls(call("transfer", {"account": "A", "amount": 5}), call("balance", {"account": "A"})), "done")
    agent, _ = agent_with(turns=turns)
    paused = await agent.generate("go", require_approval=True)
    assert paused.status == "awaiting_approval" and RAN == []
    assert [p.tool_name for p in paused.pending] == ["transfer", "balance"]
    with pytest.raises(ApprovalError, match="no decision for the pending call"):
        await agent.resume(paused, {"c_transfer": True})  # the run's rule is decided again on resume
    done = await agent.resume(paused, {"c_transfer": True, "c_balance": False})
    assert RAN == [(None, "A", 5)] and done.text == "done"
    assert [r.error_kind for r in done.tool_results] == [None, "denied"]

    # without it, only the tools' own policies hold calls
    agent, _ = agent_with(turns=turns)
    assert (await agent.generate("go")).status == "complete"


async def test_require_approval_does_not_hold_a_call_that_would_not_run() -> None:
    turns = (calls(call("transfer", {"account": "A"})), "done")  # amount missing: it cannot run anyway
    agent, _ = agent_with(turns=turns)
    result = await agent.generate("go", require_approval=True)
    assert result.status == "complete" and result.tool_results[0].error_kind == "invalid_arguments"


# ---- cancellation and hooks (issue 17 §4.5) -----------------------------------------------------------


async def test_a_cancel_set_while_before_tool_call_hooks_wait_starts_no_tool() -> None:
    cancel = asyncio.Event()

    async def slow_check(ctx: ToolContext[Any], call: ToolCall) -> None:
        cancel.set()  # the user cancels while the hook is still deciding
        await asyncio.sleep(0)

    agent, script = agent_with(
        Hooks(before_tool_call=slow_check),
        turns=[calls(call("transfer", {"account": "A", "amount": 5}), call("balance", {"account": "A"}, "b1"))],
    )
    result = await agent.generate("go", deps="u", cancel=cancel)
    assert RAN == []  # neither call started
    assert result.status == "cancelled" and len(script.seen) == 1
    results = result.steps[0].results
    assert [(r.call_id, r.error_kind) for r in results] == [("c_transfer", "cancelled"), ("b1", "cancelled")]
    assert "cancelled" in results[0].text
    done = await agent.resume(result)  # the turn is recorded: the model goes on from it
    assert done.status == "complete" and RAN == []


async def test_a_hook_raising_cancelled_error_fails_that_call_not_the_run() -> None:
    async def cancelled_inside(ctx: ToolContext[Any], call: ToolCall) -> None:
        waiter = asyncio.get_running_loop().create_future()
        waiter.cancel()  # e.g. a lookup the hook awaited was cancelled by its own library
        await waiter

    def after(ctx: ToolContext[Any], call: ToolCall, result: ToolResult) -> None:
        raise asyncio.CancelledError

    for hooks in (Hooks(before_tool_call=cancelled_inside), Hooks(after_tool_call=after)):
        RAN.clear()
        agent, script = agent_with(hooks)
        result = await agent.generate("go", deps="u")
        assert result.status == "complete"
        (failed,) = last_results(script)
        assert failed.error_kind == "hook_error" and "CancelledError" in failed.text


async def test_a_tool_or_model_request_hook_raising_cancelled_error_is_no_crash_either() -> None:
    @tool
    async def flaky() -> str:
        """Awaits something that gets cancelled."""
        waiter = asyncio.get_running_loop().create_future()
        waiter.cancel()
        await waiter
        return "never"

    model, script = scripted(calls(call("flaky")), "done")
    result = await Agent(model=model, tools=[flaky]).generate("go")
    assert result.status == "complete"
    (failed,) = script.seen[-1][-1].results  # type: ignore[union-attr]
    assert failed.error_kind == "exception" and "CancelledError" in failed.text

    async def before_request(ctx: RunContext[Any], request: ModelRequest) -> None:
        raise asyncio.CancelledError

    model, _ = scripted("done")
    with pytest.raises(HookError, match="CancelledError"):
        await Agent(model=model, hooks=[Hooks(before_model_request=before_request)]).generate("go")


async def test_closing_a_stream_while_a_hook_waits_still_cancels_the_run() -> None:
    started = asyncio.Event()
    finished: list[str] = []

    async def waits(ctx: ToolContext[Any], call: ToolCall) -> None:
        started.set()
        await asyncio.sleep(10)
        finished.append("hook")

    agent, _ = agent_with(Hooks(before_tool_call=waits))
    stream = agent.stream("go", deps="u")
    iterator = aiter(stream)
    task = asyncio.ensure_future(anext(iterator))
    await started.wait()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    await iterator.aclose()  # type: ignore[attr-defined]
    assert finished == [] and RAN == []
