"""The local-server harness (dev/local_llm.py) without llama.cpp: a stand-in server, progress, cleanup."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
from pathlib import Path

import pytest

from dev import local_llm as local

FAKE_SERVER = r"""
import json, sys, time
from http.server import BaseHTTPRequestHandler, HTTPServer

busy_until = time.monotonic() + float(sys.argv[2])

class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/health":
            body = b'{"status": "ok"}'
        elif self.path == "/slots":
            body = json.dumps([{"id": 0, "is_processing": time.monotonic() < busy_until}]).encode()
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        print("request", *args, flush=True)

print("fake server starting", flush=True)
HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
"""


def fake(busy_for: float = 0.0) -> local.LlamaServer:
    return local.LlamaServer.spawn(
        lambda port: [sys.executable, "-c", FAKE_SERVER, str(port), str(busy_for)], timeout=30
    )


def test_a_dead_server_is_detected_and_replaced() -> None:
    keeper = local.ServerKeeper(fake)
    try:
        first = keeper.get()
        assert keeper.get() is first and keeper.restarts == 0  # alive and idle: reused
        first.process.kill()
        first.process.wait()
        second = keeper.get()
        assert second is not first and second.alive()
        assert keeper.restarts == 1
        assert "exited with code" in keeper.history[0] and "fake server starting" in keeper.history[0]
    finally:
        keeper.close()


def test_a_server_still_busy_with_an_abandoned_request_is_replaced() -> None:
    keeper = local.ServerKeeper(lambda: fake(busy_for=3600), idle_timeout=0.5)
    try:
        stuck = keeper.get()  # a fresh server is used as it is
        assert not stuck.wait_idle(0.3)
        assert keeper.get() is not stuck and keeper.restarts == 1
        assert "stayed busy" in keeper.history[0]
    finally:
        keeper.close()


def test_a_server_that_exits_at_once_is_an_error_with_its_output() -> None:
    with pytest.raises(local.LocalLLMError, match="exited with code 3 before it was ready:\n.*no model"):
        local.LlamaServer.spawn(lambda port: [sys.executable, "-c", "print('no model'); raise SystemExit(3)"])


def test_the_server_log_is_a_file_removed_on_stop_never_the_terminal(capfd: pytest.CaptureFixture[str]) -> None:
    before = set(Path(tempfile.gettempdir()).glob("agentkit-llm-server-*"))
    server = fake()
    assert local.is_ready(f"{server.base_url}/health")
    log = server.log_file
    assert log.is_file() and "fake server starting" in log.read_text()
    server.stop()
    assert not log.exists()
    assert set(Path(tempfile.gettempdir()).glob("agentkit-llm-server-*")) == before
    out, err = capfd.readouterr()
    assert "fake server" not in out + err


def test_a_log_file_given_by_the_caller_is_kept(tmp_path: Path) -> None:
    server = local.LlamaServer.spawn(
        lambda port: [sys.executable, "-c", FAKE_SERVER, str(port), "0"], log_file=tmp_path / "server.log"
    )
    server.stop()
    assert "fake server starting" in (tmp_path / "server.log").read_text()


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("[ 42%] Building CXX object common/CMakeFiles/x.dir/a.cpp.o", (42, 100)),
        ("[100%] Built target llama-server", (100, 100)),
        ("[12/345] Building CXX object ggml/src/ggml.c.o", (12, 345)),
        ("-- Configuring done", None),
    ],
)
def test_build_progress_reads_make_and_ninja_lines(line: str, expected: tuple[int, int] | None) -> None:
    assert local.build_progress(line) == expected


def test_plain_progress_reports_each_tenth_and_a_heartbeat() -> None:
    lines: list[str] = []
    reporter = local.Reporter(lines.append, live=False, every=0.2)
    with reporter.task("compiling", total=100) as update:
        for done in (1, 5, 12, 19, 55, 100):
            update(done)
        time.sleep(1.5)  # nothing new: the heartbeat still says where it is
    shown = [line.split(": ", 1)[1].split(",")[0] for line in lines[:-1]]
    assert shown[:4] == ["1% (1/100)", "12% (12/100)", "55% (55/100)", "100% (100/100)"]
    assert len(shown) > 4, "a heartbeat line while nothing moved"
    assert lines[-1].startswith("[local-llm] compiling: done in ")


def test_a_step_past_its_timeout_is_killed_and_named(tmp_path: Path) -> None:
    with pytest.raises(local.LocalLLMError, match="sleeper timed out after 1s"):
        local._run(
            [sys.executable, "-c", "import time; time.sleep(60)"], timeout=1, step="sleeper", log_file=tmp_path / "l"
        )


# a parent that starts a child holding the output pipe, as cmake starts make and the compilers
_PARENT_OF_A_SLEEPER = (
    "import subprocess, sys, time\n"
    "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'])\n"
    "print(child.pid, flush=True)\n"
    "time.sleep(300)\n"
)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a killed child stays a zombie until its parent (init here) reaps it: not running
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "Z"
    return False


def test_a_timed_out_step_kills_its_whole_process_group(tmp_path: Path) -> None:
    seen: list[str] = []
    started = time.monotonic()
    with pytest.raises(local.LocalLLMError, match="builder timed out after 2s"):
        local._run(
            [sys.executable, "-c", _PARENT_OF_A_SLEEPER], timeout=2, step="builder", log_file=tmp_path / "l",
            on_line=seen.append,
        )  # fmt: skip
    assert time.monotonic() - started < 60, "the output loop did not wait for the orphaned child"
    child = int(seen[0])
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)  # SIGKILL is delivered asynchronously: wait for the condition, bounded
    assert not _alive(child), "the step's child outlived the kill"


def test_a_step_is_judged_by_progress_not_wall_time(tmp_path: Path) -> None:
    # 3 s of work with a line every 0.2 s passes an idle budget of 1.5 s; silence then fails it
    printer = "import time\nfor i in range(15):\n    print(i, flush=True); time.sleep(0.2)\n"
    local._run([sys.executable, "-c", printer], timeout=120, idle_timeout=1.5, step="busy", log_file=tmp_path / "l")
    with pytest.raises(local.LocalLLMError, match="stalled made no progress for 2s"):
        local._run(
            [sys.executable, "-c", "import time; print('start', flush=True); time.sleep(60)"],
            timeout=120, idle_timeout=2, step="stalled", log_file=tmp_path / "l",
        )  # fmt: skip


def test_a_failing_step_quotes_its_output(tmp_path: Path) -> None:
    seen: list[str] = []
    with pytest.raises(local.LocalLLMError, match=r"(?s)boom failed with exit code 2 .*it broke"):
        local._run(
            [sys.executable, "-c", "print('it broke'); raise SystemExit(2)"],
            timeout=30,
            step="boom",
            log_file=tmp_path / "l",
            on_line=seen.append,
        )
    assert seen == ["it broke"]


def test_the_sdist_alone_is_built_from_source(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Regression: ``--no-binary=:all:`` made pip build every build dependency of the sdist from source."""
    calls: list[list[str]] = []

    def record(cmd: list[str], **kwargs: object) -> None:
        calls.append(list(cmd))
        raise local.LocalLLMError("stop here")

    monkeypatch.setattr(local, "_run", record)
    with pytest.raises(local.LocalLLMError, match="stop here"):
        local._llama_cpp_source(tmp_path, "0.3.36", tmp_path / "log", local.Reporter(lambda _: None, live=False))
    (download,) = calls
    assert "--no-binary=llama-cpp-python" in download and not any(":all:" in arg for arg in download)


def test_the_harness_is_not_in_the_package() -> None:
    import agentkit

    package = Path(agentkit.__file__).parent
    assert not list(package.rglob("*local_llm*")) and not list(package.rglob("*.jinja"))
    assert local.chat_template_path().is_file()
    assert os.path.commonpath([local.chat_template_path(), package]) != str(package)
