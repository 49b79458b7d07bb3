"""Input and output schema inference from type hints (issue 2, requirements 2.4, 2.5, 2.7)."""

from __future__ import annotations

import datetime as dt
import decimal
import enum
import json
import pathlib
import uuid
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Optional, Union

import jsonschema
import pytest
from inline_snapshot import snapshot
from pydantic import BaseModel, Field
from typing_extensions import NotRequired, TypedDict

from agentkit import ToolContext, tool


def _no_titles(schema: Any) -> bool:
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "title" and isinstance(value, str):
                return False
            if key in ("properties", "$defs"):
                if not all(_no_titles(v) for v in value.values()):
                    return False
            elif not _no_titles(value):
                return False
    if isinstance(schema, list):
        return all(_no_titles(v) for v in schema)
    return True


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Address(BaseModel):
    street: str
    city: str = "Paris"


@dataclass
class Point:
    x: float
    y: float = 0.0


class Options(TypedDict):
    verbose: bool
    depth: NotRequired[int]


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int


class Dog(BaseModel):
    kind: Literal["dog"]
    good: bool


class Node(BaseModel):
    value: int
    children: list[Node] = []


def test_required_defaulted_optional_literal_enum() -> None:
    @tool
    def f(
        name: str,
        count: int = 3,
        ratio: float | None = None,
        legacy: Optional[str] = None,
        mode: Literal["fast", "slow"] = "fast",
        color: Color = Color.RED,
    ) -> None:
        """F."""

    assert f.input_schema == snapshot(
        {
            "$defs": {"Color": {"enum": ["red", "blue"], "type": "string"}},
            "additionalProperties": False,
            "properties": {
                "name": {"type": "string"},
                "count": {"default": 3, "type": "integer"},
                "ratio": {"anyOf": [{"type": "number"}, {"type": "null"}], "default": None},
                "legacy": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
                "mode": {"default": "fast", "enum": ["fast", "slow"], "type": "string"},
                "color": {"$ref": "#/$defs/Color", "default": "red"},
            },
            "required": ["name"],
            "type": "object",
        }
    )


def test_containers_models_dataclasses_typeddicts() -> None:
    @tool
    def f(
        tags: list[str],
        pair: tuple[int, str],
        unique: set[int],
        scores: dict[str, float],
        address: Address,
        point: Point,
        options: Options,
    ) -> None:
        """F."""

    schema = f.input_schema
    props = schema["properties"]
    assert props["tags"] == {"items": {"type": "string"}, "type": "array"}
    assert props["pair"]["prefixItems"] == [{"type": "integer"}, {"type": "string"}]
    assert props["unique"] == {"items": {"type": "integer"}, "type": "array", "uniqueItems": True}
    assert props["scores"] == {"additionalProperties": {"type": "number"}, "type": "object"}
    assert schema["$defs"]["Address"]["required"] == ["street"]
    assert schema["$defs"]["Point"]["properties"]["y"] == {"default": 0.0, "type": "number"}
    assert schema["$defs"]["Options"]["required"] == ["verbose"]  # NotRequired stays optional
    assert schema["required"] == ["tags", "pair", "unique", "scores", "address", "point", "options"]
    assert _no_titles(schema)


def test_unions_discriminated_and_recursive() -> None:
    @tool
    def f(
        pet: Annotated[Union[Cat, Dog], Field(discriminator="kind")],
        either: int | str,
        tree: Node,
    ) -> None:
        """F."""

    schema = f.input_schema
    assert schema["properties"]["pet"]["discriminator"]["propertyName"] == "kind"
    assert schema["properties"]["either"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert schema["$defs"]["Node"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert f.invoke({"pet": {"kind": "dog", "good": True}, "either": "x", "tree": {"value": 1}}) is None
    jsonschema.Draft202012Validator.check_schema(schema)


def test_constraints_and_special_types() -> None:
    @tool
    def f(
        age: Annotated[int, Field(ge=0, le=150)],
        code: Annotated[str, Field(max_length=5, pattern=r"^[A-Z]+$")],
        when: dt.datetime,
        day: dt.date,
        ident: uuid.UUID,
        amount: decimal.Decimal,
        path: pathlib.Path,
    ) -> None:
        """F."""

    props = f.input_schema["properties"]
    assert props["age"] == {"maximum": 150, "minimum": 0, "type": "integer"}
    assert props["code"] == {"maxLength": 5, "pattern": "^[A-Z]+$", "type": "string"}
    assert props["when"] == {"format": "date-time", "type": "string"}
    assert props["day"] == {"format": "date", "type": "string"}
    assert props["ident"] == {"format": "uuid", "type": "string"}
    assert props["path"] == {"format": "path", "type": "string"}
    assert "anyOf" in props["amount"]
    args = {
        "age": 30,
        "code": "AB",
        "when": "2024-01-02T03:04:05Z",
        "day": "2024-01-02",
        "ident": str(uuid.UUID(int=1)),
        "amount": "1.5",
        "path": "/tmp/x",
    }
    assert f.invoke(args) is None
    with pytest.raises(ValueError, match="less than or equal to 150"):
        f.invoke({**args, "age": 151})


def test_context_parameter_is_injected_and_never_in_schema() -> None:
    @tool
    def f(a: int, ctx: ToolContext[str], b: int = 1) -> str:
        """F."""
        return f"{ctx.deps}:{a + b}"

    @tool
    def g(ctx: ToolContext, a: int) -> int:  # bare ToolContext, first
        """G."""
        return a

    assert list(f.input_schema["properties"]) == ["a", "b"]
    assert list(g.input_schema["properties"]) == ["a"]
    assert f.invoke({"a": 2}, context=ToolContext(deps="db")) == "db:3"
    assert g.invoke({"a": 5}) == 5  # an empty context is made when none is given


def test_output_schemas() -> None:
    @tool
    def model() -> Address:
        """M."""
        return Address(street="x")

    @tool
    def listing() -> list[Point]:
        """L."""
        return []

    @tool
    def nothing() -> None:
        """N."""

    @tool
    def unannotated():  # type: ignore[no-untyped-def]
        """U."""

    @tool
    async def awaited() -> Options:
        """A."""
        return {"verbose": True}

    assert model.output_schema == snapshot(
        {
            "properties": {"street": {"type": "string"}, "city": {"default": "Paris", "type": "string"}},
            "required": ["street"],
            "type": "object",
        }
    )
    assert listing.output_schema is not None and listing.output_schema["type"] == "array"
    assert nothing.output_schema == {"type": "null"}
    assert unannotated.output_schema is None
    assert awaited.output_schema == snapshot(
        {
            "properties": {"verbose": {"type": "boolean"}, "depth": {"type": "integer"}},
            "required": ["verbose"],
            "type": "object",
        }
    )


def test_forward_references_resolved_on_first_use() -> None:
    @tool
    def f(item: LaterModel) -> LaterModel:
        """F."""
        return item

    global LaterModel

    class LaterModel(BaseModel):  # type: ignore[no-redef]
        size: int

    assert f.input_schema["properties"]["item"] == {"$ref": "#/$defs/LaterModel"}
    assert f.invoke({"item": {"size": 2}}).size == 2


def test_schema_is_json_serialisable_and_valid_draft_2020_12() -> None:
    @tool
    def f(a: Address, b: list[Point] | None = None) -> dict[str, int]:
        """F."""
        return {}

    json.dumps(f.input_schema)
    jsonschema.Draft202012Validator.check_schema(f.input_schema)
    assert f.input_schema["type"] == "object"


# ---- attribute docstrings become descriptions (issue 8, §2 item 6) ----------------------------------


class Shipment(TypedDict):
    """Where and how to ship."""

    address: str
    """The street address."""
    express: NotRequired[bool]
    """Ship overnight."""


@dataclass
class Parcel:
    weight: float
    """In kilograms."""
    fragile: bool = False
    """Handle with care."""


class BaseOrder(BaseModel):
    reference: str
    """The customer's reference."""


class Order(BaseOrder):
    quantity: int = Field(1, alias="qty")
    """How many."""
    note: str = Field("", description="from Field")
    """from the docstring"""


def test_attribute_docstrings_describe_fields_of_every_kind_of_class() -> None:
    @tool
    def ship(shipment: Shipment, parcel: Parcel, order: Order) -> None:
        """Ship."""

    defs = ship.input_schema["$defs"]
    assert defs["Shipment"]["properties"]["address"]["description"] == "The street address."
    assert defs["Shipment"]["properties"]["express"]["description"] == "Ship overnight."
    assert defs["Parcel"]["properties"]["weight"]["description"] == "In kilograms."
    assert defs["Parcel"]["properties"]["fragile"]["description"] == "Handle with care."
    order = defs["Order"]["properties"]
    assert order["reference"]["description"] == "The customer's reference."  # inherited from the base
    assert order["qty"]["description"] == "How many."  # found under its alias
    assert order["note"]["description"] == "from Field"  # an explicit description wins


def test_attribute_docstrings_in_explicit_and_output_schemas() -> None:
    @tool(input_schema=Parcel)
    def weigh(parcel: Parcel) -> Shipment:
        return {"address": "here"}

    assert weigh.input_schema["properties"]["weight"]["description"] == "In kilograms."
    assert weigh.output_schema is not None
    assert weigh.output_schema["properties"]["address"]["description"] == "The street address."


# ---- a recursive model's schema has `type: object` at its root, like any model (issue 8, §2 item 9) ----


class TreeNode(BaseModel):
    label: str
    children: list[TreeNode] = []


def test_recursive_models_have_an_object_root_as_input_and_output() -> None:
    @tool
    def grow(seed: str) -> TreeNode:
        return TreeNode(label=seed, children=[TreeNode(label="leaf")])

    out = grow.output_schema
    assert out is not None and out["type"] == "object" and "$ref" not in out
    assert out["properties"]["children"]["items"] == {"$ref": "#/$defs/TreeNode"}
    jsonschema.Draft202012Validator(out).validate(grow.schema.dump_output_python(grow.invoke({"seed": "s"})))

    @tool(input_schema=TreeNode)
    def count(tree: TreeNode) -> int:
        return 1 + sum(count(c) for c in tree.children)

    schema = count.input_schema
    assert schema["type"] == "object" and schema["required"] == ["label"] and "$ref" not in schema
    assert count.invoke({"label": "a", "children": [{"label": "b"}]}) == 2


def test_unhashable_annotated_metadata_is_no_type_error() -> None:
    """Issue 17 §2.4 (its class): metadata that cannot be hashed (a dict) made the eager type check raise."""

    @tool
    def scaled(x: Annotated[int, {"unit": "cm"}], ys: list[Annotated[str, ["tag"]]]) -> int:
        """Scale."""
        return x

    assert scaled.input_schema["properties"]["x"] == {"type": "integer"}
    assert scaled.invoke({"x": 2, "ys": ["a"]}) == 2
