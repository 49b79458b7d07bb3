"""Rebuild ``tests/data`` from the reference files it was taken from (run by hand; CI never runs it).

    python -m dev.make_test_data --source ../shared      # the team's read-only reference folder

The tests read only ``tests/data``, so a clone passes its tests on its own. What is copied, and how:

* ``specs/jsonschema/*.schema.json`` (but Cohere's), ``samples/*.json``, ``corpus/mcp_schemas.json`` and
  ``tools/lint_schema.py``: verbatim;
* Cohere's ``specs/jsonschema/cohere.*.schema.json`` and ``specs/cohere-sdk.schemas.json``: generated from
  the installed ``cohere`` SDK's types by ``dev/cohere_schemas.py`` (its OpenAPI document is proprietary);
* ``specs/<vendor>-openapi.subset.json``: of each vendor's OpenAPI document only what the tests use, the
  `OPENAPI_ROOTS` components and paths with everything they reference (YAML dates become ISO strings);
* ``corpus/bfcl_definitions.jsonl``: the BFCL function definitions, deduplicated by their JSON text, in the
  order of first appearance (files sorted by path), one per line;
* ``corpus/bfcl_single_questions.jsonl``: the questions of BFCL's single-function categories (``simple_*``,
  ``live_simple``), each with its function's name and a fingerprint of its definition (the first 16 hex
  digits of the sha256 of its JSON with sorted keys), for the tool-search benchmark and its test.

A test that needs another OpenAPI component: add it to `OPENAPI_ROOTS` and run this again.
``tests/data/README.md`` records the sources, their licenses and the sha256 of every input.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import shutil
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

from dev import cohere_schemas

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"

OPENAPI_ROOTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # vendor: (component schemas the tests name, paths the tests read)
    "openai": (
        (
            "CreateChatCompletionRequest",
            "CreateResponse",
            "ParallelToolCalls",
            "ChatCompletionRequestUserMessage",
            "EasyInputMessage",
        ),
        (),
    ),
    "mistral": (
        (
            "ChatCompletionRequest",
            "ChatCompletionChoice",
            "CompletionChunk",
            "SystemMessage",
            "UserMessage",
            "UsageInfo",
        ),
        (),
    ),
}


def _refs(node: Any) -> Iterator[tuple[str, str]]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/components/"):
            section, name = ref.removeprefix("#/components/").split("/", 1)
            yield section, name
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def _plain(node: Any) -> Any:
    """YAML values as JSON values: dates (in examples) become ISO strings."""
    if isinstance(node, dict):
        return {str(k): _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    if isinstance(node, (datetime.date, datetime.datetime)):
        return node.isoformat()
    return node


def openapi_subset(spec: dict[str, Any], schemas: tuple[str, ...], paths: tuple[str, ...]) -> dict[str, Any]:
    """`spec` cut down to `paths` and the components `schemas` and `paths` reach through ``$ref``."""
    todo = [("schemas", name) for name in schemas]
    for path in paths:
        todo.extend(_refs(spec["paths"][path]))
    seen: set[tuple[str, str]] = set()
    while todo:
        key = todo.pop()
        if key in seen:
            continue
        seen.add(key)
        todo.extend(_refs(spec["components"][key[0]][key[1]]))
    components: dict[str, dict[str, Any]] = {}
    for section, name in sorted(seen):
        components.setdefault(section, {})[name] = spec["components"][section][name]
    subset = {
        "openapi": spec["openapi"],
        "info": spec["info"],
        "x-agentkit-subset": "only what agentkit's tests use; made by dev/make_test_data.py",
        "paths": {path: spec["paths"][path] for path in paths},
        "components": components,
    }
    return dict(_plain(subset))


def bfcl_definitions(folder: Path) -> list[dict[str, Any]]:
    """Every unique function definition of the BFCL files under `folder`, in order of first appearance."""
    unique: dict[str, dict[str, Any]] = {}
    for path in sorted(folder.rglob("*.json")):
        try:
            records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        except json.JSONDecodeError:
            continue  # BFCL_v4_format_sensitivity.json: one JSON object of test ids, no definitions
        for record in records:
            if "function" in record:
                found = record["function"]
            elif "parameters" in record and "name" in record:
                found = [record]
            else:
                continue  # multi-turn questions name their tools by class, in multi_turn_func_doc/
            for definition in found:
                unique.setdefault(json.dumps(definition, sort_keys=True), definition)
    return list(unique.values())


SINGLE_FUNCTION = ("simple_python", "simple_java", "simple_javascript", "live_simple")
"""BFCL's categories whose every question has exactly one function: the expected match of a tool search."""


def fingerprint(definition: dict[str, Any]) -> str:
    """A short, stable name for one definition: the sha256 of its JSON with sorted keys, 16 hex digits."""
    return hashlib.sha256(json.dumps(definition, sort_keys=True).encode()).hexdigest()[:16]


def bfcl_questions(folder: Path) -> list[dict[str, Any]]:
    """Each single-function question: id, the users' text, its function's name and definition fingerprint."""
    rows = []
    for category in SINGLE_FUNCTION:
        for line in (folder / f"BFCL_v4_{category}.json").read_text().splitlines():
            if not line.strip():
                continue
            record = json.loads(line)
            [function] = record["function"]
            text = " ".join(m["content"] for turn in record["question"] for m in turn if m["role"] == "user")
            rows.append(
                {
                    "id": record["id"],
                    "question": text,
                    "function": function["name"],
                    "definition": fingerprint(function),
                }
            )
    return rows


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build(source: Path) -> dict[str, str]:
    """Write ``tests/data`` from `source`; return the sha256 of every input file (relative path -> hex)."""
    import yaml

    inputs: dict[str, str] = {}
    vendors = source / "vendors"
    for folder, pattern, target in (
        (vendors / "specs" / "jsonschema", "*.schema.json", DATA / "specs" / "jsonschema"),
        (vendors / "samples", "*.json", DATA / "samples"),
    ):
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        for file in sorted(folder.glob(pattern)):
            if not (pattern == "*.schema.json" and file.name.startswith("cohere.")):
                shutil.copyfile(file, target / file.name)
        inputs[f"{folder.relative_to(source)}/{pattern}"] = f"{len(list(folder.glob(pattern)))} files"
    (DATA / "tools").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(vendors / "tools" / "lint_schema.py", DATA / "tools" / "lint_schema.py")
    inputs["vendors/tools/lint_schema.py"] = _sha256(vendors / "tools" / "lint_schema.py")

    for vendor, (schemas, paths) in OPENAPI_ROOTS.items():
        file = vendors / "specs" / f"{vendor}-openapi.yaml"
        spec = yaml.load(file.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        subset = openapi_subset(spec, schemas, paths)
        out = DATA / "specs" / f"{vendor}-openapi.subset.json"
        out.write_text(json.dumps(subset, indent=1, ensure_ascii=False) + "\n")
        inputs[str(file.relative_to(source))] = _sha256(file)
    cohere_schemas.write()
    inputs["cohere SDK"] = version("cohere")

    corpus = DATA / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    definitions = bfcl_definitions(source / "corpus" / "bfcl")
    lines = "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in definitions)
    (corpus / "bfcl_definitions.jsonl").write_text(lines)
    inputs["corpus/bfcl/*.json"] = f"{len(definitions)} unique definitions"
    questions = bfcl_questions(source / "corpus" / "bfcl")
    rows = "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in questions)
    (corpus / "bfcl_single_questions.jsonl").write_text(rows, encoding="utf-8")
    inputs["corpus/bfcl/BFCL_v4_{simple_*,live_simple}.json"] = f"{len(questions)} single-function questions"
    shutil.copyfile(source / "corpus" / "bfcl" / "SOURCE.txt", corpus / "bfcl.SOURCE.txt")
    (DATA / "LICENSES").mkdir(exist_ok=True)
    shutil.copyfile(
        source / "corpus" / "bfcl" / "LICENSE.gorilla-apache-2.0", DATA / "LICENSES" / "gorilla-bfcl.Apache-2.0.txt"
    )
    shutil.copyfile(source / "corpus" / "mcp_schemas.json", corpus / "mcp_schemas.json")
    inputs["corpus/mcp_schemas.json"] = _sha256(source / "corpus" / "mcp_schemas.json")
    return inputs


def main() -> None:
    """Parse the command line and rebuild ``tests/data``."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", type=Path, default=ROOT.parent / "shared", help="the reference folder")
    args = parser.parse_args()
    for name, digest in build(args.source.resolve()).items():
        print(f"{name}: {digest}")


if __name__ == "__main__":
    main()
