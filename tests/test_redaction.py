"""Redaction that holds: subagents' forwarded events, error texts, progress, transcripts, workflow steps,
and vendor error bodies that never reach a supervisor's model."""

from __future__ import annotations

from typing import Any

import pytest

from agentkit import (
    Approval,
    ModelHTTPError,
    ModelRetry,
    Registry,
    ToolContext,
    ToolError,
    ToolTransform,
    Workflow,
    tool,
)
from agentkit.agent import Agent
from agentkit.events import (
    AgentEvent,
    ApprovalRequestedEvent,
    SubagentEvent,
    ToolCallEvent,
    ToolErrorEvent,
    ToolProgressEvent,
)
from agentkit.exceptions import WorkflowStepError
from agentkit.messages import Message, ToolResultsMessage
from agentkit.testing import FunctionInfo, FunctionModel

from .agent_helpers import call, calls, scripted

SECRET = "hunter2-correct-horse"


def hide(args: Any) -> Any:
    return {k: "***" if k == "password" else v for k, v in args.items()} if isinstance(args, dict) else "***"


POLICY = ToolTransform(input=hide)


async def collect(stream: Any) -> list[AgentEvent]:
    return [event async for event in stream]


def flatten(events: list[AgentEvent]) -> list[AgentEvent]:
    out: list[AgentEvent] = []
    for event in events:
        out.append(event)
        inner: Any = event
        while isinstance(inner, SubagentEvent):
            inner = inner.event
            out.append(inner)
    return out


# ---- the supervisor's policy covers its subagents' events ----------------------------------------


def _login_tools() -> list[Any]:
    @tool
    def login(user: str, password: str) -> str:
        """Log in."""
        return f"welcome {user}"

    @tool(requires_approval=True)
    def reset(user: str, password: str) -> str:
        """Reset a password."""
        return "reset"

    return [login, reset]


async def test_an_agent_policy_redacts_its_subagents_forwarded_events() -> None:
    inner, _ = scripted(calls(call("login", {"user": "ann", "password": SECRET}, "i1")), "logged in")
    helper = Agent(id="helper", model=inner, tools=_login_tools())  # no policy of its own
    outer, _ = scripted(calls(call("agent-helper", {"prompt": "log in"}, "o1")), "done")
    boss = Agent(id="boss", model=outer, agents={"helper": helper}, tools=Registry(transform=POLICY))
    events = flatten(await collect(boss.stream("go")))
    assert SECRET not in repr(events)
    inner_call = next(e for e in events if isinstance(e, ToolCallEvent) and e.tool_name == "login")
    assert inner_call.input == {"user": "ann", "password": "***"}


async def test_the_policy_reaches_nested_subagents_and_their_approval_requests() -> None:
    inner, _ = scripted(calls(call("reset", {"user": "ann", "password": SECRET}, "i1")), "never")
    leaf = Agent(id="leaf", model=inner, tools=_login_tools())
    middle_model, _ = scripted(calls(call("agent-leaf", {"prompt": "reset"}, "m1")), "ok")
    middle = Agent(id="middle", model=middle_model, agents={"leaf": leaf})
    outer, _ = scripted(calls(call("agent-middle", {"prompt": "reset"}, "o1")), "done")
    boss = Agent(id="boss", model=outer, agents={"middle": middle}, tools=Registry(transform=POLICY))
    events = flatten(await collect(boss.stream("go")))
    asked = [e for e in events if isinstance(e, ApprovalRequestedEvent)]
    assert asked and asked[0].payload == {"user": "ann", "password": "***"}
    assert SECRET not in repr(events)


async def test_a_subagents_own_transform_still_wins_field_by_field() -> None:
    inner, _ = scripted(calls(call("login", {"user": "ann", "password": SECRET}, "i1")), "logged in")
    own = ToolTransform(input=lambda args: {"who": args["user"]})
    helper = Agent(id="helper", model=inner, tools=Registry(_login_tools(), transform=own))
    outer, _ = scripted(calls(call("agent-helper", {"prompt": "log in"}, "o1")), "done")
    boss = Agent(id="boss", model=outer, agents={"helper": helper}, tools=Registry(transform=POLICY))
    events = flatten(await collect(boss.stream("go")))
    inner_call = next(e for e in events if isinstance(e, ToolCallEvent) and e.tool_name == "login")
    assert inner_call.input == {"who": "ann"}


# ---- error texts never quote a redacted input ----------------------------------------------------


def _failing_tools() -> dict[str, Any]:
    @tool(transform=POLICY)
    def crash(password: str) -> str:
        """Crash."""
        raise ValueError(f"wrong password {password}")

    @tool(transform=POLICY)
    def retry(password: str) -> str:
        """Retry."""
        raise ModelRetry(f"try another password than {password}")

    @tool(transform=POLICY)
    def refuse(password: str) -> str:
        """Refuse."""
        raise ToolError(f"{password} is locked")

    @tool(transform=POLICY)
    def echo(password: str) -> int:
        """Echo, with a result that breaks its own schema."""
        return password  # type: ignore[return-value]

    return {"crash": crash, "retry": retry, "refuse": refuse, "echo": echo}


@pytest.mark.parametrize(
    ("key", "kind", "exception"),
    [
        ("crash", "exception", "ValueError"),
        ("retry", "retry", "ModelRetry"),
        ("refuse", "tool_error", "ToolError"),
        ("echo", "invalid_output", "ToolOutputError"),
    ],
)
async def test_an_input_transform_withholds_error_messages(key: str, kind: str, exception: str) -> None:
    model, _ = scripted(calls(call(key, {"password": SECRET}, "c1")), "sorry")
    agent = Agent(model=model, tools=_failing_tools())
    stream = agent.stream("go")
    events = await collect(stream)
    [error] = [e for e in events if isinstance(e, ToolErrorEvent)]
    assert SECRET not in repr(events)
    assert error.error_kind == kind and kind in error.error and exception in error.error
    [entry] = agent.transcript(stream.result)
    assert SECRET not in repr(entry) and entry.error == error.error
    # the model still gets the message to act on, with the redacted value taken out (issue 13)
    told = stream.result.tool_results[0].text
    assert SECRET not in told and "[redacted]" in told


async def test_an_agent_level_input_policy_withholds_error_messages_too() -> None:
    @tool
    def crash(password: str) -> str:
        """Crash."""
        raise ValueError(f"wrong password {password}")

    model, _ = scripted(calls(call("crash", {"password": SECRET}, "c1")), "sorry")
    agent = Agent(model=model, tools=Registry([crash], transform=POLICY))
    stream = agent.stream("go")
    events = await collect(stream)
    assert SECRET not in repr(events) and SECRET not in repr(agent.transcript(stream.result))


async def test_an_error_transform_decides_and_safe_messages_stay() -> None:
    @tool(transform=ToolTransform(input=hide, error=lambda text: text.upper()))
    def crash(password: str) -> str:
        """Crash."""
        raise ValueError("no luck")

    @tool(transform=POLICY, requires_approval=True)
    def wipe(password: str) -> str:
        """Wipe."""
        return "wiped"

    model, _ = scripted(calls(call("crash", {"password": "x"}, "c1"), call("wipe", {"password": "x"}, "w1")), "ok")
    agent = Agent(model=model, tools=[crash, wipe])
    paused = await agent.generate("go")
    events = await collect(agent.resume_stream(paused, {"w1": Approval(False, "not today")}))
    errors = {e.call_id: e.error for e in events if isinstance(e, ToolErrorEvent)}
    assert "NO LUCK" in errors["c1"]  # the error transform saw the full message and decided
    assert "not today" in errors["w1"]  # a denial quotes no argument: shown as it is


async def test_an_output_transform_withholds_invalid_output_messages() -> None:
    @tool(transform=ToolTransform(output=lambda value: "***"))
    def token() -> int:
        """Token."""
        return SECRET  # type: ignore[return-value]

    model, _ = scripted(calls(call("token", {}, "c1")), "ok")
    events = await collect(Agent(model=model, tools=[token]).stream("go"))
    assert SECRET not in repr(events)


# ---- progress ------------------------------------------------------------------------------------


async def test_progress_of_a_redacted_tool_is_withheld_unless_a_progress_transform_shapes_it() -> None:
    @tool(transform=POLICY)
    def login(ctx: ToolContext[Any], password: str) -> str:
        """Log in."""
        ctx.emit({"trying": password})
        return "ok"

    @tool(transform=ToolTransform(input=hide, progress=lambda data: {"trying": "***"}))
    def shaped(ctx: ToolContext[Any], password: str) -> str:
        """Log in, with shaped progress."""
        ctx.emit({"trying": password})
        return "ok"

    @tool
    def plain(ctx: ToolContext[Any], n: int) -> int:
        """Count."""
        ctx.emit({"done": n})
        return n

    model, _ = scripted(
        calls(call("login", {"password": SECRET}, "a"), call("shaped", {"password": SECRET}, "b")),
        calls(call("plain", {"n": 3}, "c")),
        "ok",
    )
    events = await collect(Agent(model=model, tools=[login, shaped, plain]).stream("go"))
    progress = {e.call_id: e for e in events if isinstance(e, ToolProgressEvent)}
    assert SECRET not in repr(events)
    assert progress["a"].data is None and "progress" in (progress["a"].transform_error or "")
    assert progress["b"].data == {"trying": "***"} and progress["b"].transform_error is None
    assert progress["c"].data == {"done": 3}  # nothing redacted: progress passes through


# ---- workflow steps ------------------------------------------------------------------------------


async def test_a_redacting_steps_error_is_withheld_in_the_workflow_error() -> None:
    def fetch(user: str) -> dict[str, str]:
        return {"user": user, "password": SECRET}

    @tool(transform=POLICY)
    def login(user: str, password: str) -> str:
        raise ValueError(f"{password} rejected")

    flow = Workflow("signin", [fetch, login])
    with pytest.raises(WorkflowStepError) as caught:
        await flow.ainvoke({"user": "ann"})
    assert SECRET not in str(caught.value) and "ValueError" in str(caught.value)
    assert SECRET in str(caught.value.__cause__)  # the original stays for the application

    model, script = scripted(calls(call("workflow-signin", {"user": "ann"}, "w1")), "ok")
    events = await collect(Agent(model=model, workflows={"signin": flow}).stream("go"))
    assert SECRET not in repr(events) and SECRET not in repr(script.seen[-1])


async def test_a_redacting_step_rejecting_the_previous_result_does_not_quote_it() -> None:
    def fetch(user: str) -> dict[str, Any]:
        return {"user": user, "password": 12345}  # wrong type for the next step

    @tool(transform=POLICY)
    def login(user: str, password: str) -> str:
        return "ok"

    with pytest.raises(WorkflowStepError) as caught:
        await Workflow("signin", [fetch, login]).ainvoke({"user": "ann"})
    assert "12345" not in str(caught.value) and "rejected the result" in str(caught.value)


async def test_a_workflow_tool_shows_its_first_step_input_through_that_steps_transform() -> None:
    @tool(transform=POLICY)
    def login(user: str, password: str) -> str:
        return "ok"

    flow = Workflow("signin", [login])
    model, _ = scripted(calls(call("workflow-signin", {"user": "ann", "password": SECRET}, "w1")), "ok")
    events = await collect(Agent(model=model, workflows={"signin": flow}).stream("go"))
    shown = next(e for e in events if isinstance(e, ToolCallEvent))
    assert shown.input == {"user": "ann", "password": "***"}


# ---- 4.8: a vendor error body never reaches a supervisor's model ---------------------------------


def _failing_model() -> FunctionModel:
    def fail(messages: list[Message], info: FunctionInfo) -> str:
        raise ModelHTTPError("gpt-x", 401, body={"error": f"invalid key sk-{SECRET}"})

    return FunctionModel(fail)


@pytest.mark.parametrize("streaming", [False, True])
async def test_a_subagents_vendor_error_reaches_the_supervisor_without_its_body(streaming: bool) -> None:
    helper = Agent(id="helper", model=_failing_model())
    outer, script = scripted(calls(call("agent-helper", {"prompt": "hi"}, "o1")), "done")
    boss = Agent(id="boss", model=outer, agents={"helper": helper})
    if streaming:
        stream = boss.stream("go")
        await collect(stream)
        result = stream.result
    else:
        result = await boss.generate("go")
    sent = script.seen[1][-1]
    assert isinstance(sent, ToolResultsMessage)
    text = sent.results[0].text
    assert SECRET not in text and "ModelHTTPError" in text and "401" in text and "helper" in text
    assert SECRET not in repr(result.messages)


async def test_a_vendor_error_inside_a_tool_or_a_workflow_step_is_summarised() -> None:
    async def ask(question: str) -> str:
        raise ModelHTTPError("gpt-x", 500, body=f"trace with sk-{SECRET}")

    @tool
    async def oracle(question: str) -> str:
        """Ask another model."""
        return await ask(question)

    flow = Workflow("ask", [ask])
    model, script = scripted(
        calls(call("oracle", {"question": "q"}, "a"), call("workflow-ask", {"question": "q"}, "b")), "ok"
    )
    await Agent(model=model, tools=[oracle], workflows={"ask": flow}).generate("go")
    sent = script.seen[1][-1]
    assert isinstance(sent, ToolResultsMessage)
    assert all("500" in r.text and SECRET not in r.text for r in sent.results)
