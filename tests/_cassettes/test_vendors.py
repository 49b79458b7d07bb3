"""A full agent run per vendor, recorded at the official SDK's transport and replayed with the network blocked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentkit import ToolCall
from agentkit.models import allow_model_requests
from agentkit.testing import Cassette

from .vendors import CASES, KEY, PROMPT, SECRET, BedrockService, Case, network_blocked


def _summary(result: Any) -> tuple[str, list[tuple[str, bool]], list[ToolCall]]:
    return result.text, [(r.name, r.is_error) for r in result.tool_results], result.tool_calls


def _set_env(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in case.env.items():
        monkeypatch.setenv(name, value)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
async def test_a_recorded_run_replays_the_same_with_the_network_blocked(
    case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / f"{case.name}.json"
    server = case.server()
    _set_env(case, monkeypatch)  # the replaying clients' keys: they must not reach the file either
    with allow_model_requests(True), Cassette(path, mode="record", secrets=[SECRET]) as recording:
        recorded = await case.agent(case.recording_model(server)).generate(PROMPT)
    assert recording.recording and len(server.requests) == 2
    text, outcomes, _ = _summary(recorded)
    assert any(error for _, error in outcomes) and not all(error for _, error in outcomes)  # a tool error and a result

    written = path.read_text()
    for secret in (KEY, SECRET, *case.env.values()):
        if len(secret) > 12:  # (regions and key ids are not secrets)
            assert secret not in written, f"{secret!r} reached the cassette"
    assert "<secret>" in written  # the configured secret was in the prompt

    # replay: the agent's own client this time (built by agentkit from the model string), and no network at all
    with network_blocked(monkeypatch), Cassette(path, mode="replay", secrets=[SECRET]) as replay:
        replayed = await case.agent(case.model).generate(PROMPT)
    assert replay.played == 2 and _summary(replayed) == _summary(recorded)
    if isinstance(server, BedrockService):
        assert len(server.requests) == 2  # the service was asked nothing more
    else:
        assert len(server.requests) == 2


@pytest.mark.cassette(secrets=[SECRET])
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
async def test_the_runs_recorded_once_in_the_repository_replay(
    case: Case, cassette: Cassette, monkeypatch: pytest.MonkeyPatch
) -> None:
    # recorded on the first run (against the recorded-response servers), replayed ever since: what a user's
    # suite does with `@pytest.mark.cassette`; under CI a missing recording fails instead of recording
    if cassette.recording:
        with allow_model_requests(True):
            result = await case.agent(case.recording_model(case.server())).generate(PROMPT)
    else:
        _set_env(case, monkeypatch)
        with network_blocked(monkeypatch):
            result = await case.agent(case.model).generate(PROMPT)
        assert cassette.played == 2
    text, outcomes, _ = _summary(result)
    assert text and ("get_weather", False) in outcomes and any(error for _, error in outcomes)
    assert [r.output for r in result.tool_results if r.name == "get_weather" and not r.is_error] == [
        {"city": "Paris", "temp": 21, "unit": "c"}
    ]


def test_the_committed_recordings_hold_no_key() -> None:
    folder = Path(__file__).parent / "cassettes" / "test_vendors"
    files = sorted(folder.glob("*.json"))
    names = {file.stem.rsplit("_", 1)[1] for file in files}
    assert {case.name for case in CASES} <= names <= {case.name for case in CASES} | {"gemini", "gemini-genai2"}
    for file in files:
        written = file.read_text()
        assert KEY not in written, file.name
        assert SECRET not in written, file.name
        if "ollama" not in file.name:  # (a local Ollama takes no key)
            assert '"<redacted>"' in written, file.name  # the key's header is there, its value is not
