"""The README's example runs as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_python_example_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "the README has a python example"
    result = subprocess.run([sys.executable, "-c", blocks[0]], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "'required': ['city']" in result.stdout and "temperature=21.5" in result.stdout


def test_readme_has_exactly_two_setup_commands() -> None:
    setup = README.read_text().split("## Set up", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```bash\n(.*?)```", setup, flags=re.S)
    assert [c.strip() for c in commands] == [
        "python -m pip install -e . && python examples/quickstart.py",
        'python -m pip install -e ".[dev]" && python -m pytest',
    ]
    ci = (Path(__file__).resolve().parents[2] / ".ci" / "run").read_text()
    assert "python -m pytest" in ci  # CI runs the README's test command
