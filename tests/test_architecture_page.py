"""The contributor architecture page names modules that exist, and places every module of `agentkit/_agent/`."""

from __future__ import annotations

import re
from pathlib import Path

from .test_import_graph import AGENT_LAYERS

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "contributing" / "architecture.md"
# a path the page names: `registry.py`, `_agent/loop.py`, `providers/`, `benchmarks/run_all.py`
NAMED = re.compile(r"(?<![\w/.<>-])((?:[\w]+/)*[\w]+(?:\.py|/))(?![\w])")


def _named(text: str) -> set[str]:
    return {m.group(1) for m in NAMED.finditer(text)}


def _exists(name: str) -> bool:
    return any((base / name).exists() for base in (ROOT / "agentkit", ROOT))


def test_every_module_the_page_names_exists() -> None:
    names = _named(PAGE.read_text(encoding="utf-8"))
    assert {"_agent/loop.py", "registry.py", "providers/", "tests/test_import_graph.py"} <= names  # the reader works
    missing = sorted(name for name in names if not _exists(name))
    assert missing == [], f"docs/contributing/architecture.md names modules that do not exist: {missing}"


def test_the_page_places_every_agent_module_in_its_layer() -> None:
    text = PAGE.read_text(encoding="utf-8")
    modules = {path.stem for path in (ROOT / "agentkit" / "_agent").glob("*.py") if path.stem != "__init__"}
    unplaced = sorted(name for name in modules if f"_agent/{name}.py" not in text)
    assert unplaced == [], f"agentkit/_agent modules the architecture page does not place: {unplaced}"
    # the page's drawing of the layers is in the order the import test enforces
    section = text.split("## The layers of `_agent/`")[1]
    drawing = section.split("```text")[1].split("```")[0]
    listed = re.findall(r"_agent/(\w+)\.py", drawing)
    order = {name: index for index, layer in enumerate(AGENT_LAYERS) for name in layer}
    ranks = [order[name] for name in dict.fromkeys(listed)]
    assert ranks == sorted(ranks), "the page lists the _agent layers out of the order tests/test_import_graph.py holds"


def test_the_reader_sees_a_missing_module() -> None:
    assert not _exists("_agent/no_such_module.py")
    assert "_agent/no_such_module.py" in _named("see `_agent/no_such_module.py` for it")
