"""Fixtures for the tests that use real clients: node with the `ai` package, and headless Chromium."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "js"
ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM = Path("/usr/bin/chromium")


def node() -> str:
    """The node binary, with the pinned `ai` package installed in js/ (as .ci/run does)."""
    found = shutil.which("node")
    if found is None or not (JS / "node_modules" / "ai" / "package.json").exists():
        pytest.fail("these tests read our streams with the ai npm package: run `npm ci --prefix js` (Node.js 20+)")
    return found


def _first_line(process: subprocess.Popen[str], timeout: float) -> str:
    stdout = process.stdout
    assert stdout is not None
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout)  # a deadline for a condition (the server printed its URL), not a sleep
    return lines[0] if lines else ""


@pytest.fixture(scope="session")
def playground_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`python -m agentkit.playground tests/ui/demo_agent.py:agent --port 0`, running; its URL."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    log = tmp_path_factory.mktemp("playground") / "stderr.txt"
    with log.open("w") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "agentkit.playground", "tests/ui/demo_agent.py:agent", "--port", "0"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
    try:
        line = _first_line(process, timeout=60)
        if " at http" not in line:
            raise RuntimeError(f"agentkit dev did not start: {line!r} {log.read_text()}")
        yield line.split(" at ", 1)[1].split()[0]
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
