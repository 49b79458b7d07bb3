"""Edge cases found in review: context positions, definition-time checks, JSON-unsafe and non-object
arguments, timeouts with inline tools, invoke inside a loop, payload caches and alias collisions."""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union

import pytest
from pydantic import BaseModel, Field

from agentkit import (
    Registry,
    RegistryError,
    Tool,
    ToolCall,
    ToolContext,
    ToolDefinitionError,
    ToolInputError,
    UsageError,
    tool,
)
from agentkit.providers import get_provider


def test_context_in_a_positional_only_slot_and_optional_context() -> None:
    @tool
    def positional(x: int, ctx: ToolContext[str], /) -> str:
        return f"{ctx.deps}:{x}"

    @tool
    def optional(x: int, ctx: ToolContext[str] | None = None) -> str:
        return f"{ctx.deps if ctx else None}:{x}"

    assert list(positional.input_schema["properties"]) == ["x"]
    assert list(optional.input_schema["properties"]) == ["x"]
    assert positional.invoke({"x": 1}, context=ToolContext(deps="db")) == "db:1"
    assert optional.invoke({"x": 2}, context=ToolContext(deps="db")) == "db:2"


def test_input_schema_root_must_be_an_object_at_definition_time() -> None:
    with pytest.raises(ToolDefinitionError, match="type: object"):

        @tool(input_schema={"type": "array"})
        def f(args: dict[str, Any]) -> None: ...


def test_a_method_gets_a_method_specific_message() -> None:
    class Service:
        def lookup(self, key: str) -> str:
            return key

    with pytest.raises(ToolDefinitionError, match="looks like a method"):
        tool(Service.lookup)
    assert Tool.from_function(Service().lookup).invoke({"key": "k"}) == "k"


async def test_arguments_json_cannot_hold_are_input_errors() -> None:
    @tool
    def f(x: int) -> int:
        return x

    with pytest.raises(ToolInputError, match="cannot be turned into JSON"):
        f.invoke({"x": object()})
    result = await Registry([f]).call(ToolCall(id="1", name="f", arguments={"x": object()}))
    assert result.is_error and result.error_kind == "invalid_arguments"


@pytest.mark.parametrize("text", ["[]", "[1]", "null", "3", '"x"'])
def test_json_text_that_is_not_an_object_is_rejected(text: str) -> None:
    @tool
    def no_params() -> str:
        return "ok"

    @tool
    def defaults(a: int = 1) -> int:
        return a

    for item in (no_params, defaults):
        with pytest.raises(ToolInputError) as info:
            item.invoke(text)
        assert info.value.errors[0].path == "$"
        assert "JSON object" in info.value.errors[0].message


def test_a_timeout_is_enforced_even_for_inline_tools() -> None:
    @tool(inline=True, timeout=0.05)
    def slow() -> None:
        time.sleep(0.5)

    from agentkit import ToolTimeoutError

    with pytest.raises(ToolTimeoutError):
        slow.invoke()


async def test_invoke_inside_a_running_loop_says_to_use_ainvoke() -> None:
    @tool
    async def f() -> int:
        return 1

    with pytest.raises(UsageError, match=r"await f\.ainvoke"):
        f.invoke()
    assert await f.ainvoke() == 1


def test_cached_payloads_hand_out_fresh_containers_and_follow_option_changes() -> None:
    @tool
    def a(x: int = 0) -> int:
        return x

    registry = Registry({"a": a})
    for name in ("openai", "bedrock", "gemini"):
        provider = get_provider(name)
        first = provider.format_tools(registry)
        tools = first["toolConfig"]["tools"] if name == "bedrock" else first["tools"]
        tools.append({"injected": True})
        again = provider.format_tools(registry)
        assert {"injected": True} not in (again["toolConfig"]["tools"] if name == "bedrock" else again["tools"])
    openai = get_provider("openai")
    assert openai.format_tools(registry)["tools"][0]["function"]["strict"] is True
    a.strict = False  # a changed option reaches the next payload
    assert openai.format_tools(registry)["tools"][0]["function"]["strict"] is False
    a.description = "Changed."
    assert openai.format_tools(registry)["tools"][0]["function"]["description"] == "Changed."


def test_an_alias_colliding_with_another_key_names_both() -> None:
    @tool
    def f() -> None: ...

    taken = "x_y_" + hashlib.sha256(b"x.y").hexdigest()[:8]
    registry = Registry({"x.y": f, "x_y": f, taken: f})
    with pytest.raises(RegistryError, match=rf"'x\.y'.*{taken}.*Rename one"):
        get_provider("openai").format_tools(registry, aliases=True)


class Address(BaseModel):
    street: str
    zip: str = "00000"


class Cat(BaseModel):
    kind: Literal["cat"]
    name: str = "tom"


class Dog(BaseModel):
    kind: Literal["dog"]
    good: bool = True


@dataclass
class Pair:
    left: int
    right: int = 0


def test_nulls_inside_unions_maps_and_tuples_restore_defaults() -> None:
    @tool
    def book(
        address: Address | None = None,
        pet: Annotated[Union[Cat, Dog], Field(discriminator="kind")] | None = None,
        contacts: dict[str, Address] | None = None,
        pair: tuple[Pair, int] | None = None,
    ) -> str:
        return f"{address}|{pet}|{contacts}|{pair}"

    registry = Registry([book])
    arguments = (
        '{"address": {"street": "s", "zip": null}, "pet": {"kind": "dog", "good": null},'
        ' "contacts": {"x": {"street": "t", "zip": null}}, "pair": [{"left": 1, "right": null}, 2]}'
    )
    function = {"name": "book", "arguments": arguments}
    response = {"choices": [{"message": {"tool_calls": [{"id": "1", "type": "function", "function": function}]}}]}
    [call] = get_provider("openai").parse_tool_calls(response, registry=registry)
    assert call.arguments == {
        "address": {"street": "s"},
        "pet": {"kind": "dog"},
        "contacts": {"x": {"street": "t"}},
        "pair": [{"left": 1}, 2],
    }
    assert book.invoke(call.arguments) == (
        "street='s' zip='00000'|kind='dog' good=True|{'x': Address(street='t', zip='00000')}|(Pair(left=1, right=0), 2)"
    )


def test_dataclass_and_typeddict_fields_are_checked_at_definition_time() -> None:
    class Opaque:
        pass

    @dataclass
    class Holder:
        thing: Opaque

    def returns_it() -> Holder:
        return Holder(Opaque())

    def takes_it(h: Holder) -> None:
        pass

    with pytest.raises(ToolDefinitionError, match="return annotation"):
        tool(returns_it)
    with pytest.raises(ToolDefinitionError, match="parameter 'h'"):
        tool(takes_it)


@dataclass
class TreeNode:
    value: int
    children: list[TreeNode]


def test_a_recursive_dataclass_is_fine() -> None:
    @tool
    def count(tree: TreeNode) -> int:
        return 1 + sum(count(c) for c in tree.children)

    assert count.invoke({"tree": {"value": 1, "children": [{"value": 2, "children": []}]}}) == 2
