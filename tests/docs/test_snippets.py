"""Every ```python block of README.md and docs/ runs as a file, as a reader runs it (``<!-- not-run -->``: compiles).

Issue 22 §5.1: 41 of 89 blocks used top-level ``await``, so a reader who saved one as a file got a
SyntaxError. Each block is now a program (see tests/docs/snippets.py and CONTRIBUTING.md): run in a fresh
process as ``__main__``, compiled as a file is, so top-level ``await`` fails the page.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .snippets import CONTINUES, blocks, programs, run_page

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


def _run(page: Path, tmp_path: Path) -> str | None:
    env = {k: v for k, v in os.environ.items() if k not in _KEYS}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env["AGENTKIT_RUN_STORE"] = str(tmp_path / "runs.sqlite3")
    return run_page(page, cwd=tmp_path, env=env)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_page_snippets_run(page: Path, tmp_path: Path) -> None:
    failed = _run(page, tmp_path)
    assert failed is None, f"a python block of {page.relative_to(ROOT)} failed as a file: {failed[-4000:]}"


def test_a_block_is_a_file_not_a_repl(tmp_path: Path) -> None:
    """Regression: blocks ran with top-level ``await`` allowed, which no file allows."""
    page = tmp_path / "page.md"
    page.write_text("```python\nimport asyncio\nawait asyncio.sleep(0)\n```\n")
    with pytest.raises(SyntaxError) as info:
        _run(page, tmp_path)
    assert info.value.lineno == 3 and info.value.filename == str(page)
    program = "import asyncio\n\nasync def main():\n    await asyncio.sleep(0)\n\nasyncio.run(main())\n"
    page.write_text(f"```python\n{program}```\n")
    assert _run(page, tmp_path) is None
    script = 'assert __name__ == "__main__"\nimport sys\nassert sys.argv[0].endswith("page.md")\n'
    page.write_text(f"```python\n{script}```\n")
    assert _run(page, tmp_path) is None  # run as a script is run


def test_a_block_sees_only_what_it_continues(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Page\n\n```python\nx = 1\n```\n\n```python\nassert x == 1\n```\n")
    with pytest.raises(ValueError, match="page.md:8: the block uses x from an earlier block"):
        _run(page, tmp_path)  # a reader saving the second block alone gets a NameError
    page.write_text(f"# Page\n\n```python\nx = 1\n```\n\n```python\n{CONTINUES}\nassert x == 1\n```\n")
    assert _run(page, tmp_path) is None
    assert [[b.line for b in p] for p in programs(page.read_text())] == [[4, 8]]


def test_the_runner_fails_a_broken_block_and_compiles_not_run_ones(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n```python\nx = 1\n```\n\n<!-- not-run: needs an API key -->\n```python\n"
        f"{CONTINUES}\nraise SystemExit(3)\n```\n"
        f"\n- item\n\n    ```python\n    {CONTINUES}\n    assert x == 1\n    y = 2\n    ```\n"
    )
    assert [(b.line, b.not_run) for b in blocks(page.read_text())] == [(4, None), (9, "needs an API key"), (16, None)]
    assert _run(page, tmp_path) is None  # the not-run block is compiled, not run; the program goes on without it
    page.write_text(page.read_text() + f"\n```python\n{CONTINUES}\nassert y == 3\n```\n")
    failed = _run(page, tmp_path)
    assert failed is not None and 'page.md", line 23' in failed and "AssertionError" in failed, failed
    page.write_text("<!-- not-run: needs a key -->\n```python\ndef broken(:\n```\n")
    with pytest.raises(SyntaxError):
        _run(page, tmp_path)


def test_a_first_block_cannot_continue(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="nothing above"):
        blocks(f"```python\n{CONTINUES}\npass\n```\n")


def test_the_runner_blocks_the_network(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("```python\nimport socket\nsocket.create_connection(('192.0.2.1', 443), timeout=5)\n```\n")
    failed = _run(page, tmp_path)
    assert failed is not None and "may not reach the network" in failed, failed


def test_a_marker_needs_a_reason() -> None:
    with pytest.raises(ValueError, match="needs a reason"):
        blocks("<!-- not-run: -->\n```python\npass\n```\n")


def test_a_block_borrowing_a_name_must_say_it_continues(tmp_path: Path) -> None:
    """A name used only inside a function would pass a run, and fail the reader who calls the function."""
    page = tmp_path / "page.md"
    first, second = "def weather():\n    return 1\n", "def test_weather():\n    assert weather()\n"
    page.write_text(f"```python\n{first}```\n\n```python\n{second}```\n")
    with pytest.raises(ValueError, match="uses weather from an earlier block"):
        _run(page, tmp_path)
    page.write_text(page.read_text().replace("```python\ndef test_", f"```python\n{CONTINUES}\ndef test_"))
    assert _run(page, tmp_path) is None
