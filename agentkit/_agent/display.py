"""What displays and transcripts see of a tool call: the `ToolTransform`s applied, failing closed.

A transform that raises withholds its payload (``None``) and is named in a ``transform_error``; only the
exception's type is reported, since its message could quote the very value being hidden.
"""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..messages import ToolCall, ToolResult
from ..tools import Tool, ToolTransform

if TYPE_CHECKING:
    from ..registry import Registry
    from .results import RunResult

__all__ = [
    "TranscriptEntry",
    "display_arguments",
    "error_text",
    "merge_transforms",
    "progress_data",
    "registry_rules",
    "shape",
    "tool_made",
    "transcript",
]

_TRANSFORM_FIELDS = tuple(f.name for f in dataclasses.fields(ToolTransform))


def merge_transforms(own: ToolTransform | None, policy: ToolTransform | None) -> ToolTransform | None:
    """Per field: the tool's transform wins where it sets one, the agent's policy fills the rest."""
    if own is None or policy is None:
        return own if own is not None else policy
    fields = {name: getattr(own, name) or getattr(policy, name) for name in _TRANSFORM_FIELDS}
    return ToolTransform(**fields)


def shape(fn: Callable[[Any], Any] | None, value: Any, target: str) -> tuple[Any, str | None]:
    """Apply one transform, failing closed: on error the payload is None and the failure is named.

    Only the exception's type is reported: its message could quote the very value being hidden.
    """
    if fn is None:
        return value, None
    try:
        return fn(value), None
    except Exception as exc:  # noqa: BLE001 - a failing transform must never leak the raw value
        return None, f"transform {target!r} failed ({type(exc).__name__}); payload withheld"


# error kinds whose message agentkit writes itself and that quote no argument or result value
_SAFE_KINDS = frozenset({"timeout", "denied", "unknown_tool"})
_RAISED_BY_KIND = {"retry": "ModelRetry", "tool_error": "ToolError", "invalid_output": "ToolOutputError"}


def error_text(result: ToolResult, rules: ToolTransform) -> str:
    """The error text a display shows (before the `error` transform, if any, shapes it).

    Validation messages quote the offending values, and a tool's own exception message may quote its
    arguments: when the tool's input is redacted (an `input` transform) and no `error` transform
    decides, only the error's kind and the exception's type are shown. A redacted output (an `output`
    transform) likewise withholds the message of an invalid result, which quotes that result.
    """
    kind = result.error_kind
    if rules.error is not None or kind in _SAFE_KINDS:
        return result.text
    if rules.input is not None:
        hidden = "input"
    elif rules.output is not None and kind == "invalid_output":
        hidden = "output"
    else:
        return result.text
    if kind == "invalid_arguments":
        return f"Invalid arguments for tool {result.name!r} (details withheld: the tool's input is redacted)."
    raised = result.exception_type or _RAISED_BY_KIND.get(kind or "", "an error")
    return f"Tool {result.name!r} failed ({kind}: {raised}); details withheld: the tool's {hidden} is redacted."


def tool_made(rules: ToolTransform, target: str, value: Any) -> tuple[Any, str | None]:
    """A value the tool makes up itself (`progress`, a `suspension`'s question) as a display may see it.

    Through its transform (``rules.progress`` / ``rules.suspension``); without one, withheld when the
    tool's input or output is redacted, since such a value may quote what those transforms hide (fail closed).
    """
    transform = rules.progress if target == "progress" else rules.suspension
    if transform is not None:
        return shape(transform, value, target)
    if rules.input is not None or rules.output is not None:
        hidden = "input" if rules.input is not None else "output"
        return None, f"{target} withheld: the tool's {hidden} is redacted and it has no {target!r} transform"
    return value, None


def registry_rules(registry: Registry, key: str) -> ToolTransform:
    """The display transforms of the tool under `key` outside a run: its own over the registry's policy."""
    own = registry[key].transform if key in registry else None
    return merge_transforms(own, registry.transform) or ToolTransform()


def progress_data(rules: ToolTransform, value: Any) -> tuple[Any, str | None]:
    """A progress value as a display may see it: through ``rules.progress``, withheld if values are redacted."""
    return tool_made(rules, "progress", value)


def display_arguments(call: ToolCall) -> Any:
    """The call's arguments as a dict, or the text as the model sent it when it is not a JSON object."""
    try:
        return call.arguments_dict()
    except ValueError:
        return call.arguments  # malformed JSON: the text as the model sent it


@dataclass(frozen=True)
class TranscriptEntry:
    """One tool call as a transcript or display may show it: every payload shaped by the transforms.

    A payload whose transform failed is ``None`` (never the raw value) and the failure is named in
    `transform_errors`.
    """

    step: int
    call_id: str
    tool_name: str
    """The registry key."""
    input: Any
    output: Any = None
    error: Any = None
    """The error text shown for a failed call (``None`` when the call succeeded)."""
    transform_errors: tuple[str, ...] = ()


def transcript(
    result: RunResult[Any],
    tools: Mapping[str, Tool[..., Any]],
    policy: ToolTransform | None,
    withheld: frozenset[str] = frozenset(),
) -> list[TranscriptEntry]:
    """Every tool call of `result` shaped by its tool's transform merged with the `policy`.

    Calls to the keys in `withheld` (tools of the run that are not known here, so neither are their
    transforms) are listed with every payload withheld.
    """
    entries: list[TranscriptEntry] = []
    for step in result.steps:
        answered = {r.call_id: r for r in step.results}
        for call in step.tool_calls:
            if call.name in withheld:
                reason = f"the run's own tool {call.name!r} is not known here (pass tools=); payloads withheld"
                entries.append(TranscriptEntry(step.index, call.id, call.name, None, transform_errors=(reason,)))
                continue
            own = tools[call.name].transform if call.name in tools else None
            rules = merge_transforms(own, policy) or ToolTransform()
            shown_input, input_error = shape(rules.input, display_arguments(call), "input")
            outcome = answered.get(call.id)
            shown_output = shown_error = output_error = None
            if outcome is not None and outcome.is_error:
                shown_error, output_error = shape(rules.error, error_text(outcome, rules), "error")
            elif outcome is not None:
                shown_output, output_error = shape(rules.output, outcome.output, "output")
            failures = tuple(e for e in (input_error, output_error) if e is not None)
            entries.append(
                TranscriptEntry(step.index, call.id, call.name, shown_input, shown_output, shown_error, failures)
            )
    return entries
