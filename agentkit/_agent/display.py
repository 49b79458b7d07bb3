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
    from .results import RunResult

__all__ = ["TranscriptEntry", "display_arguments", "error_text", "merge_transforms", "shape", "transcript"]

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


def error_text(result: ToolResult, input_redacted: bool) -> str:
    """The error text a display shows.

    Validation messages quote the offending values: when the tool's input is redacted (an `input`
    transform) and no `error` transform decides, they are not shown.
    """
    if input_redacted and result.error_kind == "invalid_arguments":
        return f"Invalid arguments for tool {result.name!r} (details withheld: the tool's input is redacted)."
    return result.text


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
    result: RunResult, tools: Mapping[str, Tool[..., Any]], policy: ToolTransform | None
) -> list[TranscriptEntry]:
    """Every tool call of `result` shaped by its tool's transform merged with the `policy`."""
    entries: list[TranscriptEntry] = []
    for step in result.steps:
        answered = {r.call_id: r for r in step.results}
        for call in step.tool_calls:
            own = tools[call.name].transform if call.name in tools else None
            rules = merge_transforms(own, policy) or ToolTransform()
            shown_input, input_error = shape(rules.input, display_arguments(call), "input")
            outcome = answered.get(call.id)
            shown_output = shown_error = output_error = None
            if outcome is not None and outcome.is_error:
                text = error_text(outcome, rules.error is None and rules.input is not None)
                shown_error, output_error = shape(rules.error, text, "error")
            elif outcome is not None:
                shown_output, output_error = shape(rules.output, outcome.output, "output")
            failures = tuple(e for e in (input_error, output_error) if e is not None)
            entries.append(
                TranscriptEntry(step.index, call.id, call.name, shown_input, shown_output, shown_error, failures)
            )
    return entries
