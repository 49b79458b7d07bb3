"""`Registry.call` answers any call a model or an untyped caller can make (issue 17 §2.1, §2.4).

A lone surrogate (what a vendor's ``"\\ud800"`` escape decodes to) anywhere in the arguments is an
``invalid_arguments`` result naming where it is, for every kind of tool schema and both argument forms;
a call whose name or id is not a string is an error result, not a `TypeError`; and text a tool hands back
holding one reaches the model escaped, so the next request can carry it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from agentkit import Registry, Tool, ToolCall, ToolInputError, tool
from agentkit.messages import TextPart


class Query(BaseModel):
    q: str


@tool
def search(q: str, tags: list[str] | None = None) -> str:
    """Search."""
    return q


@tool(input_schema=Query)
def search_model(query: Query) -> str:
    """Search with a model as the input schema."""
    return query.q


raw = Tool.from_json_schema(
    "raw", {"type": "object", "properties": {"q": {"type": "string"}}}, fn=lambda args: args["q"], description="Raw."
)
REGISTRY = Registry({"search": search, "search_model": search_model, "raw": raw})

# (arguments, the path reported)
SURROGATES: list[tuple[Any, str]] = [
    ('{"q": "\ud800"}', "$.q"),  # what a vendor's "\ud800" escape decodes to, inside JSON text
    ('{"q": "\\ud800"}', "$.q"),  # the escape itself, as text
    ('{"q": "a\udfffb"}', "$.q"),  # a lone trailing half
    ({"q": "\ud800"}, "$.q"),  # parsed arguments (Anthropic, Gemini, Bedrock, Ollama)
    ('{"\ud800": "x"}', '$["\\ud800"]'),  # a key
    ({"q": "x", "tags": ["ok", "\udc00"]}, "$.tags[1]"),
    ('["\ud800"]', "$[0]"),  # JSON, but no object
    ("\ud800", "$"),  # not JSON at all
]


@pytest.mark.parametrize(("arguments", "path"), SURROGATES, ids=repr)
@pytest.mark.parametrize("name", ["search", "search_model", "raw"])
async def test_a_lone_surrogate_is_an_invalid_arguments_result(name: str, arguments: Any, path: str) -> None:
    if name != "search" and "tags" in str(arguments):
        arguments = {"q": "\ud800"}
        path = "$.q"
    result = await REGISTRY.call(ToolCall("c1", name, arguments))
    assert result.is_error and result.error_kind == "invalid_arguments"
    [part] = result.content
    assert isinstance(part, TextPart)
    assert f"{path}: Not valid Unicode: holds a lone surrogate" in part.text
    part.text.encode("utf-8")  # the message itself can be sent


@pytest.mark.parametrize(("arguments", "path"), SURROGATES[:4], ids=repr)
def test_invoke_raises_a_tool_input_error_for_it(arguments: Any, path: str) -> None:
    with pytest.raises(ToolInputError) as caught:
        search.invoke(arguments)
    [detail] = caught.value.errors
    assert (detail.path, detail.kind) == (path, "unicode_surrogate")


async def test_a_redacted_call_holding_one_quotes_no_value() -> None:
    result = await REGISTRY.call(ToolCall("c1", "search", '{"q": "secret\ud800"}'), redact_input=True)
    assert result.error_kind == "invalid_arguments" and "secret" not in result.text


async def test_surrogate_pairs_and_other_text_still_pass() -> None:
    for arguments, expected in [('{"q": "\\ud83d\\ude00"}', "😀"), ('{"q": "😀 é"}', "😀 é"), ({"q": "😀"}, "😀")]:
        result = await REGISTRY.call(ToolCall("c1", "search", arguments))
        assert (result.is_error, result.output) == (False, expected)


@pytest.mark.parametrize(
    ("name", "call_id", "said"),
    [(["search"], "c1", "name must be a string, got ['search']"), (None, "c1", "name"), ("search", 7, "id")],
)
async def test_a_call_whose_name_or_id_is_not_text_is_an_error_result(name: Any, call_id: Any, said: str) -> None:
    result = await REGISTRY.call(ToolCall(call_id, name, "{}"))
    assert result.is_error and result.error_kind == "unknown_tool"
    assert said in result.text and "Available tools: search, search_model, raw" in result.text
    assert isinstance(result.name, str) and isinstance(result.call_id, str)


@tool
def listing() -> list[str]:
    """A directory listing, read with surrogateescape."""
    return ["ok.txt", "caf\udce9.txt"]


@tool
def listing_text() -> str:
    """The same as one text."""
    return "caf\udce9.txt"


@tool
def failing() -> str:
    """Raises with a message holding one."""
    raise ValueError("cannot open caf\udce9.txt")


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        (listing, '["ok.txt","caf\\udce9.txt"]'),
        (listing_text, "caf\\udce9.txt"),
        (failing, "Tool 'failing' failed: ValueError: cannot open caf\\udce9.txt"),
    ],
)
async def test_text_a_tool_returns_reaches_the_model_escaped(item: Tool[..., Any], expected: str) -> None:
    result = await Registry([item]).call(ToolCall("c1", item.id, "{}"))
    assert result.is_error == (item is failing)
    assert result.text == expected
    if item is listing:
        assert json.loads(result.text) == ["ok.txt", "caf\udce9.txt"]  # the same JSON value
        assert result.output == ["ok.txt", "caf\udce9.txt"]  # the application gets the value itself
