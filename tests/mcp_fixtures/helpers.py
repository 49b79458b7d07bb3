"""Helpers shared by the MCP tests: server commands, child processes, an mcp session in its own task."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
TIME_SERVER_ARGS = ["-m", "mcp_server_time", "--local-timezone", "UTC"]
FIXTURE_TARGET = "tests.mcp_fixtures.registry:tools"
FIXTURE_SERVER_ARGS = ["-m", "agentkit.mcp", "serve", FIXTURE_TARGET]


def child_pids(marker: str) -> list[int]:
    """Pids of this process's children whose command line contains `marker` (Linux /proc)."""
    me = os.getpid()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == me and marker in cmdline:
            found.append(int(entry.name))
    return found


def kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


@contextlib.asynccontextmanager
async def session_in_task(connect: Callable[[], Any]) -> AsyncIterator[Any]:
    """An initialized official `mcp.ClientSession`, owned by a task of its own.

    anyio scopes must be left in the task that entered them; pytest-asyncio runs a fixture's setup and
    teardown in different tasks, so the session lives in a helper task until the block ends.
    """
    from mcp import ClientSession

    ready: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    stop = asyncio.Event()

    async def run() -> None:
        try:
            async with connect() as streams, ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                ready.set_result(session)
                await stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    task = asyncio.get_running_loop().create_task(run())
    try:
        yield await asyncio.wait_for(asyncio.shield(ready), 30)
    finally:
        stop.set()
        await asyncio.wait_for(task, 15)


def python() -> str:
    return sys.executable


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def start_http_server(target: str = FIXTURE_TARGET, *extra: str) -> tuple[Any, str]:
    """`python -m agentkit.mcp serve TARGET --transport http` on a free loopback port: (process, url)."""
    import socket
    import subprocess

    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "agentkit.mcp", "serve", target, "--transport", "http", "--port", str(port), *extra],
        cwd=ROOT,
        stderr=subprocess.PIPE,
    )
    deadline = asyncio.get_running_loop().time() + 30
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"the HTTP server exited: {process.stderr.read().decode() if process.stderr else ''}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return process, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            if asyncio.get_running_loop().time() > deadline:
                process.kill()
                raise
            await asyncio.sleep(0.05)


def stop(process: Any) -> None:
    process.kill()
    process.wait(10)
    if process.stderr is not None:
        process.stderr.close()
