"""Session fixtures for the end-to-end tests: real servers on 127.0.0.1, set up once per run.

The first run on a machine builds llama-server (~3.5 min) and downloads the model; that happens at the
end of collection (outside any test's timeout) and only when a selected test needs it. Later runs find
both in the cache (`agentkit._local_llm.cache_root()`) and start the server in about a second.
``pytest -m "not e2e"`` opts out locally; CI never does.
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
            reporter.write_line(f"[e2e] {message}")

    try:
        prepare(grammar=grammar, log=say)
    except local.LocalLLMError as exc:
        # raised here, the run stops with the reason instead of failing every e2e test one by one
        raise pytest.UsageError(f"e2e setup failed: {exc}") from exc


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if TIMINGS:
        terminalreporter.write_line("e2e timings: " + ", ".join(f"{k} {v}s" for k, v in TIMINGS.items()))


@pytest.fixture(scope="session")
def llama_server() -> Iterator[local.LlamaServer]:
    """llama.cpp's llama-server with Qwen2.5-Coder-0.5B-Instruct and the bare-JSON tools template."""
    started = time.monotonic()
    with local.LlamaServer.start(ready_timeout=60) as server:
        TIMINGS["llama-server start"] = round(time.monotonic() - started, 1)
        yield server


@pytest.fixture(scope="session")
def grammar_venv() -> Path:
    """The Python of the venv holding llama-cpp-python[server] (built at collection time if missing)."""
    return local.build_server_venv()


@pytest.fixture(scope="session")
def grammar_server() -> Iterator[local.LlamaServer]:
    """llama-cpp-python's server (``chatml-function-calling``: a named tool_choice is grammar-forced)."""
    started = time.monotonic()
    with local.LlamaServer.start_python_server(ready_timeout=90) as server:
        TIMINGS["llama-cpp-python server start"] = round(time.monotonic() - started, 1)
        yield server


@pytest.fixture
async def openai_client(llama_server: local.LlamaServer) -> AsyncIterator[Any]:
    """The official ``openai`` client pointed at llama-server (no retries: errors surface at once)."""
    import openai

    async with openai.AsyncOpenAI(
        base_url=llama_server.openai_base_url, api_key="x", max_retries=0, timeout=60
    ) as client:
        yield client


@pytest.fixture
async def anthropic_client(llama_server: local.LlamaServer) -> AsyncIterator[Any]:
    """The official ``anthropic`` client pointed at llama-server."""
    import anthropic

    async with anthropic.AsyncAnthropic(
        base_url=llama_server.anthropic_base_url, api_key="x", max_retries=0, timeout=60
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
        base_url=grammar_server.openai_base_url, api_key="x", max_retries=0, timeout=90
    ) as client:
        yield client
