"""`EvalReport`: accuracy per category and per tool, error classes, a stable JSON shape and a readable text.

The JSON shape (`EvalReport.to_json`, ``agentkit eval --json``) is versioned by its ``"format"`` field,
``"agentkit.eval/1"``; fields are only ever added within a version:

```text
{
  "format": "agentkit.eval/1",
  "model": "openai:gpt-4.1-mini",            # the model's name
  "dataset": "bfcl:simple_python",           # what was run
  "options": {"retry": false, "repair": false, "concurrency": 4, ...},
  "total": 400, "passed": 301, "accuracy": 0.7525,
  "categories": {"simple_python": {"total": 400, "passed": 301, "accuracy": 0.7525}},
  "tools": {"math.factorial": {"total": 3, "passed": 2, "accuracy": 0.6667}},
  "errors": {"no_call": 12, "wrong_value": 70, ...},      # every error class, zeros included
  "first_attempt": {"passed": 290, "accuracy": 0.725},      # with retry only, else null
  "repairs": 0,                                             # arguments repaired (repair=True)
  "seconds": 812.4,
  "cases": [{"id": "simple_python_0", "category": "simple_python", "passed": true, "error": null,
             "bfcl_error": null, "detail": "", "calls": [{"name": "...", "arguments": {...}}],
             "expected_tools": ["..."], "first_passed": null, "retried": false, "repairs": [],
             "seconds": 1.9}]
}
```

A tool's accuracy counts the questions whose expected calls name it; a question that expects none
(irrelevance) counts under its category only.
"""

from __future__ import annotations as _annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._jsonish import is_mapping
from ._checker import ERROR_CLASSES
from ._runner import CaseResult

__all__ = ["FORMAT", "EvalReport", "Score"]

FORMAT = "agentkit.eval/1"
"""The version of `EvalReport.to_json`'s shape."""


@dataclass(frozen=True)
class Score:
    """Questions run and passed."""

    total: int = 0
    passed: int = 0

    @property
    def accuracy(self) -> float:
        """``passed / total`` (0.0 when nothing ran)."""
        return self.passed / self.total if self.total else 0.0

    def add(self, passed: bool) -> Score:
        """This score with one more question."""
        return Score(self.total + 1, self.passed + int(passed))

    def to_json(self) -> dict[str, Any]:
        """``{"total", "passed", "accuracy"}`` (accuracy rounded to 4 places)."""
        return {"total": self.total, "passed": self.passed, "accuracy": round(self.accuracy, 4)}


def _arguments(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value  # kept as sent: it is what was wrong
    return dict(value) if is_mapping(value) else value


@dataclass
class EvalReport:
    """The results of one run, with their totals."""

    model: str
    dataset: str
    results: Sequence[CaseResult]
    options: Mapping[str, Any] = field(default_factory=lambda: {})
    seconds: float = 0.0

    @property
    def score(self) -> Score:
        """All questions."""
        return Score(len(self.results), sum(r.passed for r in self.results))

    @property
    def categories(self) -> dict[str, Score]:
        """Per category, in order of first appearance."""
        out: dict[str, Score] = {}
        for result in self.results:
            out[result.category] = out.get(result.category, Score()).add(result.passed)
        return out

    @property
    def tools(self) -> dict[str, Score]:
        """Per expected tool (questions that expect no call are left out), sorted by key."""
        out: dict[str, Score] = {}
        for result in self.results:
            for key in result.expected_tools:
                out[key] = out.get(key, Score()).add(result.passed)
        return dict(sorted(out.items()))

    @property
    def errors(self) -> dict[str, int]:
        """How many questions failed for each error class (every class listed)."""
        counts: dict[str, int] = dict.fromkeys(ERROR_CLASSES, 0)
        for result in self.results:
            if result.error is not None:
                counts[result.error] += 1
        return counts

    @property
    def first_attempt(self) -> Score | None:
        """With retry: the score of the first attempts alone (None without retry)."""
        firsts = [r.first_passed for r in self.results if r.first_passed is not None]
        if not firsts:
            return None
        return Score(len(firsts), sum(firsts))

    def to_json(self) -> dict[str, Any]:
        """The stable JSON shape described in the module docstring."""
        score, first = self.score, self.first_attempt
        return {
            "format": FORMAT,
            "model": self.model,
            "dataset": self.dataset,
            "options": dict(self.options),
            **score.to_json(),
            "categories": {k: v.to_json() for k, v in self.categories.items()},
            "tools": {k: v.to_json() for k, v in self.tools.items()},
            "errors": self.errors,
            "first_attempt": None if first is None else {"passed": first.passed, "accuracy": round(first.accuracy, 4)},
            "repairs": sum(len(r.repairs) for r in self.results),
            "seconds": round(self.seconds, 1),
            "cases": [_case_json(r) for r in self.results],
        }

    def text(self, *, failures: int = 10) -> str:
        """A readable report: totals, categories, error classes, the weakest tools and some failures."""
        score = self.score
        lines = [
            f"agentkit eval: {self.model} on {self.dataset}",
            f"  accuracy {score.accuracy:6.1%}  ({score.passed}/{score.total})  in {self.seconds:.0f} s",
        ]
        first = self.first_attempt
        if first is not None:
            gain = score.accuracy - first.accuracy
            lines.append(f"  first attempt {first.accuracy:6.1%}  (retry with validation feedback: {gain:+.1%})")
        repairs = sum(len(r.repairs) for r in self.results)
        if repairs:
            lines.append(f"  arguments repaired: {repairs} (listed per question in --json)")
        lines.append("\nby category")
        for name, value in self.categories.items():
            lines.append(f"  {name:<24} {value.accuracy:6.1%}  ({value.passed}/{value.total})")
        errors = {k: v for k, v in self.errors.items() if v}
        if errors:
            lines.append("\nwhy questions failed")
            for name, count in sorted(errors.items(), key=lambda item: -item[1]):
                lines.append(f"  {name:<24} {count}")
        weak = [(k, v) for k, v in self.tools.items() if v.passed < v.total]
        if weak:
            lines.append("\nweakest tools")
            for key, value in sorted(weak, key=lambda item: (item[1].accuracy, -item[1].total))[:10]:
                lines.append(f"  {key:<40} {value.accuracy:6.1%}  ({value.passed}/{value.total})")
        failed = [r for r in self.results if not r.passed]
        if failed and failures:
            lines.append(f"\nfailures (first {min(failures, len(failed))} of {len(failed)})")
            for result in failed[:failures]:
                lines.append(f"  {result.id}: {result.error}: {result.detail}")
        return "\n".join(lines)


def _case_json(result: CaseResult) -> dict[str, Any]:
    return {
        "id": result.id,
        "category": result.category,
        "passed": result.passed,
        "error": result.error,
        "bfcl_error": result.bfcl_error,
        "detail": result.detail,
        "calls": [{"name": name, "arguments": _arguments(arguments)} for name, arguments in result.calls],
        "expected_tools": list(result.expected_tools),
        "first_passed": result.first_passed,
        "retried": result.retried,
        "repairs": list(result.repairs),
        "seconds": round(result.seconds, 2),
    }
