"""The hand-written floor of `bench_temporal.py`: a Temporal workflow doing the same activities as an agent run.

It is what a developer would write without agentkit: a loop calling a model activity, then a tool
activity with the call it returned, keeping the messages as plain dicts. The activities return the same
payloads as agentkit's (an assistant message with one tool call, then a text result of the same size).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from temporalio import activity, workflow

PAGE = "lorem ipsum dolor sit amet " * 80


@activity.defn(name="floor.model")
async def model(request: dict[str, Any]) -> dict[str, Any]:
    """The model's turn `request["step"]`: a call of `fetch`, or the answer after the last step."""
    step = int(request["step"])
    if step >= int(request["steps"]) - 1:
        return {"message": {"role": "assistant", "text": "done"}, "usage": {"requests": 1}}
    call = {"id": f"c{step}", "name": "fetch", "arguments": {"page": step}}
    return {"message": {"role": "assistant", "text": f"Reading page {step}.", "tool_calls": [call]}, "usage": {}}


@activity.defn(name="floor.tool")
async def tool(call: dict[str, Any]) -> dict[str, Any]:
    """The call's result, as text."""
    return {"call_id": call["id"], "name": call["name"], "text": f"page {call['arguments']['page']}: " + PAGE}


@workflow.defn(name="floor.Run")
class FloorRun:
    """Model turn, tool call, model turn, ... until the model answers."""

    @workflow.run
    async def run(self, request: dict[str, Any]) -> dict[str, Any]:
        messages: list[Any] = [{"role": "user", "text": request["prompt"]}]
        options: dict[str, Any] = {"start_to_close_timeout": timedelta(minutes=2)}
        for step in range(int(request["steps"])):
            turn = await workflow.execute_activity(model, {"step": step, "steps": request["steps"]}, **options)
            messages.append(turn["message"])
            calls = turn["message"].get("tool_calls") or []
            if not calls:
                break
            messages.append({"role": "tool", "results": [await workflow.execute_activity(tool, calls[0], **options)]})
        return {"messages": messages}
