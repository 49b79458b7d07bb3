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
    assert status == 2 and "no attribute 'nope'" in err
    status, _, err = run(capsys, "inspect", "tests.cli_fixtures:guardd")
    assert status == 2 and "did you mean 'guarded'?" in err
    status, _, err = run(capsys, "inspect", "not_a_module_xyz:tools")
    assert status == 2 and "cannot import 'not_a_module_xyz'" in err and "path/to/file.py:attribute" in err


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


def test_call_names_a_missing_argument_in_its_own_words(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 17 §4.9: pydantic's "Missing required keyword only argument" reached the user."""
    status, out, err = run(capsys, "call", TARGET, "add", "{}")
    assert (status, out) == (1, "")
    assert err == "agentkit call: error: invalid arguments for 'add': $.a: Missing required argument 'a' (got {})\n"


def test_a_tool_that_raises_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "call", "tests.cli_fixtures:failing", "boom", '{"x": 1}')
    assert status == 1 and out == ""
    assert err == "agentkit call: error: 'boom' raised RuntimeError: disk 1 on fire\n"


def test_a_module_that_fails_to_import_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Any) -> None:
    module = tmp_path / "badmod.py"
    module.write_text('raise ValueError("config missing")\n')
    status, _, err = run(capsys, "inspect", f"{module}:tools")
    assert status == 2 and err.count("\n") == 1 and "ValueError: config missing" in err


def test_a_run_that_stops_for_approval_exits_non_zero(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "run", "tests.cli_fixtures:guarded", "pay", "-m", "test")
    assert status == 1 and "awaiting approval: wire_money" in err


# ---- one loader for every command (file.py:attr finds the modules beside it) --------------------------


def _project(tmp_path: Any, name: str) -> Any:
    """A folder with tools that import a helper module beside them, as a user's project does."""
    folder = tmp_path / name
    folder.mkdir()
    (folder / f"{name}_helpers.py").write_text("def double(x: int) -> int:\n    return 2 * x\n")
    (folder / f"{name}_tools.py").write_text(
        "from agentkit import Registry, tool\n"
        f"from {name}_helpers import double\n\n"
        "@tool\ndef twice(x: int) -> int:\n    '''Double a number.'''\n    return double(x)\n\n"
        "tools = Registry([twice])\n"
    )
    return folder / f"{name}_tools.py"


def test_a_file_target_imports_the_modules_beside_it(capsys: pytest.CaptureFixture[str], tmp_path: Any) -> None:
    """Regression: ``file.py:attr`` could not import its siblings (CLI and mcp serve alike)."""
    status, out, err = run(capsys, "call", f"{_project(tmp_path, 'cliproj')}:tools", "twice", '{"x": 21}')
    assert (status, out.strip(), err) == (0, "42", "")


def test_mcp_serve_loads_targets_with_the_same_loader(tmp_path: Any) -> None:
    from agentkit.mcp import load_registry

    registry = load_registry(f"{_project(tmp_path, 'mcpproj')}:tools")
    assert list(registry) == ["twice"] and registry["twice"].invoke({"x": 4}) == 8


def test_both_commands_give_the_same_message_for_a_bad_target(capsys: pytest.CaptureFixture[str]) -> None:
    from agentkit.mcp import MCPLoadError, load_registry

    status, _, err = run(capsys, "inspect", "tests.cli_fixtures:nope")
    with pytest.raises(MCPLoadError) as info:
        load_registry("tests.cli_fixtures:nope")
    assert status == 2 and err == f"agentkit inspect: error: {info.value}\n"


# ---- approvals on the command line -----------------------------------------------------------------------


def test_call_refuses_a_tool_that_requires_approval_without_approve(capsys: pytest.CaptureFixture[str]) -> None:
    """Regression: ``agentkit call`` ran a requires_approval tool without asking."""
    from tests.cli_fixtures import REFUNDS

    REFUNDS.clear()
    status, out, err = run(capsys, "call", "tests.cli_fixtures:guarded", "wire_money", '{"amount": 5}')
    assert status == 1 and out == "" and "requires approval" in err and "--approve" in err
    # the policy sees the validated arguments with their defaults: {} means amount=500, which needs approval
    status, out, err = run(capsys, "call", "tests.cli_fixtures:refunds", "refund", "{}")
    assert status == 1 and "requires approval" in err and REFUNDS == []
    status, out, _ = run(capsys, "call", "tests.cli_fixtures:refunds", "refund", '{"amount": 50}')
    assert (status, json.loads(out), REFUNDS) == (0, "refunded 50", [50])  # under the policy's threshold
    status, out, _ = run(capsys, "call", "tests.cli_fixtures:refunds", "refund", "{}", "--approve")
    assert (status, json.loads(out), REFUNDS) == (0, "refunded 500", [50, 500])


class _Terminal:
    def __init__(self, answer: str) -> None:
        self.answer = answer

    def isatty(self) -> bool:
        return True

    def readline(self) -> str:
        return self.answer


@pytest.mark.parametrize(("answer", "runs"), [("y\n", True), ("n\n", False), ("\n", False)])
def test_call_asks_on_a_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, answer: str, runs: bool
) -> None:
    monkeypatch.setattr(sys, "stdin", _Terminal(answer))
    status, out, err = run(capsys, "call", "tests.cli_fixtures:guarded", "wire_money", '{"amount": 5}')
    assert "'wire_money' requires approval. Run it with {\"amount\": 5}? [y/N]" in err
    if runs:
        assert (status, json.loads(out)) == (0, "sent 5")
    else:
        assert status == 1 and out == "" and "was not approved; nothing ran" in err


# ---- agentkit run: the model's mistakes reported, the answer as text -----------------------------------------


def test_run_reports_malformed_model_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    """Regression: ``agentkit run`` died on arguments that are not JSON instead of reporting them."""
    status, out, err = run(capsys, "run", "tests.cli_fixtures:sloppy", "add")
    assert status == 0, err
    first = out.splitlines()[0]
    assert first.startswith('[tool] add("{\\"a\\": 1, \\"b\\": " (not a JSON object)) -> error: ')
    assert "[answer] sloppy-model:\nsorry, my arguments were broken" in out


def test_run_prints_arguments_as_the_input_transform_shows_them(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 17 §2.4: ``agentkit run`` printed the raw arguments (a card number) an input transform masks."""
    status, out, err = run(capsys, "run", "tests.cli_fixtures:charging", "pay")
    assert status == 0, err
    assert "4111111111111111" not in out and "4111" not in out.replace("****1111", "")
    ok, failed = out.splitlines()[:2]
    assert ok == '[tool] charge({"card": "****1111", "amount": 5}) -> ok: charged 5'
    assert failed.startswith('[tool] charge({"card": "****1111", "amount": "x"}) -> error: ')
    assert "[answer] charging-model:\ndone" in out


def test_run_survives_arguments_nested_5000_deep(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 17 §2.4: ``agentkit run`` crashed (RecursionError) printing such arguments."""
    status, out, err = run(capsys, "run", "tests.cli_fixtures:deep", "add")
    assert status == 0, err
    text, parsed = out.splitlines()[:2]
    assert text.startswith('[tool] add("{\\"a\\": [[[[') and "(not a JSON object)) -> error: Invalid arguments" in text
    assert parsed.startswith('[tool] add({"a": [[[[') and "...<" in parsed and ") -> error: Invalid arguments" in parsed
    assert all(len(line) < 700 for line in out.splitlines())  # bounded, whatever the model sent


def test_run_prints_the_test_models_answer_readably(capsys: pytest.CaptureFixture[str]) -> None:
    """Regression: the answer was printed as escaped JSON, as if a model had written it."""
    status, out, _ = run(capsys, "run", TARGET, "add two numbers", "-m", "test")
    answer = out.split("[answer] ", 1)[1]
    assert status == 0 and answer.startswith("from the offline test model")
    assert '\\"' not in answer and "  weather.forecast: {" in answer


def test_a_tool_or_run_that_suspends_says_what_it_asked(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "call", "tests.cli_fixtures:asking", "ask_seat", '{"flight": "LH1"}')
    assert status == 1 and out == "" and err.count("\n") == 1
    assert "asked for input ({'question': 'Which seat on LH1?'}), which the command line cannot give" in err
    status, _, err = run(capsys, "run", "tests.cli_fixtures:asking", "book", "-m", "test")
    assert status == 1 and "the run paused (suspended), waiting for: ask_seat (" in err and "suspension)" in err


def test_a_question_of_a_tool_the_registry_redacts_is_withheld(capsys: pytest.CaptureFixture[str]) -> None:
    """Regression: `agentkit call` applied the tool's own transform only, not the registry's policy."""
    status, _, err = run(capsys, "call", "tests.cli_fixtures:asking_masked", "ask_seat", '{"flight": "LH1"}')
    assert status == 1 and "LH1" not in err and "suspension withheld: the tool's input is redacted" in err


def test_lint_reports_a_request_past_a_vendors_tool_limit(capsys: pytest.CaptureFixture[str], tmp_path: Any) -> None:
    """Issue 17 §5.1: 129 tools went to OpenAI Chat unreported (the API answers 400)."""
    module = tmp_path / "many_tools.py"
    module.write_text(
        "from agentkit import Registry, Tool\n"
        "def make(i):\n"
        "    def f(x: int) -> int:\n"
        "        return x\n"
        "    f.__name__ = f'tool_{i}'\n"
        "    f.__doc__ = 'A tool.'\n"
        "    return Tool(f)\n"
        "tools = Registry([make(i) for i in range(129)])\n"
    )
    status, out, _ = run(capsys, "lint", f"{module}:tools", "-p", "openai")
    assert status == 1
    assert "openai / (request): REJECTED" in out and "129 tools in one request: openai takes at most 128" in out
