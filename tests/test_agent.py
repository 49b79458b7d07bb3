"""The agent loop: turns, concurrent tool calls, history, tool_choice/active_tools, budgets, composition."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentkit import ImagePart, ModelRetry, Registry, TextPart, ToolContext, UnknownToolError, tool
from agentkit.agent import Agent, RetryLimitExceeded, RunResult
from agentkit.exceptions import ModelSetupError, RegistryError, UsageLimitExceeded
from agentkit.limits import RunLimits
from agentkit.messages import AssistantMessage, SystemMessage, ToolResultsMessage, UserMessage
from agentkit.models import ModelSettings
from agentkit.providers import get_provider
from agentkit.testing import FunctionModel, TestModel
from agentkit.workflows import Workflow

from .agent_helpers import call, calls, scripted


def make_add() -> Any:
    @tool
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return add


async def test_two_step_run_returns_text_steps_history_and_usage() -> None:
    model, script = scripted(calls(call("add", {"a": 2, "b": 3})), "The sum is 5.")
    agent = Agent(id="calc", instructions="Be brief.", model=model, tools=[make_add()])
    result = await agent.generate("2+3?")
    assert result.text == "The sum is 5."
    assert result.status == "complete"
    assert [len(s.tool_calls) for s in result.steps] == [1, 0]
    assert result.steps[0].results[0].output == 5
    assert result.usage.requests == 2
    # the history has no instructions (they are added to every request) and ends with the answer
    assert [m.role for m in result.messages] == ["user", "assistant", "tool", "assistant"]
    assert script.seen[0][0] == SystemMessage("Be brief.")
    assert isinstance(script.seen[1][-1], ToolResultsMessage)
    assert result.agent_id == "calc"


async def test_parallel_calls_run_concurrently_and_keep_call_order() -> None:
    b_started = asyncio.Event()

    @tool
    async def slow(name: str, delay: float) -> str:
        """Return the name; "a" finishes only once "b" has started, so sequential calls would hang."""
        if name == "a":
            await asyncio.wait_for(b_started.wait(), 5)
        else:
            b_started.set()
        await asyncio.sleep(delay)
        return name

    model, _ = scripted(
        calls(call("slow", {"name": "a", "delay": 0.02}, "1"), call("slow", {"name": "b", "delay": 0.0}, "2"))
    )
    agent = Agent(model=model, tools={"slow": slow})
    result = await agent.generate("go")
    assert not any(r.is_error for r in result.steps[0].results)  # "a" saw "b" start: they ran concurrently
    assert [r.output for r in result.steps[0].results] == ["a", "b"]  # call order, not finish order
    assert [r.call_id for r in result.steps[0].results] == ["1", "2"]


async def test_history_is_reusable_in_the_next_call_and_on_another_vendor() -> None:
    model, script = scripted(calls(call("add", {"a": 1, "b": 1})), "2", "again 2")
    agent = Agent(instructions="Be brief.", model=model, tools=[make_add()])
    first = await agent.generate("1+1?")
    second = await agent.generate([*first.messages, UserMessage("and again?")])
    assert second.text == "again 2"
    assert script.seen[2][1:] == [*first.messages, UserMessage("and again?")]
    assert second.messages[: len(first.messages)] == first.messages
    # the same neutral history builds a request for any vendor
    for vendor in ("openai", "anthropic", "gemini"):
        body = get_provider(vendor).build_request(second.messages, agent.tools)
        assert body


async def test_a_required_tool_choice_applies_to_the_first_step_only() -> None:
    model, script = scripted(calls(call("add", {"a": 1, "b": 2})), "3")
    agent = Agent(model=model, tools=[make_add()])
    result = await agent.generate("x", tool_choice="required")
    assert result.status == "complete"
    assert [i.settings.tool_choice for i in script.infos] == ["required", "auto"]
    model, script = scripted(calls(call("add", {"a": 1, "b": 2})), "3")
    await Agent(model=model, tools=[make_add()]).generate("x", tool_choice="add")
    assert [i.settings.tool_choice for i in script.infos] == ["add", "auto"]
    model, script = scripted("no tools")
    await Agent(model=model, tools=[make_add()]).generate("x", tool_choice="none")
    assert script.infos[0].settings.tool_choice == "none"


async def test_active_tools_limit_what_is_shown_and_what_runs() -> None:
    ran: list[str] = []

    @tool
    def secret() -> str:
        """Not for this run."""
        ran.append("secret")
        return "s"

    model, script = scripted(calls(call("secret")), "ok")
    agent = Agent(model=model, tools={"add": make_add(), "secret": secret})
    result = await agent.generate("x", active_tools=["add"])
    assert script.infos[0].tool_keys == ["add"]
    assert script.infos[0].settings.active_tools == ("add",)
    assert ran == []  # the model called an inactive tool anyway: it did not run
    assert result.steps[0].results[0].error_kind == "unknown_tool"
    with pytest.raises(UnknownToolError, match="did you mean|Did you mean"):
        await agent.generate("x", active_tools=["ad"])
    with pytest.raises(ValueError, match="not among active_tools"):
        await agent.generate("x", active_tools=["add"], tool_choice="secret")


async def test_max_steps_ends_the_run_with_its_own_status() -> None:
    model, _ = scripted(*[calls(call("add", {"a": i, "b": 1}, f"c{i}")) for i in range(5)])
    agent = Agent(model=model, tools=[make_add()], limits=RunLimits(max_steps=3))
    result = await agent.generate("loop")
    assert result.status == "max_steps"
    assert len(result.steps) == 3
    assert isinstance(result.messages[-1], ToolResultsMessage)
    result = await Agent(model=scripted(calls(call("add", {"a": 1, "b": 1})))[0], tools=[make_add()]).generate(
        "x", max_steps=1
    )
    assert result.status == "max_steps" and len(result.steps) == 1


async def test_to_model_output_content_goes_to_the_model_output_to_the_app() -> None:
    @tool(to_model_output=lambda chart: [f"chart of {len(chart['points'])} points", ImagePart(url="https://x/c.png")])
    def chart() -> dict[str, list[int]]:
        """Draw a chart."""
        return {"points": [1, 2, 3]}

    model, script = scripted(calls(call("chart")), "done")
    result = await Agent(model=model, tools=[chart]).generate("x")
    sent = script.seen[1][-1]
    assert isinstance(sent, ToolResultsMessage)
    assert sent.results[0].content[0] == TextPart("chart of 3 points")
    assert isinstance(sent.results[0].content[1], ImagePart)
    assert result.steps[0].results[0].output == {"points": [1, 2, 3]}


async def test_model_mistakes_and_timeouts_become_error_results() -> None:
    @tool(timeout=0.05)
    async def sleepy() -> str:
        """Takes too long."""
        await asyncio.sleep(1)
        return "late"

    model, script = scripted(
        calls(
            call("add", '{"a": "x"}', "bad"),
            call("nope", {}, "unknown"),
            call("sleepy", {}, "slow"),
            call("add", "{not json", "json"),
        ),
        "recovered",
    )
    result = await Agent(model=model, tools={"add": make_add(), "sleepy": sleepy}).generate("x")
    kinds = {r.call_id: r.error_kind for r in result.steps[0].results}
    assert kinds == {
        "bad": "invalid_arguments",
        "unknown": "unknown_tool",
        "slow": "timeout",
        "json": "invalid_arguments",
    }
    assert result.text == "recovered"
    assert all(r.is_error for r in script.seen[1][-1].results)  # type: ignore[union-attr]


def make_flaky(fail_times: int) -> Any:
    state = {"n": 0}

    @tool
    def flaky(x: int) -> int:
        """Fails a few times."""
        state["n"] += 1
        if state["n"] <= fail_times:
            raise ModelRetry("try again with a bigger x")
        return x

    return flaky


async def test_model_retry_goes_back_to_the_model_within_the_budget() -> None:
    model, script = scripted(*[calls(call("flaky", {"x": i}, f"c{i}")) for i in range(3)], "ok")
    result = await Agent(model=model, tools=[make_flaky(2)], limits=RunLimits(retries=2)).generate("x")
    assert result.text == "ok"
    assert [r.error_kind for r in result.tool_results] == ["retry", "retry", None]
    assert script.seen[1][-1].results[0].text == "try again with a bigger x"  # type: ignore[union-attr]


async def test_per_tool_retry_budget_raises_with_the_partial_result() -> None:
    model, _ = scripted(*[calls(call("flaky", {"x": i}, f"c{i}")) for i in range(5)], "never")
    agent = Agent(model=model, tools=[make_flaky(10)], limits=RunLimits(retries=1))
    with pytest.raises(RetryLimitExceeded, match="'flaky' failed 2 times") as info:
        await agent.generate("x")
    assert isinstance(info.value, UsageLimitExceeded)
    partial = info.value.result
    assert isinstance(partial, RunResult) and len(partial.steps) == 2
    assert isinstance(partial.messages[-1], ToolResultsMessage)


async def test_a_success_resets_the_tool_budget_but_not_the_run_budget() -> None:
    # failures alternate with successes: never 2 in a row, but 4 in the run
    outcomes = iter([True, False, True, False, True, False, True, False])

    @tool
    def sometimes(x: int) -> int:
        """Fails every other call."""
        if next(outcomes):
            raise ModelRetry("again")
        return x

    turns = [calls(call("sometimes", {"x": i}, f"c{i}")) for i in range(8)]
    model, _ = scripted(*turns, "done")
    assert (
        await Agent(model=model, tools=[sometimes], limits=RunLimits(max_steps=20, retries=1, max_retries=10)).generate(
            "x"
        )
    ).text
    outcomes = iter([True, False, True, False, True, False, True, False])
    model, _ = scripted(*turns, "done")
    with pytest.raises(RetryLimitExceeded, match="3 retries; the agent allows 2 per run"):
        await Agent(model=model, tools=[sometimes], limits=RunLimits(max_steps=20, retries=1, max_retries=2)).generate(
            "x"
        )


async def test_retry_count_reaches_the_tool_context() -> None:
    seen: list[int] = []

    @tool
    def counted(ctx: ToolContext, x: int) -> int:
        """Records its retry count."""
        seen.append(ctx.retry)
        if ctx.retry < 2:
            raise ModelRetry("again")
        return x

    model, _ = scripted(*[calls(call("counted", {"x": i}, f"c{i}")) for i in range(3)], "ok")
    await Agent(model=model, tools=[counted], limits=RunLimits(retries=3)).generate("x")
    assert seen == [0, 1, 2]


async def test_deps_reach_tools_from_the_call_the_agent_or_the_context() -> None:
    @tool
    def whoami(ctx: ToolContext[dict[str, str]]) -> str:
        """Returns the user from deps."""
        assert ctx.agent is agent and ctx.tool_name == "whoami" and ctx.call_id == "c_whoami"
        return ctx.deps["user"]

    def answer(messages: Any, info: Any) -> Any:
        last = messages[-1]
        return last.results[0].text if isinstance(last, ToolResultsMessage) else calls(call("whoami"))

    agent = Agent(model=FunctionModel(answer), tools=[whoami], deps={"user": "agent-default"})
    assert (await agent.generate("x")).text == "agent-default"
    assert (await agent.generate("x", deps={"user": "per-call"})).text == "per-call"
    assert (await agent.generate("x", context=ToolContext(deps={"user": "from-context"}))).text == "from-context"


def test_generate_sync_runs_without_an_event_loop() -> None:
    model, _ = scripted(calls(call("add", {"a": 1, "b": 1})), "2")
    assert Agent(model=model, tools=[make_add()]).generate_sync("1+1").text == "2"


async def test_override_swaps_the_model_without_an_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    agent = Agent(model="openai:gpt-4o-mini", tools=[make_add()])  # no client is built yet
    with agent.override(model=TestModel(text="from the test model")):
        assert (await agent.generate("x")).text == "from the test model"
        with agent.override(model="test"):
            assert isinstance(agent.resolve_model(), TestModel)
    assert agent.resolve_model is not None
    with pytest.raises(ModelSetupError, match="did you mean|Did you mean"):
        Agent(model="opneai:gpt-4o")
    with pytest.raises(ModelSetupError, match="no model"):
        await Agent().generate("x")


async def test_prompt_forms_and_bad_history() -> None:
    model, script = scripted("a", "b")
    agent = Agent(model=model)
    await agent.generate(UserMessage("as message"))
    await agent.generate([UserMessage("first"), AssistantMessage(text="reply"), UserMessage("second")])
    assert script.seen[0] == [UserMessage("as message")]
    assert len(script.seen[1]) == 3
    with pytest.raises(TypeError, match="agentkit messages"):
        await agent.generate(["not a message"])  # type: ignore[list-item]


async def test_model_settings_are_forwarded() -> None:
    model, script = scripted("a", "b")
    agent = Agent(model=model, model_settings=ModelSettings(temperature=0.1))
    await agent.generate("x")
    await agent.generate("x", model_settings=ModelSettings(temperature=0.9), active_tools=[])
    assert script.infos[0].settings.temperature == 0.1
    assert script.infos[1].settings.temperature == 0.9 and script.infos[1].settings.active_tools == ()


# ---- composition ----------------------------------------------------------------------------------


async def test_subagents_and_workflows_are_tools_under_generated_keys() -> None:
    writer_model, writer_script = scripted("a poem about tides")
    writer = Agent(id="writer-v2", description="Writes poems.", model=writer_model)

    def shout(text: str) -> str:
        return text.upper()

    def exclaim(text: str) -> str:
        return text + "!"

    wf = Workflow("loud", [shout, exclaim], description="Make text loud.")
    model, _ = scripted(
        calls(call("agent-writer", {"prompt": "tides"}, "w"), call("workflow-loud", {"text": "hi"}, "l")), "ok"
    )
    boss = Agent(id="boss", model=model, agents={"writer": writer}, workflows={"loud": wf}, tools=[make_add()])
    assert list(boss.tools) == ["add", "agent-writer", "workflow-loud"]
    assert boss.tools["agent-writer"].description == "Writes poems."
    assert boss.tools["agent-writer"].input_schema["required"] == ["prompt"]
    assert boss.tools["workflow-loud"].input_schema == wf.input_schema
    assert boss.tools["workflow-loud"].output_schema == {"type": "string"}
    result = await boss.generate("go")
    outputs = {r.call_id: r.output for r in result.tool_results}
    assert outputs == {"w": "a poem about tides", "l": "HI!"}
    assert writer_script.seen[0] == [UserMessage("tides")]
    # the subagent's request counts in the supervisor's usage: two supervisor turns + one writer turn
    assert result.usage.requests == 3
    with pytest.raises(RegistryError, match="Duplicate key"):
        Agent(model=model, tools={"agent-writer": make_add()}, agents={"writer": writer})


async def test_subagent_awaiting_approval_fails_the_call_without_running_anything() -> None:
    ran: list[str] = []

    @tool(requires_approval=True)
    def delete() -> str:
        """Deletes."""
        ran.append("delete")
        return "gone"

    sub_model, _ = scripted(calls(call("delete")))
    sub = Agent(id="janitor", model=sub_model, tools=[delete])
    model, _ = scripted(calls(call("agent-janitor", {"prompt": "clean"})), "ok")
    result = await Agent(model=model, agents={"janitor": sub}).generate("x")
    assert ran == []
    assert result.tool_results[0].error_kind == "tool_error"
    assert "need approval" in result.tool_results[0].text


# ---- MCP sessions ----------------------------------------------------------------------------------


class FakeServer:
    """Stands in for an MCP session: tools appear on enter, and the session is closed on exit."""

    def __init__(self) -> None:
        self.state = "new"
        self._registry = Registry()

    @property
    def registry(self) -> Registry:
        assert self.state == "open", "registry read outside the session"
        return self._registry

    async def __aenter__(self) -> FakeServer:
        self.state = "open"

        @tool
        def remote_time() -> str:
            """The time on the server."""
            return "12:00"

        if "time" not in self._registry:
            self._registry.add("time", remote_time)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.state = "closed"


async def test_mcp_servers_join_within_the_agent_context_and_close_after() -> None:
    server = FakeServer()
    model, _ = scripted(calls(call("time")), "it is noon", calls(call("time")), "noon again")
    agent = Agent(model=model, tools=[make_add()], mcp_servers=[server])
    async with agent:
        assert server.state == "open" and list(agent.tools) == ["add", "time"]
        result = await agent.generate("time?")
        assert result.tool_results[0].output == "12:00"
        assert server.state == "open"  # a run inside the context leaves it open
    assert server.state == "closed" and list(agent.tools) == ["add"]
    # outside `async with`, a run opens the sessions for its own duration
    result = await agent.generate("time?")
    assert result.tool_results[0].output == "12:00" and server.state == "closed"


async def test_concurrent_runs_share_one_session_that_outlives_both() -> None:
    server = FakeServer()
    enters: list[int] = []
    original = server.__aenter__

    async def counting_enter() -> FakeServer:
        enters.append(1)
        await asyncio.sleep(0.01)  # a slow handshake: the second run must wait for the tools
        return await original()

    @tool
    async def pause(seconds: float) -> str:
        """Wait, then report whether the session is still open."""
        await asyncio.sleep(seconds)
        return server.state

    def turn(messages: Any, info: Any) -> Any:
        last = messages[-1]
        if isinstance(last, ToolResultsMessage):
            return last.results[0].text
        seconds = 0.05 if "slow" in last.content else 0.0
        return calls(call("pause", {"seconds": seconds}), call("time", {}, "t"))

    agent = Agent(model=FunctionModel(turn), tools=[pause], mcp_servers=[_Delegating(server, counting_enter)])
    slow, fast = await asyncio.gather(agent.generate("slow"), agent.generate("fast"))
    assert slow.text == "open" and fast.text == "open"  # the fast run's exit did not close the slow run's session
    assert [r.output for r in slow.tool_results] == ["open", "12:00"]
    assert len(enters) == 1 and server.state == "closed"


class _Delegating:
    """Wraps a FakeServer so that its (patched) enter is what the agent awaits."""

    def __init__(self, server: FakeServer, enter: Any) -> None:
        self.server = server
        self.enter = enter

    @property
    def registry(self) -> Registry:
        return self.server.registry

    async def __aenter__(self) -> Any:
        return await self.enter()

    async def __aexit__(self, *exc: object) -> None:
        await self.server.__aexit__(*exc)


async def test_transcript_shapes_payloads_and_fails_closed() -> None:
    from agentkit import ToolTransform
    from agentkit.testing import FunctionModel

    @tool(transform=ToolTransform(input=lambda args: {"city": args["city"].upper()}, output=lambda v: 1 / 0))
    def weather(city: str) -> str:
        return f"sunny in {city} (secret-token)"

    @tool
    def broken(n: int) -> int:
        raise RuntimeError("boom")

    def turns(messages: Any, info: Any) -> Any:
        from agentkit import AssistantMessage, ToolCall

        if len(messages) == 1:
            calls = [ToolCall("c1", "weather", {"city": "paris"}), ToolCall("c2", "broken", {"n": 1})]
            return AssistantMessage(tool_calls=calls)
        return "done"

    policy = ToolTransform(error=lambda text: "a tool failed")
    agent = Agent(name="t", model=FunctionModel(turns), tools=Registry([weather, broken], transform=policy))
    result = await agent.generate("go")
    first, second = agent.transcript(result)
    assert (first.tool_name, first.input, first.output) == ("weather", {"city": "PARIS"}, None)
    assert first.transform_errors and "output" in first.transform_errors[0]  # withheld, never the raw value
    assert "secret-token" not in repr(first)
    assert (second.tool_name, second.input, second.error) == ("broken", {"n": 1}, "a tool failed")


# ---- the constructor's groups (issue 18 §3) ---------------------------------------------------------


def test_the_constructor_has_fewer_than_twenty_keywords() -> None:
    import inspect

    keywords = [p for p in inspect.signature(Agent.__init__).parameters.values() if p.kind is p.KEYWORD_ONLY]
    assert len(keywords) < 20, [p.name for p in keywords]


async def test_the_old_keywords_still_work_with_a_warning_naming_their_place() -> None:
    from agentkit.hooks import Hooks
    from agentkit.output import Output
    from agentkit.runs import MemoryRunStore
    from agentkit.search import ToolSearch

    plans: list[int] = []

    def plan(ctx: Any) -> None:
        plans.append(ctx.step)

    key = b"a-key-of-at-least-sixteen-bytes!"
    old = {
        "max_steps": 3,
        "retries": 1,
        "max_retries": 4,
        "prepare_step": plan,
        "deferred_tools": ["add"],
        "snapshot_key": key,
        "mask_error_details": True,
    }
    for name, value in old.items():
        with pytest.warns(DeprecationWarning, match=rf"Agent\({name}=\.\.\.\) is deprecated; use"):
            agent = Agent(model="test", tools=[make_add()], **{name: value})
        assert getattr(agent, name, None) == value or name in ("prepare_step", "deferred_tools")
    with pytest.warns(DeprecationWarning, match="Output"):
        Agent(model="test", tools=[make_add()], output_validators=[print], output_type=int)
    with pytest.warns(DeprecationWarning, match="stop_at_tools"):
        Agent(model="test", tools=[make_add()], stop_at_tools=["add"])
    with pytest.raises(TypeError, match="did you mean 'max_steps'"):
        Agent(model="test", max_step=3)  # type: ignore[call-overload]
    # the new places mean the same
    model, _ = scripted(*[calls(call("add", {"a": i, "b": 1}, f"c{i}")) for i in range(5)])
    grouped = Agent(
        model=model,
        tools=[make_add()],
        limits=RunLimits(max_steps=2, retries=1, max_retries=4),
        hooks=[Hooks(prepare_step=plan)],
        tool_search=ToolSearch(deferred=["add"]),
        output_type=Output(str, stop_at_tools=[]),
        store=MemoryRunStore(key=key),
    )
    assert (grouped.max_steps, grouped.retries, grouped.max_retries) == (2, 1, 4)
    plans.clear()
    result = await grouped.generate("go")
    assert result.status == "max_steps" and len(result.steps) == 2 and plans == [0, 1]
