"""`agentkit.mcp.MCPServer`: real MCP servers' tools as a Registry (issue 5, section 2.1).

The main peer is the real `mcp-server-time` (mcp 2.x), spawned once per module. A second fixture runs
the 1.x build of the same server from its own virtualenv (no output schemas, no structured content).
Crash and timeout paths use agentkit's own fixture server, which has a slow tool and reports its pid.
"""

from __future__ import annotations

import asyncio
import base64
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from mcp import types

from agentkit import ImagePart, Registry, TextPart, ToolCall
from agentkit.mcp import MCPConnectionError, MCPServer, StructuredOutput, serving_http
from tests.mcp.fixtures.helpers import (
    FIXTURE_SERVER_ARGS,
    ROOT,
    TIME_SERVER_ARGS,
    child_pids,
    kill,
    start_http_server,
    stop,
)
from tests.mcp.fixtures.registry import PIXEL, tools

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(id=f"call-{name}", name=name, arguments=arguments)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def time_server() -> AsyncIterator[MCPServer]:
    async with MCPServer.stdio(sys.executable, TIME_SERVER_ARGS, timeout=10) as server:
        yield server


# ---- listing ---------------------------------------------------------------------------------------


async def test_lists_the_real_servers_tools_with_verbatim_schemas(time_server: MCPServer) -> None:
    registry = time_server.registry
    assert isinstance(registry, Registry)
    assert list(registry) == ["get_current_time", "convert_time"]
    assert time_server.name == "mcp-time"
    assert time_server.connected
    for listed in time_server.listed_tools:
        item = registry[listed.name]
        assert item.input_schema == listed.input_schema
        assert item.output_schema == listed.output_schema
        assert item.output_schema is not None
        assert item.description == listed.description
    convert = registry["convert_time"].output_schema
    assert convert is not None
    assert convert["properties"]["source"] == {"$ref": "#/$defs/TimeResult"}
    assert "TimeResult" in convert["$defs"]


async def test_registry_payload_for_a_vendor_uses_the_mcp_names(time_server: MCPServer) -> None:
    from agentkit.providers import get_provider

    payload = get_provider("openai").format_tools(time_server.registry)
    assert [t["function"]["name"] for t in payload["tools"]] == ["get_current_time", "convert_time"]


# ---- calls -----------------------------------------------------------------------------------------


async def test_structured_content_is_the_validated_output(time_server: MCPServer) -> None:
    result = await time_server.registry.call(call("get_current_time", timezone="Europe/Paris"))
    assert not result.is_error, result.text
    assert isinstance(result.output, StructuredOutput)
    assert result.output["timezone"] == "Europe/Paris"
    assert set(result.output) == {"timezone", "datetime", "day_of_week", "is_dst"}
    assert isinstance(result.output["is_dst"], bool)
    # the model receives the structured content as compact JSON
    assert len(result.content) == 1
    assert '"timezone":"Europe/Paris"' in result.text


async def test_output_schema_with_defs_and_refs(time_server: MCPServer) -> None:
    result = await time_server.registry.call(
        call("convert_time", source_timezone="UTC", time="12:00", target_timezone="Asia/Tokyo")
    )
    assert not result.is_error, result.text
    assert result.output["source"]["datetime"].endswith("12:00:00+00:00")
    assert result.output["target"]["datetime"].endswith("21:00:00+09:00")
    assert result.output["time_difference"] == "+9.0h"


async def test_bad_arguments_are_rejected_before_forwarding(
    time_server: MCPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    forwarded: list[str] = []
    original = time_server.call_tool

    async def spy(name: str, arguments: Any = None, **options: Any) -> Any:
        forwarded.append(name)
        return await original(name, arguments, **options)

    monkeypatch.setattr(time_server, "call_tool", spy)
    wrong_type = await time_server.registry.call(call("get_current_time", timezone=3))
    missing = await time_server.registry.call(call("convert_time", source_timezone="UTC"))
    assert forwarded == []
    assert wrong_type.is_error and wrong_type.error_kind == "invalid_arguments"
    assert "$.timezone" in wrong_type.text and "not of type 'string'" in wrong_type.text
    assert missing.is_error and missing.error_kind == "invalid_arguments"
    assert "'time' is a required property" in missing.text
    assert "'target_timezone' is a required property" in missing.text
    ok = await time_server.registry.call(call("get_current_time", timezone="UTC"))
    assert not ok.is_error and forwarded == ["get_current_time"]


async def test_server_side_error_is_an_error_result(time_server: MCPServer) -> None:
    """A timezone the schema accepts but the server rejects: isError -> an error result with its text."""
    result = await time_server.registry.call(call("get_current_time", timezone="Nowhere/Atlantis"))
    assert result.is_error
    assert result.error_kind == "tool_error"
    assert "Invalid timezone" in result.text and "Nowhere/Atlantis" in result.text
    bad_time = await time_server.registry.call(
        call("convert_time", source_timezone="UTC", time="25:99", target_timezone="UTC")
    )
    assert bad_time.is_error and bad_time.error_kind == "tool_error"


async def test_unknown_tool_never_reaches_the_server(time_server: MCPServer) -> None:
    result = await time_server.registry.call(call("get_current_tme", timezone="UTC"))
    assert result.is_error and result.error_kind == "unknown_tool"
    assert "get_current_time" in result.text


async def test_protocol_error_from_the_server_becomes_tool_error(time_server: MCPServer) -> None:
    from agentkit import ToolError

    with pytest.raises(ToolError, match="rejected the call to 'no_such_tool'"):
        await time_server.call_tool("no_such_tool", {})


async def test_parallel_calls_share_one_session(time_server: MCPServer) -> None:
    zones = ["UTC", "Asia/Tokyo", "America/New_York", "Europe/London"]
    results = await time_server.registry.call_many([call("get_current_time", timezone=z) for z in zones])
    assert [r.output["timezone"] for r in results] == zones


# ---- result shapes (fabricated results through the real session's tools) ---------------------------


def _fake_result(result: types.CallToolResult) -> Any:
    async def fake(name: str, arguments: Any = None, **options: Any) -> types.CallToolResult:
        return result

    return fake


async def test_structured_content_breaking_the_output_schema_is_invalid_output(
    time_server: MCPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = types.CallToolResult(content=[types.TextContent(type="text", text="{}")], structured_content={"timezone": 5})
    monkeypatch.setattr(time_server, "call_tool", _fake_result(bad))
    result = await time_server.registry.call(call("get_current_time", timezone="UTC"))
    assert result.is_error and result.error_kind == "invalid_output"
    assert "$.timezone" in result.text and "'datetime' is a required property" in result.text


async def test_missing_structured_content_despite_an_output_schema(
    time_server: MCPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    text_only = types.CallToolResult(content=[types.TextContent(type="text", text="12:00 somewhere")])
    monkeypatch.setattr(time_server, "call_tool", _fake_result(text_only))
    result = await time_server.registry.call(call("get_current_time", timezone="UTC"))
    assert result.is_error and result.error_kind == "tool_error"
    assert "sent no structuredContent" in result.text and "12:00 somewhere" in result.text


async def test_image_content_reaches_the_model_as_image_parts(
    time_server: MCPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    pixel = base64.b64encode(PIXEL).decode()
    with_image = types.CallToolResult(
        content=[
            types.TextContent(type="text", text="{}"),
            types.ImageContent(type="image", data=pixel, mime_type="image/png"),
        ],
        structured_content={"timezone": "UTC", "datetime": "x", "day_of_week": "Monday", "is_dst": False},
    )
    monkeypatch.setattr(time_server, "call_tool", _fake_result(with_image))
    result = await time_server.registry.call(call("get_current_time", timezone="UTC"))
    assert not result.is_error, result.text
    assert result.output == {"timezone": "UTC", "datetime": "x", "day_of_week": "Monday", "is_dst": False}
    text, image = result.content
    assert isinstance(text, TextPart) and '"day_of_week":"Monday"' in text.text
    assert isinstance(image, ImagePart) and image.data == PIXEL and image.media_type == "image/png"


# ---- agentkit's own fixture server: images, timeouts, crashes --------------------------------------


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fixture_server() -> AsyncIterator[MCPServer]:
    server = MCPServer.stdio(sys.executable, FIXTURE_SERVER_ARGS, cwd=str(ROOT), timeout=1.0, prefix="fx_")
    async with server:
        yield server


async def test_prefix_keys_and_image_and_text_results(fixture_server: MCPServer) -> None:
    registry = fixture_server.registry
    assert "fx_add" in registry and "fx_get-weather" in registry
    assert registry["fx_get-weather"].input_schema == tools["get-weather"].input_schema
    added = await registry.call(call("fx_add", a=2, b=3))
    assert added.output == {"result": 5}
    picture = await registry.call(call("fx_picture", color="red"))
    assert not picture.is_error, picture.text
    assert [type(p) for p in picture.content] == [TextPart, ImagePart]
    assert picture.content[1].data == PIXEL  # type: ignore[union-attr]
    untyped = await registry.call(call("fx_untyped", text="shout"))
    assert untyped.output == "SHOUT" and untyped.text == "SHOUT"
    failed = await registry.call(call("fx_boom", reason="kaput"))
    assert failed.is_error and failed.error_kind == "tool_error" and "boom: kaput" in failed.text


async def test_a_call_past_the_timeout_is_an_error_and_the_session_survives(fixture_server: MCPServer) -> None:
    result = await fixture_server.registry.call(call("fx_slow", seconds=5))
    assert result.is_error and result.error_kind == "timeout"  # cut at the 1 s timeout, not after 5 s
    assert "timeout of 1 s" in result.text
    after = await fixture_server.registry.call(call("fx_add", a=1, b=1))
    assert after.output == {"result": 2}


async def test_server_killed_mid_call_gives_an_error_without_hanging() -> None:
    async with MCPServer.stdio(sys.executable, FIXTURE_SERVER_ARGS, cwd=str(ROOT), timeout=30) as server:
        pid = (await server.registry.call(call("pid"))).output["result"]
        assert pid in child_pids("agentkit.mcp")
        in_flight = asyncio.ensure_future(server.registry.call(call("slow", seconds=20)))
        await asyncio.sleep(0.3)
        kill(pid)
        result = await asyncio.wait_for(in_flight, 10)  # a hang fails here, not at the 20 s sleep
        assert result.is_error and result.error_kind == "tool_error"
        assert "closed the connection" in result.text
        again = await server.registry.call(call("add", a=1, b=2))
        assert again.is_error and again.error_kind == "tool_error"


async def test_real_time_server_killed_between_calls() -> None:
    before = set(child_pids("mcp_server_time"))  # the module's shared server may be running
    async with MCPServer.stdio(sys.executable, TIME_SERVER_ARGS, timeout=10) as server:
        (pid,) = set(child_pids("mcp_server_time")) - before
        kill(pid)
        result = await server.registry.call(call("get_current_time", timezone="UTC"))
        assert result.is_error and result.error_kind == "tool_error"
        assert "mcp-time" in result.text
    assert pid not in child_pids("mcp_server_time")


async def test_server_that_exits_at_once_fails_to_connect() -> None:
    server = MCPServer.stdio(sys.executable, ["-c", "raise SystemExit(3)"], connect_timeout=10, errlog=None)
    with pytest.raises(MCPConnectionError, match="Could not connect"):
        async with server:
            pass
    assert not server.connected
    with pytest.raises(MCPConnectionError, match="not connected"):
        _ = server.registry


async def test_missing_command_fails_to_connect() -> None:
    with pytest.raises(MCPConnectionError, match="Could not connect"):
        async with MCPServer.stdio("/nonexistent/mcp-server"):
            pass


async def test_registry_before_entering_nested_entries_and_after_leaving() -> None:
    server = MCPServer.stdio(sys.executable, TIME_SERVER_ARGS)
    with pytest.raises(MCPConnectionError, match="async with"):
        _ = server.registry
    before = set(child_pids("mcp_server_time"))
    async with server:
        kept = server.registry
        assert "get_current_time" in kept
        async with server:  # a second user (e.g. another agent) shares the session
            assert server.registry is kept
            assert len(set(child_pids("mcp_server_time")) - before) == 1
        assert server.connected  # the inner exit left it open
        assert not (await kept.call(call("get_current_time", timezone="UTC"))).is_error
    assert not server.connected
    result = await kept.call(call("get_current_time", timezone="UTC"))
    assert result.is_error and "not connected" in result.text


# ---- streamable HTTP ---------------------------------------------------------------------------------


async def test_http_client_against_an_agentkit_server() -> None:
    async with serving_http(tools) as url, MCPServer.http(url, timeout=5) as server:
        assert url.startswith("http://127.0.0.1:")
        assert list(server.registry) == list(tools)
        result = await server.registry.call(call("get-weather", city="Oslo", unit="f"))
        assert result.output["city"] == "Oslo"
        assert result.output["readings"] == [{"celsius": 21.5, "source": "station"}]
        bad = await server.registry.call(call("get-weather", city="Oslo", unit="kelvin"))
        assert bad.is_error and bad.error_kind == "invalid_arguments"


async def test_http_server_killed_mid_call_gives_an_error_without_hanging() -> None:
    process, url = await start_http_server()
    try:
        async with MCPServer.http(url, timeout=30) as server:
            assert (await server.registry.call(call("add", a=1, b=2))).output == {"result": 3}
            in_flight = asyncio.ensure_future(server.registry.call(call("slow", seconds=20)))
            await asyncio.sleep(0.3)
            kill(process.pid)
            result = await asyncio.wait_for(in_flight, 10)  # a hang fails here, not at the 20 s sleep
            assert result.is_error and "closed the connection" in result.text
            again = await server.registry.call(call("add", a=1, b=2))
            assert again.is_error
    finally:
        stop(process)


# ---- the 1.x build: no output schemas, no structured content --------------------------------------

MCP1_REQUIREMENTS = ["mcp>=1.9,<2", "mcp-server-time==2026.10.10"]


@pytest.fixture(scope="session")
def mcp1_python() -> str:
    """A virtualenv with mcp 1.x and the matching mcp-server-time, cached outside the clone."""
    home = Path(os.environ.get("AGENTKIT_E2E_CACHE", Path.home() / ".cache" / "agentkit-e2e"))
    venv = home / "mcp1"
    python = venv / "bin" / "python"
    stamp = venv / "requirements.txt"
    wanted = "\n".join(MCP1_REQUIREMENTS)
    if python.exists() and stamp.exists() and stamp.read_text() == wanted:
        return str(python)
    try:
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True, capture_output=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", *MCP1_REQUIREMENTS],
            check=True,
            capture_output=True,
            timeout=240,
        )
    except (subprocess.SubprocessError, OSError) as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"could not build the mcp 1.x virtualenv: {exc}")
    stamp.write_text(wanted)
    return str(python)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def time_server_v1(mcp1_python: str) -> AsyncIterator[MCPServer]:
    async with MCPServer.stdio(mcp1_python, TIME_SERVER_ARGS, timeout=10) as server:
        yield server


async def test_v1_server_lists_tools_without_output_schemas(time_server_v1: MCPServer) -> None:
    assert list(time_server_v1.registry) == ["get_current_time", "convert_time"]
    for listed in time_server_v1.listed_tools:
        assert listed.output_schema is None
        assert time_server_v1.registry[listed.name].output_schema is None
        assert time_server_v1.registry[listed.name].input_schema == listed.input_schema


async def test_v1_server_text_content_is_the_output(time_server_v1: MCPServer) -> None:
    import json

    result = await time_server_v1.registry.call(call("get_current_time", timezone="Asia/Tokyo"))
    assert not result.is_error, result.text
    assert isinstance(result.output, str)
    assert json.loads(result.output)["timezone"] == "Asia/Tokyo"
    assert result.text == result.output


async def test_v1_server_errors_and_bad_arguments(time_server_v1: MCPServer) -> None:
    server_error = await time_server_v1.registry.call(call("get_current_time", timezone="Nowhere/Atlantis"))
    assert server_error.is_error and server_error.error_kind == "tool_error"
    assert "Invalid timezone" in server_error.text
    rejected = await time_server_v1.registry.call(call("get_current_time"))
    assert rejected.is_error and rejected.error_kind == "invalid_arguments"


# ---- with the agent loop ---------------------------------------------------------------------------


async def test_agent_opens_the_session_and_calls_the_real_servers_tool() -> None:
    from agentkit.agent import Agent
    from agentkit.messages import AssistantMessage, ToolResultsMessage
    from agentkit.testing import FunctionModel

    def turn(messages: Any, info: Any) -> Any:
        last = messages[-1]
        if isinstance(last, ToolResultsMessage):
            return f"it is {last.results[0].output['day_of_week']}"
        return AssistantMessage(tool_calls=[call("get_current_time", timezone="UTC")])

    server = MCPServer.stdio(sys.executable, TIME_SERVER_ARGS)
    agent = Agent(model=FunctionModel(turn), mcp_servers=[server])
    result = await agent.generate("what day is it?")
    assert result.text.startswith("it is ")
    assert not server.connected  # the run opened and closed the session
    assert [r.name for r in result.tool_results] == ["get_current_time"]


async def test_a_name_a_vendor_rejects_is_aliased_and_mapped_back() -> None:
    from agentkit.providers import InvalidToolNameError, get_provider

    served = Registry({"files.read": tools["add"]})  # MCP allows dots; OpenAI's name rule does not
    async with serving_http(served) as url, MCPServer.http(url) as remote:
        assert list(remote.registry) == ["files.read"]
        openai = get_provider("openai")
        with pytest.raises(InvalidToolNameError):
            openai.format_tools(remote.registry)
        payload = openai.format_tools(remote.registry, aliases=True)
        alias = payload["tools"][0]["function"]["name"]
        assert alias != "files.read"
        response = {
            "choices": [
                {
                    "message": {
                        "role": "assistant",
                        "tool_calls": [
                            {"id": "c1", "type": "function", "function": {"name": alias, "arguments": '{"a":1,"b":2}'}}
                        ],
                    }
                }
            ]
        }
        (parsed,) = openai.parse_tool_calls(response, registry=remote.registry, aliases=True)
        assert parsed.name == "files.read"
        result = await remote.registry.call(parsed)
        assert result.output == {"result": 3}
