"""``--json``: every command that prints results prints one JSON document instead, of a stable shape.

A document is a JSON object whose first key is ``"format": "agentkit.<command>/<version>"`` (the shapes
are written down in docs/cli.md). A version changes only when a key is removed or changes meaning; new
keys may appear in any release, so readers ignore the keys they do not know. When a command fails
(status 1 or 2 without a result of its own), ``--json`` prints the error document instead::

    {"format": "agentkit.error/1", "command": "call", "status": 2, "error": "the message stderr shows"}

A subcommand opts in with `add_json_flag` on its parser and prints its result with `print_json`.
"""

from __future__ import annotations as _annotations

import argparse
import json
import sys
from collections.abc import Mapping
from typing import Any

from .._text import json_text
from .._unicode import escaped

__all__ = ["ERROR_FORMAT", "add_json_flag", "document", "dump", "error_document", "print_json", "wants_json"]

ERROR_FORMAT = "agentkit.error/1"


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    """Give `parser` the ``--json`` flag (``args.json``), with the help text every command shares."""
    parser.add_argument(
        "--json", action="store_true", help="print one JSON document instead of text (its shape: docs/cli.md)"
    )


def wants_json(argv: list[str]) -> bool:
    """Whether ``--json`` is among the arguments (known before parsing, so usage errors can honour it)."""
    return "--json" in argv[: argv.index("--")] if "--" in argv else "--json" in argv


def document(command: str, data: Mapping[str, Any], *, version: int = 1) -> dict[str, Any]:
    """``{"format": "agentkit.<command>/<version>", **data}``; a `data` carrying its own ``format`` must agree."""
    name = f"agentkit.{command}/{version}"
    given = data.get("format", name)
    if given != name:
        raise ValueError(f"the {command!r} document says format {given!r}, expected {name!r}")
    return {"format": name, **{k: v for k, v in data.items() if k != "format"}}


def error_document(command: str | None, status: int, message: str) -> dict[str, Any]:
    """The document ``--json`` prints for a command that failed (the message is stderr's, without the prefix)."""
    return {"format": ERROR_FORMAT, "command": command, "status": status, "error": message}


def print_json(command: str, data: Mapping[str, Any], *, version: int = 1) -> None:
    """Print `data` as the `command`'s document on stdout (indented, UTF-8; anything else as text)."""
    dump(document(command, data, version=version))


def dump(value: Any) -> None:
    """`value` as indented JSON on stdout, any depth, non-ASCII kept, a lone surrogate as its escape."""
    try:
        text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    except RecursionError:  # data nested thousands deep (a model's arguments): one line, made iteratively
        text = json_text(value, ensure_ascii=False)
    sys.stdout.write(escaped(text) + "\n")
