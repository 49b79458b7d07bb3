"""Error paths are JSON paths of the arguments, never pydantic's union branch tags (issue 8, §2 item 3)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union

import pytest
from pydantic import AfterValidator, BaseModel, Field

from agentkit import ErrorDetail, Registry, Tool, ToolCall, ToolInputError, ToolOutputError, tool


class Cat(BaseModel):
    kind: Literal["cat"] = "cat"
    meows: bool


class Dog(BaseModel):
    kind: Literal["dog"] = "dog"
    barks: bool


class TaggedCat(BaseModel):
    kind: Literal["cat"]  # no default: pydantic needs the tag even where the schema has a default for it
    meows: bool


class TaggedDog(BaseModel):
    kind: Literal["dog"]
    barks: bool


def _positive(value: int) -> int:
    return abs(value)  # a function validator: pydantic names its branch `function-after[_positive(), int]`


@tool
def adopt(
    pet: Cat | Dog,
    weight: int | str,
    tagged: Annotated[Union[TaggedCat, TaggedDog], Field(discriminator="kind")],
    sizes: list[int] | int = 0,
    checked: Annotated[int, AfterValidator(_positive)] | str = 1,
    friends: list[Cat | Dog] | None = None,
    maybe: Cat | None = None,
) -> str:
    """Adopt a pet."""
    return "ok"


def _errors(args: Any) -> dict[str, ErrorDetail]:
    with pytest.raises(ToolInputError) as info:
        adopt.invoke(args)
    return {e.path: e for e in info.value.errors}


VALID = {"pet": {"meows": True}, "weight": 3, "tagged": {"kind": "dog", "barks": True}}


def test_no_branch_tag_ever_appears_in_a_path() -> None:
    errors = _errors(
        {
            "pet": {},
            "weight": 1.5,
            "tagged": {"kind": "cat"},
            "sizes": [1, "x"],
            "checked": 2.5,
            "friends": [{"kind": "cat", "meows": True}, {}],
            "maybe": {},
        }
    )
    assert set(errors) == {
        "$.pet",
        "$.weight",
        "$.tagged.meows",
        "$.sizes",
        "$.checked",
        "$.friends[1]",
        "$.maybe.meows",
    }
    for path in errors:
        for tag in ("Cat", "Dog", "int", "str", "list[int]", "function-after", ".cat", "[", "]"):
            assert tag not in path.replace("[1]", "")


def test_a_union_whose_branches_all_fail_is_one_error_listing_each_branch() -> None:
    errors = _errors({**VALID, "pet": {}})
    pet = errors["$.pet"]
    assert pet.kind == "union" and pet.value == {}
    assert pet.message == (
        "Matches none of the allowed shapes (as Cat: $.pet.meows: Field required; as Dog: $.pet.barks: Field "
        "required). Send a value of one of them."
    )
    weight = _errors({**VALID, "weight": 1.5})["$.weight"]
    assert "as integer: Input should be a valid integer" in weight.message
    assert "as string: Input should be a valid string" in weight.message
    sizes = _errors({**VALID, "sizes": [1, "x"]})["$.sizes"]
    assert "as array: $.sizes[1]: Input should be a valid integer" in sizes.message
    checked = _errors({**VALID, "checked": 2.5})["$.checked"]
    assert "as integer:" in checked.message and "function-after" not in checked.message


def test_a_tagged_union_reports_the_tagged_branch_at_real_paths() -> None:
    errors = _errors({**VALID, "tagged": {"kind": "cat"}})
    assert list(errors) == ["$.tagged.meows"]
    assert errors["$.tagged.meows"].kind == "missing"


def test_a_field_named_like_a_branch_stays_a_path() -> None:
    class Holder(BaseModel):
        int: int

    @tool
    def hold(value: Holder | str) -> None:
        """Hold."""

    with pytest.raises(ToolInputError) as info:
        hold.invoke({"value": {"int": "x"}})
    (error,) = info.value.errors
    assert error.path == "$.value"
    assert "as Holder: $.value.int: Input should be a valid integer" in error.message


async def test_the_registry_tells_the_model_the_real_paths() -> None:
    result = await Registry([adopt]).call(ToolCall("1", "adopt", {**VALID, "pet": {"meows": "loud"}}))
    assert result.error_kind == "invalid_arguments"
    assert "$.pet.Cat" not in result.text and "$.pet.meows" in result.text


def test_explicit_models_and_outputs_get_real_paths_too() -> None:
    class Owner(BaseModel):
        pet: Cat | Dog

    @tool(input_schema=Owner)
    def register(owner: Owner) -> None:
        """Register."""

    with pytest.raises(ToolInputError) as info:
        register.invoke({"pet": {"barks": "x"}})
    assert [e.path for e in info.value.errors] == ["$.pet"]

    @dataclass
    class Report:
        pet: Cat | Dog

    @tool
    def report() -> Report:
        return {"pet": {"barks": "maybe"}}  # type: ignore[return-value]  # a wrong result, on purpose

    with pytest.raises(ToolOutputError) as out:
        report.invoke({})
    assert [e.path for e in out.value.errors] == ["$.pet"]


def test_a_raw_schema_union_lists_each_branch() -> None:
    raw = Tool.from_json_schema(
        "raw",
        {
            "type": "object",
            "properties": {
                "pet": {
                    "anyOf": [
                        {"$ref": "#/$defs/Cat"},
                        {"type": "object", "properties": {"barks": {"type": "boolean"}}, "required": ["barks"]},
                    ]
                }
            },
            "$defs": {"Cat": {"type": "object", "properties": {"meows": {"type": "boolean"}}, "required": ["meows"]}},
        },
        fn=lambda args: None,
    )
    with pytest.raises(ToolInputError) as info:
        raw.invoke({"pet": {}})
    (error,) = info.value.errors
    assert error.path == "$.pet"
    assert "as Cat: 'meows' is a required property" in error.message
    assert "as object: 'barks' is a required property" in error.message


def test_an_untagged_union_reports_the_branch_its_tag_names() -> None:
    """Issue 17 §2.5: ``{"kind": "cat", "meows": "loud"}`` was reported at ``$.pet``, listing the Dog branch too."""
    errors = _errors({**VALID, "pet": {"kind": "cat", "meows": "loud"}})
    assert list(errors) == ["$.pet.meows"] and errors["$.pet.meows"].kind == "bool_type"
    friends = _errors({**VALID, "friends": [{"kind": "dog", "barks": 3}]})
    assert list(friends) == ["$.friends[0].barks"]
    # a tag no branch has: every branch is listed, as before
    fish = _errors({**VALID, "pet": {"kind": "fish"}})["$.pet"]
    assert "as Cat: $.pet.kind: Input should be 'cat'" in fish.message and "as Dog:" in fish.message


def test_a_raw_schema_union_reports_the_branch_its_const_names() -> None:
    def pet(kind: str, field: str) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {"kind": {"const": kind}, field: {"type": "boolean"}},
            "required": ["kind", field],
        }

    raw = Tool.from_json_schema(
        "raw",
        {"type": "object", "properties": {"pet": {"anyOf": [pet("cat", "meows"), pet("dog", "barks")]}}},
        fn=lambda args: "ok",
    )
    with pytest.raises(ToolInputError) as info:
        raw.invoke({"pet": {"kind": "cat", "meows": "loud"}})
    assert [(e.path, e.message) for e in info.value.errors] == [("$.pet.meows", "'loud' is not of type 'boolean'")]


@pytest.mark.parametrize("signature", ["keyword", "positional", "plain", "model"])
def test_a_missing_argument_is_named_in_the_projects_own_words(signature: str) -> None:
    """Issue 17 §4.9: the model (and ``agentkit call``) was told pydantic's "Missing required keyword only argument"."""

    def keyword(*, city: str) -> str:
        return city

    def positional(city: str, /) -> str:
        return city

    def plain(city: str) -> str:
        return city

    class Place(BaseModel):
        city: str

    def model(place: Place) -> str:
        return place.city

    if signature == "model":
        item = Tool(model, input_schema=Place)
    else:
        item = Tool({"keyword": keyword, "positional": positional, "plain": plain}[signature])
    with pytest.raises(ToolInputError) as info:
        item.invoke({})
    [error] = info.value.errors
    assert (error.path, error.message) == ("$.city", "Missing required argument 'city'")
