"""A Registry served over MCP, with the official `mcp` client as the peer (issue 5, section 2.2).

Transports: stdio (``python -m agentkit.mcp serve tests.mcp.fixtures.registry:tools`` spawned by the
client) and streamable HTTP on 127.0.0.1 (in process with `serving_http`, and the same command with
``--transport http``). The loader and the schema wrapping are tested without a server.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from pydantic import BaseModel

from agentkit import Registry, Tool, tool
from agentkit.mcp import MCPLoadError, load_registry, mcp_output_schema, serving_http
from tests.mcp.fixtures.helpers import (
    FIXTURE_SERVER_ARGS,
    FIXTURE_TARGET,
    ROOT,
    session_in_task,
    start_http_server,
    stop,
)
from tests.mcp.fixtures.registry import tools

e2e = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]


def _stdio() -> Any:
    from mcp import StdioServerParameters, stdio_client

    return stdio_client(StdioServerParameters(command=sys.executable, args=FIXTURE_SERVER_ARGS, cwd=ROOT))


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=["stdio", "http"])
async def session(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    """An official mcp ClientSession connected to the fixture registry, over each transport."""
    from mcp.client.streamable_http import streamable_http_client

    if request.param == "stdio":
        async with session_in_task(_stdio) as client:
            yield client
    else:
        async with serving_http(tools) as url, session_in_task(lambda: streamable_http_client(url)) as client:
            yield client


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


class TestServedRegistry:
    pytestmark = e2e

    async def test_lists_tools_with_our_exact_schemas(self, session: Any) -> None:
        listed = (await session.list_tools()).tools
        assert [t.name for t in listed] == list(tools)
        for item in listed:
            ours = tools[item.name]
            assert item.input_schema == ours.input_schema
            assert item.output_schema == mcp_output_schema(ours)
            assert item.description == ours.description
        by_name = {t.name: t for t in listed}
        assert by_name["get-weather"].output_schema == tools["get-weather"].output_schema  # an object: as it is
        assert by_name["add"].output_schema == {
            "type": "object",
            "properties": {"result": {"type": "integer"}},
            "required": ["result"],
        }
        assert by_name["untyped"].output_schema is None

    async def test_call_ok_with_structured_and_text_content(self, session: Any) -> None:
        added = await session.call_tool("add", {"a": 2, "b": 40})
        assert not added.is_error
        assert added.structured_content == {"result": 42}
        assert _text(added) == "42"
        weather = await session.call_tool("get-weather", {"city": "Lima"})
        assert not weather.is_error, _text(weather)
        assert weather.structured_content == {
            "city": "Lima",
            "unit": "c",
            "readings": [{"celsius": 21.5, "source": "station"}],
        }
        assert json.loads(_text(weather)) == weather.structured_content
        untyped = await session.call_tool("untyped", {"text": "abc"})
        assert untyped.structured_content is None and _text(untyped) == "ABC"
        nothing = await session.call_tool("nothing", {})
        assert nothing.structured_content == {"result": None}

    async def test_bad_arguments_are_an_error_result_with_the_path(self, session: Any) -> None:
        result = await session.call_tool("add", {"a": "two", "b": 2})
        assert result.is_error
        assert "$.a" in _text(result) and "Invalid arguments for tool 'add'" in _text(result)
        missing = await session.call_tool("get-weather", {"unit": "kelvin"})
        assert missing.is_error
        assert "$.city" in _text(missing) and "$.unit" in _text(missing)

    async def test_a_raising_tool_is_an_error_result(self, session: Any) -> None:
        boom = await session.call_tool("boom", {"reason": "disk full"})
        assert boom.is_error and "ValueError: boom: disk full" in _text(boom)
        refused = await session.call_tool("refuse", {})
        assert refused.is_error and _text(refused) == "not allowed today"
        # the server is still fine afterwards
        assert (await session.call_tool("add", {"a": 1, "b": 1})).structured_content == {"result": 2}

    async def test_unknown_tool_is_a_protocol_error(self, session: Any) -> None:
        from mcp import MCPError

        with pytest.raises(MCPError, match="Unknown tool: nope"):
            await session.call_tool("nope", {})

    async def test_images_context_and_stdout(self, session: Any) -> None:
        picture = await session.call_tool("picture", {"color": "blue"})
        assert [block.type for block in picture.content] == ["text", "image"]
        assert picture.content[1].mime_type == "image/png"
        assert picture.structured_content == {"result": "blue"}
        who = await session.call_tool("whoami", {"greeting": "hello"})
        assert who.structured_content == {"result": "hello from whoami"}
        # a tool printing to stdout cannot corrupt the stdio wire
        chatty = await session.call_tool("chatty", {"text": "still fine"})
        assert chatty.structured_content == {"result": "still fine"}
        assert (await session.call_tool("add", {"a": 1, "b": 2})).structured_content == {"result": 3}


@pytest.mark.e2e
@pytest.mark.asyncio(loop_scope="module")
async def test_cli_http_transport_serves_the_registry() -> None:
    from mcp.client.streamable_http import streamable_http_client

    process, url = await start_http_server()
    try:
        async with session_in_task(lambda: streamable_http_client(url)) as client:
            listed = (await client.list_tools()).tools
            assert [t.name for t in listed] == list(tools)
            result = await client.call_tool("add", {"a": 3, "b": 4})
            assert result.structured_content == {"result": 7}
    finally:
        stop(process)


# ---- without a server ------------------------------------------------------------------------------


def test_output_schema_wrapping_keeps_refs_resolvable() -> None:
    from jsonschema import Draft202012Validator
    from pydantic import BaseModel

    class Point(BaseModel):
        x: int

    @tool
    def points() -> list[Point]:
        """Points."""
        return [Point(x=1)]

    wrapped = mcp_output_schema(points)
    assert wrapped is not None
    assert wrapped["type"] == "object" and wrapped["required"] == ["result"]
    assert "$defs" in wrapped and "$defs" not in wrapped["properties"]["result"]
    Draft202012Validator(wrapped).validate({"result": [{"x": 1}]})
    with pytest.raises(Exception, match="'x' is a required property"):
        Draft202012Validator(wrapped).validate({"result": [{}]})


def test_output_schema_of_an_object_is_unchanged_and_none_stays_none() -> None:
    assert mcp_output_schema(tools["get-weather"]) is tools["get-weather"].output_schema
    assert mcp_output_schema(tools["untyped"]) is None


class Node(BaseModel):
    label: str
    kids: list[Node] = []


@tool
def tree() -> Node:
    """A small tree."""
    return Node(label="a", kids=[Node(label="b")])


raw_ref_root = Tool.from_json_schema(
    "raw_ref_root",
    {"type": "object", "properties": {}},
    output_schema={
        "$ref": "#/$defs/Out",
        "$defs": {"Out": {"type": "object", "properties": {"n": {"type": "integer"}}}},
    },
    fn=lambda args: {"n": 1},
)


@pytest.mark.parametrize("item", [tree, raw_ref_root], ids=lambda t: t.id)
def test_recursive_and_ref_rooted_object_results_are_not_wrapped(item: Tool[..., Any]) -> None:
    schema = mcp_output_schema(item)
    assert schema is not None and schema["type"] == "object" and "result" not in schema.get("properties", {})


async def test_a_recursive_result_is_structured_content_as_it_is() -> None:
    from mcp import ClientSession
    from mcp.client._memory import InMemoryTransport

    from agentkit.mcp import create_server

    transport = InMemoryTransport(create_server(Registry([tree, raw_ref_root])))
    async with transport as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert listed["tree"].output_schema == mcp_output_schema(tree)
        result = await client.call_tool("tree", {})
        assert result.structured_content == {"label": "a", "kids": [{"label": "b", "kids": []}]}
        raw = await client.call_tool("raw_ref_root", {})
        assert raw.structured_content == {"n": 1}


def test_load_registry_forms() -> None:
    assert load_registry(FIXTURE_TARGET) is tools
    single = load_registry("tests.mcp.fixtures.registry:add")
    assert isinstance(single, Registry) and list(single) == ["add"]
    assert isinstance(single["add"], Tool)
    path = load_registry(f"{ROOT / 'tests' / 'mcp' / 'fixtures' / 'registry.py'}:tools")
    assert list(path) == list(tools)


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("tests.mcp.fixtures.registry", "a target looks like 'package.module:attribute' or 'path/to/file.py:attr"),
        ("tests.mcp.fixtures.nowhere:tools", "no module named 'tests.mcp.fixtures.nowhere'"),
        ("tests.mcp.fixtures.registry:missing", "has no attribute 'missing'"),
        ("tests.mcp.fixtures.registry:PIXEL", "is a bytes, not a Registry"),
        ("no/such/file.py:tools", "no such file: no/such/file.py"),
    ],
)
def test_load_registry_errors(target: str, message: str) -> None:
    with pytest.raises(MCPLoadError, match=message):
        load_registry(target)


def test_module_cli_reports_a_bad_target_in_one_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "agentkit.mcp", "serve", "tests.mcp.fixtures.registry:missing"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "agentkit mcp serve: error: 'tests.mcp.fixtures.registry' has no attribute 'missing'"
    ]


def test_importing_agentkit_does_not_import_mcp() -> None:
    code = "import sys, agentkit, agentkit.mcp; sys.exit('mcp' in sys.modules or 'mcp_types' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT, timeout=60).returncode == 0


def test_missing_mcp_package_gives_the_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentkit.mcp import MCPServer, create_server

    for name in [m for m in sys.modules if m == "mcp" or m.startswith("mcp.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mcp", None)
    with pytest.raises(ImportError, match=r"pip install 'agentkit-tools\[mcp\]'"):
        create_server(tools)
    server = MCPServer.stdio("unused")

    async def enter() -> None:
        async with server:
            pass

    import asyncio

    with pytest.raises(ImportError, match=r"pip install 'agentkit-tools\[mcp\]'"):
        asyncio.run(enter())


@pytest.mark.e2e
@pytest.mark.asyncio(loop_scope="module")
async def test_agents_and_workflows_are_served_like_any_tool() -> None:
    from agentkit.agent import Agent
    from agentkit.mcp import MCPServer
    from agentkit.testing import FunctionModel
    from agentkit.workflows import Workflow

    def double(n: int) -> int:
        return n * 2

    def describe(n: int) -> str:
        return f"got {n}"

    helper = Agent(id="helper", description="Answers briefly.", model=FunctionModel(lambda m, i: "on it"))
    served = Registry(
        {
            "add": tools["add"],
            "agent-helper": helper.as_tool(),
            "workflow-double": Workflow.start(double, id="double").then(describe).as_tool(),
        }
    )
    async with serving_http(served) as url, MCPServer.http(url) as remote:
        assert remote.registry["workflow-double"].input_schema == served["workflow-double"].input_schema
        assert remote.registry["agent-helper"].input_schema == served["agent-helper"].input_schema
        from agentkit import ToolCall

        agent_result = await remote.registry.call(ToolCall("1", "agent-helper", {"prompt": "help"}))
        assert agent_result.output == {"result": "on it"}, agent_result.text
        flow = await remote.registry.call(ToolCall("2", "workflow-double", {"n": 21}))
        assert flow.output == {"result": "got 42"}, flow.text
