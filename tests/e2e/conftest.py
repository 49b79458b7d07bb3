"""Session fixtures for the end-to-end tests: real servers on 127.0.0.1, set up once per run.

The first run on a machine builds llama-server (minutes) and downloads the model; that happens at the end
of collection (outside any test's timeout, with progress lines) and only when a selected test needs it.
Later runs find both in the cache (`dev.local_llm.cache_root()`) and start the server in about a second.
``pytest -m "not e2e"`` opts out locally; CI never does.

Robust on a slow, shared CPU: before every test the server is checked (process alive, ``/health`` 200, no
request of an earlier test still running) and replaced when it is not; the clients open a fresh connection
per request (no stale keep-alive connection to race with the server closing it) and wait long enough for
one CPU thread under load. A failing test's report carries the server's last output.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e._llama import TIMINGS, local, prepare

LLAMA_FIXTURES = {"llama_server", "openai_model", "anthropic_model", "openai_client", "anthropic_client"}
GRAMMAR_FIXTURES = {"grammar_server", "grammar_client", "grammar_venv"}

REQUEST_TIMEOUT = 240.0
"""Seconds one request may take: a few hundred tokens on one busy core, with a wide margin."""

_KEEPERS: list[local.ServerKeeper] = []


def _needs(session: pytest.Session, fixtures: set[str]) -> bool:
    return any(fixtures & set(getattr(item, "fixturenames", ())) for item in session.items)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Build and download before the first test starts, so no test's timeout pays for it."""
    llama, grammar = _needs(session, LLAMA_FIXTURES), _needs(session, GRAMMAR_FIXTURES)
    if not (llama or grammar) or session.config.option.collectonly:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")

    def say(message: str) -> None:
        if reporter is not None:
            reporter.write_line(message)

    try:
        prepare(grammar=grammar, log=local.Reporter(say, live=False))
    except local.LocalLLMError as exc:
        # raised here, the run stops with the reason instead of failing every e2e test one by one
        raise pytest.UsageError(f"e2e setup failed: {exc}") from exc


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if TIMINGS:
        terminalreporter.write_line("e2e timings: " + ", ".join(f"{k} {v}s" for k, v in TIMINGS.items()))
    for keeper in _KEEPERS:
        for event in keeper.history:
            terminalreporter.write_line(f"e2e server restarted: {event}")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if report.failed and _KEEPERS:
        for keeper in _KEEPERS:
            if keeper.server is not None:
                report.sections.append((f"server log tail (port {keeper.server.port})", keeper.server.log_tail(40)))
    return report


def _keeper(start: Any, name: str) -> Iterator[local.ServerKeeper]:
    def timed_start() -> local.LlamaServer:
        started = time.monotonic()
        server: local.LlamaServer = start()
        TIMINGS[name] = round(time.monotonic() - started, 1)
        return server

    keeper = local.ServerKeeper(timed_start, idle_timeout=REQUEST_TIMEOUT)
    _KEEPERS.append(keeper)
    try:
        yield keeper
    finally:
        keeper.close()
        _KEEPERS.remove(keeper)
        if keeper.restarts:
            TIMINGS[f"{name} restarts"] = keeper.restarts


@pytest.fixture(scope="session")
def llama_keeper() -> Iterator[local.ServerKeeper]:
    """One llama-server for the session, replaced whenever a test finds it dead or stuck."""
    yield from _keeper(lambda: local.LlamaServer.start(ready_timeout=120), "llama-server start")


@pytest.fixture
def llama_server(llama_keeper: local.ServerKeeper) -> local.LlamaServer:
    """llama.cpp's llama-server with Qwen2.5-Coder-0.5B-Instruct and the bare-JSON tools template, checked."""
    return llama_keeper.get()


@pytest.fixture(scope="session")
def grammar_venv() -> Path:
    """The Python of the venv holding llama-cpp-python[server] (built at collection time if missing)."""
    return local.build_server_venv()


@pytest.fixture(scope="session")
def grammar_keeper() -> Iterator[local.ServerKeeper]:
    yield from _keeper(lambda: local.LlamaServer.start_python_server(ready_timeout=180), "llama-cpp-python start")


@pytest.fixture
def grammar_server(grammar_keeper: local.ServerKeeper) -> local.LlamaServer:
    """llama-cpp-python's server (``chatml-function-calling``: a named tool_choice is grammar-forced)."""
    return grammar_keeper.get()


def _http_client(sdk: Any) -> Any:
    import httpx2

    # no keep-alive: a pooled connection the server has just closed is a "connection error" under load
    limits = httpx2.Limits(max_connections=4, max_keepalive_connections=0)
    return sdk.DefaultAsyncHttpxClient(limits=limits, timeout=httpx2.Timeout(REQUEST_TIMEOUT, connect=15.0))


@pytest.fixture
async def openai_client(llama_server: local.LlamaServer) -> AsyncIterator[Any]:
    """The official ``openai`` client pointed at llama-server (no retries: errors surface at once)."""
    import openai

    async with openai.AsyncOpenAI(
        base_url=llama_server.openai_base_url, api_key="x", max_retries=0, http_client=_http_client(openai)
    ) as client:
        yield client


@pytest.fixture
async def anthropic_client(llama_server: local.LlamaServer) -> AsyncIterator[Any]:
    """The official ``anthropic`` client pointed at llama-server."""
    import anthropic

    async with anthropic.AsyncAnthropic(
        base_url=llama_server.anthropic_base_url, api_key="x", max_retries=0, http_client=_http_client(anthropic)
    ) as client:
        yield client


@pytest.fixture
def openai_model(openai_client: Any) -> Any:
    from agentkit.providers.openai import OpenAIChatModel

    return OpenAIChatModel("local", client=openai_client)


@pytest.fixture
def anthropic_model(anthropic_client: Any) -> Any:
    from agentkit.providers.anthropic import AnthropicModel

    return AnthropicModel("local", client=anthropic_client)


@pytest.fixture
async def grammar_client(grammar_server: local.LlamaServer) -> AsyncIterator[Any]:
    import openai

    async with openai.AsyncOpenAI(
        base_url=grammar_server.openai_base_url, api_key="x", max_retries=0, http_client=_http_client(openai)
    ) as client:
        yield client
