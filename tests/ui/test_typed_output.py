"""A typed answer reaches the UIs as data, in both output modes (issue 22 §5.4), and the run says why it ended (§5.5).

The Vercel side is read by the `ai` package's own `readUIMessageStream` (what ``useChat`` runs); the
AG-UI side is re-validated by ag-ui-protocol's models and its lifecycle rules (`test_agui.run`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentkit import Agent
from agentkit.ui import MemoryRunStore
from agentkit.ui.vercel import DONE, to_sse, ui_message_chunks

from .output_agent import MAX_STEPS, TRIP, native_agent, tool_agent
from .test_agui import body, of_type, run, user
from .test_ai_sdk_client import read_with_ai

AGENTS = pytest.mark.parametrize("agent", [native_agent, tool_agent], ids=["native", "output-tool"])


async def message_read_by_ai(agent: Agent, prompt: str, tmp_path: Path) -> dict[str, Any]:
    frames = [to_sse(c) async for c in ui_message_chunks(agent.stream(prompt), message_id="msg_trip")]
    path = tmp_path / "stream.txt"
    path.write_text("".join(frames) + DONE, encoding="utf-8")
    message: dict[str, Any] = read_with_ai(path)["message"]
    return message


@AGENTS
async def test_the_typed_answer_is_one_data_part_of_the_ui_message(agent: Agent, tmp_path: Path) -> None:
    message = await message_read_by_ai(agent, "Plan a trip", tmp_path)
    outputs = [p for p in message["parts"] if p["type"] == "data-agentkit-output"]
    assert outputs == [{"type": "data-agentkit-output", "id": "output", "data": {"output": TRIP, "step": 1}}]
    tools = [p for p in message["parts"] if p["type"].startswith("tool-")]
    assert [p["type"] for p in tools] == ["tool-weather"]  # the output tool's call is no tool part
    # regression: in output-tool mode the answer's step had no start-step (the partial came outside any step)
    assert [p["type"] for p in message["parts"]].count("step-start") == 2
    run_info = message["metadata"]["agentkit"]
    assert (run_info["status"], run_info["reason"]) == ("complete", "the model answered")


@AGENTS
async def test_the_typed_answer_is_a_custom_event_and_the_run_result_on_ag_ui(agent: Agent) -> None:
    events = await run(agent, body("t1", "r1", [user("Plan a trip")]), MemoryRunStore())
    outputs = [e["value"] for e in of_type(events, "CUSTOM") if e["name"] == "agentkit.output"]
    assert outputs[-1] == {"output": TRIP, "step": 1} and all("partial" in v for v in outputs[:-1])
    assert len(outputs) >= 2
    # the partial belongs to the answer's step (regression: in output-tool mode it came before STEP_STARTED)
    kinds = [(e["type"], e.get("stepName") or e.get("name")) for e in events]
    first_partial = next(i for i, e in enumerate(events) if e["type"] == "CUSTOM" and "partial" in e["value"])
    assert kinds.index(("STEP_STARTED", "step-1")) < first_partial < kinds.index(("STEP_FINISHED", "step-1"))
    finished = events[-1]
    assert finished["type"] == "RUN_FINISHED"
    assert finished["result"] == TRIP  # regression: the answer's JSON text, a string to parse again
    assert finished["metadata"]["agentkit"] == {"status": "complete", "reason": "the model answered"}


@AGENTS
async def test_a_run_cut_at_max_steps_says_so_on_both_protocols(agent: Agent, tmp_path: Path) -> None:
    """Regression (§5.5): a run cut at max_steps showed "ready" and no answer, with nothing saying why."""
    message = await message_read_by_ai(agent, "keep going", tmp_path)
    run_info = message["metadata"]["agentkit"]
    assert run_info["status"] == "max_steps" and "max_steps" in run_info["reason"]
    assert not [p for p in message["parts"] if p["type"] == "data-agentkit-output"]
    assert [p["type"] for p in message["parts"]].count("step-start") == MAX_STEPS

    events = await run(agent, body("t2", "r2", [user("keep going")]), MemoryRunStore())
    meta = events[-1]["metadata"]["agentkit"]
    assert meta["status"] == "max_steps" and "max_steps" in meta["reason"] and events[-1].get("result") is None
