"""Resources and prompts both ways (issue 22 §1): served from `@resource`/`@prompt` functions, read and got
by agentkit's `MCPServer` and by the official `mcp` Python client. Real HTTP on 127.0.0.1."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator

import pytest
from mcp import Client, types

from agentkit import Agent, AssistantMessage, ImagePart, TextPart, ToolCall, UserMessage
from agentkit.exceptions import ToolDefinitionError
from agentkit.mcp import (
    MCPPrompt,
    MCPRequestError,
    MCPResource,
    MCPResourceTemplate,
    MCPServer,
    PromptArgument,
    ResourceContents,
    prompt,
    resource,
    serving_http,
)
from agentkit.testing import FunctionModel

from .fixtures.library import PROMPTS, RESOURCES, tools
from .fixtures.registry import PIXEL


@pytest.fixture
async def url() -> AsyncIterator[str]:
    async with serving_http(tools, resources=RESOURCES, prompts=PROMPTS) as served:
        yield served


# ---- agentkit's client --------------------------------------------------------------------------------


async def test_resources_and_templates_are_listed_typed(url: str) -> None:
    async with MCPServer.http(url) as server:
        assert server.resources == [
            MCPResource("docs://readme", "readme", description="The project's README.", mime_type="text/markdown"),
            MCPResource("images://pixel", "pixel", description="A one-pixel PNG."),
            MCPResource("data://raw", "raw", description="Some bytes."),
        ]
        assert [t.uri_template for t in server.resource_templates] == ["docs://pages/{page}", "books://{id}"]
        template = server.resource_templates[0]
        assert isinstance(template, MCPResourceTemplate) and template.variables == ["page"]
        assert template.expand(page="faq") == "docs://pages/faq"


async def test_text_binary_and_templated_resources_are_read(url: str) -> None:
    async with MCPServer.http(url) as server:
        (readme,) = await server.read_resource("docs://readme")
        assert readme == ResourceContents("docs://readme", "text/markdown", text="# agentkit\nTools for models.")
        (faq,) = await server.read_resource(server.resource_templates[0].expand(page="faq"))
        assert faq.text == "# FAQ\nAsk away."
        (book,) = await server.read_resource("books://7")  # "7" read as the int the parameter wants
        assert book.mime_type == "application/json" and book.text == '{"id":7,"title":"Book 7"}'
        (image,) = await server.read_resource("images://pixel")
        assert image.data == PIXEL and image.parts == [ImagePart(data=PIXEL, media_type="image/png")]
        (raw,) = await server.read_resource("data://raw")
        assert raw.data == b"\x00\x01\x02" and raw.parts == [
            TextPart("[binary resource data://raw (application/octet-stream, 3 bytes) omitted]")
        ]
        assert readme.as_message() == UserMessage(
            [TextPart("Resource docs://readme:"), TextPart("# agentkit\nTools for models.")]
        )


async def test_bad_uris_and_variables_are_errors_naming_them(url: str) -> None:
    async with MCPServer.http(url) as server:
        with pytest.raises(MCPRequestError, match=r"-32002\): Resource not found: docs://nope") as missing:
            await server.read_resource("docs://nope")
        assert missing.value.code == -32002
        with pytest.raises(MCPRequestError, match=r"-32602\): Resource books://seven: id: Input should be"):
            await server.read_resource("books://seven")
        with pytest.raises(MCPRequestError, match=r"-32603\): Reading docs://pages/nope failed: KeyError"):
            await server.read_resource("docs://pages/nope")
        (readme,) = await server.read_resource("docs://readme")  # the server is still up
        assert readme.text is not None


async def test_prompts_are_listed_with_arguments_and_got_as_messages(url: str) -> None:
    async with MCPServer.http(url) as server:
        assert server.prompts == [
            MCPPrompt(
                "review",
                None,
                "Ask for a code review.",
                (
                    PromptArgument("code", "The code to review.", True),
                    PromptArgument("language", "Its language.", False),
                    PromptArgument("strict", "Whether to be strict.", False),
                ),
            ),
            MCPPrompt(
                "chat-start",
                "Start a chat",
                "Open a conversation about a topic.",
                (PromptArgument("topic", None, True),),
            ),
        ]
        messages = await server.get_prompt("review", {"code": "x = 1", "language": "rust", "strict": True})
        assert messages == [UserMessage("Review this rust code strictly:\nx = 1")]
        chat = await server.get_prompt("chat-start", {"topic": "tea"})
        assert chat == [UserMessage("Let's talk about tea."), AssistantMessage(text="Gladly. Where shall we start?")]
        with pytest.raises(
            ValueError, match=r"prompt 'review' takes \['code', 'language', 'strict'\]; missing \['code'\]"
        ):
            await server.get_prompt("review", {})
        with pytest.raises(MCPRequestError, match=r"Prompt 'review': language: Input should be 'python' or 'rust'"):
            await server.get_prompt("review", {"code": "x", "language": "cobol"})


async def test_a_prompt_starts_a_run_and_the_model_may_read_resources_as_a_tool(url: str) -> None:
    seen: list[list[object]] = []

    def model(messages: list[object], info: object) -> AssistantMessage | str:
        seen.append(messages)
        if len(seen) == 1:
            return AssistantMessage(tool_calls=[ToolCall("c1", "docs_read_resource", {"uri": "docs://pages/intro"})])
        return "read it"

    server = MCPServer.http(url, prefix="docs_", resource_tool=True)
    agent = Agent(model=FunctionModel(model), mcp_servers=[server])
    async with server:
        opening = await server.get_prompt("chat-start", {"topic": "docs"})
        assert "docs_read_resource" in server.registry
        description = server.registry["docs_read_resource"].description
        assert "docs://readme: The project's README." in description and "books://{id} (template)" in description
        result = await agent.generate(opening)
    assert result.text == "read it"
    (read,) = result.tool_results
    assert not read.is_error and read.text == "# Intro\nWelcome."
    assert seen[0][:2] == opening


# ---- the official Python client against agentkit's server ----------------------------------------------


async def test_the_official_python_client_lists_reads_and_gets(url: str) -> None:
    async with Client(url, mode="legacy") as client:
        listed = await client.list_resources()
        assert [str(r.uri) for r in listed.resources] == ["docs://readme", "images://pixel", "data://raw"]
        templates = await client.list_resource_templates()
        assert [t.uri_template for t in templates.resource_templates] == ["docs://pages/{page}", "books://{id}"]
        read = await client.read_resource("images://pixel")
        (blob,) = read.contents
        assert isinstance(blob, types.BlobResourceContents) and base64.b64decode(blob.blob) == PIXEL
        prompts = await client.list_prompts()
        assert [p.name for p in prompts.prompts] == ["review", "chat-start"]
        got = await client.get_prompt("review", {"code": "print(1)"})
        assert got.messages[0].role == "user" and got.messages[0].content.text == "Review this python code:\nprint(1)"  # type: ignore[union-attr]


# ---- definition-time errors ---------------------------------------------------------------------------


def test_a_template_variable_must_be_a_parameter_and_a_required_parameter_a_variable() -> None:
    with pytest.raises(ToolDefinitionError) as caught:

        @resource("books://{id}/{chapter}")
        def chapter(id: int, page: int) -> str:
            """A chapter."""
            return ""

    text = str(caught.value)
    assert "the URI template variable 'chapter' is not a parameter" in text
    assert "the parameter 'page' has no default and is not a variable of the URI" in text
    with pytest.raises(ToolDefinitionError, match="the URI needs a scheme"):
        resource("readme")(lambda: "")


def test_prompt_arguments_must_be_scalars() -> None:
    with pytest.raises(ToolDefinitionError, match="the argument 'lines' is not a string, number or boolean"):

        @prompt
        def summarize(lines: list[str]) -> str:
            """Summarize."""
            return ""
