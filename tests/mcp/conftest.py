"""Install the npm MCP peers (the TypeScript SDK, server-everything) once before tests that run them."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from .fixtures.helpers import JS


def _js_installed() -> bool:
    """Whether js/node_modules holds what js/package-lock.json pins (npm writes its own copy of the lock)."""
    installed = JS / "node_modules" / ".package-lock.json"
    return installed.exists() and installed.stat().st_mtime >= (JS / "package-lock.json").stat().st_mtime


def pytest_collection_finish(session: pytest.Session) -> None:
    """The README's test command passes on a fresh machine: `npm ci --prefix js` runs here when needed."""
    if session.config.option.collectonly:
        return
    if not any(getattr(getattr(item, "module", None), "NEEDS_NODE", False) for item in session.items):
        return
    if _js_installed():
        return
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        raise pytest.UsageError("the MCP peer tests need Node.js 20+ with npm (Debian: apt-get install -y nodejs npm)")
    command = [npm, "ci", "--prefix", str(JS), "--no-audit", "--no-fund"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800, check=False)
    if done.returncode != 0:
        raise pytest.UsageError(f"installing the pinned npm packages failed ({' '.join(command)}):\n{done.stderr}")
