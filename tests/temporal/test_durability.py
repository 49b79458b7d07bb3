"""Crashes and used-up retries on a real Temporal dev server: worker processes killed with SIGKILL.

Activities heartbeat, so a dead worker's call moves to another worker after the heartbeat timeout (10 s by
default), not after the attempt's whole timeout (5 minutes for a tool); a call whose attempts ran out is
never a lost run: the model gets an "outcome unknown" error result with the call's effect key, or the run
pauses for a person.
"""

from __future__ import annotations

import asyncio
import signal
import time
from datetime import timedelta
from typing import Any

import pytest
from temporalio.api.enums.v1 import TimeoutType
from temporalio.common import RetryPolicy

from agentkit import Agent, AssistantMessage, ToolCall, ToolError, ToolResultsMessage, tool
from agentkit.messages import Message
from agentkit.temporal import ActivityOptions, TemporalAgent, effect_key
from agentkit.testing import FunctionInfo, FunctionModel

from ..durable_helpers import _record, ledger_lines
from .conftest import Workers, wait_for
from .helpers import durable_shipping

pytestmark = [pytest.mark.e2e, pytest.mark.temporal]


async def _attempt_of(run: Any, activity_summary: str) -> Any:
    """The started event of the last attempt of the activity with that summary (attempt and last failure)."""
    history = await run.handle.fetch_history()
    scheduled = {
        e.event_id
        for e in history.events
        if e.HasField("activity_task_scheduled_event_attributes") and activity_summary in str(e.user_metadata.summary)
    }
    starts = [
        e.activity_task_started_event_attributes
        for e in history.events
        if e.HasField("activity_task_started_event_attributes")
        and e.activity_task_started_event_attributes.scheduled_event_id in scheduled
    ]
    assert starts, f"no {activity_summary} activity ran"
    return starts[-1]


async def test_a_killed_workers_call_moves_on_after_its_heartbeat_timeout_with_the_default_options(
    temporal_address: str, ledger: str, workers: Workers
) -> None:
    from temporalio.client import Client

    client = await Client.connect(temporal_address)
    durable = durable_shipping(ledger, slow=2)  # default options: 5 minutes per attempt, a heartbeat every 10 s
    first = workers.start(temporal_address, "shipping", ledger, slow=2)
    run = await durable.start(client, "charge and ship order o-1")
    # the charge finished and the slow shipping started: now the worker dies, mid-call
    await asyncio.to_thread(wait_for, lambda: "ship started o-1" in ledger_lines(ledger))
    first.send_signal(signal.SIGKILL)
    first.wait(10)
    assert ledger_lines(ledger) == ["charge o-1 30", "ship started o-1"]
    workers.start(temporal_address, "shipping", ledger, slow=2)
    # without heartbeats the cut attempt would hold the call for its whole 5-minute timeout
    result = await asyncio.wait_for(run.result(), 120)
    assert result.status == "complete" and result.text == "done: shipped o-1"
    lines = ledger_lines(ledger)
    assert lines.count("charge o-1 30") == 1  # the finished call came from the workflow's history
    assert lines.count("ship started o-1") == 2 and lines.count("ship done o-1") == 1  # the cut one ran again
    started = await _attempt_of(run, "ship")
    assert started.attempt == 2  # the second attempt finished the call; the first one stopped heartbeating:
    assert started.last_failure.timeout_failure_info.timeout_type == TimeoutType.TIMEOUT_TYPE_HEARTBEAT


async def test_a_call_longer_than_its_heartbeat_timeout_runs_once(client: Any, ledger: str) -> None:
    @tool
    def slow_sync(n: int) -> str:
        """Work for 3 s in a thread."""
        _record(ledger, f"sync {n}")
        time.sleep(3)
        return "sync done"

    @tool
    async def slow_async(n: int) -> str:
        """Work for 3 s on the event loop."""
        _record(ledger, f"async {n}")
        await asyncio.sleep(3)
        return "async done"

    def script(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
        if isinstance(messages[-1], ToolResultsMessage):
            return ", ".join(r.text for r in messages[-1].results)
        calls = [ToolCall("s1", "slow_sync", {"n": 1}), ToolCall("a1", "slow_async", {"n": 1})]
        return AssistantMessage(tool_calls=calls)

    beat = ActivityOptions(heartbeat_timeout=timedelta(seconds=1), retry_policy=RetryPolicy(maximum_attempts=3))
    agent = Agent(id="beats-t", model=FunctionModel(script), tools=[slow_sync, slow_async])
    durable = TemporalAgent(agent, task_queue="beats-t", tools={"slow_sync": beat, "slow_async": beat})
    async with durable.worker(client):
        result = await durable.run(client, "work")
    assert result.text == "sync done, async done"
    assert ledger_lines(ledger) == ["async 1", "sync 1"]  # each ran once: no attempt timed out


async def test_a_call_whose_one_attempt_died_is_an_unknown_outcome_the_model_sees(
    temporal_address: str, ledger: str, workers: Workers
) -> None:
    from temporalio.client import Client

    client = await Client.connect(temporal_address)
    durable = durable_shipping(ledger, slow=30, once=True)  # `ship` has one attempt, as a refund should
    first = workers.start(temporal_address, "shipping-once", ledger, slow=30)
    run = await durable.start(client, "charge and ship order o-1")
    await asyncio.to_thread(wait_for, lambda: "ship started o-1" in ledger_lines(ledger))
    first.send_signal(signal.SIGKILL)
    first.wait(10)
    workers.start(temporal_address, "shipping-once", ledger, slow=30)
    result = await asyncio.wait_for(run.result(), 120)  # the run is not lost: it ends, the model told
    assert result.status == "complete"
    [shipped] = [r for r in result.tool_results if r.name == "ship"]
    assert shipped.is_error and shipped.error_kind == "outcome_unknown"
    assert effect_key(run.id, "c_ship") in shipped.text and "may or may not have taken effect" in shipped.text
    assert "stopped heartbeating" in shipped.text
    assert result.text.startswith("done: The outcome of this call to 'ship' is unknown")
    assert ledger_lines(ledger) == ["charge o-1 30", "ship started o-1"]  # never run a second time


async def test_an_unknown_outcome_can_pause_for_a_person_and_resume_three_ways(client: Any, ledger: str) -> None:
    runs: dict[str, int] = {}

    @tool
    async def transfer(to: str) -> str:
        """Transfer money (the first attempt hangs)."""
        runs[to] = runs.get(to, 0) + 1
        _record(ledger, f"transfer {to} {runs[to]}")
        if runs[to] == 1:
            await asyncio.sleep(30)
        return f"sent to {to}"

    def script(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
        if isinstance(messages[-1], ToolResultsMessage):
            return " | ".join(f"{r.call_id}={r.text}" for r in messages[-1].results)
        return AssistantMessage(tool_calls=[ToolCall(f"t_{to}", "transfer", {"to": to}) for to in ("a", "b", "c")])

    once = ActivityOptions(
        start_to_close_timeout=timedelta(seconds=1), retry_policy=RetryPolicy(maximum_attempts=1), on_unknown="pause"
    )
    agent = Agent(id="unknown-t", model=FunctionModel(script), tools=[transfer])
    durable = TemporalAgent(agent, task_queue="unknown-t", tools={"transfer": once})
    async with durable.worker(client):
        run = await durable.start(client, "pay three people")
        state = await run.wait()
        assert state.status == "suspended" and [p.call_id for p in state.pending] == ["t_a", "t_b", "t_c"]
        first = state.pending[0]
        assert first.kind == "suspension" and first.request["outcome"] == "unknown"  # type: ignore[union-attr]
        assert first.request["effect_key"] == effect_key(run.id, "t_a")  # type: ignore[union-attr]
        with pytest.raises(Exception, match="does not fit"):
            await run.resume({"t_a": {"retry": False}, "t_b": {"output": "x"}, "t_c": ToolError("no")})
        # a: run it again (same effect key); b: it did run, here is its result; c: tell the model it failed
        answers = {"t_a": {"retry": True}, "t_b": {"output": "sent to b (checked)"}, "t_c": ToolError("bounced")}
        await run.resume(answers)
        result = await run.result()
    assert result.text == "t_a=sent to a | t_b=sent to b (checked) | t_c=bounced"
    assert ledger_lines(ledger) == ["transfer a 1", "transfer a 2", "transfer b 1", "transfer c 1"]


async def test_a_model_request_whose_attempts_ran_out_fails_the_run_with_a_model_error(client: Any) -> None:
    from temporalio.client import WorkflowFailureError

    def broken(messages: list[Message], info: FunctionInfo) -> str:
        raise RuntimeError("the vendor is down")

    once = ActivityOptions(retry_policy=RetryPolicy(maximum_attempts=2, initial_interval=timedelta(milliseconds=100)))
    durable = TemporalAgent(Agent(id="down-t", model=FunctionModel(broken)), task_queue="down-t", model=once)
    async with durable.worker(client):
        run = await durable.start(client, "hi")
        with pytest.raises(WorkflowFailureError) as failed:  # before: the workflow task failed, and was retried forever
            await asyncio.wait_for(run.result(), 60)
    cause: Any = failed.value.cause
    assert cause.type == "ModelAPIError" and "the model request failed in every attempt" in cause.message
    assert "the vendor is down" in cause.message
