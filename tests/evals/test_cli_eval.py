"""``agentkit eval`` (agentkit/evals/_cli.py, wired into agentkit.cli)."""

from __future__ import annotations

import http.server
import json
import threading
from pathlib import Path
from typing import Any

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


class _ChatServer(http.server.BaseHTTPRequestHandler):
    """An OpenAI-compatible chat endpoint: a weather question gets a call, anything else a greeting."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        asked = json.dumps(body["messages"])
        message: dict[str, object] = {"role": "assistant", "content": "Hello!"}
        if "Paris" in asked:
            arguments = json.dumps({"city": "Paris", "unit": "fahrenheit", "days": 2})
            call = {"id": "call_1", "type": "function", "function": {"name": "weather.get", "arguments": arguments}}
            message = {"role": "assistant", "content": None, "tool_calls": [call]}
        answer = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_a_cassette_records_an_eval_once_and_replays_it_offline(
    capsys: pytest.CaptureFixture[str], cases: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-never-written")
    for name in ("CI", "AGENTKIT_CASSETTES"):  # the default outside CI records a missing file (CI's replays only)
        monkeypatch.delenv(name, raising=False)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _ChatServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    cassette = tmp_path / "eval.json"
    argv = [TARGET, "-d", cases, "-m", "openai:local", "--base-url", url, "--json", "--cassette", str(cassette)]
    try:
        status, recorded, _ = run(capsys, *argv)  # the file is missing: recorded
    finally:
        server.shutdown()
        server.server_close()
    assert status == 0 and cassette.exists()
    assert "sk-test-never-written" not in cassette.read_text()
    first = json.loads(recorded)
    assert first["passed"] == 2, first  # paris (a call) and hello (no call)

    status, replayed, _ = run(capsys, *argv, "--cassette-mode", "replay")  # the server is gone
    assert status == 0
    def timeless(report: dict[str, Any]) -> list[dict[str, Any]]:
        return [{k: v for k, v in case.items() if k != "seconds"} for case in report["cases"]]

    again = json.loads(replayed)
    assert timeless(again) == timeless(first) and again["passed"] == 2

    cases_file = Path(cases)
    cases_file.write_text(cases_file.read_text().replace("Say hello.", "Say hi."))  # a question changed
    status, _, err = run(capsys, *argv, "--cassette-mode", "replay")
    assert status == 1 and "--cassette" in err and "record it again" in err


def test_under_ci_a_missing_cassette_fails_instead_of_reaching_the_vendor(
    capsys: pytest.CaptureFixture[str], cases: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", "true")
    monkeypatch.delenv("AGENTKIT_CASSETTES", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-never-written")
    cassette = tmp_path / "eval.json"
    url = "http://127.0.0.1:9/v1"  # nothing listens: a request sent would fail differently
    argv = [TARGET, "-d", cases, "-m", "openai:local", "--base-url", url, "--cassette", str(cassette)]
    status, _, err = run(capsys, *argv)
    assert status == 1 and "does not exist and the mode is replay" in err and not cassette.exists()


def test_cassette_mode_without_a_cassette_is_a_usage_error(capsys: pytest.CaptureFixture[str], cases: str) -> None:
    status, _, err = run(capsys, TARGET, "-d", cases, "-m", "test", "--cassette-mode", "replay")
    assert status == 2 and "--cassette-mode needs --cassette FILE" in err
