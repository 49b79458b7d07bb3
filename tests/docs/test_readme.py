"""The README's example runs as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_python_example_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "the README has a python example"
    result = subprocess.run([sys.executable, "-c", blocks[0]], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "'required': ['city']" in result.stdout and "temperature=21.5" in result.stdout


def test_the_readme_example_ends_on_an_answer_that_reads_well() -> None:
    """Regression (issue 22 §5.2): it ended on escaped JSON with a random city (``"{\\"city\\":\\"dafjlly\\"``)."""
    block = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)[0]
    result = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True, timeout=120)
    answer = result.stdout.splitlines()[-1]
    assert answer == 'weather: {"city": "Paris", "temperature": 21.5}'
    assert f"# {answer}" in block  # the block shows what it prints


def test_the_readme_says_where_to_go_next() -> None:
    after = README.read_text().split("## In 20 lines", 1)[1].split("\n## ", 1)[0].split("```", 2)[2]
    assert "Where next" in after
    for link in ("docs/tools.md", "docs/agents.md", "docs/playground.md"):
        assert f"]({link})" in after, link


@pytest.mark.parametrize(
    ("page", "prefix"), [(README, "docs/"), (README.parent / "docs" / "index.md", "")], ids=["README", "docs home"]
)
def test_a_tour_of_what_is_inside(page: Path, prefix: str) -> None:
    """Regression (issue 22 §5.3): neither mentioned the playground, UI streams, structured output or the examples."""
    text = page.read_text()
    tour = text.split("## What is inside", 1)[1]
    for doc in ("output.md", "ui.md", "playground.md", "cli.md", "mcp.md", "testing.md"):
        assert f"]({prefix}{doc})" in tour, doc
    examples = sorted(p.name for p in (README.parent / "examples").glob("*.py"))
    missing = [name for name in examples if f"`{name}`" not in tour]
    assert not missing, f"examples not in the tour: {missing}"


def test_the_docs_say_once_how_to_run_their_blocks() -> None:
    home = (README.parent / "docs" / "index.md").read_text()
    assert "Every block is a program: save it as a file and run it with\n`python`" in home
    assert "# continues the example above" in home and "# continues the example above" in README.read_text()


def test_readme_has_exactly_two_setup_commands() -> None:
    setup = README.read_text().split("## Set up", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```bash\n(.*?)```", setup, flags=re.S)
    assert [c.strip() for c in commands] == [
        "python -m pip install -e . && python examples/quickstart.py",
        'python -m pip install -e ".[dev]" && python -m pytest',
    ]
    ci = (Path(__file__).resolve().parents[2] / ".ci" / "run").read_text()
    assert "python -m pytest" in ci  # CI runs the README's test command
