"""The ASGI helper and the playground app over HTTP (in process), and `agentkit dev`'s command line."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from agentkit.playground import _hosts, main
from agentkit.playground import create_app as playground_app
from agentkit.ui.asgi import app, routes

from . import demo_agent


def client(asgi: Any, host: str = "127.0.0.1:8765") -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=asgi), base_url=f"http://{host}")


def frames(text: str) -> list[dict[str, Any]]:
    return [json.loads(f[6:]) for f in text.split("\n\n") if f.startswith("data: {")]


def user(text: str) -> dict[str, Any]:
    return {"id": "u1", "role": "user", "parts": [{"type": "text", "text": text}]}


async def test_vercel_endpoint_streams_with_the_sdk_headers_and_resumes() -> None:
    async with client(app(demo_agent.agent, protocol="vercel", path="/chat")) as http:
        response = await http.post("/chat", json={"id": "c", "messages": [user("refund 42")]})
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
        assert response.text.endswith("data: [DONE]\n\n")
        chunks = frames(response.text)
        message_id = chunks[0]["messageId"]
        decided = {
            "id": message_id,
            "role": "assistant",
            "parts": [
                {
                    "type": "tool-refund",
                    "toolCallId": "call_refund",
                    "state": "approval-responded",
                    "approval": {"id": "call_refund", "approved": True},
                }
            ],
        }
        resumed = await http.post("/chat", json={"id": "c", "messages": [user("refund 42"), decided]})
        assert frames(resumed.text)[-1]["messageMetadata"]["agentkit"]["status"] == "complete"
        twice = await http.post("/chat", json={"id": "c", "messages": [user("refund 42"), decided]})
        assert twice.status_code == 409 and "already resumed" in twice.json()["error"]


@pytest.mark.parametrize("protocol", ["vercel", "ag-ui"])
async def test_only_json_posts_are_accepted(protocol: Any) -> None:
    async with client(app(demo_agent.agent, protocol=protocol)) as http:
        form = await http.post("/", content=b'{"messages": []}', headers={"content-type": "text/plain"})
        assert form.status_code == 415 and "application/json" in form.json()["error"]
        broken = await http.post("/", content=b"{", headers={"content-type": "application/json"})
        assert broken.status_code == 400 and "not valid JSON" in broken.json()["error"]
        assert (await http.get("/")).status_code == 405


async def test_vercel_endpoint_answers_bad_requests_with_400() -> None:
    async with client(app(demo_agent.agent)) as http:
        response = await http.post("/", json={"messages": []})
        assert response.status_code == 400 and "non-empty 'messages'" in response.json()["error"]


async def test_agui_endpoint_streams_events() -> None:
    async with client(app(demo_agent.agent, protocol="ag-ui")) as http:
        response = await http.post(
            "/", json={"threadId": "t", "runId": "r", "messages": [{"id": "u", "role": "user", "content": "refund"}]}
        )
        events = frames(response.text)
        assert events[0]["type"] == "RUN_STARTED" and events[-1]["outcome"]["type"] == "interrupt"


def test_an_unknown_protocol_is_refused() -> None:
    with pytest.raises(ValueError, match="'vercel' or 'ag-ui'"):
        routes(demo_agent.agent, protocol="graphql")  # type: ignore[arg-type]


# ---- the playground app --------------------------------------------------------------------------


async def test_playground_serves_the_page_the_agent_and_the_inspectors() -> None:
    async with client(playground_app(demo_agent.agent, hosts=_hosts("127.0.0.1", 8765))) as http:
        page = await http.get("/")
        assert page.status_code == 200 and "agentkit playground" in page.text
        script = await http.get("/static/vendor/ai-chat.js")
        assert script.status_code == 200 and "ai@" in script.text[:200]
        info = (await http.get("/api/agent")).json()
        assert info["name"] == "Support desk"
        assert [t["key"] for t in info["tools"]] == ["lookup_order", "refund", "add_note"]
        assert info["tools"][1]["requiresApproval"] is True and "anthropic" in info["vendors"]
        payload = (await http.post("/api/payload", json={"vendor": "anthropic", "messages": [user("hi")]})).json()
        assert payload["payload"]["messages"] == [{"role": "user", "content": "hi"}]
        assert payload["payload"]["system"] == "Help with orders."
        assert [t["name"] for t in payload["payload"]["tools"]] == ["lookup_order", "refund", "add_note"]
        report = (await http.get("/api/compatibility")).json()
        assert {r["vendor"] for r in report} >= {"openai", "gemini"} and all(not r["rejected"] for r in report)
        unknown = await http.post("/api/payload", json={"vendor": "nope", "messages": []})
        assert unknown.status_code == 422 and "Unknown provider 'nope'" in unknown.json()["error"]


async def test_the_payload_inspector_masks_what_the_page_masks() -> None:
    """Issue 17 §4.7: the card number the page masks (refund's input, the order's output) is masked there too."""
    asgi = playground_app(demo_agent.agent, hosts=_hosts("127.0.0.1", 8765), token="t0k-0123456789abcdef")
    headers = {"authorization": "Bearer t0k-0123456789abcdef"}
    async with client(asgi) as http:
        first = await http.post("/api/chat", json={"id": "c", "messages": [user("refund 42")]}, headers=headers)
        assert first.status_code == 200
        message_id = frames(first.text)[0]["messageId"]
        conversation = [user("refund 42"), {"id": message_id, "role": "assistant", "parts": []}]
        for vendor in ("openai", "anthropic"):
            shown = await http.post("/api/payload", json={"vendor": vendor, "messages": conversation}, headers=headers)
            assert shown.status_code == 200
            text = json.dumps(shown.json())
            assert "4111-1111" not in text and "****1111" in text, vendor
            assert "2 tool call(s) or result(s) shown as the page shows them" in shown.json()["note"]


async def test_playground_refuses_other_hosts_and_requires_its_token() -> None:
    asgi = playground_app(demo_agent.agent, hosts=_hosts("127.0.0.1", 8765), token="t0k")
    async with client(asgi, host="attacker.example:8765") as http:
        assert (await http.get("/api/agent")).status_code == 421  # DNS rebinding
    async with client(asgi) as http:
        assert (await http.get("/api/agent")).status_code == 401
        assert (await http.get("/api/agent", headers={"authorization": "Bearer wrong"})).status_code == 401
        assert (await http.get("/api/agent", headers={"authorization": "Bearer t0k"})).status_code == 200
        assert (await http.get("/?token=t0k")).status_code == 200
        assert (await http.get("/static/app.js")).status_code == 200  # public code, no secret


def test_dev_refuses_a_non_loopback_bind_without_allow_remote(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tests/ui/demo_agent.py:agent", "--host", "0.0.0.0"]) == 2
    assert "not a loopback address" in capsys.readouterr().err


def test_dev_reports_a_bad_target_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tests/ui/nope.py:agent"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("agentkit dev: error: no such file") and err.count("\n") == 1
    assert main(["tests/ui/demo_agent.py:agent", "--model", "nosuchvendor:x"]) == 2
    assert "nosuchvendor" in capsys.readouterr().err


def test_access_token_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentkit.playground import _UsageError, access_token

    monkeypatch.delenv("AGENTKIT_DEV_TOKEN", raising=False)
    on_loopback = access_token("127.0.0.1", allow_remote=False)  # issue 17 §4.7: a token by default, as Jupyter
    assert on_loopback is not None and len(on_loopback) >= 24
    assert access_token("127.0.0.1", allow_remote=False, no_token=True) is None
    assert access_token("::1", allow_remote=False, token="given-0123456789ab") == "given-0123456789ab"
    for weak in (" ", "short", "has spaces in it, long enough"):
        with pytest.raises(_UsageError, match="at least 16 characters and no spaces"):
            access_token("127.0.0.1", allow_remote=False, token=weak)
    with pytest.raises(_UsageError, match="--no-token works on a loopback address only"):
        access_token("192.0.2.10", allow_remote=True, no_token=True)
    with pytest.raises(_UsageError, match="--allow-remote"):
        access_token("192.0.2.10", allow_remote=False)
    generated = access_token("192.0.2.10", allow_remote=True)
    assert generated is not None and len(generated) >= 24
    assert access_token("192.0.2.10", allow_remote=True) != generated
    monkeypatch.setenv("AGENTKIT_DEV_TOKEN", "from-env-0123456789")
    assert access_token("0.0.0.0", allow_remote=True) == "from-env-0123456789"


def test_agentkit_dev_goes_through_the_main_command(capsys: pytest.CaptureFixture[str]) -> None:
    from agentkit.cli import main as agentkit

    assert agentkit(["dev", "tests/ui/demo_agent.py:agent", "--host", "0.0.0.0"]) == 2
    assert capsys.readouterr().err.startswith("agentkit dev: error: --host 0.0.0.0 is not a loopback address")
    # main() returns the exit status of --help too (issue 22 §4: `agentkit` ends through sys.exit(main()))
    assert agentkit(["dev", "--help"]) == 0 and "--allow-remote" in capsys.readouterr().out
