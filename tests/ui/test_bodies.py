"""Every UI request body gets a documented answer (issue 17 §4.3): size limit, malformed bodies, Host check.

The fuzz budget here is small; ``benchmarks/bench_ui_fuzz.py`` runs the same fuzzer longer.
"""

from __future__ import annotations

import json
import random
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentkit.ui.asgi import app, routes

from . import demo_agent
from .body_fuzz import Findings, fuzz_case


def client(asgi: Any, host: str = "127.0.0.1:8000") -> httpx.AsyncClient:
    """A client of `asgi` as if bound to 127.0.0.1:8000 (the ASGI scope's server), sending `host` as Host."""
    transport = httpx.ASGITransport(app=asgi)
    return httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000", headers={"host": host})


def user(text: str) -> dict[str, Any]:
    return {"id": "u1", "role": "user", "parts": [{"type": "text", "text": text}]}


@pytest.mark.parametrize("protocol", ["vercel", "ag-ui"])
async def test_a_body_over_the_limit_is_a_413_before_anything_runs(protocol: Any) -> None:
    served = app(demo_agent.agent, protocol=protocol, max_body_bytes=1000)
    async with client(served) as http:
        big = json.dumps({"messages": [user("x" * 2000)]})
        declared = await http.post("/", content=big, headers={"content-type": "application/json"})
        assert declared.status_code == 413 and "1,000" in declared.json()["error"]

        async def chunks() -> Any:  # no Content-Length: the limit is counted while reading
            for _ in range(10):
                yield b" " * 200
            yield big.encode()

        streamed = await http.post("/", content=chunks(), headers={"content-type": "application/json"})
        assert streamed.status_code == 413


@pytest.mark.parametrize("protocol", ["vercel", "ag-ui"])
@pytest.mark.parametrize("depth", [201, 100_000])
async def test_deep_json_is_a_400(protocol: Any, depth: int) -> None:
    async with client(app(demo_agent.agent, protocol=protocol)) as http:
        body = '{"messages": ' + "[" * depth + "]" * depth + "}"
        response = await http.post("/", content=body, headers={"content-type": "application/json"})
        message = response.json()["error"]
        assert response.status_code == 400 and ("deep" in message or "recursion" in message), message


async def test_a_tool_part_whose_state_is_an_object_is_answered_not_a_500() -> None:
    part = {"type": "tool-refund", "toolCallId": "c1", "state": {"x": 1}, "input": {}}
    body = {"messages": [user("a"), {"id": "m1", "role": "assistant", "parts": [part]}, user("b")]}
    async with client(app(demo_agent.agent, protocol="vercel")) as http:
        response = await http.post("/", json=body)
    assert response.status_code == 200  # the part is not a finished call: left out of the history, as documented


async def test_a_lone_surrogate_in_a_body_is_escaped_on_the_way_back() -> None:
    body = {"threadId": "t\ud800", "runId": "r", "messages": [{"id": "u", "role": "user", "content": "hi \ud800"}]}
    body.update(state={}, tools=[], context=[], forwardedProps={})
    async with client(app(demo_agent.agent, protocol="ag-ui")) as http:
        response = await http.post("/", content=json.dumps(body), headers={"content-type": "application/json"})
    assert response.status_code == 200 and '"threadId":"t\\ud800"' in response.text


@pytest.mark.parametrize("protocol", ["vercel", "ag-ui"])
async def test_a_loopback_app_refuses_other_host_names(protocol: Any) -> None:
    """DNS rebinding: a page on evil.example resolving to 127.0.0.1 reaches the app with its own Host header."""
    before = len(demo_agent.REFUNDS)
    served = app(demo_agent.agent, protocol=protocol)
    async with client(served, host="evil.example:8000") as http:
        refused = await http.post("/", json={"messages": [user("refund 42")]})
    assert refused.status_code == 421 and "evil.example" in refused.json()["error"]
    for host in ("127.0.0.1:8000", "localhost:8000", "[::1]:8000"):
        transport = httpx.ASGITransport(app=served)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as http:
            body = (
                {"messages": [user("hi")]} if protocol == "vercel" else {"threadId": "t", "runId": "r", "messages": []}
            )
            ok = await http.post("/", json=body, headers={"host": host})
            assert ok.status_code == 200, host
    assert len(demo_agent.REFUNDS) == before


async def test_allowed_hosts_lists_the_names_a_deployment_answers_to() -> None:
    from starlette.applications import Starlette

    served = Starlette(routes=routes(demo_agent.agent, allowed_hosts=["chat.example.com", "*.example.org"]))
    cases = [("chat.example.com", 200), ("a.example.org", 200), ("evil.example", 421), ("127.0.0.1", 421)]
    for host, status in cases:
        async with client(served, host=host) as http:
            assert (await http.post("/", json={"messages": [user("hi")]})).status_code == status, host
    with pytest.raises(TypeError, match="list of host names"):
        routes(demo_agent.agent, allowed_hosts="example.com")  # type: ignore[arg-type]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False))
async def test_fuzzed_bodies_get_only_documented_answers(rng: random.Random) -> None:
    findings = Findings()
    await fuzz_case(rng, findings)
    assert findings.undocumented == []
