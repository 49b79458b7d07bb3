"""A lone surrogate from a vendor is data, never a crash (issue 17 §2.1), through every vendor's official SDK.

A vendor's JSON may escape a lone surrogate (``"\\ud800"``); Python's JSON reader (and so every SDK) decodes
it to text UTF-8 cannot encode. It used to make `Registry.call` raise `TypeError` (pydantic-core refuses such
text), and text that held one made the next request fail inside the SDK. Each vendor's SDK talks to a real
server on 127.0.0.1 that answers a recorded tool call holding the escape in its arguments and its text; the
run must answer the call with an ``invalid_arguments`` result naming where the surrogate is, and send the
next request as valid UTF-8 JSON.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentkit import Agent, ModelAPIError, ToolResultsMessage
from agentkit.models import RequestLimits

from .client_common import LocalServer
from .test_clients import VENDOR_NAMES, aws_environment, built  # noqa: F401 - the autouse fixture
from .test_malformed_responses import FIXTURES, REGISTRY, load

CITIES = ("Paris", "San Francisco", "Seattle")


def with_escape(document: Any) -> bytes:
    """The recorded response as wire JSON, each city name (in the arguments and the text) a lone surrogate."""
    text = json.dumps(document)
    for city in CITIES:
        text = text.replace(city, "\\ud800")
    assert "\\ud800" in text
    return text.encode()


def reply(body: bytes) -> tuple[int, dict[str, str], bytes]:
    return 200, {"content-type": "application/json"}, body


@pytest.mark.parametrize("vendor", VENDOR_NAMES)
async def test_a_lone_surrogate_in_a_vendors_tool_call_is_an_invalid_arguments_result(vendor: str) -> None:
    _, whole, _ = FIXTURES[vendor]
    call = with_escape(load(vendor, whole[0]))
    answer = json.dumps(load(vendor, whole[2])).encode()
    async with LocalServer(reply(call), reply(answer)) as server:
        model = built(vendor, server.url, RequestLimits(request=20, max_retries=0))
        agent = Agent(model=model, tools=REGISTRY)
        if vendor == "mistral":  # its SDK reads responses with pydantic-core, which refuses the escape itself
            with pytest.raises(ModelAPIError, match="hex escape"):
                await agent.generate("Weather?")
            return
        result = await agent.generate("Weather?")
        await model.aclose()
    [results] = [m for m in result.messages if isinstance(m, ToolResultsMessage)]
    [answered] = results.results
    assert answered.is_error and answered.error_kind == "invalid_arguments"
    text = answered.content[0].text  # type: ignore[union-attr]
    assert "$.city: Not valid Unicode: holds a lone surrogate" in text
    assert server.requests == 2
    sent = json.loads(server.bodies[1].decode("utf-8"))  # the next request: valid UTF-8 JSON
    assert "Not valid Unicode" in json.dumps(sent)  # the result went back to the model


CALL_KEYS = frozenset({"id", "name", "arguments", "input", "args", "call_id", "toolUseId", "type", "role"})


def every_string_holding_one(node: Any, *, calls_too: bool) -> Any:
    """`node` with a lone surrogate in every string (but a call's own fields unless `calls_too`)."""
    if isinstance(node, dict):
        return {
            key: value if key in CALL_KEYS and not calls_too else every_string_holding_one(value, calls_too=calls_too)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [every_string_holding_one(value, calls_too=calls_too) for value in node]
    return node + "\ud800" if isinstance(node, str) else node


@pytest.mark.parametrize("vendor", VENDOR_NAMES)
def test_a_surrogate_in_any_string_of_a_response_is_answered_and_replayed(vendor: str) -> None:
    """Cohere's tool_plan (kept in each call for the replay) made the next request fail to encode."""
    from agentkit.providers import get_provider

    from .boundary_fuzz import check_turn

    _, whole, _ = FIXTURES[vendor]
    for name, calls_too in [(name, calls_too) for name in whole for calls_too in (False, True)]:
        document = every_string_holding_one(load(vendor, name), calls_too=calls_too)
        try:
            response = get_provider(vendor).parse_response(document, registry=REGISTRY)
        except ModelAPIError:
            continue  # a finish reason or a type the surrogate made unknown: refused, documented
        check_turn(vendor, response, REGISTRY)  # every call answered, the next request valid UTF-8
