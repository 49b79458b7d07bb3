"""`EvalReport`: totals per category and tool, error classes, the JSON shape, the readable text."""

from __future__ import annotations

import json

from agentkit.evals import ERROR_CLASSES, FORMAT, CaseResult, EvalReport

RESULTS = [
    CaseResult("a", "simple", True, calls=(("f", '{"x": 1}'),), expected_tools=("f",), seconds=1.0),
    CaseResult("b", "simple", False, "wrong_value", "value_error:others", "f: 'x' = 2", (("f", '{"x": 2'),), ("f",)),
    CaseResult("c", "parallel", False, "no_call", "ast_decoder:decoder_failed", "no tool was called", (), ("f", "g")),
    CaseResult("d", "irrelevance", True),
]


def test_scores_per_category_tool_and_error_class() -> None:
    report = EvalReport("test", "bfcl:x", RESULTS, {"retry": False}, 12.0)
    assert (report.score.total, report.score.passed) == (4, 2)
    assert {k: (v.passed, v.total) for k, v in report.categories.items()} == {
        "simple": (1, 2),
        "parallel": (0, 1),
        "irrelevance": (1, 1),
    }
    assert {k: (v.passed, v.total) for k, v in report.tools.items()} == {"f": (1, 3), "g": (0, 1)}
    assert report.errors["wrong_value"] == 1 and report.errors["no_call"] == 1
    assert list(report.errors) == list(ERROR_CLASSES)
    assert report.first_attempt is None


def test_the_json_shape_is_stable() -> None:
    data = EvalReport("test", "bfcl:x", RESULTS, {"retry": False}, 12.0).to_json()
    assert json.loads(json.dumps(data)) == data  # plain JSON
    assert list(data) == [
        "format", "model", "dataset", "options", "total", "passed", "accuracy", "categories", "tools",
        "errors", "first_attempt", "repairs", "seconds", "cases",
    ]  # fmt: skip
    assert data["format"] == FORMAT == "agentkit.eval/1"
    assert (data["total"], data["passed"], data["accuracy"]) == (4, 2, 0.5)
    assert data["categories"]["simple"] == {"total": 2, "passed": 1, "accuracy": 0.5}
    first, second = data["cases"][:2]
    assert first["calls"] == [{"name": "f", "arguments": {"x": 1}}]
    assert second["calls"] == [{"name": "f", "arguments": '{"x": 2'}]  # kept as sent: not JSON
    assert list(first) == [
        "id", "category", "passed", "error", "bfcl_error", "detail", "calls", "expected_tools", "first_passed",
        "retried", "repairs", "seconds",
    ]  # fmt: skip


def test_retry_is_reported_beside_the_first_attempt() -> None:
    results = [
        CaseResult("a", "simple", True, first_passed=False, retried=True),
        CaseResult("b", "simple", True, first_passed=True),
    ]
    report = EvalReport("test", "x", results)
    assert report.first_attempt is not None and report.first_attempt.passed == 1
    assert report.to_json()["first_attempt"] == {"passed": 1, "accuracy": 0.5}
    assert "first attempt  50.0%  (retry with validation feedback: +50.0%)" in report.text()


def test_the_text_report_reads_well() -> None:
    text = EvalReport("test", "bfcl:x", RESULTS, seconds=12.0).text(failures=1)
    assert text.splitlines()[:2] == ["agentkit eval: test on bfcl:x", "  accuracy  50.0%  (2/4)  in 12 s"]
    assert "  simple                    50.0%  (1/2)" in text
    assert "wrong_value" in text and "no_call" in text
    assert "failures (first 1 of 2)\n  b: wrong_value: f: 'x' = 2" in text
