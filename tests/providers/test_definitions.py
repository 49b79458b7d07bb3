"""`ToolDefinition` is the only thing below the registry: caches live in the codec layer, not on tools."""

from __future__ import annotations

from typing import Any

import pytest

import agentkit.providers._codec as codec
from agentkit import Registry, TextPart, ToolCall, ToolDefinition, ToolResult, tool
from agentkit import testing as agentkit_testing
from agentkit.messages import AssistantMessage, ToolResultsMessage, UserMessage
from agentkit.providers import get_provider, provider_names


@tool
def lookup(query: str, limit: int = 5) -> list[str]:
    """Look something up.

    Args:
        query: What to look for.
        limit: At most this many.
    """
    return [query] * limit


def fresh_registry() -> Registry:
    @tool
    def search(text: str, page: int = 1) -> str:
        """Search.

        Args:
            text: The text.
            page: Which page.
        """
        return text

    return Registry({"search": search, "lookup": lookup})


def test_the_definition_type_is_public_and_shared_with_the_testing_kit() -> None:
    assert agentkit_testing.ToolDefinition is ToolDefinition
    definition = lookup.definition("find")
    assert definition == ToolDefinition(
        key="find",
        description="Look something up.",
        input_schema=lookup.input_schema,
        output_schema=lookup.output_schema,
        strict=None,
        output_json=True,
    )
    assert lookup.definition("find") is definition  # kept while the tool's options stay
    assert {definition: 1}[definition] == 1  # hashable (by identity), as the caches need


@pytest.mark.parametrize("name", provider_names())
def test_vendor_code_writes_nothing_onto_tools(name: str) -> None:
    registry = fresh_registry()
    before = {key: set(vars(item)) for key, item in registry.items()}
    provider = get_provider(name)
    provider.format_tools(registry, aliases=True)
    provider.format_tools(registry, strict=True, aliases=True)
    provider.parse_tool_calls({}, registry=registry, aliases=True)
    assert {key: set(vars(item)) for key, item in registry.items()} == before


def test_a_registry_keeps_its_definitions_until_it_or_a_tool_changes() -> None:
    registry = fresh_registry()
    first = registry.definitions()
    assert registry.definitions() is first
    assert [d.key for d in first] == ["search", "lookup"]
    version = registry.version
    registry["search"].strict = False  # the tool tells the registries holding it
    assert registry.version == version + 1
    second = registry.definitions()
    assert second is not first and second[0].strict is False
    assert second[1] is first[1]  # the unchanged tool keeps its definition
    registry["search"].description = "Search the web."
    assert registry.definitions()[0].description == "Search the web."


def test_a_tool_change_reaches_every_registry_holding_it_and_its_subsets() -> None:
    registry = fresh_registry()
    subset = registry.select(["search"])
    other = Registry({"again": registry["search"]})
    payloads = [get_provider("openai").format_tools(r) for r in (registry, subset, other)]
    registry["search"].strict = False
    for r, before in zip((registry, subset, other), payloads, strict=True):
        after = get_provider("openai").format_tools(r)
        assert before["tools"][0]["function"]["strict"] is True
        assert after["tools"][0]["function"]["strict"] is False


@pytest.mark.parametrize("name", provider_names())
def test_format_tools_takes_the_definitions_as_well_as_the_registry(name: str) -> None:
    registry = fresh_registry()
    provider = get_provider(name)
    assert provider.format_tools(list(registry.definitions()), tool_choice="required") == provider.format_tools(
        registry, tool_choice="required"
    )


def test_the_strict_budget_needs_no_registry_carried_on_the_side() -> None:
    # The Anthropic budget used to reach its registry through a ContextVar; definitions now carry it all.
    many = Registry({f"t{i}": lookup for i in range(25)})
    payload = get_provider("anthropic").format_tools(list(many.definitions()))
    # each strict schema has one union-typed parameter (the nullable `limit`): 16 unions per request
    assert sum(1 for entry in payload["tools"] if entry.get("strict")) == 16


def test_a_long_history_resolves_the_names_once(monkeypatch: pytest.MonkeyPatch) -> None:
    registry = fresh_registry()
    calls: list[Any] = []
    real = codec.resolve_names

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(codec, "resolve_names", counting)
    history: list[Any] = [UserMessage("go")]
    for i in range(40):
        call = ToolCall(id=f"c{i}", name="search", arguments='{"text": "x"}')
        history += [
            AssistantMessage(tool_calls=[call]),
            ToolResultsMessage([ToolResult(call.id, "search", [TextPart("r")])]),
        ]
    for name in provider_names():
        calls.clear()
        get_provider(name).build_request(history, registry)
        assert len(calls) <= 1, name  # once per tool set, not once per message


def test_model_payloads_are_fresh_while_requests_share_the_cached_tool_list() -> None:
    from agentkit.models import ModelSettings
    from agentkit.providers._client import provider_request
    from agentkit.providers.openai import OpenAIChatModel

    registry = fresh_registry()
    model = OpenAIChatModel("gpt-4.1", api_key="sk-test")
    settings = ModelSettings()
    shown = model.payload([UserMessage("hi")], registry, settings)
    shown["tools"].append({"type": "function", "function": {"name": "injected"}})
    sent = provider_request(model.provider, [UserMessage("hi")], registry, settings)
    assert [t["function"]["name"] for t in sent["tools"]] == ["search", "lookup"]
    again = provider_request(model.provider, [UserMessage("again")], registry, settings)
    assert again["tools"] is sent["tools"]  # nothing proportional to the registry is copied per request


def _tool_counting_output_schemas() -> tuple[Any, list[str]]:
    from pydantic import BaseModel, GetJsonSchemaHandler
    from pydantic.json_schema import JsonSchemaValue
    from pydantic_core import core_schema

    built: list[str] = []

    class Answer(BaseModel):
        text: str

        @classmethod
        def __get_pydantic_json_schema__(
            cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
        ) -> JsonSchemaValue:
            built.append(cls.__name__)
            return handler(schema)

    @tool
    def answer(question: str, depth: int = 1) -> Answer:
        """Answer a question."""
        return Answer(text=question)

    _ = answer.input_schema
    return answer, built


@pytest.mark.parametrize("name", [n for n in provider_names() if n != "openai-responses"])
def test_a_payload_that_carries_no_output_schema_never_builds_one(name: str) -> None:
    """Issue 18 (Faster §4): the first payload built every tool's output schema, 44% of a strict build."""
    answer, built = _tool_counting_output_schemas()
    get_provider(name).format_tools(Registry({"answer": answer}))
    get_provider(name).format_tools(Registry({"answer": answer}), strict=False)
    assert built == []
    definition = Registry({"answer": answer}).definitions()[0]
    assert built == [] and definition.output_schema == answer.output_schema and built == ["Answer"]


def test_a_payload_that_carries_the_output_schema_builds_it_once() -> None:
    answer, built = _tool_counting_output_schemas()
    payload = get_provider("openai-responses").format_tools(Registry({"answer": answer}))
    assert payload["tools"][0]["output_schema"]["properties"] == {"text": {"type": "string"}}
    get_provider("openai-responses").format_tools(Registry({"answer": answer}))
    assert built == ["Answer"]


def test_a_definition_is_plain_data_once_its_output_schema_is_read() -> None:
    import copy
    import dataclasses
    import pickle

    answer, built = _tool_counting_output_schemas()
    definition = answer.definition("a")
    assert pickle.loads(pickle.dumps(definition)) == definition == copy.copy(definition)
    assert dataclasses.replace(definition, key="b").output_schema == answer.output_schema
    assert repr(definition).endswith("output_json=True)") and built == ["Answer"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        definition.output_schema = None  # type: ignore[misc]


def test_a_tools_definition_is_what_the_dataclass_would_make() -> None:
    """`Tool.definition` skips the frozen dataclass's ``__init__`` (a third of a first strict=False payload)."""
    made = lookup.definition("find")
    by_init = ToolDefinition(
        key="find",
        description=lookup.description,
        input_schema=lookup.input_schema,
        output_schema=lookup.output_schema,
        strict=None,
        output_json=True,
    )
    assert type(made) is ToolDefinition and made == by_init and repr(made) == repr(by_init)
    assert list(vars(made)) == list(vars(by_init))  # the same fields, in the same order
    assert made.input_schema is lookup.input_schema


def test_per_definition_entries_go_with_their_definition() -> None:
    import gc

    from agentkit.providers._dialect import PerDefinition

    cache: PerDefinition[str, int] = PerDefinition()
    first, second = fresh_registry().definitions()[0], lookup.definition("other")
    cache.put(first, "a", 1)
    cache.put(first, "b", 2)  # a second variant of one definition
    cache.put(second, "a", 3)
    found = (cache.get(first, "a"), cache.get(first, "b"), cache.get(first, "c"), cache.get(second, "a"))
    assert found == (1, 2, None, 3)
    del first
    gc.collect()
    assert len(cache._data) == 1 and cache.get(second, "a") == 3  # pyright: ignore[reportPrivateUsage]
