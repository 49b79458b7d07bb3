"""The API reference (docs/reference/) documents every public name, each with a docstring."""

from __future__ import annotations

import importlib
import re
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import griffe
import pytest
import yaml

from ..api_helpers import exported, public_modules

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "reference"
DIRECTIVE = re.compile(r"^::: (\S+)", re.M)


def _page(module: ModuleType) -> Path:
    """Where `module` is documented: ``agentkit.ui.vercel`` -> ``docs/reference/ui/vercel.md``."""
    parts = module.__name__.split(".")[1:]
    package = module.__file__ is not None and module.__file__.endswith("__init__.py")
    if not parts:
        return REFERENCE / "index.md"
    if package and (REFERENCE.joinpath(*parts) / "index.md").exists():
        return REFERENCE.joinpath(*parts) / "index.md"
    return REFERENCE.joinpath(*parts[:-1]) / f"{parts[-1]}.md"


def _resolve(path: str) -> Any:
    """The object a ``::: dotted.path`` directive renders (the longest importable module, then attributes)."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise AssertionError(f"::: {path} names nothing importable")


@cache
def _directives() -> dict[str, Any]:
    """Every rendered path in the reference pages -> its object."""
    found: dict[str, Any] = {}
    for page in sorted(REFERENCE.rglob("*.md")):
        for path in DIRECTIVE.findall(page.read_text()):
            assert path not in found, f"{path} is rendered twice (second time in {page.relative_to(ROOT)})"
            found[path] = _resolve(path)
    return found


@cache
def _griffe() -> griffe.Module:
    return griffe.load("agentkit", search_paths=[str(ROOT)], resolve_aliases=True, resolve_external=False)


def _target(path: str) -> griffe.Object:
    obj = _griffe() if path == "agentkit" else _griffe()[path.removeprefix("agentkit.")]
    return obj.final_target if obj.is_alias else obj  # type: ignore[return-value]


def test_every_reference_page_is_in_the_navigation() -> None:
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
    listed = set(re.findall(r"reference/[\w/.-]+\.md", str(nav)))
    pages = {str(p.relative_to(ROOT / "docs")) for p in REFERENCE.rglob("*.md")}
    assert pages == listed, (
        f"pages not in mkdocs.yml's nav: {pages - listed}; nav entries without a page: {listed - pages}"
    )


@pytest.mark.parametrize("module", public_modules(), ids=lambda m: m.__name__)
def test_every_exported_name_is_in_the_reference(module: ModuleType) -> None:
    page = _page(module)
    assert page.exists(), f"{module.__name__} has no reference page: create {page.relative_to(ROOT)}"
    text = page.read_text()
    rendered = _directives()
    missing, unlinked = [], []
    for name in exported(module):
        obj = getattr(module, name)
        if not any(p.rsplit(".", 1)[-1] == name and o is obj for p, o in rendered.items()):
            missing.append(name)
        elif f"::: {module.__name__}.{name}\n" not in text + "\n" and f"[`{name}`]" not in text:
            unlinked.append(name)
    assert not missing, (
        f"{module.__name__} exports {missing}, which no reference page renders: add `::: {module.__name__}.NAME` "
        f"to {page.relative_to(ROOT)} (or to the page of the module that defines it)"
    )
    assert not unlinked, (
        f"{page.relative_to(ROOT)} neither renders nor links {unlinked} (exported by {module.__name__})"
    )


def test_every_rendered_name_has_a_docstring() -> None:
    """What the reference renders has a docstring, and so has each public method of a rendered class."""
    undocumented = []
    for path in _directives():
        target = _target(path)
        if not target.docstring or not target.docstring.value.strip():
            undocumented.append(path)
        if target.is_class:
            for name, member in target.members.items():
                member = member.final_target if member.is_alias else member
                if not name.startswith("_") and member.is_function and not member.docstring:
                    undocumented.append(f"{path}.{name}")
    assert not undocumented, f"public names without a docstring: {undocumented}"
