"""Meta-tests: the public surface, import cost and isolation from vendor SDKs."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import agentkit

from .api_helpers import exported, public_modules

VENDOR_SDKS = ("openai", "anthropic", "google", "boto3", "botocore", "mistralai", "cohere", "ollama", "mcp")


def _imported_after(code: str) -> set[str]:
    probe = f"import sys\n{code}\nprint('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout
    return {name.split(".")[0] for name in out.split()}


def test_import_agentkit_loads_no_vendor_sdk() -> None:
    loaded = _imported_after("import agentkit")
    assert not loaded & set(VENDOR_SDKS), loaded & set(VENDOR_SDKS)
    # also not the heavy optional helpers, which are imported on first use
    assert "jsonschema" not in loaded and "docstring_parser" not in loaded
    assert "genai_prices" not in loaded  # the price table: on the first cost() only
    assert "opentelemetry" not in loaded  # tracing: only once agentkit.instrument() is called


def test_the_agent_layer_loads_on_first_use() -> None:
    probe = (
        "import sys, agentkit\n"
        "print('agentkit.agent' in sys.modules, 'agentkit.runs' in sys.modules)\n"
        "agentkit.Agent, agentkit.RunSnapshot\n"
        "print('agentkit.agent' in sys.modules, 'agentkit.runs' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout
    assert out.split() == ["False", "False", "True", "True"]  # a tools-only program never imports the loop


def test_every_lazy_name_is_the_one_its_module_defines() -> None:
    import importlib

    lazy: dict[str, str] = vars(agentkit)["_LAZY"]
    assert set(lazy) <= set(agentkit.__all__)
    for name, module in lazy.items():
        assert getattr(agentkit, name) is getattr(importlib.import_module(f"agentkit.{module}"), name)
    assert set(agentkit.__all__) <= set(dir(agentkit))
    with pytest.raises(AttributeError, match="has no attribute 'Agnet'"):
        agentkit.Agnet  # noqa: B018 - the attribute read is the test


def test_formatting_payloads_loads_no_vendor_sdk() -> None:
    code = (
        "import agentkit, agentkit.providers as p\n"
        "@agentkit.tool\n"
        "def f(a: int) -> int:\n"
        "    '''F.'''\n"
        "    return a\n"
        "r = agentkit.Registry([f])\n"
        "for name in p.provider_names():\n"
        "    try:\n"
        "        p.get_provider(name).format_tools(r)\n"
        "    except ImportError:\n"
        "        pass\n"
    )
    loaded = _imported_after(code)
    assert not loaded & set(VENDOR_SDKS), loaded & set(VENDOR_SDKS)


def _isort_key(name: str) -> tuple[int, list[int | str]]:
    """Ruff's RUF022 order (isort-style): CONSTANTS, then Classes, then the rest, each in natural order."""
    kind = 0 if len(name) > 1 and name.isupper() else 1 if name[:1].isupper() else 2
    return kind, [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _defined_in(obj: object, module: ModuleType) -> bool:
    """A class or function of `module` itself or of one of its private submodules (``module._x``)."""
    if not (inspect.isclass(obj) or inspect.isfunction(obj)):
        return False
    home = getattr(obj, "__module__", "") or ""
    return home == module.__name__ or home.startswith(module.__name__ + "._")


@pytest.mark.parametrize("module", public_modules(), ids=lambda m: m.__name__)
def test_all_is_sorted_unique_complete_and_importable(module: ModuleType) -> None:
    """The export rule of every public module (the same order ruff's RUF022 keeps)."""
    names = exported(module)
    assert names, f"{module.__name__} has no __all__: list what users import from it"
    duplicates = sorted({n for n in names if names.count(n) > 1})
    assert not duplicates, f"{module.__name__}.__all__ lists {duplicates} more than once"
    assert names == sorted(names, key=_isort_key), (
        f"{module.__name__}.__all__ is not sorted (run `ruff check --select RUF022 --fix`); "
        f"expected {sorted(names, key=_isort_key)}"
    )
    missing = [n for n in names if not hasattr(module, n)]
    assert not missing, f"{module.__name__}.__all__ names {missing}, which the module does not have"
    namespace: dict[str, object] = {}
    exec(f"from {module.__name__} import *", namespace)  # the star import a user may write
    assert set(names) <= set(namespace)
    unexported = sorted(
        n for n, obj in vars(module).items() if not n.startswith("_") and n not in names and _defined_in(obj, module)
    )
    assert not unexported, (
        f"{module.__name__} defines public {unexported} outside __all__: export them, or prefix them with _ "
        "if users do not need them"
    )


def test_top_level_exports_every_public_name() -> None:
    public = {n for n in dir(agentkit) if not n.startswith("_") and not isinstance(getattr(agentkit, n), ModuleType)}
    assert public - {"annotations"} <= set(agentkit.__all__), public - {"annotations"} - set(agentkit.__all__)


def test_the_export_rule_catches_a_bad_list(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rule fails on what it must: unsorted, duplicated, unknown or incomplete lists."""
    fake = ModuleType("agentkit.fake")

    def helper() -> None:
        """Public but not exported."""

    helper.__module__ = "agentkit.fake"
    fake.helper = helper  # type: ignore[attr-defined]
    fake.Tool = agentkit.Tool  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "agentkit.fake", fake)
    for bad, message in [
        (["helper", "Tool"], "not sorted"),
        (["Tool", "Tool", "helper"], "more than once"),
        (["Tool", "helper", "missing"], "does not have"),
        (["Tool"], "outside __all__"),
    ]:
        fake.__all__ = bad  # type: ignore[attr-defined]
        with pytest.raises(AssertionError, match=message):
            test_all_is_sorted_unique_complete_and_importable(fake)


def test_py_typed_is_shipped() -> None:
    assert (Path(agentkit.__file__).parent / "py.typed").exists()


# folders of tests/ that test no package folder: the docs, real servers, type checks, data, shared fixtures
_NOT_MIRRORED = {"docs", "e2e", "typing", "data", "fixtures", "__pycache__"}


def test_the_test_tree_mirrors_the_package() -> None:
    """Each folder of tests/ is a folder of agentkit/ (the tests of agentkit/ui/ live in tests/ui/, ...)."""
    tests = Path(__file__).resolve().parent
    package = Path(agentkit.__file__).resolve().parent
    strays = sorted(
        str(folder.relative_to(tests))
        for folder in tests.rglob("*")
        if folder.is_dir()
        and any(folder.glob("*.py"))  # a folder of tests, not one a test writes into
        and not _NOT_MIRRORED & set(folder.relative_to(tests).parts)
        and not (package / folder.relative_to(tests)).is_dir()
    )
    assert not strays, f"tests/{strays} mirror no folder of agentkit/: move them to tests/<package path>/"
    loose = sorted(
        p.name
        for p in tests.glob("test_*.py")
        if p.stem.removeprefix("test_").split("_")[0]
        in {d.name for d in package.iterdir() if d.is_dir() and not d.name.startswith("_")}
    )
    assert not loose, f"{loose} test a subpackage of agentkit: move them into its folder under tests/"
