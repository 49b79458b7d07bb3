"""Cassettes: misses that name the path that changed, streams replayed chunk by chunk, modes, the pytest plugin."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from agentkit import Agent, tool
from agentkit.models import allow_model_requests
from agentkit.testing import Cassette, CassetteMiss

from .vendors import CASES, KEY, PROMPT, Server, network_blocked

ROOT = Path(__file__).resolve().parents[2]
ANTHROPIC = next(case for case in CASES if case.name == "anthropic")
OPENAI = next(case for case in CASES if case.name == "openai")


def _weather_agent(model: Any, description: str) -> Agent:
    @tool(description=description)
    def get_weather(city: str) -> str:
        return f"sunny in {city}"

    return Agent(id="described", model=model, tools=[get_weather])


async def test_a_changed_tool_description_misses_naming_the_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "weather.json"
    server = ANTHROPIC.server()
    with allow_model_requests(True), Cassette(path, mode="record"):
        await _weather_agent(ANTHROPIC.recording_model(server), "Get the weather.").generate(PROMPT)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with network_blocked(monkeypatch), pytest.raises(CassetteMiss) as missed, Cassette(path, mode="replay"):
        await _weather_agent(ANTHROPIC.model, "Get the weather for a city.").generate(PROMPT)
    message = str(missed.value)
    assert "no recording in" in message and "POST /v1/messages" in message
    assert "nearest is recording 0 (same endpoint), whose body differs at:" in message
    assert 'tools[0].description: recorded "Get the weather.", sent "Get the weather for a city."' in message
    assert message.count("\n  ") == 1  # the only difference
    assert 'mode="record"' in message  # and how to accept the change


def _sse(*pieces: str) -> bytes:
    events = []
    for n, piece in enumerate(pieces):
        delta = {"content": piece} if n else {"role": "assistant", "content": piece}
        chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4.1", "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}  # noqa: E501
        events.append(f"data: {json.dumps(chunk)}\n\n")
    done = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4.1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}  # noqa: E501
    events += [f"data: {json.dumps(done)}\n\n", "data: [DONE]\n\n"]
    return "".join(events).encode()


async def test_a_streamed_run_replays_the_same_events_chunk_by_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.providers.common import httpx_module

    http = httpx_module()
    first = (ROOT / "tests/providers/openai/fixtures/client/chat_stream.sse").read_bytes()
    answer = _sse("Paris ", "is sunny; ", "Berlin has ", "no station.")

    def streamed(data: bytes) -> Any:
        async def pieces() -> Any:  # the server sends each event as its own chunk, as a real stream does
            for event in data.split(b"\n\n")[:-1]:
                yield event + b"\n\n"

        return http.Response(200, content=pieces(), headers={"content-type": "text/event-stream"})

    server = Server(streamed(first), streamed(answer))
    path = tmp_path / "stream.json"
    with allow_model_requests(True), Cassette(path, mode="record"):
        recorded = [event async for event in OPENAI.agent(OPENAI.recording_model(server)).stream(PROMPT)]
    stored = json.loads(path.read_text())["interactions"]
    assert [len(item["response"]["chunks"]) for item in stored] == [first.count(b"\n\n"), 6]  # one per event
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with network_blocked(monkeypatch), Cassette(path, mode="replay"):
        replayed = [event async for event in OPENAI.agent(OPENAI.model).stream(PROMPT)]
    ordered = [e for e in recorded if e.kind not in ("tool-result", "tool-error")]  # (parallel calls end in any order)
    assert [e for e in replayed if e.kind not in ("tool-result", "tool-error")] == ordered
    assert sorted(map(repr, replayed)) == sorted(map(repr, recorded))
    texts = [e.text for e in replayed if e.kind == "text-delta"]
    assert texts[-4:] == ["Paris ", "is sunny; ", "Berlin has ", "no station."]


def test_any_httpx_client_is_recorded_and_replayed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import httpx

    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.url.path)
        return httpx.Response(200, json={"ok": True, "token": "tok-ABCDEFGH-9"}, headers={"set-cookie": "s=1"})

    path = tmp_path / "sync.json"
    recording = Cassette(path, mode="once", secrets=["tok-ABCDEFGH-9"])
    with recording as first, httpx.Client(transport=httpx.MockTransport(handler)) as client:
        answer = client.post("https://example.test/v1/things?api_key=k-123&page=2", json={"a": 1}).json()
    assert first.recording and answer == {"ok": True, "token": "tok-ABCDEFGH-9"}  # the caller saw the real answer
    written = path.read_text()
    assert "tok-ABCDEFGH-9" not in written and "k-123" not in written and "s=1" not in written
    # the file exists now: once replays it
    with network_blocked(monkeypatch), Cassette(path, mode="once") as second, httpx.Client() as client:
        again = client.post("https://example.test/v1/things?api_key=other&page=2", json={"a": 1}).json()
    assert not second.recording and calls == ["/v1/things"] and again == {"ok": True, "token": "<secret>"}
    # a miss fails the block even when the code inside caught it (an SDK retrying, a tool making it a result)
    replay = Cassette(path, mode="replay")
    missed = pytest.raises(CassetteMiss, match=r"a: recorded 1, sent 2")
    with missed, replay, httpx.Client() as client, contextlib.suppress(CassetteMiss):
        client.post("https://example.test/v1/things?page=2", json={"a": 2})


def test_replay_without_a_recording_fails_and_the_mode_follows_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = Cassette(tmp_path / "no.json", mode="replay")
    with pytest.raises(CassetteMiss, match="does not exist and the mode is replay"), missing:
        pass
    monkeypatch.delenv("AGENTKIT_CASSETTES", raising=False)
    monkeypatch.setenv("CI", "true")
    assert Cassette(tmp_path / "x.json").mode == "replay"  # CI: a missing recording fails, never records
    monkeypatch.setenv("CI", "")
    assert Cassette(tmp_path / "x.json").mode == "once"
    monkeypatch.setenv("AGENTKIT_CASSETTES", "record")
    assert Cassette(tmp_path / "x.json").mode == "record"
    monkeypatch.setenv("AGENTKIT_CASSETTES", "sometimes")
    with pytest.raises(ValueError, match="AGENTKIT_CASSETTES='sometimes'"):
        Cassette(tmp_path / "x.json")
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(CassetteMiss, match="not an agentkit cassette"), Cassette(tmp_path / "bad.json", mode="replay"):
        pass


PLUGIN_TEST = textwrap.dedent(
    """
    import os
    import httpx
    import pytest

    def handler(request):
        if os.environ.get("SERVER_DOWN"):
            raise AssertionError("the server was called during a replay")
        return httpx.Response(200, json={"answer": 42})

    @pytest.mark.cassette
    def test_asks(cassette):
        with httpx.Client(transport=httpx.MockTransport(handler)) as client:
            assert client.get("https://example.test/answer").json() == {"answer": 42}
        print("RECORDING" if cassette.recording else "REPLAYING")
    """
)


def test_the_pytest_plugin_records_once_then_replays_and_fails_in_ci_without_a_recording(tmp_path: Path) -> None:
    (tmp_path / "test_plugin.py").write_text(PLUGIN_TEST)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "AGENTKIT_CASSETTES")}
    env["PYTHONPATH"] = str(ROOT)
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # only the plugin under test (and a faster start)

    def pytest_run(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "pytest", "-p", "agentkit.pytest_plugin", "-s", "-q", "-p", "no:cacheprovider"]
        return subprocess.run(
            [*command, *args, "test_plugin.py"], cwd=tmp_path, env={**env, **extra}, capture_output=True, text=True,
            timeout=120,
        )  # fmt: skip

    first = pytest_run()
    assert first.returncode == 0 and "RECORDING" in first.stdout, first.stdout + first.stderr
    recorded = tmp_path / "cassettes" / "test_plugin" / "test_asks.json"
    assert json.loads(recorded.read_text())["interactions"][0]["response"]["json"] == {"answer": 42}
    second = pytest_run(SERVER_DOWN="1")
    assert second.returncode == 0 and "REPLAYING" in second.stdout, second.stdout + second.stderr
    recorded.unlink()
    in_ci = pytest_run(CI="true", SERVER_DOWN="1")
    assert in_ci.returncode == 1 and "does not exist and the mode is replay" in in_ci.stdout
    flag = pytest_run("--cassettes=replay", SERVER_DOWN="1")
    assert flag.returncode == 1 and "CassetteMiss" in flag.stdout


async def test_a_real_http_exchange_is_stored_decoded_and_replayed_without_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio
    import gzip

    import httpx

    body = gzip.compress(json.dumps({"answer": "forty-two " * 50}).encode())

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.lower().split(b"\r\n")
        length = int(next(line.split(b":")[1] for line in lines if line.startswith(b"content-length")))
        await reader.readexactly(length)
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-encoding: gzip\r\n"
            + f"content-length: {len(body)}\r\nconnection: close\r\n\r\n".encode()
            + body
        )
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/ask"
    path = tmp_path / "real.json"
    async with server, Cassette(path, mode="record"), httpx.AsyncClient() as client:
        first = (await client.post(url, json={"q": 1})).json()
    stored = json.loads(path.read_text())["interactions"][0]["response"]
    assert stored["json"] == first and "content-encoding" not in stored["headers"]  # readable, as the SDK read it
    with network_blocked(monkeypatch), Cassette(path, mode="replay"):
        async with httpx.AsyncClient() as client:
            assert (await client.post(url, json={"q": 1})).json() == first
