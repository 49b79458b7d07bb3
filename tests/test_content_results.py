"""A tool that returns an image (or parts and text) sends them to the model (issue 8, §2 item 4)."""

from __future__ import annotations

from typing import Any

import pytest

from agentkit import ContentPart, ImagePart, Registry, TextPart, ToolCall, ToolOutputError, tool
from agentkit.providers import get_provider
from tests.providers.common import PNG

IMAGE = ImagePart(data=PNG, media_type="image/png")


@tool
def snapshot() -> ImagePart:
    """Take a picture."""
    return IMAGE


@tool
def chart(title: str) -> list[ContentPart]:
    """A chart with its caption."""
    return [TextPart(f"chart: {title}"), IMAGE]


@tool
def maybe_picture(show: bool) -> ImagePart | str:
    """A picture, or why not."""
    return IMAGE if show else "nothing to show"


@tool
def captioned() -> list[str | ImagePart]:
    """Text and an image."""
    return ["a caption", IMAGE]


def untyped():  # type: ignore[no-untyped-def]  # what an unannotated tool returns is sent as it is
    return ["look:", IMAGE]


@pytest.mark.parametrize(
    ("item", "arguments", "expected"),
    [
        (snapshot, {}, [IMAGE]),
        (chart, {"title": "sales"}, [TextPart("chart: sales"), IMAGE]),
        (maybe_picture, {"show": True}, [IMAGE]),
        (maybe_picture, {"show": False}, [TextPart("nothing to show")]),
        (captioned, {}, [TextPart("a caption"), IMAGE]),
        (tool(untyped), {}, [TextPart("look:"), IMAGE]),
    ],
    ids=["image", "parts", "image-or-text:image", "image-or-text:text", "text-and-image", "unannotated"],
)
async def test_parts_are_sent_as_they_are(item: Any, arguments: dict[str, Any], expected: list[ContentPart]) -> None:
    result = await Registry([item]).call(ToolCall("1", item.id, arguments))
    assert not result.is_error, result.text
    assert list(result.content) == expected
    assert result.output is not None
    assert item.output_schema is None  # content for the model, not data: nothing for a JSON Schema to describe


def test_a_content_tool_that_returns_something_else_is_invalid_output() -> None:
    @tool
    def broken() -> ImagePart:
        return 42  # type: ignore[return-value]

    with pytest.raises(ToolOutputError, match="Expected an ImagePart"):
        broken.invoke({})


def test_lists_of_text_are_still_data() -> None:
    @tool
    def names() -> list[str]:
        return ["a", "b"]

    assert names.output_schema == {"type": "array", "items": {"type": "string"}}
    assert names.model_content(["a", "b"]) == [TextPart('["a","b"]')]


async def test_the_vendor_gets_the_image_block() -> None:
    results = await Registry([chart]).call_many([ToolCall("toolu_1", "chart", {"title": "sales"})])
    (message,) = get_provider("anthropic").format_tool_results(results)
    (block,) = message["content"]
    assert block.get("is_error") is None
    assert [part["type"] for part in block["content"]] == ["text", "image"]


async def test_over_mcp_the_image_is_an_image_content_block() -> None:
    from mcp import ClientSession
    from mcp.client._memory import InMemoryTransport

    from agentkit.mcp import create_server

    transport = InMemoryTransport(create_server(Registry([snapshot])))
    async with transport as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        (listed,) = (await client.list_tools()).tools
        assert listed.output_schema is None
        result = await client.call_tool("snapshot", {})
        assert not result.is_error
        assert [block.type for block in result.content] == ["image"]
        assert result.structured_content is None
