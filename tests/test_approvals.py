"""Approvals that cannot be bypassed: one policy shape on every path, unique call ids, single-use pauses."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any

import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict

from agentkit import ApprovalError, Registry, Tool, ToolCall, ToolInputError, Workflow, tool
from agentkit.agent import Agent
from agentkit.events import ApprovalRequestedEvent, ToolCallEvent, ToolCallStartEvent
from agentkit.messages import AssistantMessage, ToolResult, ToolResultsMessage, UserMessage

from .agent_helpers import call, calls, scripted


class Refund(BaseModel):
    account: str
    amount: int = 500


@dataclasses.dataclass
class RefundData:
    account: str
    amount: int = 500


class RefundDict(TypedDict):
    account: str
    amount: int


RAW_REFUND = {
    "type": "object",
    "properties": {"account": {"type": "string"}, "amount": {"type": "integer", "default": 500}},
    "required": ["account"],
}


def big(args: dict[str, Any]) -> bool:
    return bool(args.get("amount", 0) > 100)


class Seen:
    """A policy that records the arguments it was shown."""

    def __init__(self) -> None:
        self.shown: list[dict[str, Any]] = []

    def __call__(self, args: dict[str, Any]) -> bool:
        self.shown.append(args)
        return big(args)


def _refund_tools(policy: Any) -> dict[str, Tool[..., Any]]:
    def by_model(req: Refund) -> str:
        return f"refunded {req.amount}"

    def by_dataclass(req: RefundData) -> str:
        return f"refunded {req.amount}"

    def by_typeddict(req: RefundDict) -> str:
        return f"refunded {req['amount']}"

    def by_raw(req: dict[str, Any]) -> str:
        return f"refunded {req.get('amount')}"

    def inferred(account: str, amount: int = 500) -> str:
        return f"refunded {amount}"

    return {
        "model": Tool(by_model, input_schema=Refund, requires_approval=policy),
        "dataclass": Tool(by_dataclass, input_schema=RefundData, requires_approval=policy),
        "typeddict": Tool(by_typeddict, input_schema=RefundDict, requires_approval=policy),
        "raw": Tool(by_raw, input_schema=RAW_REFUND, requires_approval=policy),
        "inferred": Tool(inferred, requires_approval=policy),
    }


# ---- 3.2: the policy sees one documented shape --------------------------------------------------


@pytest.mark.parametrize("key", ["model", "dataclass", "raw", "inferred"])
def test_the_policy_sees_the_validated_fields_with_defaults(key: str) -> None:
    seen = Seen()
    item = _refund_tools(seen)[key]
    assert item.approval_arguments({"account": "a"}) == {"account": "a", "amount": 500}
    assert item.needs_approval_for({"account": "a"}) is True  # the default of 500 needs approval
    assert item.needs_approval_for('{"account": "a", "amount": 5}') is False
    assert seen.shown[-1] == {"account": "a", "amount": 5}


def test_a_typeddict_schema_gives_its_keys() -> None:
    item = _refund_tools(big)["typeddict"]
    assert item.approval_arguments({"account": "a", "amount": 7}) == {"account": "a", "amount": 7}
    assert item.needs_approval_for({"account": "a", "amount": 700}) is True


def test_invalid_arguments_need_no_approval_and_a_failing_policy_needs_it() -> None:
    def broken(args: dict[str, Any]) -> bool:
        raise RuntimeError("bug")

    item = _refund_tools(big)["model"]
    assert item.needs_approval_for({"amount": "lots"}) is False  # nothing would run: an input error
    with pytest.raises(ToolInputError):
        item.approval_arguments({"amount": "lots"})
    assert _refund_tools(broken)["model"].needs_approval_for({"account": "a"}) is True
    assert _refund_tools(False)["model"].needs_approval_for({"account": "a"}) is False


@pytest.mark.parametrize("key", ["model", "dataclass", "typeddict", "raw", "inferred"])
async def test_the_agent_loop_and_resume_use_the_same_shape(key: str) -> None:
    item = _refund_tools(big)[key]
    model, _ = scripted(calls(call(key, {"account": "a", "amount": 5000}, "c1")), "done")
    agent = Agent(model=model, tools={key: item})
    paused = await agent.generate("refund")
    assert paused.status == "awaiting_approval" and [p.call_id for p in paused.pending] == ["c1"]
    assert paused.steps[0].results == []  # nothing ran
    tampered = dataclasses.replace(paused, pending=[])
    with pytest.raises(ApprovalError, match="no decision"):
        await agent.resume(tampered, {})  # the re-check on resume sees the same shape


async def test_the_mcp_server_applies_defaults_before_the_policy() -> None:
    pytest.importorskip("mcp")
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    from agentkit.mcp import serving_http

    ran: list[int] = []

    @tool(requires_approval=big)
    def refund(account: str, amount: int = 500) -> str:
        ran.append(amount)
        return f"refunded {amount}"

    @tool(input_schema=Refund, requires_approval=big)
    def refund_model(req: Refund) -> str:
        ran.append(req.amount)
        return "ok"

    async with (
        serving_http(Registry([refund, refund_model])) as url,
        streamable_http_client(url) as (read, write, *_),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        by_default: Any = await session.call_tool("refund", {"account": "a"})
        by_model: Any = await session.call_tool("refund_model", {"account": "a", "amount": 900})
        small: Any = await session.call_tool("refund", {"account": "a", "amount": 5})
    assert by_default.is_error and "needs approval" in by_default.content[0].text
    assert by_model.is_error and "needs approval" in by_model.content[0].text
    assert not small.is_error and ran == [5]


# ---- 3.3: a workflow decides at call time --------------------------------------------------------


def test_a_workflow_decides_approval_when_called_not_when_built() -> None:
    @tool
    def charge(amount: int) -> int:
        return amount

    def receipt(amount: int) -> str:
        return f"charged {amount}"

    flow = Workflow("pay", [charge, receipt])
    as_tool = flow.as_tool()
    assert as_tool.requires_approval is False and as_tool.needs_approval_for({"amount": 5}) is False
    flow.steps[0].requires_approval = big  # set after the workflow (and its tool) were built
    assert as_tool.needs_approval_for({"amount": 5}) is False
    assert as_tool.needs_approval_for({"amount": 500}) is True
    flow.steps[1].requires_approval = True
    assert as_tool.requires_approval is True and as_tool.needs_approval_for({"amount": 5}) is True


def test_a_later_step_with_a_policy_makes_every_call_need_approval() -> None:
    def charge(amount: int) -> int:
        return amount

    @tool(requires_approval=big)
    def send(amount: int) -> str:
        return f"sent {amount}"

    as_tool = Workflow("pay", [charge, send]).as_tool()
    # the later step's arguments are not known before the earlier steps run: fail closed
    assert as_tool.needs_approval_for({"amount": 5}) is True


async def test_a_workflow_step_marked_after_the_agent_was_built_stops_the_run() -> None:
    ran: list[int] = []

    def charge(amount: int) -> int:
        ran.append(amount)
        return amount

    flow = Workflow("pay", [charge])
    model, _ = scripted(calls(call("workflow-pay", {"amount": 900}, "w1")), "done")
    agent = Agent(model=model, workflows={"pay": flow})
    flow.steps[0].requires_approval = big
    result = await agent.generate("pay")
    assert result.status == "awaiting_approval" and ran == []


def test_the_workflow_policy_sees_the_first_steps_shape_with_defaults() -> None:
    seen = Seen()

    @tool(input_schema=Refund, requires_approval=seen)
    def start(req: Refund) -> int:
        return req.amount

    def finish(amount: int) -> str:
        return str(amount)

    as_tool = Workflow("refund", [start, finish]).as_tool()
    assert as_tool.needs_approval_for({"account": "a"}) is True
    assert seen.shown == [{"account": "a", "amount": 500}]


# ---- 3.1: one decision never authorises two calls -----------------------------------------------


class Refunds:
    def __init__(self) -> None:
        self.paid: list[int] = []
        ledger = self

        @tool(requires_approval=lambda args: args["amount"] > 0)
        def refund(amount: int) -> str:
            ledger.paid.append(amount)
            return f"refunded {amount}"

        self.tool = refund


async def test_two_calls_with_one_id_in_a_turn_need_two_decisions() -> None:
    refunds = Refunds()
    turn = calls(call("refund", {"amount": 1}, "c1"), call("refund", {"amount": 99_999}, "c1"))
    model, script = scripted(turn, "done")
    agent = Agent(model=model, tools=[refunds.tool])
    paused = await agent.generate("refund")
    ids = [p.call_id for p in paused.pending]
    assert ids == ["c1", "c1_2"]  # the duplicate is renamed, deterministically
    assert [p.arguments for p in paused.pending] == [{"amount": 1}, {"amount": 99_999}]
    with pytest.raises(ApprovalError, match="no decision for the pending call"):
        await agent.resume(paused, {"c1": True})  # one approval of 1 authorises nothing else
    assert refunds.paid == []
    done = await agent.resume(paused, {"c1": True, "c1_2": False})
    assert refunds.paid == [1]
    # history and results agree on the new ids, so every vendor links each result to its call
    assert [c.id for c in done.steps[0].tool_calls] == ["c1", "c1_2"]
    assert [r.call_id for r in done.steps[0].results] == ["c1", "c1_2"]
    sent = script.seen[1]
    assert [c.id for c in sent[-2].tool_calls] == ["c1", "c1_2"]  # type: ignore[union-attr]
    assert [r.call_id for r in sent[-1].results] == ["c1", "c1_2"]  # type: ignore[union-attr]


async def test_an_id_reused_from_an_earlier_turn_is_renamed() -> None:
    refunds = Refunds()
    model, _ = scripted(
        calls(call("refund", {"amount": 1}, "c1")), calls(call("refund", {"amount": 99_999}, "c1")), "done"
    )
    agent = Agent(model=model, tools=[refunds.tool])
    first = await agent.generate("refund")
    second = await agent.resume(first, {"c1": True})
    assert refunds.paid == [1]
    assert second.status == "awaiting_approval" and [p.call_id for p in second.pending] == ["c1_2"]
    with pytest.raises(ApprovalError, match="no pending call has the id"):
        await agent.resume(second, {"c1": True})  # the old decision's id names nothing pending now
    assert refunds.paid == [1]


async def test_ids_stay_unique_against_the_given_history_and_empty_ids() -> None:
    refunds = Refunds()
    earlier = call("refund", {"amount": 1}, "c1")
    history = [
        UserMessage("first"),
        calls(earlier),
        ToolResultsMessage([ToolResult.error(earlier, "denied", "denied")]),
        AssistantMessage("fine"),
    ]
    model, _ = scripted(calls(call("refund", {"amount": 2}, "c1")), "ok")
    paused = await Agent(model=model, tools=[refunds.tool]).generate([*history, UserMessage("again")])
    assert [p.call_id for p in paused.pending] == ["c1_2"]

    model, _ = scripted(calls(ToolCall("", "refund", {"amount": 3}), ToolCall("", "refund", {"amount": 4})), "ok")
    paused = await Agent(model=model, tools=[refunds.tool]).generate("go")
    assert [p.call_id for p in paused.pending] == ["call_1", "call_2"]


async def test_streamed_events_carry_the_renamed_ids() -> None:
    refunds = Refunds()
    turn = calls(call("refund", {"amount": 1}, "c1"), call("refund", {"amount": 2}, "c1"))
    model, _ = scripted(turn, "done")
    stream = Agent(model=model, tools=[refunds.tool]).stream("go")
    events = [e async for e in stream]
    starts = [e.call_id for e in events if isinstance(e, ToolCallStartEvent)]
    whole = [e.call_id for e in events if isinstance(e, ToolCallEvent)]
    asked = [e.call_id for e in events if isinstance(e, ApprovalRequestedEvent)]
    assert starts == whole == asked == ["c1", "c1_2"]


# ---- 3.4: a paused result resumes once, copies included ------------------------------------------


@pytest.mark.parametrize("duplicate", [copy.deepcopy, lambda r: pickle.loads(pickle.dumps(r)), copy.copy])
async def test_a_copy_of_a_paused_result_cannot_run_the_call_again(duplicate: Any) -> None:
    refunds = Refunds()
    model, _ = scripted(calls(call("refund", {"amount": 7}, "c1")), "done", "again")
    agent = Agent(model=model, tools=[refunds.tool])
    paused = await agent.generate("refund")
    twin = duplicate(paused)
    await agent.resume(paused, {"c1": True})
    assert refunds.paid == [7]
    with pytest.raises(ApprovalError, match="already resumed"):
        await agent.resume(twin, {"c1": True})
    assert refunds.paid == [7]


async def test_a_copy_resumed_first_uses_up_the_original() -> None:
    refunds = Refunds()
    model, _ = scripted(calls(call("refund", {"amount": 7}, "c1")), "done")
    agent = Agent(model=model, tools=[refunds.tool])
    paused = await agent.generate("refund")
    await agent.resume(copy.deepcopy(paused), {"c1": False})
    with pytest.raises(ApprovalError, match="already resumed"):
        await agent.resume(paused, {"c1": True})  # a denial cannot be overturned through the original
    assert refunds.paid == []


async def test_a_rejected_resume_does_not_use_up_the_pause() -> None:
    refunds = Refunds()
    model, _ = scripted(calls(call("refund", {"amount": 7}, "c1")), "done")
    agent = Agent(model=model, tools=[refunds.tool])
    paused = await agent.generate("refund")
    with pytest.raises(ApprovalError):
        await agent.resume(copy.deepcopy(paused), {})
    await agent.resume(paused, {"c1": True})
    assert refunds.paid == [7]
