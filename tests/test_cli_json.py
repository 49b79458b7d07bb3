"""``--json``: each command's document has the shape docs/cli.md writes down (issue 22 §4).

The documented examples are read from the page, so the page and the program cannot drift apart: every
key the page shows is there, and no other (payload keys hold the user's own data and are not compared).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from agentkit._cli._json import document
from agentkit.cli import main

ROOT = Path(__file__).resolve().parents[1]
DATA_KEYS = frozenset({"payload", "input", "output", "arguments", "error"})  # JSON data of the user's own


def documented() -> dict[str, Any]:
    """The example document of each format, from docs/cli.md's ```json blocks."""
    page = (ROOT / "docs" / "cli.md").read_text()
    examples = [json.loads(block) for block in re.findall(r"```json\n(.*?)```", page, flags=re.S)]
    return {example["format"]: example for example in examples}


def keys(value: Any, where: str = "$") -> dict[str, set[str]]:
    """Every object's keys, by path (list items merged under ``[]``); payload keys' contents skipped."""
    found: dict[str, set[str]] = {}
    if isinstance(value, dict):
        found[where] = set(value)
        for key, item in value.items():
            if key not in DATA_KEYS:
                for path, names in keys(item, f"{where}.{key}").items():
                    found.setdefault(path, set()).update(names)
    elif isinstance(value, list):
        for item in value:
            for path, names in keys(item, f"{where}[]").items():
                found.setdefault(path, set()).update(names)
    return found


def emitted(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any], str]:
    status = main([*argv, "--json"])
    out, err = capsys.readouterr()
    return status, json.loads(out), err  # one document, nothing else on stdout


CASES = [
    ("agentkit.inspect/1", 0, ["inspect", "tests.cli_fixtures:forecaster", "-p", "openai"]),
    ("agentkit.lint/1", 1, ["lint", "tests.cli_fixtures:tools", "-p", "openai"]),
    ("agentkit.call/1", 0, ["call", "tests.cli_fixtures:tools", "add", '{"a": 1}']),
    ("agentkit.run/1", 1, ["run", "tests.cli_fixtures:guarded", "pay"]),
    ("agentkit.error/1", 2, ["call", "tests.cli_fixtures:tools", "add", "[1, 2]"]),
]


@pytest.mark.parametrize(("format_", "status", "argv"), CASES, ids=[c[0] for c in CASES])
def test_each_document_has_the_documented_shape(
    capsys: pytest.CaptureFixture[str], format_: str, status: int, argv: list[str]
) -> None:
    """Regression: ``--json`` was an unrecognised argument."""
    got_status, data, _ = emitted(capsys, *argv)
    assert (got_status, data["format"], next(iter(data))) == (status, format_, "format")
    example = documented()[format_]
    assert keys(data) == keys(example), f"{format_}: the output and docs/cli.md's example differ"


def test_the_documented_examples_are_what_the_commands_print(capsys: pytest.CaptureFixture[str]) -> None:
    """Beyond keys: the page's call, lint and error examples are real outputs of the fixtures."""
    docs = documented()
    assert emitted(capsys, "call", "tests.cli_fixtures:tools", "add", '{"a": 1}')[1] == docs["agentkit.call/1"]
    assert emitted(capsys, "call", "tests.cli_fixtures:tools", "add", "[1, 2]")[1] == docs["agentkit.error/1"]
    lint = emitted(capsys, "lint", "tests.cli_fixtures:tools", "-p", "openai")[1]
    rejected = [r for r in lint["results"] if r["rejected"]]
    assert lint["summary"] == docs["agentkit.lint/1"]["summary"]
    assert rejected[0]["name_problem"] == docs["agentkit.lint/1"]["results"][0]["name_problem"]
    run = emitted(capsys, "run", "tests.cli_fixtures:guarded", "pay")[1]
    assert run["pending"] == docs["agentkit.run/1"]["pending"] and run["usage"] == docs["agentkit.run/1"]["usage"]


def test_a_complete_run_with_a_typed_answer(capsys: pytest.CaptureFixture[str]) -> None:
    status, data, err = emitted(capsys, "run", "tests.cli_fixtures:forecaster", "Weather in Paris?")
    assert (status, err) == (0, "")
    assert data["status"] == "complete" and data["reason"] == "the model answered"
    assert set(data["output"]) == {"city", "temperature"} and json.loads(data["text"]) == data["output"]
    assert data["tool_calls"][0]["state"] == "ok" and data["tool_calls"][0]["output"] == 21.5


def test_a_run_document_keeps_masked_arguments_masked(capsys: pytest.CaptureFixture[str]) -> None:
    status, data, _ = emitted(capsys, "run", "tests.cli_fixtures:charging", "pay")
    assert status == 0 and "4111111111111111" not in json.dumps(data)
    assert [c["input"]["card"] for c in data["tool_calls"]] == ["****1111", "****1111"]
    assert [c["state"] for c in data["tool_calls"]] == ["ok", "error"] and data["tool_calls"][1]["error"]


def test_an_inspect_document_says_how_the_output_is_asked_for(capsys: pytest.CaptureFixture[str]) -> None:
    _, native, _ = emitted(capsys, "inspect", "tests.cli_fixtures:forecaster", "-p", "openai")
    assert native["output"]["mode"] == "native" and "response_format" in native["payload"]
    _, tool, _ = emitted(capsys, "inspect", "tests.cli_fixtures:forecaster", "-p", "gemini")
    assert tool["output"]["mode"] == "tool" and "gemini" in tool["output"]["reason"]
    _, plain, _ = emitted(capsys, "inspect", "tests.cli_fixtures:tools", "-p", "anthropic", "--aliases")
    assert plain["output"] is None and plain["provider"] == "anthropic"


@pytest.mark.parametrize(
    ("argv", "status"),
    [
        (["call", "tests.cli_fixtures:failing", "boom", '{"x": 1}'], 1),
        (["inspect", "tests.cli_fixtures:nope"], 2),
        (["lint", "tests.cli_fixtures:tools", "--no-such-flag"], 2),
        (["run", "tests.cli_fixtures:tools", "hi", "-m", "opena:gpt"], 2),
        (["eval", "--dataset", "bfcl"], 2),  # a subcommand of its own module: the same document
    ],
    ids=["tool-raised", "bad-target", "bad-flag", "bad-model", "eval-without-model"],
)
def test_failures_print_the_error_document(capsys: pytest.CaptureFixture[str], argv: list[str], status: int) -> None:
    got, data, err = emitted(capsys, *argv)
    assert got == status and data["format"] == "agentkit.error/1" and data["status"] == status
    assert err.rstrip().endswith(data["error"])  # the same message as stderr's line
    assert data["command"] == argv[0]


def test_a_subcommand_document_must_agree_with_its_format() -> None:
    assert document("eval", {"format": "agentkit.eval/1", "total": 3}) == {"format": "agentkit.eval/1", "total": 3}
    with pytest.raises(ValueError, match="agentkit.eval/1"):
        document("eval", {"format": "agentkit.eval/2"})
