"""A fuzzer for the UI endpoints' request bodies (Vercel and AG-UI), shared by the test and the benchmark.

Each case pauses a run on a fresh app (so a resume has something to answer), then posts a body made from a
valid one (a new turn, a conversation with tool parts, an approval, a resume) with a few values replaced
by odd ones (objects where text goes, lone surrogates, huge numbers, deep lists), keys dropped or added,
or a body that is not a request at all (other JSON, garbage bytes, deep nesting, too large). Every answer
must be one the UI guide documents: a stream (whose errors are the adapters' own ``invalid_input`` kind,
never a masked exception), or 400, 409, 413, 415, 421 or 422 with a JSON error. Anything else (a 500, an
exception, an undocumented error in the stream) is a finding.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from agentkit.ui import MemoryRunStore
from agentkit.ui.asgi import app

from . import demo_agent

DOCUMENTED = frozenset({200, 400, 409, 413, 415, 421, 422})
LIMIT = 64 * 1024  # a small body limit, so the fuzzer reaches it

ODD: list[Any] = [
    None, True, False, 0, -1, 1.5, 10**40, "", "x", "\ud800", "user", "assistant", "tool-refund", "call_refund",
    "approval-responded", "output-available", "resolved", "cancelled", {}, [], {"a": {"b": [1]}}, [[[[]]]],
    {"type": "text"}, {"approved": "false"}, "a" * 5000,
]  # fmt: skip


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*prefix, index))


def _odd(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 3 or roll < 0.6:
        return copy.deepcopy(rng.choice(ODD))
    if roll < 0.8:
        keys = ["type", "state", "id", "role", "approved", "text", "parts", "isAutomatic", "payload"]
        return {rng.choice(keys): _odd(rng, depth + 1) for _ in range(rng.randint(0, 3))}
    return [_odd(rng, depth + 1) for _ in range(rng.randint(0, 3))]


def mutate(rng: random.Random, body: Any) -> Any:
    """`body` with one to three values replaced, dropped, or odd keys added."""
    body = copy.deepcopy(body)
    for _ in range(rng.randint(1, 3)):
        paths = [p for p in _paths(body) if p]
        if not paths:
            return _odd(rng)
        path = rng.choice(paths)
        parent = body
        for key in path[:-1]:
            parent = parent[key]
        roll = rng.random()
        if roll < 0.6:
            parent[path[-1]] = _odd(rng)
        elif roll < 0.8:
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[rng.choice(["isAutomatic", "reason", "state", "providerExecuted", "editedArgs"])] = _odd(rng)
    return body


def _user(text: str = "refund 42", id: str = "u1") -> dict[str, Any]:
    return {"id": id, "role": "user", "parts": [{"type": "text", "text": text}]}


def _tool(state: str, **extra: Any) -> dict[str, Any]:
    return {"type": "tool-refund", "toolCallId": "call_refund", "state": state, "input": {"order_id": "42"}, **extra}


def vercel_seeds(message_id: str) -> list[Any]:
    """Valid ``useChat`` bodies: a turn, a converted conversation, an approval, a denial, a new message."""
    approval = {"id": "call_refund", "approved": True}
    answered = {
        "id": message_id,
        "role": "assistant",
        "parts": [{"type": "step-start"}, _tool("approval-responded", approval=approval)],
    }
    denied = copy.deepcopy(answered)
    denied["parts"][1]["approval"] = {"id": "call_refund", "approved": False, "reason": "no"}
    image = {"type": "file", "mediaType": "image/png", "url": "data:image/png;base64,AAAA"}
    finished = [
        _tool("output-available", output={"a": 1}),
        _tool("output-error", errorText="no"),
        _tool("output-denied"),
    ]
    past = {
        "id": "m_old",
        "role": "assistant",
        "parts": [{"type": "step-start"}, {"type": "text", "text": "ok"}, *finished],
    }
    moved_on = {"id": message_id, "role": "assistant", "parts": []}
    return [
        {"id": "c", "messages": [_user()]},
        {"id": "c", "messages": [{**_user(), "parts": [{"type": "text", "text": "see"}, image]}]},
        {"id": "c", "messages": [_user(), past, _user("again", "u2")]},
        {"id": "c", "messages": [_user(), answered]},
        {"id": "c", "messages": [_user(), denied]},
        {"id": "c", "messages": [_user(), moved_on, _user("never mind", "u2")]},
    ]


def agui_seeds(interrupt_id: str, thread: str) -> list[Any]:
    """Valid ``RunAgentInput`` bodies: a turn, a converted conversation, an approval and a cancellation."""
    base = {"threadId": thread, "runId": "r2", "state": {}, "tools": [], "context": [], "forwardedProps": {}}
    call = {"id": "c1", "type": "function", "function": {"name": "refund", "arguments": "{}"}}
    history = [
        {"id": "u1", "role": "user", "content": [{"type": "text", "text": "a"}]},
        {"id": "a1", "role": "assistant", "content": "ok", "toolCalls": [call]},
        {"id": "t1", "role": "tool", "toolCallId": "c1", "content": "x"},
        {"id": "u2", "role": "user", "content": "b"},
    ]
    approve = {"interruptId": interrupt_id, "status": "resolved", "payload": {"approved": True}}
    return [
        {**base, "threadId": "other", "messages": [{"id": "u1", "role": "user", "content": "refund 42"}]},
        {**base, "threadId": "other", "messages": history},
        {**base, "messages": [], "resume": [approve]},
        {**base, "messages": [], "resume": [{"interruptId": interrupt_id, "status": "cancelled"}]},
    ]


@dataclass
class Findings:
    """What a fuzz run saw: cases, answers by kind, and the undocumented ones (each body and what came back)."""

    cases: int = 0
    outcomes: dict[str, int] = field(default_factory=lambda: {})
    undocumented: list[str] = field(default_factory=lambda: [])

    def count(self, outcome: str) -> None:
        self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1


def _frames(text: str) -> list[dict[str, Any]]:
    return [json.loads(f[6:]) for f in text.split("\n\n") if f.startswith("data: {")]


def _stream_problem(protocol: str, text: str) -> str | None:
    """An undocumented error inside a stream: a masked exception instead of an input error."""
    for frame in _frames(text):
        if protocol == "vercel" and frame.get("type") == "error" and "The agent run failed" in frame["errorText"]:
            return frame["errorText"]
        if protocol == "ag-ui" and frame.get("type") == "RUN_ERROR" and frame.get("code") != "invalid_input":
            return f"{frame.get('code')}: {frame.get('message')}"
    return None


async def _post(http: httpx.AsyncClient, content: bytes, content_type: str = "application/json") -> httpx.Response:
    return await http.post("/", content=content, headers={"content-type": content_type})


def _encoded(body: Any) -> bytes:
    return json.dumps(body, ensure_ascii=True).encode()


async def _setup(http: httpx.AsyncClient, protocol: str) -> list[Any]:
    if protocol == "vercel":
        first = await _post(http, _encoded({"id": "c", "messages": [_user()]}))
        return vercel_seeds(_frames(first.text)[0]["messageId"])
    thread = "t1"
    body = {"threadId": thread, "runId": "r1", "messages": [{"id": "u1", "role": "user", "content": "refund 42"}]}
    body.update(state={}, tools=[], context=[], forwardedProps={})
    first = await _post(http, _encoded(body))
    interrupt = _frames(first.text)[-1]["outcome"]["interrupts"][0]["id"]
    return agui_seeds(interrupt, thread)


def _raw(rng: random.Random, seed: Any) -> tuple[bytes, str]:
    """A body that is not a well-formed request: garbage, deep nesting, too large, another content type."""
    roll = rng.random()
    if roll < 0.2:
        return bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 64))), "application/json"
    if roll < 0.4:
        depth = rng.choice([201, 5_000, 100_000])
        return b'{"messages": ' + b"[" * depth + b"]" * depth + b"}", "application/json"
    if roll < 0.6:
        return b'{"messages": "' + b"x" * (LIMIT + 1) + b'"}', "application/json"
    if roll < 0.8:
        return _encoded(seed), rng.choice(["text/plain", "application/x-www-form-urlencoded", ""])
    return _encoded(_odd(rng)), "application/json"


async def fuzz_case(rng: random.Random, findings: Findings) -> tuple[bytes, str]:
    """One case on a fresh app (both protocols by turns); what came back goes into `findings`.

    Returns the body posted and its content type (the benchmark posts them to its floor too).
    """
    protocol = rng.choice(["vercel", "ag-ui"])
    served = app(demo_agent.agent, protocol=protocol, store=MemoryRunStore(), max_body_bytes=LIMIT)  # type: ignore[arg-type]
    transport = httpx.ASGITransport(app=served)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as http:
        seed = rng.choice(await _setup(http, protocol))
        if rng.random() < 0.15:
            content, content_type = _raw(rng, seed)
        else:
            content, content_type = _encoded(mutate(rng, seed) if rng.random() < 0.9 else seed), "application/json"
        findings.cases += 1
        try:
            response = await _post(http, content, content_type)
        except Exception as exc:  # an exception out of the app is the finding
            findings.undocumented.append(f"{protocol}: {type(exc).__name__}: {exc} <- {content[:300]!r}")
            return content, content_type
    status = response.status_code
    findings.count(f"{protocol} {status}")
    problem = _stream_problem(protocol, response.text) if status == 200 else None
    if status not in DOCUMENTED or problem is not None:
        findings.undocumented.append(f"{protocol} {status} {problem or response.text[:200]} <- {content[:300]!r}")
    elif status != 200 and "error" not in response.json():
        findings.undocumented.append(f"{protocol} {status} without a JSON error <- {content[:300]!r}")
    return content, content_type
