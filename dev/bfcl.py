"""BFCL's data and checker beside agentkit's: copy the data, compare the checkers, render BFCL's tools.

``bfcl-eval`` pins numpy, mistralai, cohere and more at versions that clash with ours, so it is installed
with ``--no-deps`` in a venv of its own under the e2e cache (``dev.local_llm.cache_root()``), and only its
plain-Python parts are run there, in a subprocess:

```
python -m dev.bfcl copy                 # rebuild agentkit/evals/data/bfcl/ from the package's data
python -m dev.bfcl compare              # both checkers on every expected answer and on wrong ones
python -m dev.bfcl compare --record     # ... and store bfcl-eval's verdicts for the agreement test
python -m dev.bfcl render OUT.json      # BFCL's own OpenAI-handler tools for each question (the lab)
```

bfcl-eval's checker imports ``bfcl_eval.constants.model_config``, which imports every model handler and
their SDKs; a stub of that one module (a mapping whose entries keep dotted names: ``underscore_to_dot``
False) lets ``ast_checker`` run alone. Its utilities need ``filelock`` and ``tenacity`` (installed at its
pins, without dependencies) and its Java/JavaScript parsers ``tree-sitter`` (stubbed: unused for Python).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import venv
from collections import Counter
from pathlib import Path
from typing import Any

from dev.local_llm import cache_root

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DATA = ROOT / "agentkit" / "evals" / "data" / "bfcl"
VERDICTS = ROOT / "tests" / "data" / "bfcl" / "bfcl_verdicts.jsonl.gz"
LICENSE = ROOT / "tests" / "data" / "LICENSES" / "gorilla-bfcl.Apache-2.0.txt"
BFCL_EVAL = "bfcl-eval==2026.3.23"
CATEGORIES = (
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "live_simple",
    "live_multiple",
    "irrelevance",
)


def bfcl_python() -> Path:
    """The Python of the venv holding bfcl-eval (installed without its dependencies on first use)."""
    home = cache_root() / BFCL_EVAL.replace("==", "-")
    python = home / "venv" / "bin" / "python"
    if not (home / "done").exists():
        home.mkdir(parents=True, exist_ok=True)
        venv.create(home / "venv", with_pip=True)
        pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps"]
        # the two small modules its utilities import, at the versions it pins; nothing else
        subprocess.run([*pip, BFCL_EVAL, "filelock==3.20.0", "tenacity"], check=True)
        (home / "done").write_text(BFCL_EVAL)
    return python


def _in_bfcl(code: str, *args: str) -> str:
    """Run `code` with bfcl-eval's venv (model_config stubbed); its stdout."""
    stub = (
        "import sys, types\n"
        "class _Config:\n    underscore_to_dot = False\n"
        "class _Any(dict):\n    def __missing__(self, key):\n        return _Config()\n"
        "module = types.ModuleType('bfcl_eval.constants.model_config')\n"
        "module.MODEL_CONFIG_MAPPING = _Any()\n"
        "sys.modules['bfcl_eval.constants.model_config'] = module\n"
        # the Java/JavaScript call parsers need tree-sitter; the Python categories never use them
        "class _Stub(types.ModuleType):\n"
        "    def __getattr__(self, name):\n"
        "        if name.startswith('__'):\n            raise AttributeError(name)\n"
        "        return lambda *a, **k: None\n"
        "for _name in ('java_parser', 'js_parser'):\n"
        "    sys.modules['bfcl_eval.model_handler.parser.' + _name] = _Stub(_name)\n"
    )
    done = subprocess.run([str(bfcl_python()), "-c", stub + code, *args], check=True, capture_output=True, text=True)
    return done.stdout


def data_dir() -> Path:
    """Where bfcl-eval keeps its data (in its venv)."""
    out = _in_bfcl("import bfcl_eval, pathlib; print(pathlib.Path(bfcl_eval.__file__).parent / 'data')")
    return Path(out.strip())


# ---- copy ----------------------------------------------------------------------------------------


def copy() -> None:
    """Write ``agentkit/evals/data/bfcl/<category>.jsonl.gz``: each question with its expected answer."""
    source = data_dir()
    PACKAGE_DATA.mkdir(parents=True, exist_ok=True)
    lines = [f"source: {BFCL_EVAL} (PyPI), bfcl_eval/data, Apache-2.0 (LICENSE beside this file)", ""]
    for category in CATEGORIES:
        questions = source / f"BFCL_v4_{category}.json"
        answers = source / "possible_answer" / f"BFCL_v4_{category}.json"
        truth: dict[str, Any] = {}
        if answers.exists():
            for line in answers.read_text().splitlines():
                if line.strip():
                    entry = json.loads(line)
                    truth[entry["id"]] = entry["ground_truth"]
        out: list[str] = []
        for line in questions.read_text().splitlines():
            if not line.strip():
                continue
            entry = json.loads(line)
            merged = {"id": entry["id"], "question": entry["question"], "function": entry["function"]}
            if category != "irrelevance":
                merged["ground_truth"] = truth[entry["id"]]
            out.append(json.dumps(merged, ensure_ascii=False))  # key order kept: it is the order models see
        target = PACKAGE_DATA / f"{category}.jsonl.gz"
        with gzip.GzipFile(target, "wb", mtime=0) as handle:  # mtime 0: the same data gives the same bytes
            handle.write(("\n".join(out) + "\n").encode())
        digests = [
            f"{p.relative_to(source)} sha256 {hashlib.sha256(p.read_bytes()).hexdigest()}"
            for p in (questions, answers)
            if p.exists()
        ]
        lines.append(f"{category}.jsonl.gz: {len(out)} questions from " + "; ".join(digests))
    (PACKAGE_DATA / "SOURCE.txt").write_text("\n".join(lines) + "\n")
    shutil.copyfile(LICENSE, PACKAGE_DATA / "LICENSE")
    print(f"wrote {PACKAGE_DATA}")


# ---- compare -------------------------------------------------------------------------------------

_JUDGE = r"""
import json, sys
from bfcl_eval.constants.enums import Language
from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker
from bfcl_eval.utils import is_empty_output, is_function_calling_format_output
out = []
for line in open(sys.argv[1]):
    item = json.loads(line)
    calls, category = item["calls"], item["category"]
    if category == "irrelevance":
        # bfcl-eval: a question passes when no call decodes; [] (no call) fails to decode in FC mode
        valid = (not calls) or is_empty_output(calls)
        out.append({"valid": valid, "error_type": None if valid else "irrelevance_error:decoder_success"})
        continue
    if not calls:  # FC mode: a text answer is not a list of calls, its decoding fails
        out.append({"valid": False, "error_type": "ast_decoder:decoder_failed"})
        continue
    if not is_function_calling_format_output(calls):
        out.append({"valid": False, "error_type": "ast_decoder:decoder_wrong_output_format"})
        continue
    try:
        result = ast_checker(item["function"], calls, item["answer"], Language.PYTHON, category, "stub")
    except Exception as exc:
        out.append({"valid": None, "error_type": "crash:" + type(exc).__name__})
        continue
    out.append({"valid": result["valid"], "error_type": None if result["valid"] else result["error_type"]})
print(json.dumps(out))
"""


def compare(record: bool) -> int:
    """Judge every probe with both checkers; print the disagreements; with `record`, store bfcl-eval's verdicts."""
    from agentkit.evals import bfcl_cases, check_calls, probes

    cases = bfcl_cases()
    items: list[dict[str, Any]] = []
    ours: list[tuple[str, str, bool, str | None]] = []
    for case in cases:
        for probe in probes(case):
            items.append(
                {
                    "calls": probe.calls,
                    "category": case.category,
                    "function": list(case.source),
                    "answer": list(case.expected),
                }
            )
            verdict = check_calls(case.specs(), probe.calls, case.expected, case.check_mode)
            ours.append((case.id, probe.label, verdict.passed, verdict.bfcl_error))
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as handle:
        for item in items:
            handle.write(json.dumps(item) + "\n")
    theirs = json.loads(_in_bfcl(_JUDGE, handle.name))
    Path(handle.name).unlink()
    disagree = 0
    kinds: Counter[str] = Counter()
    for (case_id, label, passed, error), verdict in zip(ours, theirs, strict=True):
        kinds[f"{label}: {'pass' if verdict['valid'] else 'fail'}"] += 1
        if verdict["valid"] != passed or verdict["error_type"] != error:
            disagree += 1
            if disagree <= 20:
                theirs_shown = f"{verdict['valid']} {verdict['error_type']}"
                print(f"DISAGREE {case_id} {label}: ours {passed} {error}, bfcl-eval {theirs_shown}")
    print(f"{len(ours)} probes on {len(cases)} questions ({BFCL_EVAL}): {disagree} disagreements")
    for kind, count in sorted(kinds.items()):
        print(f"  {kind}: {count}")
    if record:
        VERDICTS.parent.mkdir(parents=True, exist_ok=True)
        with gzip.GzipFile(VERDICTS, "wb", mtime=0) as out:
            for (case_id, label, _, _), verdict in zip(ours, theirs, strict=True):
                row = {"id": case_id, "probe": label, "valid": verdict["valid"], "error_type": verdict["error_type"]}
                out.write((json.dumps(row) + "\n").encode())
        print(f"recorded bfcl-eval's verdicts in {VERDICTS.relative_to(ROOT)}")
    return 1 if disagree else 0


# ---- render --------------------------------------------------------------------------------------

_RENDER = r"""
import copy, json, sys
from bfcl_eval.constants.enums import ModelStyle
from bfcl_eval.constants.type_mappings import GORILLA_TO_OPENAPI
from bfcl_eval.model_handler.utils import convert_to_tool
from bfcl_eval.utils import _func_doc_language_specific_pre_processing
out = {}
for line in open(sys.argv[1]):
    item = json.loads(line)
    functions = _func_doc_language_specific_pre_processing(copy.deepcopy(item["function"]), item["category"])
    out[item["id"]] = convert_to_tool(functions, GORILLA_TO_OPENAPI, ModelStyle.OPENAI_COMPLETIONS)
print(json.dumps(out))
"""


def render(target: Path) -> None:
    """BFCL's OpenAI Chat handler's ``tools`` for every shipped question, as ``{id: tools}`` JSON."""
    from agentkit.evals import bfcl_cases

    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as handle:
        for case in bfcl_cases():
            handle.write(json.dumps({"id": case.id, "category": case.category, "function": list(case.source)}) + "\n")
    target.write_text(_in_bfcl(_RENDER, handle.name))
    Path(handle.name).unlink()
    print(f"wrote {target}")


def main(argv: list[str] | None = None) -> int:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m dev.bfcl", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("copy", help="rebuild agentkit/evals/data/bfcl from bfcl-eval's data")
    compare_cmd = commands.add_parser("compare", help="agentkit's checker beside bfcl-eval's, on every probe")
    compare_cmd.add_argument("--record", action="store_true", help="store bfcl-eval's verdicts for the tests")
    render_cmd = commands.add_parser("render", help="BFCL's OpenAI-handler tools for each question")
    render_cmd.add_argument("target", type=Path)
    args = parser.parse_args(argv)
    if args.command == "copy":
        copy()
        return 0
    if args.command == "compare":
        return compare(args.record)
    render(args.target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
