"""`evaluate`: score a model on a dataset; `load_dataset` and `sample` pick the questions."""

from __future__ import annotations as _annotations

import asyncio
import random
import time
from collections.abc import Sequence
from typing import Any

from ..models import ModelLike, ModelSettings, infer_model
from ..registry import Registry
from ._bfcl import bfcl_cases
from ._cases import EvalCase, EvalDataError, load_cases
from ._report import EvalReport
from ._runner import Progress, run_cases

__all__ = ["evaluate", "evaluate_sync", "load_dataset", "sample"]


def load_dataset(spec: str, registry: Registry | None = None) -> list[EvalCase]:
    """The cases named by `spec`: ``bfcl``, ``bfcl:simple_python,multiple``, or a case file's path.

    A case file names its tools by their keys in `registry` (required for a file).

    Raises:
        EvalDataError: an unknown BFCL category, a case file without a registry, or a malformed file.
    """
    if spec == "bfcl" or spec.startswith("bfcl:"):
        return bfcl_cases(spec)
    if registry is None:
        raise EvalDataError(f"the case file {spec!r} names tools by key: pass the registry that holds them")
    return load_cases(spec, registry)


def sample(cases: Sequence[EvalCase], size: int, *, seed: int = 0) -> list[EvalCase]:
    """`size` of `cases`, drawn at random (seeded) and in proportion to each category, in their order.

    Every category keeps at least one question while `size` allows it.
    """
    if size >= len(cases):
        return list(cases)
    groups: dict[str, list[int]] = {}
    for index, case in enumerate(cases):
        groups.setdefault(case.category, []).append(index)
    shares = {name: max(1, round(size * len(members) / len(cases))) for name, members in groups.items()}
    while sum(shares.values()) > size:  # rounding up may overshoot: take from the largest share
        largest = max(shares, key=lambda name: shares[name])
        shares[largest] -= 1
    rng = random.Random(seed)
    chosen: set[int] = set()
    for name, members in groups.items():
        chosen.update(rng.sample(members, min(shares[name], len(members))))
    return [case for index, case in enumerate(cases) if index in chosen]


async def evaluate(
    model: ModelLike,
    cases: Sequence[EvalCase] | str,
    *,
    registry: Registry | None = None,
    concurrency: int = 4,
    retry: bool = False,
    repair: bool = False,
    settings: ModelSettings | None = None,
    progress: Progress | None = None,
    dataset: str | None = None,
) -> EvalReport:
    """Score `model` on `cases` (or the dataset `cases` names, see `load_dataset`).

    Each question is one request (``tool_choice="auto"``, temperature 0, aliases on unless `settings`
    says otherwise); its calls are judged by BFCL's rules (`check_calls`). `retry` sends agentkit's
    validation errors back once; `repair` fixes known argument slips, each reported.

    Example:
        ```python
        report = await evaluate(model, "bfcl:simple_python", concurrency=2)
        print(report.text())
        ```
    """
    resolved = infer_model(model)
    name = dataset or (cases if isinstance(cases, str) else "cases")
    chosen = load_dataset(cases, registry) if isinstance(cases, str) else list(cases)
    started = time.monotonic()
    results = await run_cases(
        resolved, chosen, concurrency=concurrency, settings=settings, retry=retry, repair=repair, progress=progress
    )
    options: dict[str, Any] = {"retry": retry, "repair": repair, "concurrency": concurrency}
    if settings is not None:
        options["strict"] = settings.strict
        options["tool_choice"] = settings.tool_choice
    return EvalReport(resolved.name, name, results, options, time.monotonic() - started)


def evaluate_sync(model: ModelLike, cases: Sequence[EvalCase] | str, **options: Any) -> EvalReport:
    """`evaluate` from synchronous code (it runs its own event loop)."""
    return asyncio.run(evaluate(model, cases, **options))
