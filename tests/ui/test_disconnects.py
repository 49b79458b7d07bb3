"""A UI resume whose client goes away before the response streams loses nothing (issue 17 §3.1).

The paused run is taken from the store only when the response streams, and put back when the stream
ends before the agent claimed the pause; a retry then resumes it. Driven through the ASGI app both ways
Starlette streams (ASGI 2.4: the send fails; 2.3, as uvicorn serves: the disconnect cancels the stream)
and through a real uvicorn server whose client closes its socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from agentkit.runs import ResumeRecords
from agentkit.ui import MemoryRunStore
from agentkit.ui.asgi import app

from . import demo_agent

Message = dict[str, Any]


def user(text: str) -> Message:
    return {"id": "u1", "role": "user", "parts": [{"type": "text", "text": text}]}


def approval(message_id: str) -> bytes:
    part = {
        "type": "tool-refund",
        "toolCallId": "call_refund",
        "state": "approval-responded",
        "approval": {"id": "call_refund", "approved": True},
    }
    decided = {"id": message_id, "role": "assistant", "parts": [{"type": "step-start"}, part]}
    return json.dumps({"id": "c", "messages": [user("refund 42"), decided]}).encode()


def frames(text: str) -> list[Message]:
    return [json.loads(f[6:]) for f in text.split("\n\n") if f.startswith("data: {")]


async def paused_app() -> tuple[Any, MemoryRunStore, str]:
    store = MemoryRunStore()
    served = app(demo_agent.agent, protocol="vercel", store=store)
    transport = httpx.ASGITransport(app=served)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as http:
        first = await http.post("/", json={"id": "c", "messages": [user("refund 42")]})
    return served, store, frames(first.text)[0]["messageId"]


async def call_gone(served: Any, body: bytes, spec: str, send: Callable[[Message], Awaitable[None]]) -> None:
    """One request whose client is gone: the body arrives, then only `http.disconnect`."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return {"type": "http.disconnect"}

    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": spec},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/",
        "raw_path": b"/",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json")],
        "server": ("127.0.0.1", 8000),
        "client": ("127.0.0.1", 50000),
    }
    from starlette.requests import ClientDisconnect

    with contextlib.suppress(ClientDisconnect):  # ASGI 2.4: Starlette reports the failed send so
        await served(scope, receive, send)


async def retry_resumes(served: Any, message_id: str) -> None:
    before = len(demo_agent.REFUNDS)
    transport = httpx.ASGITransport(app=served)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as http:
        again = await http.post("/", content=approval(message_id), headers={"content-type": "application/json"})
    assert again.status_code == 200, again.text
    assert frames(again.text)[-1]["messageMetadata"]["agentkit"]["status"] == "complete"
    assert len(demo_agent.REFUNDS) == before + 1


async def test_a_client_gone_before_the_headers_leaves_the_run_to_resume() -> None:
    served, store, message_id = await paused_app()

    async def send(message: Message) -> None:
        raise OSError("the client closed the connection")  # what a server reports for a closed socket

    before = len(demo_agent.REFUNDS)
    await call_gone(served, approval(message_id), "2.4", send)
    assert len(demo_agent.REFUNDS) == before and await store.paused(message_id) is not None
    await retry_resumes(served, message_id)


async def test_a_client_gone_while_the_stream_starts_leaves_the_run_to_resume() -> None:
    """As uvicorn serves (ASGI 2.3): the disconnect cancels the response while it starts streaming."""
    served, store, message_id = await paused_app()
    started = asyncio.Event()

    async def send(message: Message) -> None:
        started.set()
        await asyncio.sleep(0)

    await call_gone(served, approval(message_id), "2.3", send)
    assert started.is_set()
    await retry_resumes(served, message_id)


async def test_the_pause_is_never_taken_without_the_agent_claiming_it() -> None:
    """Whatever point the disconnect hits, the run is either still paused or its resume is on record."""
    records = demo_agent.agent._run_store()  # pyright: ignore[reportPrivateUsage]  # the agent's run store
    assert isinstance(records, ResumeRecords)
    for delay in range(12):
        served, store, message_id = await paused_app()
        paused = await store.paused(message_id)
        assert paused is not None

        async def send(message: Message, delay: int = delay) -> None:
            for _ in range(delay):
                await asyncio.sleep(0)

        await call_gone(served, approval(message_id), "2.3", send)
        for _ in range(50):  # the shielded put-back finishes on its own
            await asyncio.sleep(0.01)
        still_paused = await store.paused(message_id) is not None
        claimed = await records.resume_record(paused.pause_id) is not None
        assert still_paused or claimed, f"lost at delay {delay}"


async def test_a_real_client_that_hangs_up_at_once_loses_nothing() -> None:
    import uvicorn

    served, store, message_id = await paused_app()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(served, log_level="warning", lifespan="off"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            await asyncio.sleep(0.01)
        body = approval(message_id)
        head = (
            f"POST / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        ).encode()
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(head + body)
        await writer.drain()
        writer.transport.abort()  # gone at once, before any of the response
        await asyncio.sleep(0.3)
        if await store.paused(message_id) is None:  # the run got going before the server noticed: it ran
            assert len(demo_agent.REFUNDS) > 0
            return
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
            again = await http.post("/", content=body, headers={"content-type": "application/json"})
        assert (
            again.status_code == 200 and frames(again.text)[-1]["messageMetadata"]["agentkit"]["status"] == "complete"
        )
    finally:
        server.should_exit = True
        await task
