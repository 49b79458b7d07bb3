"""Every ```python block of README.md and docs/ runs (or, marked ``<!-- not-run: ... -->``, compiles)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .snippets import blocks

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(path for path in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")] if "```python" in path.read_text())
# keys a block could authenticate with: removed, so a block that slips past the guards still cannot
_KEYS = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "MISTRAL_API_KEY",
    "CO_API_KEY",
    "COHERE_API_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
)


def _run(page: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in _KEYS}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env["AGENTKIT_RUN_STORE"] = str(tmp_path / "runs.sqlite3")
    return subprocess.run(
        [sys.executable, "-m", "tests.docs.snippets", str(page)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=110,
    )


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_page_snippets_run(page: Path, tmp_path: Path) -> None:
    result = _run(page, tmp_path)
    assert result.returncode == 0, f"a python block of {page.relative_to(ROOT)} failed:\n{result.stderr[-4000:]}"


def test_the_runner_fails_a_broken_block_and_compiles_not_run_ones(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n```python\nx = 1\n```\n\n<!-- not-run: needs an API key -->\n```python\nraise SystemExit(3)\n```\n"
        "\n- item\n\n    ```python\n    assert x == 1\n    y = 2\n    ```\n"
    )
    assert [(b.line, b.not_run) for b in blocks(page.read_text())] == [(4, None), (9, "needs an API key"), (15, None)]
    assert _run(page, tmp_path).returncode == 0
    page.write_text(page.read_text() + "\n```python\nimport asyncio\nawait asyncio.sleep(0)\nassert y == 3\n```\n")
    failed = _run(page, tmp_path)
    assert failed.returncode != 0 and 'page.md", line 22' in failed.stderr, failed.stderr
    page.write_text("<!-- not-run: needs a key -->\n```python\ndef broken(:\n```\n")
    assert "SyntaxError" in _run(page, tmp_path).stderr


def test_the_runner_blocks_the_network(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("```python\nimport socket\nsocket.create_connection(('192.0.2.1', 443), timeout=5)\n```\n")
    result = _run(page, tmp_path)
    assert result.returncode != 0 and "may not reach the network" in result.stderr, result.stderr


def test_a_marker_needs_a_reason() -> None:
    with pytest.raises(ValueError, match="needs a reason"):
        blocks("<!-- not-run: -->\n```python\npass\n```\n")
