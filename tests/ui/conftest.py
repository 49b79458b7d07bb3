"""Fixtures for the tests that use real clients: node with the `ai` package, and headless Chromium."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "js"
ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM = Path("/usr/bin/chromium")


def node() -> str:
    """The node binary, with the pinned `ai` package installed in js/ (the set-up below installs it)."""
    found = shutil.which("node")
    if found is None or not (JS / "node_modules" / "ai" / "package.json").exists():
        pytest.fail("these tests read our streams with the ai npm package: run `npm ci --prefix js` (Node.js 20+)")
    return found


def _js_installed() -> bool:
    """Whether js/node_modules holds what js/package-lock.json pins (npm writes its own copy of the lock)."""
    installed = JS / "node_modules" / ".package-lock.json"
    return installed.exists() and installed.stat().st_mtime >= (JS / "package-lock.json").stat().st_mtime


def _install(what: str, command: list[str], say: Callable[[str], None]) -> None:
    say(f"[ui tests] installing {what}: {' '.join(command)}")
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800, check=False)
    if done.returncode != 0:
        raise pytest.UsageError(f"installing {what} failed ({' '.join(command)}):\n{done.stdout}{done.stderr}")


def pytest_collection_finish(session: pytest.Session) -> None:
    """Install what the selected UI tests need, once, before the first test (outside any test's timeout).

    The README's test command must pass on a fresh machine by itself: the `ai` npm package (from
    js/package-lock.json, with the machine's Node.js 20+) and Debian's Chromium (as root, with apt-get)
    are installed here when missing; elsewhere the error says what to install.
    """
    if session.config.option.collectonly:
        return
    wants_node = any(getattr(getattr(item, "module", None), "node", None) is node for item in session.items)
    wants_browser = any("browser" in getattr(item, "fixturenames", ()) for item in session.items)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")

    def say(message: str) -> None:
        if reporter is not None:
            reporter.write_line(message)

    if wants_node and not _js_installed():
        npm = shutil.which("npm")
        if npm is None or shutil.which("node") is None:
            raise pytest.UsageError("the UI tests need Node.js 20+ with npm (Debian: apt-get install -y nodejs npm)")
        _install("the pinned npm packages", [npm, "ci", "--prefix", str(JS), "--no-audit", "--no-fund"], say)
    if wants_browser and not CHROMIUM.exists():
        apt = shutil.which("apt-get")
        if apt is None or os.geteuid() != 0:
            raise pytest.UsageError(
                "the browser test needs Debian's Chromium: run `apt-get install -y chromium` as root"
            )
        _install("the package index", [apt, "update", "-q"], say)
        _install("Debian's Chromium", [apt, "install", "-y", "-q", "chromium"], say)


def split_url(url: str) -> tuple[str, str]:
    """The playground's printed URL as its base (``http://host:port/``) and its token."""
    base, _, query = url.partition("?token=")
    return base, query


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
    """`python -m agentkit.playground tests/ui/demo_agent.py:agent --port 0`, running; its URL (token included)."""
    yield from _playground("tests/ui/demo_agent.py:agent", tmp_path_factory)


@pytest.fixture(scope="session")
def output_playground_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The playground of an agent with a typed answer in output-tool mode (tests/ui/output_agent.py)."""
    yield from _playground("tests/ui/output_agent.py:tool_agent", tmp_path_factory)


def _playground(target: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    log = tmp_path_factory.mktemp("playground") / "stderr.txt"
    with log.open("w") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "agentkit.playground", target, "--port", "0"],
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
