"""What every vendor shares for structured output: the prompted form's instructions in a history."""

from __future__ import annotations as _annotations

from collections.abc import Sequence

from ..messages import Message, SystemMessage

__all__ = ["with_output_prompt"]


def with_output_prompt(messages: Sequence[Message], prompt: str) -> list[Message]:
    """`messages` with `prompt` as a system message after the leading ones (before the first user turn)."""
    out = list(messages)
    at = 0
    while at < len(out) and isinstance(out[at], SystemMessage):
        at += 1
    out.insert(at, SystemMessage(prompt))
    return out
