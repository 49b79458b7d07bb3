"""Attribute docstrings -> field descriptions, for pydantic models, dataclasses and TypedDicts.

```python
class Filters(TypedDict):
    tags: list[str]
    '''Only items with all of these tags.'''
```

The string under a field describes it, as pydantic's ``use_attribute_docstrings=True`` and
pydantic-ai do, but for every class a tool's schema reaches (a class need not opt in: a tool's
author writes the docstring for the model to read). An explicit ``Field(description=...)`` wins.
Sources are read with `inspect.getsource` and `ast`, once per class; a class whose source cannot be
read (defined in a REPL, say) simply has none.
"""

from __future__ import annotations as _annotations

import ast
import functools
import inspect
import textwrap
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ._jsonish import is_mapping, is_object

if TYPE_CHECKING:
    from pydantic import TypeAdapter

__all__ = ["attribute_docs", "json_schema_of"]

_SKIPPED_MODULES = ("builtins", "pydantic", "typing", "typing_extensions")


@functools.lru_cache(maxsize=1024)
def _own_attribute_docs(cls: type[Any]) -> Mapping[str, str]:
    try:
        source = textwrap.dedent(inspect.getsource(cls))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError, ValueError, IndentationError):
        return {}
    node = next((n for n in tree.body if isinstance(n, ast.ClassDef)), None)
    if node is None:
        return {}
    docs: dict[str, str] = {}
    body = node.body
    for stmt, following in zip(body, body[1:], strict=False):
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            name = stmt.target.id
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name = stmt.targets[0].id
        else:
            continue
        if (
            isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            docs[name] = inspect.cleandoc(following.value.value)
    return docs


def attribute_docs(cls: type[Any]) -> dict[str, str]:
    """Field name -> the docstring written under it, in `cls` and its bases (the nearest one wins)."""
    docs: dict[str, str] = {}
    for klass in reversed(getattr(cls, "__mro__", (cls,))):
        if klass is object or str(getattr(klass, "__module__", "")).split(".")[0] in _SKIPPED_MODULES:
            continue
        try:
            docs.update(_own_attribute_docs(klass))
        except TypeError:  # an unhashable class object: no cache, no docs
            continue
    return docs


def _aliases(fields: Any, mode: str) -> dict[str, str]:
    """Field name -> the property name the JSON Schema uses for it."""
    key = "validation_alias" if mode == "validation" else "serialization_alias"
    items = fields.items() if is_mapping(fields) else ((f.get("name"), f) for f in fields or ())
    out: dict[str, str] = {}
    for name, field in items:
        alias = field.get(key) if is_mapping(field) else None
        out[str(name)] = alias if isinstance(alias, str) else str(name)
    return out


def _object_fields(core: Mapping[str, Any]) -> Any:
    """The fields of the object schema inside a model/dataclass core schema (through validator wrappers)."""
    node: Any = core
    for _ in range(8):
        if not is_mapping(node):
            return None
        if node.get("type") in ("model-fields", "dataclass-args", "typed-dict"):
            return node.get("fields")
        node = node.get("schema")
    return None


def _describe(json_schema: Any, cls: Any, fields: Any, mode: str) -> Any:
    if not is_object(json_schema) or not isinstance(cls, type):
        return json_schema
    properties = json_schema.get("properties")
    if not is_object(properties):
        return json_schema
    docs = attribute_docs(cls)
    if not docs:
        return json_schema
    aliases = _aliases(fields, mode) if fields is not None else {}
    for name, text in docs.items():
        key = aliases.get(name, name)
        prop = properties.get(key)
        if is_object(prop) and "description" not in prop and text:
            properties[key] = {**prop, "description": text}
    return json_schema


@functools.lru_cache(maxsize=1)
def _generator() -> type[Any]:
    from pydantic.json_schema import GenerateJsonSchema

    class DocumentedGenerator(GenerateJsonSchema):
        """pydantic's generator, with attribute docstrings as field descriptions."""

        def model_schema(self, schema: Any) -> Any:
            return _describe(super().model_schema(schema), schema.get("cls"), _object_fields(schema), self.mode)

        def dataclass_schema(self, schema: Any) -> Any:
            return _describe(super().dataclass_schema(schema), schema.get("cls"), _object_fields(schema), self.mode)

        def typed_dict_schema(self, schema: Any) -> Any:
            return _describe(super().typed_dict_schema(schema), schema.get("cls"), schema.get("fields"), self.mode)

    return DocumentedGenerator


def json_schema_of(adapter: TypeAdapter[Any], mode: str) -> dict[str, Any]:
    """``adapter.json_schema(mode=mode)``, with attribute docstrings as descriptions."""
    schema: dict[str, Any] = adapter.json_schema(mode=mode, schema_generator=_generator())  # type: ignore[arg-type]
    return schema
