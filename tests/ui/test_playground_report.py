"""The playground's compatibility tab (issue 22 §5.5): built off the event loop, once per set of tools.

It took 3.5-30 s and blocked the server meanwhile: every opening of the tab rebuilt the report on the
event loop. The timing is in benchmarks/bench_playground.py; here, what can fail: the loop stays free
while the report builds, the page's load starts the build, and a change of tools rebuilds it.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from agentkit import Agent, tool
from agentkit.playground import _app
from agentkit.playground import create_app as playground_app

from .test_asgi import client


@tool
def first(x: int) -> int:
    """First."""
    return x


@tool
def second(y: str) -> str:
    """Second."""
    return y


def counting(monkeypatch: pytest.MonkeyPatch, gate: threading.Event | None = None) -> list[str]:
    """Replace the report's builder by one that records each build (and waits for `gate`, if given)."""
    built: list[str] = []
    real = _app._compatibility

    def build(agent: Agent) -> list[dict[str, Any]]:
        if gate is not None:
            assert gate.wait(30), "the gate never opened: the event loop was blocked by the build"
        built.append(",".join(agent.tools))
        return real(agent)

    monkeypatch.setattr(_app, "_compatibility", build)
    return built


async def test_the_server_answers_while_the_report_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: the report was built on the event loop, so nothing else was answered meanwhile."""
    gate = threading.Event()
    built = counting(monkeypatch, gate)
    async with client(playground_app(Agent(model="test", tools=[first]))) as http:
        report = asyncio.ensure_future(http.get("/api/compatibility"))
        info = await asyncio.wait_for(http.get("/api/agent"), 20)  # answered while the build waits
        assert info.status_code == 200 and not report.done() and built == []
        gate.set()
        rows = (await report).json()
    assert {r["key"] for r in rows} == {"first"} and built == ["first"]


async def test_the_page_load_starts_the_build_and_the_tab_reuses_it_until_the_tools_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built = counting(monkeypatch)
    agent = Agent(model="test", tools=[first])
    async with client(playground_app(agent)) as http:
        await http.get("/api/agent")
        for _ in range(600):  # the build runs in a worker thread; the loop is free to poll it
            if built:
                break
            await asyncio.sleep(0.05)
        assert built == ["first"]  # started by the page's load, before the tab was opened
        for _ in range(3):
            assert {r["key"] for r in (await http.get("/api/compatibility")).json()} == {"first"}
        assert built == ["first"]
        agent.tools.add("second", second)
        assert {r["key"] for r in (await http.get("/api/compatibility")).json()} == {"first", "second"}
        assert built == ["first", "first,second"]


async def test_a_failed_build_is_an_error_the_tab_shows_and_the_next_opening_retries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[int] = []
    real = _app._compatibility

    def flaky(agent: Agent) -> list[dict[str, Any]]:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("vendor table unreadable")
        return real(agent)

    monkeypatch.setattr(_app, "_compatibility", flaky)
    async with client(playground_app(Agent(model="test", tools=[first]))) as http:
        failed = await http.get("/api/compatibility")
        assert failed.status_code == 422 and failed.json() == {"error": "RuntimeError: vendor table unreadable"}
        assert (await http.get("/api/compatibility")).status_code == 200 and len(calls) == 2
