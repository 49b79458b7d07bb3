"""The distribution as a user installs it: its name, metadata, extras and the files the wheel ships."""

from __future__ import annotations

import email
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    """The wheel, built from this checkout without network (hatchling is a dev dependency)."""
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (path,) = out.glob("*.whl")
    return zipfile.ZipFile(path)


def test_the_wheel_ships_the_package_and_nothing_else(wheel: zipfile.ZipFile) -> None:
    """Regression: the local LLM build scripts and their chat template shipped inside the package."""
    names = wheel.namelist()
    outside = [n for n in names if not n.startswith(("agentkit/", "agentkit_tools-0.1.0.dist-info/"))]
    assert outside == []
    assert not [n for n in names if re.search(r"local_llm|\.jinja$|/_data/|tests/|examples/", n)]
    assert "agentkit/py.typed" in names and "agentkit/__init__.py" in names
    assert "agentkit_tools-0.1.0.dist-info/licenses/LICENSE" in names
    # agentkit eval's BFCL questions ship with their license and source
    data = "agentkit/evals/data/bfcl/"
    shipped = {f"{data}{name}" for name in ("simple_python.jsonl.gz", "irrelevance.jsonl.gz", "LICENSE", "SOURCE.txt")}
    assert shipped <= set(names)


def test_the_metadata_a_user_sees(wheel: zipfile.ZipFile) -> None:
    """Regression: ``pip install agentkit`` installed an unrelated project that owns that name."""
    metadata = email.message_from_bytes(wheel.read("agentkit_tools-0.1.0.dist-info/METADATA"))
    assert metadata["Name"] == "agentkit-tools"
    assert metadata["License-Expression"] == "MIT"
    assert metadata["Requires-Python"] == ">=3.10"
    classifiers = metadata.get_all("Classifier") or []
    assert [c for c in classifiers if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)] == [
        f"Programming Language :: Python :: 3.{minor}" for minor in (10, 11, 12, 13)
    ]
    urls = dict(value.split(", ", 1) for value in metadata.get_all("Project-URL") or [])
    assert set(urls) == {"Homepage", "Documentation", "Repository", "Issues", "Changelog"}
    assert (ROOT / "CHANGELOG.md").is_file() and (ROOT / "CONTRIBUTING.md").is_file()


def _requirement_names(extra: str) -> set[str]:
    """The distributions an extra pulls in, its self-references expanded."""
    names: set[str] = set()
    for requirement in PYPROJECT["project"]["optional-dependencies"][extra]:
        name = re.split(r"[\[<>=!~; ]", requirement, maxsplit=1)[0]
        if name == "agentkit-tools":
            for inner in requirement.split("[", 1)[1].rstrip("]").split(","):
                names |= _requirement_names(inner.strip())
        else:
            names.add(name.lower())
    return names


def _third_party_imports(path: Path) -> set[str]:
    found = re.findall(r"^\s*(?:from|import)\s+([a-zA-Z_][\w]*)", path.read_text(), flags=re.M)
    return set(found) - set(sys.stdlib_module_names) - {"agentkit", "dev", "__future__"}


IMPORT_TO_DISTRIBUTION = {"pydantic": "pydantic", "hypothesis": "hypothesis", "mcp": "mcp", "openai": "openai"}


def test_the_all_extra_covers_what_the_examples_import() -> None:
    """Regression: examples/test_with_testmodel.py needs hypothesis, which ``[all]`` did not install."""
    core = {re.split(r"[<>=!~; ]", r, maxsplit=1)[0].lower() for r in PYPROJECT["project"]["dependencies"]}
    available = core | _requirement_names("all")
    for example in sorted((ROOT / "examples").glob("*.py")):
        for module in _third_party_imports(example):
            assert IMPORT_TO_DISTRIBUTION.get(module, module) in available, (example.name, module)
    # what agentkit.testing imports lazily for check_tool_contract
    assert {"hypothesis", "hypothesis-jsonschema"} <= available


def test_install_hints_name_the_distribution() -> None:
    """Regression: messages and docs said ``pip install 'agentkit[mcp]'``, which installs another project."""
    wrong = re.compile(r"pip install ['\"]?agentkit(\[|['\"]|\s|$)")
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for folder in ("agentkit", "docs", "examples")
        for path in sorted((ROOT / folder).rglob("*"))
        if path.suffix in (".py", ".md")
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if wrong.search(line)
    ]
    offenders += [
        f"README.md:{n}"
        for n, line in enumerate((ROOT / "README.md").read_text().splitlines(), 1)
        if wrong.search(line)
    ]
    assert offenders == []
