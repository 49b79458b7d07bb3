"""The command line as scripts use it: --version, exit statuses, --help examples, pipes, progress, its words.

Issue 22 §4 and §5.6. The JSON documents themselves are in test_cli_json.py.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import agentkit
from agentkit.cli import _parser, main  # pyright: ignore[reportPrivateUsage]

ROOT = Path(__file__).resolve().parents[1]
TOOLS = "tests.cli_fixtures:tools"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def agentkit_process(*argv: str, **options: Any) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("TERM", None)
    env.pop("PYTHONUNBUFFERED", None)  # unbuffered text writes drop what a closed pipe refuses, silently
    return subprocess.Popen([sys.executable, "-m", "agentkit", *argv], cwd=ROOT, env=env, **options)


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    """Regression: ``agentkit --version`` was a usage error ("the following arguments are required: COMMAND")."""
    assert run(capsys, "--version") == (0, f"agentkit {agentkit.__version__}\n", "")


# ---- exit statuses: 0 ok, 1 findings, 2 usage ----------------------------------------------------------------

NOT_ACTIVE = ["--aliases", "--tool-choice", "add", "--active-tools", "weather.forecast"]
STATUSES = [
    (["call", TOOLS, "add", '{"a": 2}'], 0),
    (["lint", TOOLS, "-p", "gemini"], 0),
    (["run", TOOLS, "add", "-m", "test"], 0),
    (["lint", TOOLS, "-p", "openai"], 1),  # a vendor rejects a tool
    (["inspect", TOOLS, "-p", "openai"], 1),  # ... so its payload cannot be built
    (["call", TOOLS, "add", '{"a": "x"}'], 1),  # the tool's schema refuses the arguments
    (["call", "tests.cli_fixtures:failing", "boom", '{"x": 1}'], 1),  # the tool raised
    (["call", "tests.cli_fixtures:guarded", "wire_money", '{"amount": 5}'], 1),  # not approved
    (["run", TOOLS, "add", "--max-steps", "1"], 1),  # no answer within the steps
    (["run", "tests.cli_fixtures:guarded", "pay"], 1),  # paused for approval
    ([], 2),
    (["inspect"], 2),
    (["lint", TOOLS, "--no-such-flag"], 2),
    (["inspect", TOOLS, "-p", "openaii"], 2),
    (["inspect", "tests.cli_fixtures:nope"], 2),  # the target cannot be loaded
    (["inspect", "tests.cli_fixtures:Weather"], 2),  # ... or is a class, not tools
    (["call", TOOLS, "add", '{"a": '], 2),  # ARGUMENTS is not JSON
    (["call", TOOLS, "add", "[1, 2]"], 2),  # ... nor an object
    (["run", TOOLS, "hi", "-m", "opena:gpt"], 2),  # -m names no vendor
    (["run", "tests.cli_fixtures:modelless", "hi"], 2),  # no model, and no -m
    (["run", TOOLS, "hi", "--max-steps", "0"], 2),
    (["inspect", TOOLS, "-p", "anthropic", "--aliases", "--tool-choice", "nope"], 2),
    (
        [
            "inspect",
            TOOLS,
            "-p",
            "anthropic",
            "--aliases",
            "--tool-choice",
            "add",
            "--active-tools",
            "weather.forecast",
        ],
        2,
    ),
]


@pytest.mark.parametrize(("argv", "status"), STATUSES, ids=[" ".join(a) or "(nothing)" for a, _ in STATUSES])
def test_exit_status(capsys: pytest.CaptureFixture[str], argv: list[str], status: int) -> None:
    got, _, err = run(capsys, *argv)
    assert got == status, err
    assert "Traceback" not in err
    if status == 2 or argv[0] != "lint":  # lint's findings are its report
        assert ("error: " in err) == (status != 0), err


def test_every_status_is_documented() -> None:
    page = (ROOT / "docs" / "cli.md").read_text()
    table = page.split("## Exit status", 1)[1].split("\n## ", 1)[0]
    for status in ("0", "1", "2", "130", "141"):
        assert f"| {status} |" in table, status


# ---- --help: an example each, and every example is a valid command line ---------------------------------------

HELPS = [[], ["inspect"], ["lint"], ["call"], ["run"], ["eval"], ["mcp"], ["mcp", "serve"], ["dev"]]


def _examples(text: str) -> list[str]:
    section = text.split("examples:\n", 1)[1] if "examples:\n" in text else ""
    return [line.strip() for line in section.split("\n\n", 1)[0].splitlines() if line.strip().startswith("agentkit")]


@pytest.mark.parametrize("command", HELPS, ids=lambda c: " ".join(c) or "agentkit")
def test_every_help_shows_examples_that_parse(capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    """Regression: no --help text showed an example."""
    status, out, _ = run(capsys, *command, "--help")
    assert status == 0 and "usage: agentkit" in out
    examples = _examples(out)
    assert examples, f"`agentkit {' '.join(command)} --help` shows no example"
    for example in examples:
        argv = shlex.split(example.split(" | ", 1)[0])[1:]
        if argv[:1] == ["dev"]:
            from agentkit.playground import _parser as dev_parser  # pyright: ignore[reportPrivateUsage]

            dev_parser().parse_args(argv[1:])
        else:
            _parser().parse_args(argv)  # raises on a usage error
        if len(command) == 1 and command != ["mcp"]:
            assert argv[0] == command[0], example  # a command's examples are of that command


# ---- a reader that goes away (`| head -1`) ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [["inspect", "tests.cli_fixtures:many"], ["lint", "tests.cli_fixtures:many", "-p", "openai", "--json"], ["--help"]],
    ids=lambda a: a[0],
)
def test_a_reader_that_goes_away_ends_the_command_quietly(argv: list[str]) -> None:
    """Regression: ``agentkit inspect ... | head -1`` ended in BrokenPipeError."""
    process = agentkit_process(*argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.readline()  # what `head -1` reads, before it exits
    process.stdout.close()
    err = process.stderr.read().decode()
    process.stderr.close()
    status = process.wait(timeout=120)
    assert err == ""
    # 128 + SIGPIPE, as `yes | head -1`; a text short enough for the pipe's buffer was all written before
    assert status == 141 or (status == 0 and argv == ["--help"])


# ---- progress: on a terminal only ------------------------------------------------------------------------------


def _stderr_of(argv: list[str], terminal: bool) -> str:
    """stderr of `agentkit ARGV`, written to a pseudo-terminal or to a pipe."""
    if not terminal:
        done = agentkit_process(*argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        return done.communicate(timeout=120)[1].decode()
    import pty

    leader, follower = pty.openpty()
    process = agentkit_process(*argv, stdout=subprocess.DEVNULL, stderr=follower)
    os.close(follower)
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the other end closed (EIO on Linux)
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    process.wait(timeout=120)
    return b"".join(chunks).decode()


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
@pytest.mark.parametrize(
    ("argv", "shown"),
    [
        (["lint", TOOLS, "-p", "gemini", "-p", "mistral"], "checking mistral (2/2"),
        (["run", TOOLS, "add"], "asking test"),
    ],
    ids=["lint", "run"],
)
def test_progress_is_shown_on_a_terminal_only(argv: list[str], shown: str) -> None:
    on_terminal = _stderr_of(argv, terminal=True)
    assert shown in on_terminal and "\x1b[2K" in on_terminal
    assert on_terminal.endswith("\r\x1b[2K")  # cleared: the terminal is left as it was
    assert _stderr_of(argv, terminal=False) == ""  # piped: nothing but what the command says


# ---- the command line's own words ------------------------------------------------------------------------------

PYTHON_WORDS = re.compile(r"\b[a-z_]+=(True|False|None|'|\"|\[|\.\.\.)|Output\(|\.override\(|Metaclass|Registry\(\[")
FAILURES = [
    ["inspect", TOOLS, "-p", "openai"],
    ["inspect", "tests.cli_fixtures:dotted", "-p", "openai"],
    ["lint", "tests.cli_fixtures:Weather"],
    ["inspect", "tests.cli_fixtures:Weather"],
    ["call", "tests.cli_fixtures:Weather", "x"],
    ["inspect", "tests.cli_fixtures:loose", "-p", "openai", "--strict"],
    ["inspect", "tests.cli_fixtures:forecaster", "-p", "gemini", "--output-mode", "native"],
    ["run", "tests.cli_fixtures:modelless", "hi"],
    ["inspect", TOOLS, "-p", "anthropic", *NOT_ACTIVE],
]


@pytest.mark.parametrize("argv", FAILURES, ids=lambda a: " ".join(a[:3]))
def test_errors_give_flags_not_python_arguments(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    """Regression: hints said ``pass aliases=True`` and named ``ModelMetaclass`` on the command line."""
    status, _, err = run(capsys, *argv)
    assert status != 0 and "error: " in err
    assert PYTHON_WORDS.search(err) is None, err


def test_the_flags_the_errors_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert "pass --aliases" in run(capsys, "inspect", TOOLS, "-p", "openai")[2]
    assert "pass --aliases" in run(capsys, "inspect", "tests.cli_fixtures:dotted", "-p", "openai")[2]
    err = run(capsys, "inspect", "tests.cli_fixtures:Weather")[2]
    assert "is the class 'Weather' (a pydantic model)" in err and "--output tests.cli_fixtures:Weather" in err
    strict = run(capsys, "inspect", "tests.cli_fixtures:loose", "-p", "openai", "--strict")[2]
    assert "Leave out --strict" in strict and "/properties/tags" in strict  # the problems are listed, not cut
    assert (
        "--output-mode tool"
        in run(capsys, "inspect", "tests.cli_fixtures:forecaster", "-p", "gemini", "--output-mode", "native")[2]
    )
    assert "pass -m vendor:model-name (or -m test)" in run(capsys, "run", "tests.cli_fixtures:modelless", "hi")[2]


def test_a_multi_line_error_keeps_its_lines(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Regression: only the first line ("Cannot make a tool of f:") of a definition error was printed."""
    module = tmp_path / "badtools.py"
    module.write_text("def f(a, b):\n    return a\n\ntools = [f]\n")
    status, _, err = run(capsys, "lint", f"{module}:tools")
    assert status == 1 and "parameter 'a'" in err and "parameter 'b'" in err, err


# ---- agentkit run: an answer header only for an answer ----------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["run", "tests.cli_fixtures:guarded", "pay"], "[waiting] wire_money("),
        (["run", TOOLS, "add", "--max-steps", "1"], "[tool] add("),
    ],
    ids=["approval", "max-steps"],
)
def test_run_without_an_answer_prints_no_answer_header(
    capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    """Regression: ``agentkit run`` printed ``[answer]`` (and nothing) before failing on a pending approval."""
    status, out, err = run(capsys, *argv)
    assert status == 1 and said in out and "[answer]" not in out
    assert err.count("\n") == 1


def test_run_says_what_a_waiting_call_waits_for(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "run", "tests.cli_fixtures:guarded", "pay")
    assert out.startswith('[waiting] wire_money({"amount": ') and out.rstrip().endswith("-> awaiting approval")
    assert "awaiting approval: wire_money (" in err and "nothing ran" in err
    status, out, err = run(capsys, "run", TOOLS, "add", "--max-steps", "1")
    assert "used all 1 of its steps (--max-steps 1)" in err


def test_text_that_is_not_unicode_is_printed_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    """A tool result holding a lone surrogate (a file name) cannot be written as UTF-8: it is shown as its escape."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8"}
    for argv in (["call", "tests.cli_fixtures:odd", "listing"], ["run", "tests.cli_fixtures:odd", "ls"]):
        done = subprocess.run(
            [sys.executable, "-m", "agentkit", *argv], cwd=ROOT, env=env, capture_output=True, timeout=120, check=False
        )
        assert done.returncode == 0 and b"caf\\udce9.txt" in done.stdout, done.stderr
