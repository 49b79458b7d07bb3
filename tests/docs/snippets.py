"""Run a Markdown page's ```python blocks as a reader would, each as a file: ``python -m tests.docs.snippets PAGE``.

The rule, for every page (CONTRIBUTING.md, "Code in the docs runs"): a block is a program, run as
``python block.py`` runs it: module ``__main__``, no top-level ``await`` (``asyncio.run(main())``, or the
sync API), nothing defined by another block. A block whose first line is the comment
``# continues the example above`` is the previous block's program, continued: it runs appended to
it (the chain of blocks it continues, in order), as a reader who pastes both into one file would.

A block preceded by ``<!-- not-run: REASON -->`` (on the line right before its fence) is only compiled:
that is for blocks that need a network, an API key or a real vendor; a block continuing one runs
without it. Sockets may reach 127.0.0.1 only, and model clients refuse non-local URLs, so a page that
tries the network fails instead of calling out. stdin is empty (a stdio server a block starts ends).
"""

from __future__ import annotations

import ast
import re
import socket
import subprocess
import sys
import textwrap
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FENCE = re.compile(r"^(?P<indent>[ \t]*)```python[^\n]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.S | re.M)
NOT_RUN = re.compile(r"<!--\s*not-run:\s*(?P<reason>[^>]*?)\s*-->\s*$")
CONTINUES = "# continues the example above"
LOCAL = ("127.0.0.1", "::1", "localhost")


@dataclass(frozen=True)
class Block:
    """One ```python block: where it starts (1-based line of its first code line), its code, why it is not run."""

    line: int
    code: str
    not_run: str | None

    @property
    def continues(self) -> bool:
        """Whether the block goes on from the previous one (its first line says so)."""
        return self.code.lstrip().startswith(CONTINUES)


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
    if found and found[0].continues:
        raise ValueError(f"line {found[0].line}: the page's first block says {CONTINUES!r}, with nothing above")
    return found


def programs(text: str) -> list[list[Block]]:
    """The page's programs: each block that starts one, with the blocks that continue it, in order."""
    out: list[list[Block]] = []
    for block in blocks(text):
        if block.continues:
            out[-1].append(block)
        else:
            out.append([block])
    return out


def source(program: list[Block]) -> str:
    """The program's runnable blocks as one file, each at its own line of the page (tracebacks name them)."""
    lines: list[str] = []
    for block in program:
        if block.not_run is None:
            lines += [""] * (block.line - 1 - len(lines)) + block.code.splitlines()
    return "\n".join(lines) + "\n"


def compile_block(block: Block, filename: str) -> Any:
    """The block compiled as a file is (no top-level await), so errors name the page's own line numbers."""
    return compile("\n" * (block.line - 1) + block.code, filename, "exec", dont_inherit=True)


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


def _names(code: str) -> tuple[set[str], set[str]]:
    """The names `code` reads, and those it binds anywhere (assignments, imports, definitions, parameters)."""
    read: set[str] = set()
    bound: set[str] = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return read, bound


def check_page(path: Path) -> int:
    """Compile every block of `path` as a file; the number of programs.

    Raises:
        SyntaxError: a block is not a valid file (top-level ``await``), naming the page's line.
        ValueError: a block that starts a program uses a name only an earlier block defines: a reader who
            saves it alone gets a NameError, so it must say it continues (even inside a function body).
    """
    text = path.read_text()
    earlier: set[str] = set()
    for block in blocks(text):
        compile_block(block, str(path))
        read, bound = _names(block.code)
        borrowed = sorted((read & earlier) - bound)
        if borrowed and not block.continues:
            raise ValueError(
                f"{path}:{block.line}: the block uses {', '.join(borrowed)} from an earlier block: "
                f"start it with {CONTINUES!r}, or define what it uses"
            )
        earlier |= bound
    return len(programs(text))


def run_program(path: Path, index: int) -> None:
    """Run the page's program number `index` as ``python program.py`` would, in this (fresh) process."""
    from agentkit.models import set_allow_model_requests

    program = programs(path.read_text())[index]
    code = compile(source(program), str(path), "exec", dont_inherit=True)
    _local_only()
    set_allow_model_requests(False)
    main = types.ModuleType("__main__")  # a real module, so pickle, pydantic and get_type_hints find its names
    main.__file__ = str(path)
    sys.modules["__main__"] = main
    sys.argv = [str(path)]
    sys.path[0] = "."
    exec(code, main.__dict__)


def run_page(path: Path, *, cwd: Path | None = None, env: dict[str, str] | None = None) -> str | None:
    """Compile every block of `path`, then run each program in a fresh process; the first failure's output."""
    check_page(path)
    for index, program in enumerate(programs(path.read_text())):
        if all(block.not_run is not None for block in program):
            continue
        done = subprocess.run(
            [sys.executable, "-m", "tests.docs.snippets", str(path), str(index)],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=110,
            check=False,
        )
        if done.returncode != 0:
            return f"the program starting at line {program[0].line} failed (status {done.returncode}):\n{done.stderr}"
    return None


if __name__ == "__main__":
    page = Path(sys.argv[1]).resolve()
    if len(sys.argv) > 2:
        run_program(page, int(sys.argv[2]))
    else:
        failed = run_page(page)
        if failed is not None:
            sys.exit(failed)
