"""Fuzzers for where outside data enters through the vendors, shared by the tests and the benchmark.

Two places (issue 17 §6):

* **tool arguments**, every vendor: a recorded tool-call response whose call carries odd arguments (lone
  surrogates, escapes of them, huge numbers, deep nesting, text that is no JSON, values that are no object)
  and an odd name, sent as the vendor would (JSON text, every non-ASCII character escaped) and read back as
  an SDK reads JSON. Reading it (`parse_response`) may give a turn or raise `ModelAPIError`; every call of
  the turn is answered by `Registry.call` with a result, and the next request (the turn and its results in
  the vendor's format) must be valid UTF-8 JSON;
* **vendor responses**, every vendor through its official SDK client talking to a real HTTP server on
  127.0.0.1: a recorded response with values replaced, keys dropped, strings holding a surrogate escape,
  cut short, or no response at all. ``Model.request`` may return a well-formed `ModelResponse` (whose calls
  are then answered and replayed as above) or raise `ModelAPIError`; anything else is a finding.

Each case is drawn from a `random.Random`, so a seed replays it (the tests draw the seeds with hypothesis).
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import json
import random
from typing import Any

from agentkit import Registry
from agentkit._text import json_text
from agentkit.exceptions import ModelAPIError
from agentkit.messages import AssistantMessage, ModelResponse, ToolResult, ToolResultsMessage, Usage, UserMessage
from agentkit.models import ModelSettings, RequestLimits
from agentkit.providers import get_provider

from .. import fuzzing
from ..fuzzing import Findings
from .client_common import LocalServer
from .test_clients import built
from .test_malformed_responses import FIXTURES, REGISTRY, load

__all__ = ["VENDORS", "Findings", "arguments_case", "find_arguments", "recorded_call", "response_case"]

VENDORS = tuple(FIXTURES)

ODD_TEXT: list[str] = [
    "\ud800", "\udfff", "a\ud83db", "\\ud800", "", "x" * 20_000, "𝄞 é", "\x00", "null", "{", '{"a": ', "[]",
    "get_weather", "get_weather\ud800", "ping", "Paris",
]  # fmt: skip
ODD_NUMBERS: list[Any] = [0, -1, 10**40, -(10**300), 1.5, 1e308, 2**63, float("nan"), float("inf")]


def odd_value(rng: random.Random, depth: int = 0) -> Any:
    """A JSON-ish value of any type, text and numbers chosen among those that broke something once."""
    roll = rng.random()
    if depth > 4 or roll < 0.45:
        return rng.choice([*ODD_TEXT, *ODD_NUMBERS, None, True, False])
    if roll < 0.75:
        keys = [*ODD_TEXT[:8], "city", "unit", "days", "sku", "qty", "customer", "address", "items"]
        return {rng.choice(keys): odd_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}
    if roll < 0.95:
        return [odd_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return deep(rng)


def deep(rng: random.Random) -> Any:
    """Lists or objects nested up to 5,000 levels."""
    value: Any = rng.choice(ODD_TEXT)
    for _ in range(rng.choice([50, 199, 201, 600, 1_000, 5_000])):
        value = [value] if rng.random() < 0.5 else {"a": value}
    return value


def odd_arguments(rng: random.Random) -> Any:
    """Arguments as a model may send them: mostly objects (some valid), sometimes anything."""
    roll = rng.random()
    if roll < 0.25:
        return {"city": rng.choice(["Paris", *ODD_TEXT]), "unit": rng.choice(["c", "f", *ODD_TEXT[:3]])}
    if roll < 0.8:
        return {rng.choice(["city", "unit", "days", *ODD_TEXT[:6]]): odd_value(rng) for _ in range(rng.randint(0, 4))}
    return odd_value(rng)


def _find(node: Any, keys: tuple[str, ...]) -> tuple[Any, str] | None:
    """(parent, key) of the first of `keys` in the document (the call's arguments or its name)."""
    stack = [node]
    while stack:
        current = stack.pop(0)
        if isinstance(current, dict):
            for key in keys:
                if key in current and ("name" in current or key == "name"):
                    return current, key
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)
    return None


def find_arguments(document: Any) -> tuple[Any, str]:
    """(parent, key) of the first call's arguments in a recorded response."""
    found = _find(document, ("arguments", "input", "args"))
    assert found is not None
    return found


def recorded_call(vendor: str) -> Any:
    """A copy of `vendor`'s recorded response holding a tool call."""
    _, whole, _ = FIXTURES[vendor]
    return copy.deepcopy(load(vendor, whole[0]))


def _wire(document: Any) -> Any:
    """The document as the vendor sends it (JSON text, non-ASCII escaped) and an SDK reads it back."""
    return json.loads(json_text(document))


def check_turn(vendor: str, response: ModelResponse, registry: Registry) -> str:
    """Answer the turn's calls and build the next request; the outcome's name (raises on a broken promise)."""
    assert isinstance(response, ModelResponse) and isinstance(response.message, AssistantMessage)
    assert isinstance(response.message.text, str) and isinstance(response.usage, Usage)
    calls = response.message.tool_calls
    results: list[ToolResult] = asyncio.run(registry.call_many(calls)) if calls else []
    assert all(isinstance(result, ToolResult) for result in results)
    history = [UserMessage("go"), response.message, *([ToolResultsMessage(results)] if results else [])]
    body = get_provider(vendor).build_request(history, registry)
    json.dumps(body, ensure_ascii=False, default=str).encode("utf-8")  # the next request can be sent
    kinds = sorted({result.error_kind or "ok" for result in results}) or ["no call"]
    return "+".join(kinds)


def arguments_case(rng: random.Random, findings: Findings, registry: Registry = REGISTRY) -> None:
    """One vendor's recorded call with odd arguments (and sometimes an odd name), read and answered."""
    vendor = rng.choice(VENDORS)
    findings.cases += 1
    document = recorded_call(vendor)
    arguments = odd_arguments(rng)
    parent, key = find_arguments(document)
    as_text = isinstance(parent[key], str)
    parent[key] = (json_text(arguments) if rng.random() < 0.9 else rng.choice(ODD_TEXT)) if as_text else arguments
    if rng.random() < 0.2:
        parent["name"] = rng.choice(ODD_TEXT)
    provider = get_provider(vendor)
    try:
        data = _wire(document)
    except RecursionError:  # Python's JSON reader (so every SDK) refuses it: the SDK's error, not ours
        findings.outcomes["sdk cannot read"] += 1
        return
    try:
        response = provider.parse_response(data, registry=registry)
    except ModelAPIError:
        findings.outcomes["ModelAPIError"] += 1
        return
    except Exception as error:
        findings.found(f"{vendor} parse", error)
        return
    answer_turn(findings, vendor, response, registry)


def answer_turn(findings: Findings, vendor: str, response: ModelResponse, registry: Registry) -> None:
    """`check_turn`, its outcome counted (or its exception recorded as a finding)."""
    try:
        findings.outcomes[check_turn(vendor, response, registry)] += 1
    except Exception as error:  # a finding
        findings.found(f"{vendor} answer", error)


def mutate(rng: random.Random, document: Any) -> Any:
    """`document` with one to three values replaced (by odd ones, or a string by one holding a surrogate)."""
    return fuzzing.mutate(rng, document, odd_value)


def response_body(rng: random.Random, vendor: str) -> bytes:
    """A response body for `vendor`: a recorded one mutated, cut short, or something else entirely."""
    _, whole, _ = FIXTURES[vendor]
    document = load(vendor, rng.choice(whole))
    roll = rng.random()
    if roll < 0.75:
        return json_text(mutate(rng, document)).encode()
    text = json_text(document).encode()
    if roll < 0.85:
        return text[: rng.randint(0, len(text))]
    if roll < 0.95:
        return json_text(odd_value(rng)).encode()
    return bytes(rng.randrange(256) for _ in range(rng.randint(0, 64)))


async def response_case(rng: random.Random, findings: Findings, registry: Registry = REGISTRY) -> None:
    """One vendor's SDK client reads a fuzzed response from a real local server."""
    vendor = rng.choice(VENDORS)
    findings.cases += 1
    body = response_body(rng, vendor)
    async with LocalServer((200, {"content-type": "application/json"}, body)) as server:
        model = built(vendor, server.url, RequestLimits(request=10, max_retries=0))
        try:
            response = await model.request([UserMessage("hi")], registry, ModelSettings())
        except ModelAPIError:
            findings.outcomes["ModelAPIError"] += 1
            return
        except Exception as error:
            findings.found(f"{vendor} request", error)
            return
        finally:
            await model.aclose()
    await asyncio.to_thread(answer_turn, findings, vendor, dataclasses.replace(response), registry)
