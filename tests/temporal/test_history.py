"""A durable run's Temporal history: linear in the conversation, and a run over a limit fails, naming it.

A model request's messages reach its activity by reference (from the workflow's process, or by the
``agentkit.history`` query from another one), never as its input; a payload over the server's limit is
checked before Temporal sees it, so a run never hangs on one.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from agentkit import Agent, AssistantMessage, RunLimits, ToolCall, ToolResultsMessage, tool
from agentkit.messages import Message
from agentkit.runs._codec import encode_messages
from agentkit.temporal import DevServer, TemporalAgent, TemporalLimitError, TemporalLimits
from agentkit.testing import FunctionInfo, FunctionModel

from .conftest import Workers
from .helpers import PAGES, durable_pages

pytestmark = [pytest.mark.e2e, pytest.mark.temporal]

SMALL = 64 * 1024  # the payload limit of the small server below


async def _history_bytes(run: Any) -> int:
    history = await run.handle.fetch_history()
    return sum(event.ByteSize() for event in history.events)


def _reader(steps: int, size: int) -> Agent:
    @tool
    def fetch(page: int) -> str:
        """Fetch a page."""
        return f"page {page}: " + "lorem ipsum " * (size // 12)

    def turn(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
        done = sum(isinstance(m, AssistantMessage) for m in messages)
        if done == steps:
            return "done"
        return AssistantMessage(f"Reading page {done}.", [ToolCall(f"c{done}", "fetch", {"page": done})])

    return Agent(
        id=f"reader-{steps}-{size}", model=FunctionModel(turn), tools=[fetch], limits=RunLimits(max_steps=steps + 2)
    )


async def test_the_history_grows_with_the_conversation_not_its_square(client: Any) -> None:
    agent = _reader(40, 2000)
    durable = TemporalAgent(agent, task_queue="reader-t")
    async with durable.worker(client):
        run = await durable.start(client, "read")
        result = await run.result()
    assert len(result.steps) == 41
    messages = len(json.dumps(encode_messages(result.messages, agent.tools)))
    # each message is written once as it is made, and once more in the run's result; the rest is Temporal's
    # own bookkeeping (events, ids). With the whole conversation as each request's input: 22x here
    assert await _history_bytes(run) < 3 * messages


async def test_an_activity_worker_in_another_process_asks_the_workflow_for_the_messages(
    client: Any, temporal_address: str, workers: Workers, ledger: str
) -> None:
    durable = durable_pages()
    # this process runs the workflow only; the model requests run in the other process, whose payload limit
    # (8 KiB) makes the history query answer in pages of about one message each
    workers.start(temporal_address, "pages-activities", ledger)
    async with durable.worker(client, activities=[]):
        result = await asyncio.wait_for(durable.run(client, "read"), 120)
    # every turn checked it was sent the whole conversation, in order (tests/temporal/helpers.pages_script)
    assert result.text == f"read {PAGES} pages"


@pytest.fixture(scope="module")
def small_server() -> Iterator[str]:
    """A dev server whose payload limit is 64 KiB instead of 2 MiB (what a run over it would hang on)."""
    with DevServer(dynamic_config={"limit.blobSize.error": SMALL, "limit.blobSize.warn": SMALL // 2}) as server:
        yield server.address


def _sizes_agent(name: str, *, answer: int = 10, result: int = 10) -> Agent:
    @tool
    def dump(n: int) -> str:
        """Return a lot of text."""
        return "y" * result

    def turn(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
        if isinstance(messages[-1], ToolResultsMessage):
            return "z" * answer if answer > 10 else f"saw: {messages[-1].results[0].text[:60]}"
        return AssistantMessage(tool_calls=[ToolCall("d1", "dump", {"n": 1})])

    return Agent(id=name, model=FunctionModel(turn), tools=[dump])


async def test_a_tool_result_over_the_payload_limit_is_an_error_result_and_the_run_goes_on(small_server: str) -> None:
    from temporalio.client import Client

    client = await Client.connect(small_server)
    durable = TemporalAgent(_sizes_agent("big-result-t", result=100_000), limits=TemporalLimits(payload=SMALL))
    async with durable.worker(client):
        result = await asyncio.wait_for(durable.run(client, "dump"), 60)  # before: the run hung
    [dumped] = result.tool_results
    assert dumped.is_error
    assert "The result of 'dump' is 0.10 MiB, over Temporal's payload limit of 0.06 MiB" in dumped.text
    assert "limit.blobSize.error" in dumped.text and result.text.startswith("saw: The result of 'dump' is 0.10 MiB")


async def test_a_model_answer_over_the_payload_limit_fails_the_run_naming_the_limit(small_server: str) -> None:
    from temporalio.client import Client, WorkflowFailureError

    client = await Client.connect(small_server)
    durable = TemporalAgent(_sizes_agent("big-answer-t", answer=100_000), limits=TemporalLimits(payload=SMALL))
    async with durable.worker(client):
        run = await durable.start(client, "dump")
        with pytest.raises(WorkflowFailureError) as failed:
            await asyncio.wait_for(run.result(), 60)
    cause: Any = failed.value.cause
    assert cause.type == "TemporalLimitError"
    assert "the model's response is 0.10 MiB, over Temporal's payload limit of 0.06 MiB" in cause.message
    assert "limit.blobSize.error" in cause.message
    with pytest.raises(TemporalLimitError, match="the run's prompt is 0.10 MiB, over Temporal's payload limit"):
        await durable.start(client, "p" * 100_000)  # refused before Temporal sees it


async def test_a_run_near_the_history_limit_fails_naming_it(small_server: str) -> None:
    from temporalio.client import Client, WorkflowFailureError

    client = await Client.connect(small_server)
    limits = TemporalLimits(payload=SMALL, history=2 * SMALL + 20_000)
    durable = TemporalAgent(_reader(30, 2000), task_queue="reader-limit-t", limits=limits)
    async with durable.worker(client):
        run = await durable.start(client, "read")
        with pytest.raises(WorkflowFailureError) as failed:
            await asyncio.wait_for(run.result(), 60)
    cause: Any = failed.value.cause
    assert cause.type == "TemporalLimitError" and "one more step could pass Temporal's history limits" in cause.message
