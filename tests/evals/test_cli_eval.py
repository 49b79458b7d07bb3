"""``agentkit eval`` (agentkit/evals/_cli.py, wired into agentkit.cli)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentkit.cli import main
from tests.evals.fixtures import CASES

TARGET = "tests.evals.fixtures:tools"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["eval", *argv])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def cases(tmp_path: Path) -> str:
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(json.dumps(c) for c in CASES))
    return str(path)


def test_self_test(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "--self-test")
    assert status == 0 and "0 judged wrongly" in out


def test_a_case_file_on_the_test_model_gives_a_text_report(capsys: pytest.CaptureFixture[str], cases: str) -> None:
    status, out, err = run(capsys, TARGET, "--dataset", cases, "--model", "test")
    assert status == 0 and err == ""  # no progress bar off a terminal
    assert out.startswith("agentkit eval: test on ") and "by category" in out and "weather" in out


def test_json_output_and_file(capsys: pytest.CaptureFixture[str], cases: str, tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    status, out, _ = run(capsys, TARGET, "-d", cases, "-m", "test", "--json", "-o", str(target), "-j", "1")
    data = json.loads(out)
    assert status == 0 and data == json.loads(target.read_text())
    assert data["format"] == "agentkit.eval/1" and data["total"] == 3
    # the test model calls every tool: the question that expects no call fails as unexpected_call
    hello = next(c for c in data["cases"] if c["id"] == "hello")
    assert hello["error"] == "unexpected_call"


def test_min_accuracy_fails_the_command(capsys: pytest.CaptureFixture[str], cases: str) -> None:
    status, _, err = run(capsys, TARGET, "-d", cases, "-m", "test", "--min-accuracy", "0.9")
    assert status == 1 and "below --min-accuracy 90.0%" in err


def test_bfcl_with_a_limit(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "-d", "bfcl:simple,irrelevance", "-m", "test", "--limit", "6", "--json")
    data = json.loads(out)
    assert status == 0 and data["total"] == 6 and set(data["categories"]) == {"simple_python", "irrelevance"}
    assert data["dataset"] == "bfcl:simple,irrelevance (6 drawn, seed 0)"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-d", "bfcl:nope", "-m", "test"], "unknown BFCL category 'nope'"),
        (["-m", "test"], "--dataset and --model are required"),
        (["-d", "cases.jsonl", "-m", "test"], "pass the registry"),
        (["-d", "bfcl", "-m", "test", "--base-url", "http://127.0.0.1:1/v1"], "--base-url needs a vendor:model-name"),
    ],
)
def test_bad_usage_is_one_line_and_status_2(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    status, out, err = run(capsys, *argv)
    assert (status, out) == (2, "") and message in err and err.count("\n") == 1
