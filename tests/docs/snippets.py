"""Run the ```python blocks of one Markdown page, in order, in one namespace: ``python -m tests.docs.snippets PAGE``.

A block preceded by ``<!-- not-run: REASON -->`` (on the line right before its fence) is only compiled: that
is for blocks that need a network, an API key or a real vendor. Blocks may ``await`` at top level, as in
``python -m asyncio``; the page's blocks share one event loop. Sockets may reach 127.0.0.1 only, and model
clients refuse non-local URLs, so a page that tries the network fails instead of calling out. The blocks run
as a module named ``__docs__``: an ``if __name__ == "__main__":`` part (a server's entry point) does not run.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import re
import socket
import sys
import textwrap
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FENCE = re.compile(r"^(?P<indent>[ \t]*)```python[^\n]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.S | re.M)
NOT_RUN = re.compile(r"<!--\s*not-run:\s*(?P<reason>[^>]*?)\s*-->\s*$")
LOCAL = ("127.0.0.1", "::1", "localhost")


@dataclass(frozen=True)
class Block:
    """One ```python block: where it starts (1-based line of its first code line), its code, why it is not run."""

    line: int
    code: str
    not_run: str | None


def blocks(text: str) -> list[Block]:
    """The page's python blocks in order (indented fences inside lists included, their indent removed)."""
    found = []
    for match in FENCE.finditer(text):
        fence_line = text.count("\n", 0, match.start())
        before = text[: match.start()].rstrip(" \t").rsplit("\n", 2)
        previous = before[-2] if len(before) > 1 else ""
        marker = NOT_RUN.search(previous.strip())
        if "not-run" in previous and marker is None:
            raise ValueError(f"line {fence_line}: write the marker as <!-- not-run: REASON -->, got {previous!r}")
        reason = marker.group("reason") if marker else None
        if marker is not None and not reason:
            raise ValueError(f"line {fence_line}: <!-- not-run: --> needs a reason (what the block needs)")
        found.append(Block(fence_line + 2, textwrap.dedent(match.group("body")), reason))
    return found


def compile_block(block: Block, filename: str) -> Any:
    """The block compiled so tracebacks name the page's own line numbers (top-level await allowed)."""
    source = "\n" * (block.line - 1) + block.code
    return compile(source, filename, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)


def _local_only() -> None:
    """Sockets may connect to the loopback interface (and Unix sockets) only."""
    connect, connect_ex = socket.socket.connect, socket.socket.connect_ex

    def check(sock: socket.socket, address: Any) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in LOCAL:
            raise ConnectionRefusedError(f"docs snippets may not reach the network (tried {address[0]!r})")

    def guarded_connect(self: socket.socket, address: Any) -> None:
        check(self, address)
        connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: Any) -> int:
        check(self, address)
        return connect_ex(self, address)

    socket.socket.connect = guarded_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = guarded_connect_ex  # type: ignore[method-assign]


def run_page(path: Path) -> None:
    """Run every runnable block of `path` in one namespace and compile the others; raises on the first failure."""
    from agentkit.models import set_allow_model_requests

    _local_only()
    set_allow_model_requests(False)
    # a real module, so pydantic, dataclasses and get_type_hints find what the blocks define
    page = types.ModuleType("__docs__")
    sys.modules[page.__name__] = page
    namespace = page.__dict__
    loop = asyncio.new_event_loop()
    try:
        for block in blocks(path.read_text()):
            code = compile_block(block, str(path))
            if block.not_run is not None:
                continue
            if code.co_flags & inspect.CO_COROUTINE:
                loop.run_until_complete(eval(code, namespace))
            else:
                exec(code, namespace)
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


if __name__ == "__main__":
    run_page(Path(sys.argv[1]).resolve())
