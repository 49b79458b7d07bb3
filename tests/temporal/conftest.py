"""The Temporal tests' dev server (one per session), client, ledger and worker processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentkit.temporal import DevServer

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def temporal_address() -> Iterator[str]:
    with DevServer() as server:
        yield server.address


@pytest.fixture
async def client(temporal_address: str) -> AsyncIterator[Any]:
    from temporalio.client import Client

    yield await Client.connect(temporal_address)


@pytest.fixture
def ledger(tmp_path: Path) -> str:
    return str(tmp_path / "ledger.txt")


class Workers:
    """Worker processes (``python -m tests.temporal.helpers worker ...``), killed and closed at the end."""

    def __init__(self) -> None:
        self.processes: list[subprocess.Popen[str]] = []

    def start(self, address: str, which: str, ledger: str, slow: float = 0) -> subprocess.Popen[str]:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.temporal.helpers", "worker", address, which, ledger, str(slow)],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        self.processes.append(process)
        assert process.stdout is not None
        line = process.stdout.readline()
        assert "worker ready" in line, line + process.stdout.read()
        return process

    def close(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.kill()
                process.wait(10)
            assert process.stdout is not None
            process.stdout.close()


@pytest.fixture
def workers() -> Iterator[Workers]:
    started = Workers()
    try:
        yield started
    finally:
        started.close()


def wait_for(predicate: Any, timeout: float = 30) -> None:
    """Poll `predicate` until it holds (a test's own bound: fails with "timed out")."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)
