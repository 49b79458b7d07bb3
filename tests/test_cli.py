"""The `agentkit` command line (issue 5, requirement 3.2)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from agentkit.cli import main

TARGET = "tests.cli_fixtures:tools"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_inspect_prints_the_provider_payload(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "inspect", TARGET, "--provider", "anthropic", "--aliases", "--tool-choice", "required")
    assert status == 0
    payload = json.loads(out)
    assert payload["tool_choice"] == {"type": "any"}
    assert [t["name"] for t in payload["tools"]][0] == "add"
    assert payload["tools"][1]["name"] != "weather.forecast"  # aliased: Anthropic rejects dots


def test_inspect_without_aliases_is_one_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "inspect", TARGET, "--provider", "openai")
    assert status == 1 and out == ""
    assert err.count("\n") == 1 and "weather.forecast" in err and "aliases" in err


def test_lint_reports_per_provider(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "lint", TARGET, "-p", "gemini", "-p", "openai", "--strict")
    assert status == 1  # openai rejects the dotted key
    assert "gemini / weather.forecast: ok" in out
    assert "openai / weather.forecast: REJECTED" in out
    assert "exclusiveMinimum" in out or "default" in out  # lossy rewrites are listed
    status, out, _ = run(capsys, "lint", TARGET, "-p", "gemini")
    assert status == 0


def test_call_validates_and_prints_json(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "call", TARGET, "add", '{"a": 2}')
    assert (status, json.loads(out)) == (0, 3)
    status, out, err = run(capsys, "call", TARGET, "add", '{"a": "x"}')
    assert status == 1 and "$.a" in err and err.count("\n") == 1
    status, _, err = run(capsys, "call", TARGET, "ad")
    assert status == 1 and "Did you mean 'add'" in err


def test_bad_targets(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "inspect", "no_colon")[0] == 2
    status, _, err = run(capsys, "inspect", "tests.cli_fixtures:nope")
    assert status == 1 and "no attribute 'nope'" in err
    status, _, err = run(capsys, "inspect", "not_a_module_xyz:tools")
    assert status == 1 and "cannot import" in err


@pytest.mark.parametrize("command", [[], ["inspect"], ["lint"], ["call"], ["mcp", "serve"], ["run"]])
def test_help_for_every_command(command: list[str]) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "agentkit", *command, "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert "usage: agentkit" in out


def test_run_a_registry_with_the_test_model(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "run", TARGET, "add two numbers", "-m", "test")
    assert status == 0
    assert "[tool] add(" in out and "-> ok" in out  # TestModel called the tool with schema-valid arguments
    assert "[tool] weather.forecast(" in out


def test_run_with_an_unknown_vendor_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "run", TARGET, "hi", "-m", "opena:gpt")
    assert status == 1 and "Did you mean 'openai:'" in err and err.count("\n") == 1


def test_a_tool_that_raises_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "call", "tests.cli_fixtures:failing", "boom", '{"x": 1}')
    assert status == 1 and out == ""
    assert err == "agentkit call: error: 'boom' raised RuntimeError: disk 1 on fire\n"


def test_a_module_that_fails_to_import_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Any) -> None:
    module = tmp_path / "badmod.py"
    module.write_text('raise ValueError("config missing")\n')
    status, _, err = run(capsys, "inspect", f"{module}:tools")
    assert status == 1 and err.count("\n") == 1 and "ValueError: config missing" in err


def test_a_run_that_stops_for_approval_exits_non_zero(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "run", "tests.cli_fixtures:guarded", "pay", "-m", "test")
    assert status == 1 and "awaiting approval: wire_money" in err


def test_a_tool_or_run_that_suspends_says_what_it_asked(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "call", "tests.cli_fixtures:asking", "ask_seat", '{"flight": "LH1"}')
    assert status == 1 and out == "" and err.count("\n") == 1
    assert "asked for input ({'question': 'Which seat on LH1?'}), which the command line cannot give" in err
    status, _, err = run(capsys, "run", "tests.cli_fixtures:asking", "book", "-m", "test")
    assert status == 1 and "the run paused (suspended), waiting for: ask_seat (" in err and "suspension)" in err
