"""A new vendor is its folder and one row of the vendor table (issue 18 §5): docs/contributing/vendors.md is exact.

A fake vendor, ``acme``, is added to a copy of the package by writing only what the guide says of the package
(its folder and its row) and must then be served, priced and traced like the others. The guide's lists of
files are counted, checked against an existing vendor, and no module of the package, the benchmarks or the
examples may list the vendors itself (a ninth vendor would silently miss that list: no price, no trace name).
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path, PurePosixPath

import agentkit
from agentkit._vendors import VENDORS

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "contributing" / "vendors.md"
NAMES = frozenset(name for name, row in VENDORS.items() if row.provider is not None)


def guide_lists() -> tuple[list[str], list[str]]:
    """The guide's new files and files to edit (its two ``text`` blocks after "Every file a new vendor touches")."""
    section = GUIDE.read_text().split("## Every file a new vendor touches", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```text\n(.*?)```", section, flags=re.DOTALL)
    assert len(blocks) == 2, "the section holds two lists: new files, files to edit"
    new, edited = ([line.strip() for line in block.splitlines() if line.strip()] for block in blocks)
    return new, edited


def test_the_guide_lists_fewer_files_in_fewer_folders_than_before() -> None:
    new, edited = guide_lists()
    folders = {str(PurePosixPath(path).parent) for path in new + edited}
    assert len(new) + len(edited) < 17 and len(folders) < 8, (len(new) + len(edited), sorted(folders))
    for path in new + edited:  # every entry is real: it exists for Mistral, a vendor made the same way
        assert (ROOT / path.replace("<vendor>", "mistral")).exists(), path


def _vendor_names_in(path: Path) -> set[str]:
    """The vendor names written as string constants in `path`'s code (docstrings aside)."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value in NAMES and id(node) not in docstrings
    }


def test_no_module_but_the_table_lists_the_vendors() -> None:
    listing: dict[str, list[str]] = {}
    for folder in ("agentkit", "benchmarks", "examples", "dev"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            in_own_folder = re.match(r"agentkit/providers/([a-z]+)/", relative)
            if relative == "agentkit/_vendors.py" or (in_own_folder and in_own_folder.group(1) in NAMES):
                continue
            found = _vendor_names_in(path)
            if len(found) >= 4:  # a few named vendors are behaviour; most of them is a table
                listing[relative] = sorted(found)
    assert listing == {}, f"these list the vendors instead of reading agentkit/_vendors.py: {listing}"


_ACME = {
    "__init__.py": '''"""A fake vendor: OpenAI's Chat Completions API under another name."""

from ._client import AcmeModel
from ._codec import AcmeProvider
from ._dialect import AcmeDialect

__all__ = ["AcmeDialect", "AcmeModel", "AcmeProvider"]
''',
    "_dialect.py": '''"""Acme's schema dialect: OpenAI's."""

from ..openai._dialect import OpenAIDialect


class AcmeDialect(OpenAIDialect):
    """Acme's dialect."""
''',
    "_codec.py": '''"""Acme's wire codec."""

from ..openai import OpenAIChatProvider
from ._dialect import AcmeDialect


class AcmeProvider(OpenAIChatProvider):
    """Acme's tool payloads."""

    name = "acme"
    dialect = AcmeDialect()
''',
    "_client.py": '''"""Acme's model client, over the OpenAI SDK."""

from ..openai import OpenAIChatModel
from ._codec import AcmeProvider


class AcmeModel(OpenAIChatModel):
    """Acme's models."""

    vendor = "acme"
    provider_class = AcmeProvider
''',
}
_ROW = """            Vendor(
                "acme",
                "agentkit.providers.acme:AcmeModel",
                "agentkit.providers.acme:AcmeProvider",
                ("ACME_API_KEY",),
                "openai",
                _PLACEHOLDER,
                price_id="openai",
                telemetry_name="acme_ai",
            ),
"""
_CHECK = r"""
import asyncio
from agentkit import Agent, Usage, tool
from agentkit.costs import estimate_cost
from agentkit.models import KNOWN_VENDORS, infer_model
from agentkit.providers import compatibility, get_provider, provider_names
from agentkit.testing import request_payload

@tool
def add(a: int, b: int) -> int:
    "Add two integers."
    return a + b

assert "acme" in provider_names() and "acme" in KNOWN_VENDORS, provider_names()
assert get_provider("acme").format_tools([add.definition()])["tools"][0]["function"]["name"] == "add"
assert "acme" in {row.provider for row in compatibility(add)}
body = request_payload(Agent(model="acme:gpt-4.1", tools=[add]), "2 + 3?")  # built offline from the row
assert body["model"] == "gpt-4.1" and body["tools"][0]["function"]["name"] == "add", body
usage = Usage(input_tokens=1000, output_tokens=100)
price = estimate_cost(usage, "acme:gpt-4.1")
assert price is not None and price == estimate_cost(usage, "openai:gpt-4.1"), price  # priced by its row
model = infer_model("acme:gpt-4.1")  # the key variable the row names
from agentkit._otel import Tracing
from agentkit.instrumentation import InstrumentationSettings
name, attributes = Tracing(InstrumentationSettings())._chat_basis(model)
assert attributes["gen_ai.provider.name"] == "acme_ai" and name == "chat gpt-4.1", attributes  # traced by its row
print("acme ok")
"""


def test_a_fake_vendor_is_served_priced_and_traced_from_its_folder_and_its_row(tmp_path: Path) -> None:
    package = Path(agentkit.__file__).parent
    copy = tmp_path / "agentkit"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    new, edited = guide_lists()
    touched: list[str] = []
    folder = copy / "providers" / "acme"
    folder.mkdir()
    for name, text in _ACME.items():
        (folder / name).write_text(text)
        touched.append(f"agentkit/providers/<vendor>/{name}")
    table = copy / "_vendors.py"
    text = table.read_text()
    at = text.index('            Vendor("test"')
    table.write_text(text[:at] + _ROW + text[at:])
    touched.append("agentkit/_vendors.py")
    assert set(touched) <= set(new + edited), set(touched) - set(new + edited)  # the guide names every one
    done = subprocess.run(
        [sys.executable, "-c", _CHECK],
        cwd=tmp_path,
        env={"PATH": "", "ACME_API_KEY": "acme-test-key", "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and done.stdout.strip() == "acme ok", done.stderr[-3000:]
