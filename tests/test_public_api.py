"""Meta-tests: the public surface, import cost and isolation from vendor SDKs."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import agentkit

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


def test_all_is_sorted_complete_and_documented() -> None:
    names = agentkit.__all__
    assert names == sorted(names, key=lambda n: (n.startswith("_"), n.lower())) or names == sorted(names)
    public = {n for n in dir(agentkit) if not n.startswith("_") and not isinstance(getattr(agentkit, n), type(sys))}
    assert public - {"annotations"} <= set(names)
    for name in names:
        obj = getattr(agentkit, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert getattr(obj, "__doc__", None), f"{name} has no docstring"


def test_py_typed_is_shipped() -> None:
    assert (Path(agentkit.__file__).parent / "py.typed").exists()
