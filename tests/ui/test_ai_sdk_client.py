"""Our UI message stream read by the Vercel AI SDK's own code (the `ai` npm package, run by node).

`read-ui-stream.mjs` validates every chunk with `uiMessageChunkSchema` and builds the message with
`readUIMessageStream`; `chat-roundtrip.mjs` drives a live server with the SDK's chat client
(`AbstractChat` + `DefaultChatTransport`, the machinery under `useChat`) through an approval.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from agentkit import Agent
from agentkit.ui.vercel import DONE, to_sse, ui_message_chunks

from . import demo_agent
from .conftest import JS, node, split_url
from .helpers import kitchen_sink


async def stream_file(agent: Agent, tmp_path: Path, name: str = "stream.txt") -> Path:
    frames = [to_sse(c) async for c in ui_message_chunks(agent.stream("go"), message_id="msg_test")]
    path = tmp_path / name
    path.write_text("".join(frames) + DONE, encoding="utf-8")
    return path


def read_with_ai(path: Path, start: Path | None = None) -> dict[str, Any]:
    args = [node(), str(JS / "read-ui-stream.mjs"), str(path)] + ([str(start)] if start else [])
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    assert result["invalid"] == [] and result["errors"] == []
    return result


def parts(message: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [p for p in message["parts"] if p["type"] == kind]


async def test_the_sdk_parses_every_chunk_of_the_kitchen_sink_run(tmp_path: Path) -> None:
    result = read_with_ai(await stream_file(kitchen_sink(), tmp_path))
    message = result["message"]
    assert message["id"] == "msg_test" and message["role"] == "assistant"
    assert message["metadata"]["agentkit"]["status"] == "awaiting_approval"
    texts = [p["text"] for p in parts(message, "text")]
    assert texts == ["Checking a few things."]
    tools = {p["toolCallId"]: p for p in message["parts"] if p["type"].startswith("tool-")}
    assert tools["c_forecast"]["type"] == "tool-forecast" and tools["c_forecast"]["state"] == "output-available"
    assert tools["c_forecast"]["output"]["temperatures"] == [18, 21]
    assert tools["c_broken"]["state"] == "output-error" and tools["c_broken"]["errorText"] == "cannot: no"
    assert tools["c_hidden"]["output"] is None and "transformError" in tools["c_hidden"]["toolMetadata"]["agentkit"]
    helper = tools["c_helper"]
    assert helper["type"] == "tool-agent-helper" and helper["output"] == "The helper is done."
    assert not helper.get("preliminary")
    pay = tools["c_pay"]
    assert pay["state"] == "approval-requested"
    assert pay["approval"] == {"id": "c_pay", "descriptor": {"payload": {"amount": 5}}}
    assert len(parts(message, "step-start")) == 3
    assert [p["data"]["step"] for p in parts(message, "data-agentkit-step")] == [0, 1, 2]
    assert parts(message, "data-agentkit-progress")[0]["data"]["data"] == {"fetched": "Paris", "at": "2026-05-01"}


async def test_the_sdk_applies_a_resumed_stream_to_the_paused_message(tmp_path: Path) -> None:
    stream = demo_agent.agent.stream("refund 42")
    first = [to_sse(c) async for c in ui_message_chunks(stream, message_id="msg_a")]
    (tmp_path / "first.txt").write_text("".join(first) + DONE)
    paused = read_with_ai(tmp_path / "first.txt")["message"]
    refund = next(p for p in paused["parts"] if p["type"] == "tool-refund")
    assert refund["state"] == "approval-requested"
    refund["state"] = "approval-responded"  # what addToolApprovalResponse does
    refund["approval"]["approved"] = True
    (tmp_path / "start.json").write_text(json.dumps(paused))
    resumed = demo_agent.agent.resume_stream(stream.result, {"call_refund": True})
    second = [to_sse(c) async for c in ui_message_chunks(resumed, message_id="msg_a")]
    (tmp_path / "second.txt").write_text("".join(second) + DONE)
    message = read_with_ai(tmp_path / "second.txt", tmp_path / "start.json")["message"]
    refund = next(p for p in message["parts"] if p["type"] == "tool-refund")
    assert refund["state"] == "output-available" and refund["output"] == "refunded 19.99 on order 42"
    assert parts(message, "text")[-1]["text"] == "Done: refunded 19.99 on order 42."


def roundtrip(url: str, decision: str, prompt: str = "Please refund order 42") -> dict[str, Any]:
    base, token = split_url(url)
    args = [node(), str(JS / "chat-roundtrip.mjs"), base + "api/chat", prompt, decision, token]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    assert result["errors"] == [] and result["status"] == "ready"
    return result


def test_the_sdk_chat_client_approves_through_a_live_server(playground_url: str) -> None:
    result = roundtrip(playground_url, "approve")
    assert result["finishes"] == 2  # the paused response, then the one the approval sent
    user, assistant = result["messages"]
    assert user["role"] == "user" and assistant["role"] == "assistant"
    refund = next(p for p in assistant["parts"] if p["type"] == "tool-refund")
    assert refund["state"] == "output-available" and refund["approval"]["approved"] is True
    assert refund["input"]["card"] == "****1111"  # the display transform, not the card number
    assert parts(assistant, "text")[-1]["text"] == "Done: refunded 19.99 on order 42."
    assert assistant["metadata"]["agentkit"]["status"] == "complete"


def test_the_sdk_chat_client_denies_through_a_live_server(playground_url: str) -> None:
    assistant = roundtrip(playground_url, "deny")["messages"][-1]
    refund = next(p for p in assistant["parts"] if p["type"] == "tool-refund")
    assert refund["state"] == "output-denied"
    assert parts(assistant, "text")[-1]["text"] == "Understood: no refund was made."


def test_the_sdk_chat_client_resumes_a_turn_mixing_approval_and_free_calls(playground_url: str) -> None:
    """Issue 17 §3.4: `lastAssistantMessageIsCompleteWithApprovalResponses` resends once the refund is decided.

    The note needs no approval: it gets an automatic approval (no decision of the user's), so the resend
    condition holds once the refund is decided; both run on the resume, each once.
    """
    notes, refunds = len(demo_agent.NOTES), len(demo_agent.REFUNDS)
    result = roundtrip(playground_url, "approve", "Please refund order 42 and add a note")
    assert result["finishes"] == 2
    assistant = result["messages"][-1]
    note = next(p for p in assistant["parts"] if p["type"] == "tool-add_note")
    refund = next(p for p in assistant["parts"] if p["type"] == "tool-refund")
    assert note["state"] == "output-available" and note["output"] == "noted on order 42"
    assert note["approval"]["isAutomatic"] is True  # never shown to the user as a decision to make
    assert refund["state"] == "output-available" and refund["approval"]["approved"] is True
    assert assistant["metadata"]["agentkit"]["status"] == "complete"
    assert parts(assistant, "text")[-1]["text"] == "Done: refunded 19.99 on order 42."
    # the playground runs in another process: its tools' lists are there; the texts above say each ran once
    assert (len(demo_agent.NOTES), len(demo_agent.REFUNDS)) == (notes, refunds)


def test_the_committed_playground_bundle_is_what_the_build_makes(tmp_path: Path) -> None:
    from agentkit.playground._app import STATIC

    out = tmp_path / "ai-chat.js"
    done = subprocess.run(
        [node(), str(JS / "build-playground.mjs"), str(out)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    committed = STATIC / "vendor" / "ai-chat.js"
    assert out.read_bytes() == committed.read_bytes(), "rebuild it: node js/build-playground.mjs, and commit"
