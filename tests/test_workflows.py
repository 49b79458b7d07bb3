"""Workflow: ordered typed steps, schemas inferred like tools, runnable alone and as a tool."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from agentkit import ModelRetry, ToolContext, ToolDefinitionError, ToolInputError, tool
from agentkit.agent import Agent
from agentkit.workflows import Workflow, WorkflowStepError

from .agent_helpers import call, calls, scripted


class Hits(BaseModel):
    topic: str
    urls: list[str]


class Ranked(BaseModel):
    best: str
    count: int


async def search(topic: str, limit: int = 2) -> Hits:
    """Search the web for a topic.

    Args:
        topic: What to search for.
        limit: How many results.
    """
    return Hits(topic=topic, urls=[f"https://example.com/{topic}/{i}" for i in range(limit)])


def rank(hits: Hits) -> Ranked:
    return Ranked(best=hits.urls[0], count=len(hits.urls))


def summarize(best: str, count: int) -> str:  # several parameters: receives the fields of Ranked
    return f"{count} hits, best {best}"


def research() -> Workflow[..., str]:
    return Workflow.start(search, id="research").then(rank).then(summarize)


async def test_a_typed_chain_runs_with_the_first_steps_arguments() -> None:
    wf = research()
    assert await wf.run("tides") == "2 hits, best https://example.com/tides/0"
    assert await wf.run(topic="tides", limit=3) == "3 hits, best https://example.com/tides/0"
    assert wf.run_sync is not None
    assert [s.id for s in wf.steps] == ["search", "rank", "summarize"]


def test_schemas_are_the_first_steps_input_and_the_last_steps_output() -> None:
    wf = research()
    assert wf.input_schema["properties"]["topic"] == {"type": "string", "description": "What to search for."}
    assert wf.input_schema["required"] == ["topic"]
    assert wf.output_schema == {"type": "string"}
    assert wf.description.startswith("Search the web")
    assert Workflow("w", [search], description="Custom.").description == "Custom."


def test_sync_entry_points_and_step_callback() -> None:
    seen: list[tuple[str, Any]] = []
    wf = research()
    assert wf.invoke({"topic": "x", "limit": 1}, on_step=lambda name, value: seen.append((name, value))) == (
        "1 hits, best https://example.com/x/0"
    )
    assert [name for name, _ in seen] == ["search", "rank", "summarize"]
    assert isinstance(seen[1][1], Ranked)
    assert wf.run_sync("y", limit=1).startswith("1 hits")


async def test_bad_input_and_a_step_mismatch_fail_with_named_errors() -> None:
    wf = research()
    with pytest.raises(ToolInputError):
        await wf.ainvoke({"topic": 3})

    def wrong(hits: Hits) -> dict[str, Any]:
        return {"best": 1}  # the next step needs a string and a count

    broken = Workflow.start(search, id="broken").then(wrong).then(summarize)
    with pytest.raises(WorkflowStepError, match=r"step 3 \('summarize'\): rejected the result of 'wrong'"):
        await broken.run("x")

    def explode(hits: Hits) -> str:
        raise KeyError("boom")

    with pytest.raises(WorkflowStepError, match="step 2 .*KeyError") as info:
        await Workflow.start(search, id="x").then(explode).run("x")
    assert isinstance(info.value.__cause__, KeyError)


def test_definition_errors_name_the_step() -> None:
    def no_params() -> str:
        return ""

    with pytest.raises(ToolDefinitionError, match="must take a parameter"):
        Workflow("w", [search, no_params])

    def count() -> int:
        return 1

    def two(a: int, b: int) -> int:
        return a + b

    with pytest.raises(ToolDefinitionError, match="must return an object"):
        Workflow("w", [count, two])
    with pytest.raises(ToolDefinitionError, match="at least one step"):
        Workflow("w", [])


async def test_as_a_tool_for_a_model_with_context_and_retries() -> None:
    @tool
    def fetch(ctx: ToolContext[str], url: str) -> str:
        """Fetch a URL with the caller's credentials."""
        if url == "retry":
            raise ModelRetry("use another url")
        return f"{ctx.deps}:{url}"

    wf = Workflow("fetch-upper", [fetch, lambda_upper])
    model, _ = scripted(
        calls(
            call("workflow-fetch", {"url": "a"}, "ok"),
            call("workflow-fetch", {"url": "retry"}, "again"),
            call("workflow-fetch", {"nope": 1}, "bad"),
        ),
        "done",
    )
    result = await Agent(model=model, workflows={"fetch": wf}, deps="token").generate("x")
    by_id = {r.call_id: r for r in result.tool_results}
    assert by_id["ok"].output == "TOKEN:A"
    assert by_id["again"].error_kind == "retry" and by_id["again"].text == "use another url"
    assert by_id["bad"].error_kind == "invalid_arguments"


def lambda_upper(text: str) -> str:
    return text.upper()


async def test_nested_workflows_are_steps() -> None:
    inner = Workflow.start(search, id="inner").then(rank)
    outer = Workflow("outer", [inner, summarize])
    assert await outer.ainvoke({"topic": "z"}) == "2 hits, best https://example.com/z/0"
