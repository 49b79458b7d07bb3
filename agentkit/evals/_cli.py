"""``agentkit eval``: the command line of `agentkit.evals` (its arguments, and the run).

```
agentkit eval --dataset bfcl:simple_python --model openai:gpt-4.1-mini --limit 50
agentkit eval myapp.tools:registry --dataset cases.jsonl --model openai:local --base-url http://127.0.0.1:8080/v1
agentkit eval --self-test                       # the checker against its probes (no model)
agentkit eval -d cases.jsonl -m openai:gpt-4.1-mini --cassette evals.json  # recorded once, replayed offline
```

The readable report goes to stdout (``--json``: the JSON report instead), a progress bar to stderr on a
terminal only. Exit status: 0, or 1 when ``--min-accuracy`` is not reached or a replayed request was never
recorded, 2 for bad usage.
"""

from __future__ import annotations as _annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._cassettes import CassetteMode

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``agentkit eval``."""
    parser.add_argument(
        "target",
        nargs="?",
        help="module:attr or file.py:attr naming the Registry (or agent) a case file's tools are in",
    )
    parser.add_argument("--dataset", "-d", help="bfcl, bfcl:CATEGORY[,...] or a case file (.json/.jsonl)")
    parser.add_argument("--model", "-m", help="vendor:model-name, or 'test' (agentkit.testing.TestModel)")
    parser.add_argument("--base-url", help="send to this OpenAI/Anthropic-compatible endpoint (a local server)")
    parser.add_argument("--limit", type=int, help="run this many questions, drawn across categories (see --seed)")
    parser.add_argument("--seed", type=int, default=0, help="seeds --limit's draw (default 0)")
    parser.add_argument("--concurrency", "-j", type=int, default=4, help="requests at a time (default 4)")
    parser.add_argument("--retry", action="store_true", help="send validation errors back once, as a run does")
    parser.add_argument("--repair", action="store_true", help="repair known argument slips (each one reported)")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--strict", dest="strict", action="store_true", default=None, help="force strict schemas")
    group.add_argument("--no-strict", dest="strict", action="store_false", help="never strict")
    parser.add_argument("--tool-choice", default="auto", help="auto (default, as BFCL), required or none")
    parser.add_argument("--max-tokens", type=int, help="cap each answer's tokens")
    parser.add_argument("--temperature", type=float, default=0.0, help="default 0 (greedy)")
    parser.add_argument("--json", action="store_true", help="print the JSON report (format agentkit.eval/1)")
    parser.add_argument("--output", "-o", help="also write the JSON report to this file")
    parser.add_argument("--failures", type=int, default=10, help="failed questions listed in the text report")
    parser.add_argument("--min-accuracy", type=float, help="exit 1 when accuracy is below this (0..1)")
    parser.add_argument("--self-test", action="store_true", help="check the checker on its probes and exit")
    parser.add_argument(
        "--cassette",
        help="record the model's requests into this file on the first run, replay them afterwards (offline, CI)",
    )
    parser.add_argument(
        "--cassette-mode",
        choices=("once", "replay", "record"),
        help="once (record if the file is missing, else replay), replay (fail on a request never recorded) or "
        "record; default: replay where $CI is set, else once",
    )


def _model(spec: str, base_url: str | None) -> Any:
    from .._vendors import VENDORS, load
    from ..models import infer_model

    if base_url is None:
        return infer_model(spec)
    vendor, _, name = spec.partition(":")
    row = VENDORS.get(vendor)
    if row is None or row.provider is None or not name:
        from ..exceptions import CLIError

        raise CLIError(f"--base-url needs a vendor:model-name (e.g. openai:local), got {spec!r}", 2)
    return load(row.model)(name, base_url=base_url)


@contextlib.contextmanager
def _cassette(path: str | None, mode: CassetteMode | None) -> Iterator[None]:
    """Record or replay the model's requests (`agentkit.testing.Cassette`); nothing when no file is given."""
    if path is None:
        yield
        return
    from .._cassettes import Cassette, CassetteMiss
    from ..exceptions import CLIError

    try:
        with Cassette(path, mode=mode):
            yield
    except CassetteMiss as exc:  # no recording, or a question or setting changed since it was made: say where
        raise CLIError(f"--cassette {path}: {exc}\n(record it again with --cassette-mode record)", 1) from None


class _Bar:
    """A one-line progress bar on stderr (used on a terminal only)."""

    def __init__(self) -> None:
        self.passed = 0

    def __call__(self, done: int, total: int, result: Any) -> None:
        self.passed += int(result.passed)
        width = 30
        filled = int(width * done / total) if total else width
        line = f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total}  passed {self.passed}"
        sys.stderr.write(line + ("\n" if done == total else ""))
        sys.stderr.flush()


def run(args: argparse.Namespace) -> int:
    """Run ``agentkit eval`` with parsed `args`; the exit status."""
    from ..exceptions import CLIError
    from ..models import ModelSettings
    from ._api import evaluate_sync, load_dataset, sample
    from ._cases import EvalDataError
    from ._selftest import self_test

    if args.self_test:
        checked = self_test()
        print(checked)
        return 0 if checked.ok else 1
    if not args.dataset or not args.model:
        raise CLIError("--dataset and --model are required (or --self-test)", 2)
    registry = None
    if args.target:
        from .._loader import load_registry

        registry = load_registry(args.target)
    try:
        cases = load_dataset(args.dataset, registry)
    except EvalDataError as exc:
        raise CLIError(str(exc), 2) from None
    if args.limit is not None:
        cases = sample(cases, args.limit, seed=args.seed)
    settings = ModelSettings(
        tool_choice=args.tool_choice,
        strict=args.strict,
        aliases=True,
        temperature=args.temperature,
        max_tokens=args.max_tokens,
    )
    progress = _Bar() if sys.stderr.isatty() else None
    if args.cassette_mode is not None and args.cassette is None:
        raise CLIError("--cassette-mode needs --cassette FILE", 2)
    with _cassette(args.cassette, args.cassette_mode):
        report = evaluate_sync(
            _model(args.model, args.base_url),
            cases,
            concurrency=args.concurrency,
            retry=args.retry,
            repair=args.repair,
            settings=settings,
            progress=progress,
            dataset=args.dataset if args.limit is None else f"{args.dataset} ({len(cases)} drawn, seed {args.seed})",
        )
    data = report.to_json()
    if args.output:
        with open(args.output, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, ensure_ascii=False, default=str)
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False, default=str))
    else:
        print(report.text(failures=args.failures))
    if args.min_accuracy is not None and report.score.accuracy < args.min_accuracy:
        print(
            f"agentkit eval: accuracy {report.score.accuracy:.1%} is below --min-accuracy {args.min_accuracy:.1%}",
            file=sys.stderr,
        )
        return 1
    return 0
