"""The 2026-07-28 protocol (issue 22 §2): negotiated per connection, sessionless serving, and a served tool's
question as ``input_required`` with a sealed request state bound to the tool, its arguments and the caller,
with a time to live. Real HTTP on 127.0.0.1; clients: agentkit's and the official `mcp` Python client."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
from mcp import Client, MCPError, types

from agentkit import Registry, ToolContext, tool
from agentkit.mcp import MCPServer, serving_http

SEAT = {
    "type": "object",
    "properties": {"row": {"type": "integer", "maximum": 40}, "letter": {"type": "string"}},
    "required": ["row", "letter"],
    "additionalProperties": False,
}
RAN: list[str] = []


@tool
def choose_seat(ctx: ToolContext[Any], flight: str) -> str:
    """Choose a seat (asks which)."""
    seat = ctx.suspend(f"Which seat on {flight}?", schema=SEAT)
    RAN.append(f"{flight} {seat['row']}{seat['letter']}")
    return f"{flight}: {seat['row']}{seat['letter']}"


@tool
def echo(text: str) -> str:
    """Echo."""
    return text


SERVED = Registry([choose_seat, echo])


@pytest.fixture
async def url() -> AsyncIterator[str]:
    RAN.clear()
    async with serving_http(SERVED, request_state_ttl=2) as served:
        yield served


async def test_each_connection_negotiates_its_version(url: str) -> None:
    async with MCPServer.http(url) as modern, MCPServer.http(url, protocol="legacy") as legacy:
        assert (modern.protocol_version, legacy.protocol_version) == ("2026-07-28", "2025-11-25")
        for server in (modern, legacy):
            assert (await server.call_tool("echo", {"text": "hi"})).structured_content == {"result": "hi"}
    with pytest.raises(ValueError, match="protocol= must be 'auto', 'legacy' or one of"):
        MCPServer.http(url, protocol="2025-06-18")  # type: ignore[arg-type]


async def test_the_official_client_answers_input_required_and_an_unfit_answer_is_asked_again(url: str) -> None:
    asked: list[str] = []

    async def answer(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        content = {"row": 99, "letter": "F"} if len(asked) == 1 else {"row": 12, "letter": "C"}
        return types.ElicitResult(action="accept", content=content)

    async with Client(url, elicitation_callback=answer) as client:
        assert client.protocol_version == "2026-07-28"
        result = await client.call_tool("choose_seat", {"flight": "LH1"})
    assert not result.is_error and result.structured_content == {"result": "LH1: 12C"}
    assert asked[0] == "Which seat on LH1?" and "$.row: 99 is greater than the maximum of 40" in asked[1]
    assert RAN == ["LH1 12C"]  # the unfit answer never reached the tool


async def _first_round(client: Client, arguments: dict[str, Any]) -> types.InputRequiredResult:
    first = await client.session.call_tool("choose_seat", arguments, allow_input_required=True)
    assert isinstance(first, types.InputRequiredResult) and first.request_state
    return first


ANSWER = {"agentkit/answer": types.ElicitResult(action="accept", content={"row": 3, "letter": "A"})}


async def test_the_request_state_is_sealed_and_bound_to_tool_and_arguments(url: str) -> None:
    async with Client(url) as client:
        first = await _first_round(client, {"flight": "LH1"})
        state = first.request_state
        assert state is not None and "Which seat" not in state and "schema" not in state  # sealed, not signed only
        tampered = state[:-2] + ("AA" if not state.endswith("AA") else "BB")
        other_arguments = {"flight": "LH2"}
        for arguments, sent in (({"flight": "LH1"}, tampered), (other_arguments, state)):
            with pytest.raises(MCPError, match="Invalid or expired requestState") as refused:
                await client.session.call_tool(
                    "choose_seat", arguments, input_responses=ANSWER, request_state=sent, allow_input_required=True
                )
            assert refused.value.code == -32602
        with pytest.raises(MCPError, match="Invalid or expired requestState"):  # another tool
            await client.session.call_tool(
                "echo", {"text": "x"}, input_responses=ANSWER, request_state=state, allow_input_required=True
            )
        assert RAN == []
        done = await client.session.call_tool(
            "choose_seat", {"flight": "LH1"}, input_responses=ANSWER, request_state=state, allow_input_required=True
        )
    assert isinstance(done, types.CallToolResult) and done.structured_content == {"result": "LH1: 3A"}
    assert RAN == ["LH1 3A"]


async def test_the_request_state_expires(url: str) -> None:
    async with Client(url) as client:
        first = await _first_round(client, {"flight": "LH1"})
        await asyncio.sleep(2.5)  # the fixture's time to live is 2 s
        with pytest.raises(MCPError, match="Invalid or expired requestState"):
            await client.session.call_tool(
                "choose_seat",
                {"flight": "LH1"},
                input_responses=ANSWER,
                request_state=first.request_state,
                allow_input_required=True,
            )
    assert RAN == []


async def test_the_request_state_is_bound_to_the_caller() -> None:
    """Two users of one endpoint (an auth provider giving each their own identity): a state minted for one is
    refused to the other."""
    from mcp.server.auth.provider import AccessToken

    from agentkit.mcp._http_auth import HttpSecurity

    class TwoUsers:
        async def verify_token(self, token: str) -> Any:
            if token in ("alice-token-0123456789", "bob-token-0123456789ab"):
                return AccessToken(token=token, client_id=token.split("-")[0], scopes=[])
            return None

    original = HttpSecurity.app_kwargs

    def app_kwargs(self: HttpSecurity, base_url: str) -> dict[str, Any]:
        kwargs = original(self, base_url)
        kwargs["token_verifier"] = TwoUsers()
        return kwargs

    HttpSecurity.app_kwargs = app_kwargs  # type: ignore[method-assign]
    try:
        async with serving_http(SERVED, auth_token="alice-token-0123456789") as url:
            alice = httpx2.AsyncClient(headers={"Authorization": "Bearer alice-token-0123456789"})
            bob = httpx2.AsyncClient(headers={"Authorization": "Bearer bob-token-0123456789ab"})
            from mcp.client.streamable_http import streamable_http_client

            async with alice, bob, Client(streamable_http_client(url, http_client=alice)) as as_alice:
                first = await _first_round(as_alice, {"flight": "LH1"})
                async with Client(streamable_http_client(url, http_client=bob)) as as_bob:
                    with pytest.raises(MCPError, match="Invalid or expired requestState"):
                        await as_bob.session.call_tool(
                            "choose_seat",
                            {"flight": "LH1"},
                            input_responses=ANSWER,
                            request_state=first.request_state,
                            allow_input_required=True,
                        )
    finally:
        HttpSecurity.app_kwargs = original  # type: ignore[method-assign]
    assert RAN == []


async def test_sessionless_serving_answers_both_eras_without_a_session() -> None:
    async with serving_http(SERVED, stateless=True) as url:
        async with httpx2.AsyncClient() as http:
            initialize = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            }
            response = await http.post(url, json=initialize, headers={"Accept": "application/json, text/event-stream"})
            assert response.status_code == 200 and "mcp-session-id" not in response.headers
        async with MCPServer.http(url, protocol="legacy") as legacy, MCPServer.http(url) as modern:
            for server in (legacy, modern):
                assert (await server.call_tool("echo", {"text": "hi"})).structured_content == {"result": "hi"}
            asked = await legacy.call_tool("choose_seat", {"flight": "LH1"})  # no back channel without a session
            assert asked.is_error and "could not be asked for" in asked.content[0].text  # type: ignore[union-attr]


async def test_the_command_serves_sessionless_with_stateless() -> None:
    from .fixtures.helpers import FIXTURE_TARGET, start_http_server, stop

    process, url = await start_http_server(FIXTURE_TARGET, "--stateless")
    try:
        async with httpx2.AsyncClient(timeout=30) as http:
            initialize = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            }
            response = await http.post(url, json=initialize, headers={"Accept": "application/json, text/event-stream"})
        assert response.status_code == 200 and "mcp-session-id" not in response.headers
    finally:
        stop(process)
