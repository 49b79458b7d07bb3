"""An exception as the message a command prints, in the command line's own words, and its exit status.

The library's messages name Python arguments (``pass aliases=True``, ``Output(..., mode='tool')``); on
the command line the same advice is a flag (``--aliases``, ``--output-mode tool``). Statuses: 2 for usage
(the command line or its target is wrong), 1 for anything else that failed.
"""

from __future__ import annotations as _annotations

import re
import sys
from collections.abc import Callable

from ..exceptions import (
    AgentkitError,
    CLIError,
    InvalidToolNameError,
    InvalidToolNamesError,
    MCPLoadError,
    StrictSchemaError,
)

__all__ = ["USAGE", "failure", "in_cli_words", "say"]

USAGE = 2
"""The exit status of a usage error (argparse's own)."""

_MAX_LINES = 12
"""Lines of a multi-line message shown (a definition error lists every problem of a function)."""


def _active_tools(match: re.Match[str]) -> str:
    return "--active-tools " + " ".join(re.findall(r"'([^']*)'", match.group(1)))


# Python-API advice as the flag that does the same (the first group of each pattern is kept where used)
_WORDS: tuple[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]], ...] = (
    (re.compile(r"tool_choice=('[^']*')"), r"--tool-choice \1"),
    (re.compile(r"active_tools=\[([^\]]*)\]"), _active_tools),
    (re.compile(r"\badd it to active_tools\b"), "add it to --active-tools"),
    (
        re.compile(
            r"Use Output\(\.\.\., mode='tool'\) \(an output tool\) or mode='prompted' \(.*?\), or mode='auto'\."
        ),
        "Use --output-mode tool (an output tool), prompted (the schema in the instructions) or auto.",
    ),
    (
        re.compile(r"pass model='vendor:model-name' \(or 'test'\), or use agent\.override\(model=\.\.\.\)\."),
        "pass -m vendor:model-name (or -m test).",
    ),
)


def in_cli_words(message: str) -> str:
    """`message` with the Python-API advice it gives replaced by the flags that do the same."""
    for pattern, replacement in _WORDS:
        message = pattern.sub(replacement, message)
    return message


def _names(exc: InvalidToolNameError) -> str:
    if isinstance(exc, InvalidToolNamesError):
        lines = "\n".join(f"  - {p.key!r} breaks {p.vendor}'s rule {p.rule}" for p in exc.problems)
        return (
            f"{len(exc.problems)} tool keys break vendor name rules:\n{lines}\n"
            "Rename them in the registry, or pass --aliases to send deterministic aliases."
        )
    return (
        f"tool key {exc.key!r} breaks {exc.vendor}'s name rule {exc.rule}: rename it in the registry, or pass "
        "--aliases to send a deterministic alias (mapped back when the model calls it)"
    )


def _strict(exc: StrictSchemaError) -> str:
    shown = "\n".join(f"  - {p}" for p in exc.problems[:10])
    more = f"\n  ... and {len(exc.problems) - 10} more" if len(exc.problems) > 10 else ""
    return (
        f"tool {exc.key!r} is forced strict, but {exc.vendor}'s strict mode refuses its schema:\n{shown}{more}\n"
        "Leave out --strict to send it non-strict, or change the schema."
    )


def _bounded(text: str) -> str:
    lines = text.splitlines() or [""]
    if len(lines) <= _MAX_LINES:
        return "\n".join(lines)
    return "\n".join([*lines[:_MAX_LINES], f"  ... and {len(lines) - _MAX_LINES} more line(s)"])


def failure(exc: BaseException) -> tuple[str, int]:
    """The message to print for `exc` (no ``agentkit CMD: error:`` prefix) and the exit status."""
    if isinstance(exc, CLIError):
        return exc.message, exc.status
    if isinstance(exc, MCPLoadError):  # the target cannot be loaded: the command line is wrong
        return str(exc), USAGE
    if isinstance(exc, InvalidToolNameError):
        return _names(exc), 1
    if isinstance(exc, StrictSchemaError):
        return _strict(exc), 1
    if isinstance(exc, AgentkitError):
        return _bounded(in_cli_words(str(exc))), 1
    first = (str(exc).splitlines() or [""])[0]
    return (f"{type(exc).__name__}: {first}" if first else type(exc).__name__), 1


def say(command: str | None, message: str) -> None:
    """Print `message` as the command's error line on stderr: ``agentkit COMMAND: error: ...``."""
    print(f"agentkit{f' {command}' if command else ''}: error: {message}", file=sys.stderr)
