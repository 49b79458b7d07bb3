"""``agentkit run``: an agent (or a registry's tools on a model) on one prompt, shown as displays show it."""

from __future__ import annotations as _annotations

import argparse
import asyncio
import contextlib
import json
from typing import TYPE_CHECKING, Any

from .._loader import is_agent, load_object
from .._status import status_reason
from .._text import clip, json_text
from .._unicode import escaped
from ..exceptions import CLIError, ModelSetupError
from ._errors import USAGE, in_cli_words, say
from ._json import dump, print_json
from ._terminal import Progress
from ._tools import load_target

if TYPE_CHECKING:
    from .._agent.display import TranscriptEntry
    from ..agent import Agent, RunResult
    from ..events import AgentEvent

__all__ = ["cmd_run"]

_SHOWN = 200
"""Characters of a payload the run command prints (a model may send megabytes)."""


def _shown(value: Any) -> str:
    """A displayed payload (already shaped by the transforms) as one bounded line; any depth."""
    text = value if isinstance(value, str) else json_text(value, ensure_ascii=False)
    return clip(" ".join(text.splitlines()), _SHOWN)


def _shown_input(entry: TranscriptEntry) -> str:
    """A call's arguments as displays show them: shaped by the input transform, never the raw redacted value."""
    if entry.transform_errors and entry.input is None:
        return "[withheld]"
    if isinstance(entry.input, str):  # text the model sent that is not a JSON object (or too deep to read)
        return f"{json.dumps(clip(entry.input, _SHOWN), ensure_ascii=False)} (not a JSON object)"
    return _shown(entry.input)


def _shown_outcome(entry: TranscriptEntry, failed: bool) -> str:
    if entry.transform_errors and (entry.error if failed else entry.output) is None:
        return "[withheld]"
    return _shown(entry.error if failed else entry.output)


def _doing(event: AgentEvent) -> str | None:
    """What the progress line says while `event` is the latest one (None: keep the line as it is)."""
    step = getattr(event, "step", None)
    at = f"step {step + 1}: " if isinstance(step, int) else ""
    if event.kind in ("tool-call-start", "tool-call"):
        return f"{at}calling {getattr(event, 'tool_name', 'a tool')}"
    if event.kind == "text-delta":
        return f"{at}the model is answering"
    if event.kind in ("tool-result", "tool-error", "step-finish"):
        return f"{at}waiting for the model"
    return None


async def _run(agent: Agent[Any, Any], prompt: str, max_steps: int, model: str) -> RunResult[Any]:
    progress = Progress()
    progress.update(f"asking {model}")
    async with progress.ticking():
        stream = agent.stream(prompt, max_steps=max_steps)
        async for event in stream:
            doing = _doing(event)
            if doing is not None:
                progress.text = doing
    return stream.result


def _model_name(agent: Agent[Any, Any]) -> str:
    try:
        return agent.resolve_model().name
    except ModelSetupError as exc:  # no model, or one that cannot be made: the command line can give one
        raise CLIError(in_cli_words(str(exc)), USAGE) from None


def _chosen_model(spec: str | None) -> Any:
    """The model ``-m`` names (a misspelt vendor is a usage error, with its "did you mean")."""
    if spec is None:
        return None
    from ..models import infer_model

    try:
        return infer_model(spec)
    except ModelSetupError as exc:
        raise CLIError(in_cli_words(str(exc)), USAGE) from None


def _jsonable(value: Any) -> Any:
    from ..ui._serialize import jsonable

    data, problem = jsonable(value)
    return data if problem is None else {"withheld": problem}


def _document(agent: Agent[Any, Any], result: RunResult[Any], model: str) -> dict[str, Any]:
    outcomes = {(step.index, r.call_id): r.is_error for step in result.steps for r in step.results}
    calls: list[dict[str, Any]] = []
    for entry in agent.transcript(result):
        failed = outcomes.get((entry.step, entry.call_id))
        state = "pending" if failed is None else "error" if failed else "ok"
        call: dict[str, Any] = {"step": entry.step, "call_id": entry.call_id, "tool": entry.tool_name, "state": state}
        call.update(input=_jsonable(entry.input), output=_jsonable(entry.output), error=_jsonable(entry.error))
        call["withheld"] = list(entry.transform_errors)  # why a payload above is null (a failed transform)
        calls.append(call)
    pending = [
        {"call_id": p.call_id, "tool": p.tool_name, "kind": p.kind, "payload": _jsonable(getattr(p, "payload", None))}
        for p in result.pending
    ]
    structured = result.has_output and not isinstance(result.output, str)
    return {
        "model": model,
        "status": result.status,
        "reason": status_reason(result.status),
        "steps": len(result.steps),
        "text": result.text if result.status == "complete" else "",
        "output": _jsonable(result.output) if structured else None,
        "tool_calls": calls,
        "pending": pending,
        "usage": _jsonable(result.usage),
    }


_WAITS = {
    "approval": "awaiting approval",
    "suspension": "asked for input",
    "client": "awaiting the client's output",
    "background": "running in the background",
}


def _print_text(agent: Agent[Any, Any], result: RunResult[Any], model: str) -> None:
    outcomes = {(step.index, r.call_id): r.is_error for step in result.steps for r in step.results}
    waits = {p.call_id: _WAITS.get(p.kind, p.kind) for p in result.pending}
    for entry in agent.transcript(result):  # what displays may show: redacted inputs stay redacted
        failed = outcomes.get((entry.step, entry.call_id))
        if failed is None:
            waiting = waits.get(entry.call_id, "not run")
            print(escaped(f"[waiting] {entry.tool_name}({_shown_input(entry)}) -> {waiting}"))
            continue
        flag = "error" if failed else "ok"
        print(escaped(f"[tool] {entry.tool_name}({_shown_input(entry)}) -> {flag}: {_shown_outcome(entry, failed)}"))
    if result.status != "complete":
        return  # no answer to show: why goes to stderr
    if result.has_output and not isinstance(result.output, str):
        print(f"[answer] {model} ({type(result.output).__name__}):")
        dump(_jsonable(result.output))
    elif model == "test":
        # TestModel's answer is a summary of the tool results, not a model's prose: say so
        print("[answer] from the offline test model (it calls each tool with generated arguments, then lists results):")
        print(escaped("\n".join(f"  {line}" for line in result.text.splitlines())))
    else:
        print(escaped(f"[answer] {model}:" if model else "[answer]"))
        print(escaped(result.text))


def _why(result: RunResult[Any], max_steps: int) -> str:
    if result.status == "awaiting_approval":
        pending = ", ".join(f"{p.tool_name} ({p.call_id})" for p in result.pending)
        return f"the run stopped: call(s) awaiting approval: {pending}; nothing ran"
    if result.paused:
        pending = ", ".join(f"{p.tool_name} ({p.call_id}, {p.kind})" for p in result.pending) or "nothing listed"
        return f"the run paused ({result.status}), waiting for: {pending}"
    return (
        f"the run ended without an answer: it used all {len(result.steps)} of its steps "
        f"(--max-steps {max_steps}); raise --max-steps, or check what the model did with the tools above"
        if result.status == "max_steps"
        else f"the run ended without an answer ({result.status}: {status_reason(result.status)})"
    )


def cmd_run(args: argparse.Namespace) -> int:
    """``agentkit run``: the tool calls as displays show them, then the answer; status 1 without one."""
    from ..agent import Agent

    if args.max_steps < 1:
        raise CLIError(f"--max-steps must be at least 1, got {args.max_steps}", USAGE)
    obj = load_object(args.target)
    agent = obj if is_agent(obj) else Agent(name="cli", model="test", tools=load_target(args.target, output_flag=True))
    chosen = _chosen_model(args.model)
    with agent.override(model=chosen) if chosen is not None else contextlib.nullcontext():
        model = _model_name(agent)
        result = asyncio.run(_run(agent, args.prompt, args.max_steps, model))
    if args.json:
        print_json("run", _document(agent, result, model))
    else:
        _print_text(agent, result, model)
    if result.status != "complete":  # a finding, said after the result (with --json, its document)
        say("run", _why(result, args.max_steps))
        return 1
    return 0
