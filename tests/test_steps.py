"""Per step and per run: dynamic instructions, prepare_step, and tools / MCP servers for one run only."""

from __future__ import annotations

import asyncio
import pickle
from typing import Any

import pytest
from pydantic import BaseModel

from agentkit import Output, Registry, RunResult, ToolContext, tool
from agentkit.agent import Agent, RunContext, StepChanges
from agentkit.exceptions import AgentSetupError, RegistryError, ToolChoiceError, UnknownToolError
from agentkit.hooks import Hooks
from agentkit.messages import Message, SystemMessage, ToolResultsMessage, UserMessage
from agentkit.models import ModelSettings
from agentkit.testing import FunctionInfo, FunctionModel, request_payload

from .agent_helpers import call, calls, scripted


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


def system_texts(script: Any) -> list[str | None]:
    """The instructions each request carried (None when it carried none)."""
    out: list[str | None] = []
    for messages in script.seen:
        first = messages[0]
        out.append(first.text if isinstance(first, SystemMessage) else None)
    return out


# ---- dynamic instructions ----------------------------------------------------------------------------


async def test_instructions_may_be_functions_of_the_run_context_sync_or_async_and_mixed_with_text() -> None:
    seen: list[tuple[int, Any, int]] = []

    def who(ctx: RunContext[dict[str, str]]) -> str:
        seen.append((ctx.step, ctx.deps, len(ctx.messages)))
        return f"The user is {ctx.deps['name']}."

    async def when(ctx: RunContext[Any]) -> str:
        await asyncio.sleep(0)
        return f"This is step {ctx.step}."

    def nothing() -> None:  # no argument is fine too; None adds nothing
        return None

    model, script = scripted(calls(call("add", {"a": 1, "b": 2})), "3")
    agent = Agent(model=model, tools=[add], instructions=["Be brief.", who, when, nothing, ""])
    result = await agent.generate("1+2?", deps={"name": "Ada"})
    assert result.text == "3"
    assert system_texts(script) == [
        "Be brief.\n\nThe user is Ada.\n\nThis is step 0.",
        "Be brief.\n\nThe user is Ada.\n\nThis is step 1.",  # rendered again for every turn
    ]
    assert seen == [(0, {"name": "Ada"}, 1), (1, {"name": "Ada"}, 3)]
    assert not any(isinstance(m, SystemMessage) for m in result.messages)  # not stored in the history


async def test_a_function_alone_is_called_never_sent_as_text() -> None:
    def instructions(ctx: RunContext[Any]) -> str:
        return "Answer in French."

    model, script = scripted("Bonjour")
    await Agent(model=model, instructions=instructions).generate("hi")
    assert system_texts(script) == ["Answer in French."]  # before: the function's repr was the message text


async def test_instructions_that_are_neither_text_nor_functions_fail_at_construction() -> None:
    with pytest.raises(AgentSetupError, match=r"instructions are text, a function of the run context.*got 42"):
        Agent(instructions=42)  # type: ignore[arg-type]
    with pytest.raises(AgentSetupError, match=r"each part of the instructions is text or a function.*got 7"):
        Agent(instructions=["ok", 7])  # type: ignore[list-item]

    def two(a: Any, b: Any) -> str:
        return ""

    with pytest.raises(AgentSetupError, match=r"two must take the run context as its only argument"):
        Agent(instructions=two)


async def test_an_instructions_function_returning_something_else_is_an_error_naming_it() -> None:
    def numbers(ctx: Any) -> Any:
        return 12

    model, _ = scripted("x")
    with pytest.raises(AgentSetupError, match=r"instructions function .*numbers returned int 12"):
        await Agent(model=model, instructions=numbers).generate("hi")


async def test_dynamic_instructions_in_payload_snapshots_and_subagent_descriptions() -> None:
    def language(ctx: RunContext[Any]) -> str:
        return "Answer in Dutch."

    agent = Agent(model="openai:gpt-4.1", instructions=["Be brief.", language])
    body = request_payload(agent, "hi")
    assert body["messages"][0] == {"role": "system", "content": "Be brief.\n\nAnswer in Dutch."}
    assert (
        agent.instructions_preview
        == "Be brief.\n\n{test_dynamic_instructions_in_payload_snapshots_and_subagent_descriptions.<locals>.language}"
    )
    # a function is no description: a subagent without one falls back to the generic text
    assert Agent(id="dutch", instructions=language).as_tool().description == "Ask the agent 'dutch' to do a task."
    assert Agent(id="dutch", instructions="Translate.").as_tool().description == "Translate."


# ---- prepare_step --------------------------------------------------------------------------------


async def test_prepare_step_changes_active_tools_tool_choice_instructions_and_settings_per_step() -> None:
    contexts: list[tuple[int, int, Any]] = []

    def prepare(ctx: RunContext[str]) -> StepChanges | None:
        contexts.append((ctx.step, len(ctx.messages), ctx.deps))
        if ctx.step == 0:
            return {"active_tools": ["add"], "tool_choice": "add", "instructions": "Add first."}
        return {"active_tools": ["shout"], "model_settings": ModelSettings(temperature=0.1)}

    model, script = scripted(calls(call("add", {"a": 1, "b": 2})), "done")
    agent = Agent(model=model, tools=[add, shout], instructions="Base.", hooks=[Hooks(prepare_step=prepare)])
    result = await agent.generate("go", deps="D")
    assert result.text == "done"
    assert contexts == [(0, 1, "D"), (1, 3, "D")]
    assert [i.tool_keys for i in script.infos] == [["add"], ["shout"]]
    assert [i.settings.tool_choice for i in script.infos] == ["add", "auto"]
    assert [i.settings.temperature for i in script.infos] == [None, 0.1]
    assert system_texts(script) == ["Add first.", "Base."]


async def test_prepare_step_may_be_async_and_switch_the_model() -> None:
    other, other_script = scripted("from the other model")

    async def prepare(ctx: RunContext[Any]) -> StepChanges:
        await asyncio.sleep(0)
        return {"model": other} if ctx.step == 1 else {}

    model, script = scripted(calls(call("add", {"a": 1, "b": 2})))
    result = await Agent(model=model, tools=[add], hooks=[Hooks(prepare_step=prepare)]).generate("go")
    assert result.text == "from the other model"
    assert (len(script.seen), len(other_script.seen)) == (1, 1)


async def test_what_prepare_step_deactivates_does_not_run() -> None:
    ran: list[str] = []

    @tool
    def secret() -> str:
        """A secret."""
        ran.append("secret")
        return "s"

    model, _ = scripted(calls(call("secret")), "ok")
    result = await Agent(
        model=model, tools=[add, secret], hooks=[Hooks(prepare_step=lambda ctx: {"active_tools": ["add"]})]
    ).generate("go")
    assert ran == [] and result.tool_results[0].error_kind == "unknown_tool"


async def test_prepare_step_per_run_runs_after_the_agents() -> None:
    order: list[str] = []

    def agents(ctx: RunContext[Any]) -> StepChanges:
        order.append("agent")
        return {"instructions": "from the agent", "tool_choice": "none"}

    def runs(ctx: RunContext[Any]) -> StepChanges:
        order.append("run")
        return {"instructions": "from the run"}

    model, script = scripted("ok")
    await Agent(model=model, tools=[add], hooks=[Hooks(prepare_step=agents)]).generate("go", prepare_step=runs)
    assert order == ["agent", "run"]
    assert system_texts(script) == ["from the run"]  # later changes win key by key
    assert script.infos[0].settings.tool_choice == "none"


@pytest.mark.parametrize(
    ("changes", "error"),
    [
        (
            {"active_tool": ["add"]},
            r"unknown key 'active_tool'\. Did you mean 'active_tools'\? StepChanges may set: model,",
        ),
        ({"temperature": 0.2}, r"unknown key 'temperature'\.( Did you mean .*)? StepChanges may set"),
        ("add", r"returned an object of type str; return a StepChanges dict"),  # never its value (issue 17 §4.9)
        ({"active_tools": "add"}, r"active_tools is a list of keys"),
        ({"tool_choice": 3}, r"tool_choice is 'auto', 'none', 'required' or a key"),
        ({"instructions": ["a"]}, r"instructions is text \(or None\)"),
        ({"model_settings": {"temperature": 1}}, r"model_settings is a ModelSettings"),
        (
            {"model_settings": ModelSettings(tool_choice="required")},
            r"set tool_choice and active_tools with StepChanges",
        ),
    ],
)
async def test_prepare_step_results_are_validated_at_run_time(changes: Any, error: str) -> None:
    model, _ = scripted("x")
    agent = Agent(model=model, tools=[add], hooks=[Hooks(prepare_step=lambda ctx: changes)])
    with pytest.raises(AgentSetupError, match=error):
        await agent.generate("go")


async def test_prepare_step_keys_and_choices_must_name_run_tools() -> None:
    model, _ = scripted("x")
    with pytest.raises(UnknownToolError, match="Did you mean 'add'"):
        await Agent(
            model=model, tools=[add], hooks=[Hooks(prepare_step=lambda ctx: {"active_tools": ["ad"]})]
        ).generate("go")
    prepare = lambda ctx: {"active_tools": ["add"], "tool_choice": "shout"}  # noqa: E731
    with pytest.raises(ToolChoiceError, match="tool_choice='shout' cannot be used in step 0: it is not active"):
        await Agent(model=model, tools=[add, shout], hooks=[Hooks(prepare_step=prepare)]).generate("go")
    with pytest.raises(AgentSetupError, match=r"prepare_step=\.\.\.\) must be a function"):
        Agent(hooks=[Hooks(prepare_step="nope")])  # type: ignore[arg-type]


async def test_prepare_step_on_a_stream_too() -> None:
    model, script = scripted("streamed")
    agent = Agent(model=model, tools=[add, shout], hooks=[Hooks(prepare_step=lambda ctx: {"active_tools": ["shout"]})])
    stream = agent.stream("go")
    assert (await stream.get_result()).text == "streamed"
    assert script.infos[0].tool_keys == ["shout"]


# ---- tools and MCP servers for one run ---------------------------------------------------------------


async def test_tools_given_to_one_run_join_it_and_leak_into_no_other_run() -> None:
    model, script = scripted(calls(call("shout", {"text": "hi"})), "HI", "second run")
    agent = Agent(model=model, tools=[add])
    result = await agent.generate("shout hi", tools=[shout])
    assert result.tool_results[0].output == "HI"
    assert script.infos[0].tool_keys == ["add", "shout"]
    assert list(agent.tools) == ["add"]  # the agent's registry is untouched
    await agent.generate("again")
    assert script.infos[-1].tool_keys == ["add"]


async def test_a_run_tool_under_an_agent_key_is_an_error_naming_both() -> None:
    @tool(id="add")
    def other_add(x: int) -> int:
        """Another add."""
        return x

    model, _ = scripted("x")
    with pytest.raises(RegistryError, match=r"The run's tool 'add' \(.*other_add\) clashes with .*\(.*add\)"):
        await Agent(model=model, tools=[add]).generate("go", tools=[other_add])


async def test_concurrent_runs_each_see_only_their_own_tools() -> None:
    both_started = asyncio.Event()
    started: list[str] = []

    def make(key: str) -> Any:
        async def own() -> str:
            started.append(key)
            if len(started) == 2:
                both_started.set()
            await both_started.wait()  # both runs are inside their tool calls at once
            return key

        return tool(id=key, description=f"The {key} tool.")(own)

    def turn(messages: list[Message], info: FunctionInfo) -> Any:
        if isinstance(messages[-1], ToolResultsMessage):
            return ",".join(info.tool_keys)
        user = messages[-1]
        assert isinstance(user, UserMessage)
        return calls(call(str(user.content)))

    agent = Agent(model=FunctionModel(turn), tools=[add])
    first, second = await asyncio.gather(
        agent.generate("alpha", tools=[make("alpha")]), agent.generate("beta", tools=[make("beta")])
    )
    assert (first.text, second.text) == ("add,alpha", "add,beta")
    assert [r.output for r in first.tool_results + second.tool_results] == ["alpha", "beta"]


class UserSession:
    """Stands in for an MCP session opened with one user's credentials."""

    def __init__(self, user: str, log: list[str]) -> None:
        self.user = user
        self.log = log
        self.open = False
        self._registry = Registry()

        @tool(id="whoami")
        def whoami() -> str:
            """Who the session belongs to."""
            return self.user

        self._registry.add("whoami", whoami)

    @property
    def registry(self) -> Registry:
        if not self.open:  # as agentkit.mcp.MCPServer does
            raise RuntimeError("read the registry of an open session only")
        return self._registry

    async def __aenter__(self) -> UserSession:
        self.log.append(f"open {self.user}")
        self.open = True
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.log.append(f"close {self.user}")
        self.open = False


async def test_mcp_servers_for_one_run_open_and_close_with_it() -> None:
    log: list[str] = []
    model, script = scripted(calls(call("whoami")), "done", "later")
    agent = Agent(model=model, tools=[add])
    result = await agent.generate("who?", mcp_servers=[UserSession("ada", log)])
    assert result.tool_results[0].output == "ada"
    assert log == ["open ada", "close ada"]
    assert script.infos[0].tool_keys == ["add", "whoami"]
    await agent.generate("again")
    assert script.infos[-1].tool_keys == ["add"]


async def test_per_user_sessions_of_concurrent_runs_stay_apart() -> None:
    log: list[str] = []
    gate = asyncio.Event()

    async def turn(messages: list[Message], info: FunctionInfo) -> Any:
        if isinstance(messages[-1], ToolResultsMessage):
            return messages[-1].results[0].text
        if len(log) == 2:
            gate.set()
        await gate.wait()  # both sessions are open at once
        return calls(call("whoami"))

    agent = Agent(model=FunctionModel(turn))
    ada, bob = await asyncio.gather(
        agent.generate("who?", mcp_servers=[UserSession("ada", log)]),
        agent.generate("who?", mcp_servers=[UserSession("bob", log)]),
    )
    assert (ada.text, bob.text) == ("ada", "bob")
    assert sorted(log) == ["close ada", "close bob", "open ada", "open bob"]


async def test_an_mcp_server_tool_clashing_with_the_agents_is_an_error_and_the_session_is_closed() -> None:
    log: list[str] = []

    @tool(id="whoami")
    def local() -> str:
        """Local."""
        return "local"

    model, _ = scripted("x")
    with pytest.raises(RegistryError, match=r"The MCP server tool .*'whoami' .* clashes with"):
        await Agent(model=model, tools=[local]).generate("go", mcp_servers=[UserSession("ada", log)])
    assert log == ["open ada", "close ada"]
    with pytest.raises(AgentSetupError, match="mcp_servers= takes MCP sessions"):
        await Agent(model=model).generate("go", mcp_servers=[object()])  # type: ignore[list-item]


async def test_resume_takes_the_run_tools_again() -> None:
    @tool(requires_approval=True)
    def wire(amount: int) -> str:
        """Send money."""
        return f"sent {amount}"

    model, _ = scripted(calls(call("wire", {"amount": 5})), "sent")
    agent = Agent(model=model, tools=[add])
    paused = await agent.generate("pay", tools=[wire])
    assert paused.status == "awaiting_approval"
    copy: RunResult = pickle.loads(pickle.dumps(paused))  # a paused result with run tools still pickles
    assert copy.pending[0].tool_name == "wire"
    done = await agent.resume(paused, {"c_wire": True}, tools=[wire])
    assert done.text == "sent" and done.tool_results[0].output == "sent 5"


async def test_tool_context_names_the_key_and_call() -> None:
    seen: list[tuple[str | None, str | None]] = []

    @tool
    def probe(ctx: ToolContext[Any]) -> str:
        """Probe."""
        seen.append((ctx.tool_name, ctx.call_id))
        return "ok"

    model, _ = scripted(calls(call("my-probe", {}, "id1")), "done")
    await Agent(model=model).generate("go", tools=Registry({"my-probe": probe}))
    assert seen == [("my-probe", "id1")]  # the key the model called, never the tool's id


async def test_transcripts_shape_run_tools_and_withhold_them_when_unknown() -> None:
    from agentkit import ToolTransform

    @tool(transform=ToolTransform(input=lambda args: {"card": "****"}))
    def charge(card: str) -> str:
        """Charge a card."""
        return "ok"

    model, _ = scripted(calls(call("charge", {"card": "4242 4242"})), "charged")
    agent = Agent(model=model)
    result = await agent.generate("pay", tools=[charge])
    [entry] = agent.transcript(result)
    assert entry.input == {"card": "****"}  # before: the agent did not know the run's tool, the raw card showed
    copy = pickle.loads(pickle.dumps(result))
    [withheld] = agent.transcript(copy)
    assert withheld.input is None and "not known here" in withheld.transform_errors[0]
    [again] = agent.transcript(copy, tools=[charge])
    assert again.input == {"card": "****"}


def test_options_of_the_wrong_kind_fail_at_once_naming_the_option() -> None:
    with pytest.raises(AgentSetupError, match=r"Agent\(model_settings=...\) takes a ModelSettings"):
        Agent(model_settings={"temperature": 0})  # type: ignore[arg-type]
    with pytest.raises(RegistryError, match=r"Registry\(transform=...\) takes a ToolTransform"):
        Agent(tools=Registry(transform=lambda value: value))  # type: ignore[arg-type]
    agent = Agent(model="test")
    with pytest.raises(AgentSetupError, match=r"generate\(model_settings=...\) takes a ModelSettings"):
        agent.stream("hi", model_settings={"temperature": 0})  # type: ignore[arg-type]
    with pytest.raises(AgentSetupError, match=r"generate\(limits=...\) takes RunLimits"):
        agent.stream("hi", limits={"max_tool_calls": 1})  # type: ignore[arg-type]
    with pytest.raises(AgentSetupError, match=r"require_approval=...\) is True or False"):
        agent.stream("hi", require_approval="yes")  # type: ignore[arg-type]


# ---- plain steps: planned once, the same request as the planned path -----------------------------


def _recording_model(seen: list[tuple[list[str], list[str], ModelSettings]]) -> FunctionModel:
    def turn(messages: list[Message], info: FunctionInfo) -> Any:
        texts = [type(m).__name__ + ":" + getattr(m, "text", "") for m in messages]
        seen.append((texts, info.tool_keys, info.settings))
        if isinstance(messages[-1], ToolResultsMessage):
            return "done"
        return calls(call("add", {"a": 1, "b": 2}))

    return FunctionModel(turn)


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"tool_choice": "add"},
        {"active_tools": ["add"]},
        {"tool_choice": "required", "active_tools": ["shout", "add"]},
    ],
)
async def test_a_plain_step_sends_what_the_planned_path_sends(options: dict[str, Any]) -> None:
    # no prepare_step, hooks, instruction functions, deferred tools or budgets: the step is planned once
    # per settings object; a prepare_step that changes nothing takes the per-step path
    plain: list[tuple[list[str], list[str], ModelSettings]] = []
    planned: list[tuple[list[str], list[str], ModelSettings]] = []
    tools = Registry({"add": add, "shout": shout})
    fast = Agent(model=_recording_model(plain), tools=tools, instructions="Be brief.")
    slow = Agent(
        model=_recording_model(planned),
        tools=tools,
        instructions="Be brief.",
        hooks=[Hooks(prepare_step=lambda ctx: None)],
    )
    for agent in (fast, slow):
        for _ in range(2):  # the second run reuses the first run's plans
            result = await agent.generate("go", **options)
            assert result.text == "done" and result.steps[0].results[0].output == 3

    assert plain == planned
    assert [settings.tool_choice for _, _, settings in plain[:2]] == [options.get("tool_choice", "auto"), "auto"]


async def test_plain_steps_are_planned_once_per_settings_and_again_when_the_tools_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agentkit._agent import _steps

    made: list[ModelSettings] = []
    original = _steps._new_plan

    def counting(loop: Any, settings: ModelSettings) -> Any:
        made.append(settings)
        return original(loop, settings)

    monkeypatch.setattr(_steps, "_new_plan", counting)
    seen: list[tuple[list[str], list[str], ModelSettings]] = []
    tools = Registry({"add": add})
    agent = Agent(model=_recording_model(seen), tools=tools)
    await agent.generate("go")
    await agent.generate("go")
    assert len(made) == 1  # two runs of two steps, one plan

    tools.add("shout", shout)
    await agent.generate("go")
    assert len(made) == 2
    assert seen[-1][1] == ["add", "shout"]  # the new tool is sent
    await agent.generate("go", tool_choice="add")
    assert len(made) == 4  # a run's own tool choice: its first and later settings, planned once each


class _Sum(BaseModel):
    total: int


@pytest.mark.parametrize(("mode", "options"), [("native", {}), ("tool", {}), ("tool", {"active_tools": ["add"]})])
async def test_a_plain_step_asks_for_a_typed_answer_as_the_planned_path_does(
    mode: str, options: dict[str, Any]
) -> None:
    seen: dict[str, list[Any]] = {"plain": [], "planned": []}

    def model_for(name: str) -> FunctionModel:
        def turn(messages: list[Message], info: FunctionInfo) -> Any:
            output = info.output
            seen[name].append((info.tool_keys, info.settings, output.mode if output else None))
            if not isinstance(messages[-1], ToolResultsMessage):
                return calls(call("add", {"a": 1, "b": 2}))
            if mode == "tool":
                return calls(call("final_result", {"total": 3}, id="c_answer"))
            return '{"total": 3}'

        return FunctionModel(turn)

    tools = Registry({"add": add, "shout": shout})
    for name, extra in (("plain", {}), ("planned", {"hooks": [Hooks(prepare_step=lambda ctx: None)]})):
        agent = Agent(model=model_for(name), tools=tools, output_type=Output(_Sum, mode=mode), **extra)
        result = await agent.generate("go", **options)
        assert result.output == _Sum(total=3)

    assert seen["plain"] == seen["planned"]
    if mode == "tool":
        assert all("final_result" in keys for keys, _, _ in seen["plain"])
