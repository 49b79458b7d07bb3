"""Code mode in an agent run: the run's tools, and a resume's answers for calls made inside programs.

`run_tools` decides, once per run, what a `CodeMode` changes: agentkit's own code tool beside the tools
(the replaced ones held back from the model, kept for the programs), or, on a vendor that runs programs
itself, the keys its programs may call. `program_answers` takes a resume's answers to calls a program made
out of the answers given, checks each one as `Agent.resume` checks a direct call's, and files them by
program (the program runs again with them).
"""

from __future__ import annotations as _annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..exceptions import ApprovalError, ResumeError, ToolError, ToolOutputError
from ..messages import ToolCall, ToolResult
from ..registry import Registry

if TYPE_CHECKING:
    from .._agent.results import PendingItem
    from ..agent import Agent
    from ..models import Model
    from ._mode import CodeMode

__all__ = ["RunCodeMode", "durable_tools", "program_answers", "run_tools"]


@dataclass(frozen=True)
class RunCodeMode:
    """What code mode changes in one run."""

    registry: Registry
    """The run's tools (with agentkit's code tool when it runs the programs)."""
    hidden: frozenset[str] = frozenset()
    """Keys never sent to the model (only programs call them)."""
    programmatic: tuple[str, ...] = ()
    """Keys the vendor's own programs may call (hosted code mode)."""
    direct: bool = False
    """Whether the `programmatic` keys stay callable directly too."""


def hosted_by(model: Model | None) -> bool:
    """Whether `model`'s vendor runs programs that call tools (`Provider.programmatic_tool`)."""
    provider = getattr(model, "provider", None)
    return getattr(provider, "programmatic_tool", None) is not None


def run_tools(mode: CodeMode | None, registry: Registry, model: Model | None) -> RunCodeMode:
    """The run's tools under `mode` (None: unchanged) for a run on `model`."""
    if mode is None:
        return RunCodeMode(registry)
    if mode.hosted and hosted_by(model):
        return RunCodeMode(registry, programmatic=tuple(mode.select(registry)), direct=not mode.replace)
    extended = mode.extend(registry)
    return RunCodeMode(extended, hidden=mode.hidden(registry))


def durable_tools(agent: Agent[Any, Any]) -> tuple[Registry, Registry]:
    """What a durable engine's activities use for `agent`'s runs: (the tools sent to the model, the tools run).

    With a code mode, the code tool joins the tools run and replaces the chosen ones in the tools sent.
    """
    tools = agent.tools
    mode = agent.code_mode
    if mode is None:
        return tools, tools
    from .._agent._options import DEFAULT_OPTIONS
    from .._agent._setup import with_code_tool
    from .._agent.runs import spec_of

    runnable = with_code_tool(spec_of(agent), tools, DEFAULT_OPTIONS)
    hidden = mode.hidden(tools)
    return (runnable.select(k for k in runnable if k not in hidden) if hidden else runnable), runnable


def program_answers(
    pending: list[PendingItem], programs: Mapping[str, Mapping[str, Any]], registry: Registry, answers: dict[str, Any]
) -> dict[str, dict[str, Any]]:
    """The answers to calls made inside paused programs, taken out of `answers` and checked, by program.

    Every such call must be answered: an approval with ``True``/``False``/`Approval`, a suspension with data
    that fits its schema, a client tool with its output (or a `ToolError`). A client's output becomes its
    `ToolResult` here, so a wrong one is refused before the pause is spent.
    """
    from .._agent.pending import PendingClientCall, PendingSuspension
    from .._agent.results import Approval, PendingApproval
    from ..runs._answers import check_answer

    owner = {str(w["id"]): caller for caller, entry in programs.items() for w in entry["state"]["waiting"]}
    filed: dict[str, dict[str, Any]] = {caller: {} for caller in programs}
    for item in pending:
        caller = owner.get(item.call_id)
        if caller is None:
            continue
        if item.call_id not in answers:
            what = "approve or deny it" if isinstance(item, PendingApproval) else "answer it"
            raise (ApprovalError if isinstance(item, PendingApproval) else ResumeError)(
                f"no answer for the call {item.call_id!r} ({item.tool_name!r}) made by the program of call "
                f"{caller!r}: {what}"
            )
        answer = answers.pop(item.call_id)
        if isinstance(item, PendingApproval):
            filed[caller][item.call_id] = answer if isinstance(answer, Approval) else Approval(bool(answer))
        elif isinstance(item, PendingSuspension):
            if not isinstance(answer, ToolError):
                problems = check_answer(item.schema, answer)
                if problems:
                    raise ResumeError(
                        f"the data for the suspended call {item.call_id!r} ({item.tool_name!r}) does not fit: "
                        f"{problems}"
                    )
            filed[caller][item.call_id] = answer
        elif isinstance(item, PendingClientCall):
            filed[caller][item.call_id] = _client_result(item, registry, answer)
    return filed


def _client_result(item: PendingItem, registry: Registry, answer: Any) -> ToolResult:
    call = ToolCall(item.call_id, item.tool_name)
    if isinstance(answer, ToolError):
        return ToolResult.error(call, answer.message, "tool_error")
    tool = registry.get(item.tool_name) if item.tool_name in registry else None
    if tool is None:
        raise ResumeError(f"the client tool {item.tool_name!r} of call {item.call_id!r} is not among the run's tools")
    try:
        value = tool.schema.validate_output(item.tool_name, answer)
    except ToolOutputError as exc:
        raise ResumeError(
            f"the client's output for call {item.call_id!r} ({item.tool_name!r}) does not fit: {exc}"
        ) from None
    return ToolResult(call_id=call.id, name=call.name, content=tool.model_content(value), output=value)
