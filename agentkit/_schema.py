"""Callable -> `FunctionSchema`: argument validator, input/output JSON Schema, injected parameters.

Work is split in two so that decorating stays cheap:

* eagerly, when `@tool` runs: read the signature, resolve type hints, reject what can never work
  (no annotation, ``*args``, ``**kwargs``, a type pydantic cannot schema, an explicit schema that does
  not fit the function). Every problem is collected, then raised once, naming the function.
* lazily, on first use: build one pydantic validator over the parameters and derive the JSON Schema
  from that same validator, so the schema and the validation can never drift apart.

Validation is strict against the JSON Schema (``"3"`` is not an integer), so anything that passes the
schema passes the validator and vice versa.
"""

from __future__ import annotations as _annotations

import dataclasses
import datetime as _dt
import decimal
import enum
import functools
import inspect
import ipaddress
import pathlib
import types
import typing
import uuid
import warnings
from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Annotated, Any, Literal, NamedTuple, Union, cast, get_args, get_origin

from typing_extensions import is_typeddict

from ._attribute_docs import json_schema_of
from ._callables import caller_locals, describe_callable, get_hints, substitute_self
from ._content import is_content, is_content_annotation
from ._docstrings import ParsedDocstring, parse_docstring
from ._error_paths import details_from_pydantic
from ._explicit import ExplicitSchema, SchemaSource
from ._json_schema import JsonSchema, inline_root_ref, strip_titles
from ._text import json_text
from ._unicode import escaped, surrogate_at
from ._validation import (
    check_json_object,
    json_of,
    looks_like_object,
    parse_json,
    pydantic_to_json,
    surrogate_error,
    validate_json_strict,
    validation_error_type,
)
from .context import ToolContext
from .exceptions import AgentkitWarning, ErrorDetail, ToolDefinitionError, ToolInputError, ToolOutputError

if typing.TYPE_CHECKING:
    from pydantic import TypeAdapter

__all__ = ["FunctionSchema", "SchemaSource"]


_EMPTY = inspect.Parameter.empty
_SAFE_LEAVES: frozenset[Any] = frozenset(
    {
        str, int, float, bool, bytes, type(None), None, Any, object, list, dict, tuple, set, frozenset,
        _dt.datetime, _dt.date, _dt.time, _dt.timedelta, uuid.UUID, decimal.Decimal,
        pathlib.Path, pathlib.PurePath, pathlib.PosixPath, pathlib.PurePosixPath,
        ipaddress.IPv4Address, ipaddress.IPv6Address,
    }
)  # fmt: skip


class _Param(NamedTuple):
    """A schema parameter: its name, resolved annotation and default (`inspect.Parameter.empty` if none)."""

    name: str
    annotation: Any
    default: Any


def _is_context(annotation: Any) -> bool:
    if isinstance(annotation, str):  # unresolved forward reference
        return annotation.split("[", 1)[0].rsplit(".", 1)[-1] == "ToolContext"
    if get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    if get_origin(annotation) in (Union, types.UnionType):  # `ToolContext | None`
        options = [a for a in get_args(annotation) if a is not type(None)]
        return len(options) == 1 and _is_context(options[0])
    return annotation is ToolContext or get_origin(annotation) is ToolContext


def _needs_schema_check(tp: Any) -> bool:
    """Whether `tp` might be a type pydantic cannot schema (checked eagerly, at definition time)."""
    try:
        return _needs_schema_check_cached(tp)
    except TypeError:  # unhashable metadata inside Annotated
        return _needs_schema_check_uncached(tp)


@functools.lru_cache(maxsize=1024)
def _needs_schema_check_cached(tp: Any) -> bool:
    return _needs_schema_check_uncached(tp)


_VISITING: set[Any] = set()


def _is_safe_leaf(tp: object) -> bool:
    try:
        return tp in _SAFE_LEAVES
    except TypeError:  # unhashable: Annotated with dict metadata, a Callable's argument list
        return False


def _needs_schema_check_uncached(tp: object) -> bool:
    if isinstance(tp, (str, typing.ForwardRef, typing.TypeVar)) or _is_safe_leaf(tp):
        return False
    origin = get_origin(tp)
    if origin is Literal:
        return False
    if origin is Annotated:
        return _needs_schema_check(get_args(tp)[0])
    if origin is not None:
        return any(_needs_schema_check(a) for a in get_args(tp) if a is not Ellipsis)
    if isinstance(tp, type):
        tp = cast("type[Any]", tp)
        from pydantic import BaseModel

        if dataclasses.is_dataclass(tp) or is_typeddict(tp):
            # pydantic checks a BaseModel's fields when the class is made, but not these: look inside
            if tp in _VISITING:
                return False  # a recursive reference: its fields are being checked already
            try:
                fields = typing.get_type_hints(tp, include_extras=True)
            except Exception:  # noqa: BLE001 - unresolvable field types: let pydantic say what is wrong
                return True
            _VISITING.add(tp)
            try:
                return any(_needs_schema_check(hint) for hint in fields.values())
            finally:
                _VISITING.discard(tp)
        return not (
            issubclass(tp, (BaseModel, enum.Enum))
            or hasattr(tp, "__get_pydantic_core_schema__")
            # issubclass narrows to tuple[Unknown, ...]: a NamedTuple class is all that is asked
            or (issubclass(tp, tuple) and hasattr(tp, "_fields"))  # pyright: ignore[reportUnknownArgumentType]
        )
    return True


def _has_explicit_description(annotation: Any, default: Any) -> bool:
    from pydantic.fields import FieldInfo

    if isinstance(default, FieldInfo) and default.description:
        return True
    if get_origin(annotation) is Annotated:
        for meta in get_args(annotation)[1:]:
            if isinstance(meta, str) or (isinstance(meta, FieldInfo) and meta.description):
                return True
    return False


def _with_plain_descriptions(annotation: Any) -> Any:
    """``Annotated[T, "text"]`` -> ``Annotated[T, Field(description="text")]`` (pydantic ignores bare strings)."""
    if get_origin(annotation) is not Annotated:
        return annotation
    from pydantic import Field

    base, *meta = get_args(annotation)
    if not any(isinstance(m, str) for m in meta):
        return annotation
    converted = tuple(Field(description=m) if isinstance(m, str) else m for m in meta)
    args = (base, *converted)
    return typing.cast(Any, Annotated)[args]


def _fallback_qualname(fn: Any) -> str:
    owner = fn if isinstance(fn, type) else type(fn)
    return f"{getattr(owner, '__module__', '?')}.{getattr(fn, '__qualname__', None) or owner.__qualname__}"


def _allows_text(annotation: Any) -> bool:
    """Whether a content annotation lets a bare string through (``ImagePart | str``)."""
    args = get_args(annotation)
    return annotation is str or any(a is str for a in args)


def _json_object_text(tool_name: str, args: Mapping[str, Any] | str | bytes) -> str | bytes | bytearray:
    """The arguments as JSON text of an object (Python mappings are serialised: the same strict rules apply)."""
    if isinstance(args, (str, bytes, bytearray)):
        text = args or "{}"
        if not looks_like_object(text):
            # a callable's schema would also take a JSON array (positional arguments): the JSON Schema does not
            check_json_object(tool_name, text)
        return text
    if not isinstance(args, Mapping):  # pyright: ignore[reportUnnecessaryIsInstance]  # untyped callers
        raise ToolInputError(tool_name, [ErrorDetail("$", "Arguments must be a JSON object", args, "object_type")])
    return json_of(tool_name, args)


class FunctionSchema:
    """Everything agentkit knows about a function's parameters and result.

    Built by `Tool`; public only for those who need the pieces without a `Tool`.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        input_schema: SchemaSource | None = None,
        output_schema: SchemaSource | None = None,
    ) -> None:
        self.fn = fn
        info = describe_callable(fn)
        if isinstance(info, str):
            raise ToolDefinitionError(_fallback_qualname(fn), [info])
        self.info = info
        self.qualname = info.qualname
        self.is_async = info.is_async
        problems: list[str] = []
        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError) as exc:
            raise ToolDefinitionError(
                self.qualname,
                [f"its signature cannot be read ({exc}); wrap it in a def with annotated parameters"],
            ) from None
        hints, unresolved = self._resolve_hints(info.hints_from)
        self._hints_pending = unresolved
        self.context_params: list[str] = []
        self.context_types: dict[str, Any] = {}
        """Each context parameter's annotation (``ToolContext[Deps]``, as written), for the deps check."""
        self.params: list[_Param] = []
        self.positional_only: list[str] = []
        for param in signature.parameters.values():
            if param.name in info.bound:
                continue  # fixed by functools.partial: the model neither sees nor overrides it
            annotation = hints.get(param.name, param.annotation)
            if param.kind is param.VAR_POSITIONAL:
                problems.append(
                    f"*{param.name} cannot be part of a tool's schema; a model sends named arguments. "
                    f"Use a list parameter instead, e.g. `{param.name}: list[str]`"
                )
                continue
            if param.kind is param.VAR_KEYWORD:
                problems.append(
                    f"**{param.name} is not supported: a tool's arguments are a fixed set of named parameters. "
                    f"Declare each one, or take a mapping, e.g. `{param.name}: dict[str, str]`"
                )
                continue
            if annotation is _EMPTY and param.name in ("self", "cls") and not self.params and not problems:
                problems.append(
                    f"its first parameter is {param.name!r}: it looks like a method. Make a tool of a function or a "
                    "staticmethod, or of the bound method: Tool.from_function(instance.method)"
                )
                continue
            if annotation is _EMPTY:
                problems.append(
                    f"parameter {param.name!r} has no type annotation; annotate it (e.g. `{param.name}: str`) "
                    "so its schema can be generated"
                )
                continue
            if param.kind is param.POSITIONAL_ONLY:
                self.positional_only.append(param.name)  # context ones too: passed in signature order
            if _is_context(annotation):
                self.context_params.append(param.name)
                self.context_types[param.name] = annotation
                continue
            self.params.append(_Param(param.name, annotation, param.default))
        self.return_annotation: Any = hints.get("return", signature.return_annotation)
        self._explicit_input = (
            ExplicitSchema(input_schema, qualname=self.qualname, role="input_schema")
            if input_schema is not None
            else None
        )
        self._explicit_output = (
            ExplicitSchema(output_schema, qualname=self.qualname, role="output_schema")
            if output_schema is not None
            else None
        )
        if self._explicit_input is not None:
            problems.extend(self._check_explicit_input_fits())
        elif not unresolved:
            problems.extend(self._check_types())
        if problems:
            raise ToolDefinitionError(self.qualname, problems)

    # ---- definition time -------------------------------------------------------------------------

    def _resolve_hints(self, fn: Callable[..., Any]) -> tuple[dict[str, Any], bool]:
        """Type hints with `Annotated` kept; ``(raw annotations, True)`` while forward refs are undefined."""
        self._localns: dict[str, Any] | None = None
        try:
            return self._with_self(get_hints(fn)), False
        except Exception:  # noqa: BLE001 - NameError mostly; anything else is reported when building
            pass
        # Names local to the function that defines the tool (classes declared in a test, say) are not in
        # the tool's globals: look them up where the decorator was applied, as pydantic does.
        self._localns = caller_locals()
        try:
            return self._with_self(get_hints(fn, self._localns or {})), False
        except Exception:  # noqa: BLE001 - a forward reference to something defined later: resolved on first use
            return dict(getattr(fn, "__annotations__", {})), True

    def _with_self(self, hints: dict[str, Any]) -> dict[str, Any]:
        """``Self`` in a method's hints stands for the class of the object the method is bound to."""
        cls = self.info.self_type
        return {name: substitute_self(tp, cls) for name, tp in hints.items()} if cls is not None else hints

    def _check_types(self) -> list[str]:
        problems: list[str] = []
        for param in self.params:
            if _needs_schema_check(param.annotation):
                problem = self._schema_problem(param.annotation)
                if problem:
                    problems.append(f"parameter {param.name!r}: {problem}")
        if self._explicit_output is None and self.return_annotation is not _EMPTY and not self.returns_content:
            ret = self._awaited(self.return_annotation)
            if _needs_schema_check(ret):
                problem = self._schema_problem(ret)
                if problem:
                    problems.append(f"return annotation: {problem}")
        return problems

    @staticmethod
    def _schema_problem(tp: Any) -> str | None:
        from pydantic import PydanticSchemaGenerationError, PydanticUserError, TypeAdapter

        try:
            TypeAdapter(tp).json_schema()
        except (PydanticSchemaGenerationError, PydanticUserError) as exc:
            name = getattr(tp, "__qualname__", repr(tp))
            first = str(exc).splitlines()[0]
            return (
                f"type {name} cannot be turned into a JSON Schema ({first}). Use a pydantic model, dataclass, "
                "TypedDict or a standard type, or give the class `__get_pydantic_core_schema__`"
            )
        except Exception as exc:  # noqa: BLE001 - e.g. a JSON-schema-less core schema
            return f"type {tp!r} cannot be turned into a JSON Schema ({exc})"
        return None

    def _check_explicit_input_fits(self) -> list[str]:
        assert self._explicit_input is not None
        if len(self.params) != 1:
            names = ", ".join(p.name for p in self.params) or "none"
            return [
                "with input_schema= the function receives one validated argument, so it must take exactly one "
                f"parameter besides ToolContext (it takes: {names})"
            ]
        ann = self.params[0].annotation
        expected = self._explicit_input.python_type
        if ann in (Any, object) or (get_origin(ann) or ann) in (dict, Mapping):
            return []
        if expected is not None and ann is expected:
            return []
        if expected is None:
            return [
                f"input_schema= is a JSON Schema dict, so parameter {self.params[0].name!r} receives a dict; "
                f"annotate it as dict[str, Any] (not {getattr(ann, '__qualname__', ann)!r})"
            ]
        return [
            f"input_schema={expected.__qualname__} does not fit parameter {self.params[0].name!r} annotated "
            f"{getattr(ann, '__qualname__', ann)!r}; annotate it as {expected.__qualname__}"
        ]

    def _awaited(self, annotation: Any) -> Any:
        """The result type callers see: for ``async def`` the annotation already is the awaited type."""
        return annotation

    # ---- built on first use ----------------------------------------------------------------------

    @cached_property
    def docstring(self) -> ParsedDocstring:
        """The parsed docstring of the function (a callable object's: its class's text, then ``__call__``'s)."""
        own = parse_docstring(self.info.doc_from)
        cls = self.info.described_by
        if cls is None:
            return own
        outer = parse_docstring(cls)
        # the class's Args usually document __init__: only those naming a parameter of the call are kept
        names = {p.name for p in self.params}
        params = {name: text for name, text in outer.params.items() if name in names}
        params.update(own.params)
        return ParsedDocstring(
            description=outer.description or own.description,
            params=params,
            returns=own.returns if own.returns is not None else outer.returns,
            style=own.style or outer.style,
        )

    def warn_unknown_documented_params(self) -> None:
        """Warn about docstring parameters the function does not have (a typo or a stale docstring)."""
        known = {p.name for p in self.params} | set(self.context_params) | self.info.bound
        for name in self.docstring.params:
            if name not in known:
                warnings.warn(
                    f"{self.qualname}: the docstring documents parameter {name!r}, which the function does not have",
                    AgentkitWarning,
                    stacklevel=4,
                )

    def _finish_hints(self) -> None:
        if not self._hints_pending:
            return
        try:
            hints = self._with_self(get_hints(self.info.hints_from, self._localns or {}))
        except Exception as exc:  # noqa: BLE001
            raise ToolDefinitionError(
                self.qualname,
                [f"a type annotation cannot be resolved ({exc}); define or import that name at module level"],
            ) from None
        self.params = [p._replace(annotation=hints.get(p.name, p.annotation)) for p in self.params]
        self.return_annotation = hints.get("return", self.return_annotation)
        self._hints_pending = False
        problems = self._check_types()
        if problems:
            raise ToolDefinitionError(self.qualname, problems)

    @cached_property
    def _arguments_adapter(self) -> TypeAdapter[Any]:
        """A pydantic validator over the parameters (context parameters excluded), returning kwargs."""
        from pydantic import TypeAdapter

        self._finish_hints()
        parameters: list[inspect.Parameter] = []
        annotations: dict[str, Any] = {}
        for param in self.params:
            annotation = _with_plain_descriptions(param.annotation)
            annotations[param.name] = annotation
            parameters.append(
                inspect.Parameter(
                    param.name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=param.default
                )
            )

        def collect(**kwargs: Any) -> dict[str, Any]:
            return kwargs

        cast(Any, collect).__signature__ = inspect.Signature(parameters)
        collect.__annotations__ = annotations
        collect.__qualname__ = collect.__name__ = self.info.name or "tool"
        collect.__module__ = getattr(self.info.hints_from, "__module__", None) or __name__
        try:
            return TypeAdapter[Any](collect)  # type: ignore[arg-type]  # a callable: pydantic's call schema
        except Exception as exc:  # noqa: BLE001 - reported as a definition error, with the function named
            raise ToolDefinitionError(self.qualname, [f"its parameters cannot be schema'd: {exc}"]) from None

    @cached_property
    def input_schema(self) -> JsonSchema:
        """The JSON Schema (draft 2020-12) of the arguments: ``type: object`` at the root, no titles."""
        if self._explicit_input is not None:
            schema = self._explicit_input.json_schema
            if schema.get("type") != "object":
                raise ToolDefinitionError(
                    self.qualname, ["input_schema= must describe an object (`type: object` at its root)"]
                )
            return schema
        generated: JsonSchema = strip_titles(json_schema_of(self._arguments_adapter, "validation"))
        properties = generated.setdefault("properties", {})
        # Docstring descriptions are added to the finished schema rather than as `Field(description=...)`
        # metadata: the same result, without pydantic merging field info for every parameter.
        documented = self.docstring.params
        for param in self.params:
            doc = documented.get(param.name)
            if doc and param.name in properties and not _has_explicit_description(param.annotation, param.default):
                properties[param.name] = {**properties[param.name], "description": doc}
        return generated

    @cached_property
    def _output_adapter(self) -> TypeAdapter[Any] | None:
        from pydantic import TypeAdapter

        if self._explicit_output is not None:
            return self._explicit_output.adapter if self._explicit_output.python_type is not None else None
        self._finish_hints()
        if self.return_annotation is _EMPTY or self.returns_content:
            return None
        try:
            return TypeAdapter(self.return_annotation)
        except Exception as exc:  # noqa: BLE001 - reported as a definition error naming the function
            raise ToolDefinitionError(self.qualname, [f"its return annotation cannot be schema'd: {exc}"]) from None

    @cached_property
    def returns_content(self) -> bool:
        """Whether the result is parts for the model (``-> ImagePart``, ``-> list[ContentPart]``, ...), not data."""
        if self._explicit_output is not None:
            return False
        self._finish_hints()
        return is_content_annotation(self.return_annotation)

    @cached_property
    def output_schema(self) -> JsonSchema | None:
        """JSON Schema of the result; ``{"type": "null"}`` for ``-> None``; `None` without an annotation.

        Also `None` for results that are content for the model (parts: see `returns_content`).
        """
        if self._explicit_output is not None:
            return self._explicit_output.json_schema
        adapter = self._output_adapter
        if adapter is None:
            return None
        return inline_root_ref(strip_titles(json_schema_of(adapter, "serialization")))

    # ---- per call --------------------------------------------------------------------------------

    @cached_property
    def _validate_json(self) -> Callable[..., Any]:
        # The core validator's bound method: the per-call path skips TypeAdapter's Python wrapper.
        return self._arguments_adapter.validator.validate_json

    def validate_arguments(self, tool_name: str, args: Mapping[str, Any] | str | bytes) -> dict[str, Any]:
        """Validate the model's arguments; return the keyword arguments for the function.

        Never blocks on a regex when the schema's patterns allow a linear-time engine; see
        `needs_thread` for the ones that do not.

        Raises:
            ToolInputError: with every problem, each with its JSON path and offending value.
        """
        explicit = self._explicit_input
        if explicit is not None:
            return {self.params[0].name: self._validate_explicit(tool_name, explicit, args)}
        if isinstance(args, str) and args[:1] == "{":  # the common case, in one call into pydantic-core
            try:
                kwargs: dict[str, Any] = self._validate_json(args, strict=True)  # no cast(): a call per call
                return kwargs
            except validation_error_type():
                pass  # the slow path below says why (and accepts integral floats as integers)
        return cast(
            "dict[str, Any]", validate_json_strict(tool_name, self._validate_json, _json_object_text(tool_name, args))
        )

    @cached_property
    def needs_thread(self) -> bool:
        """Whether validating may run a backtracking regex (a raw schema's look-around pattern, say).

        Callers on an event loop validate such a tool on a worker thread, bounded by its timeout.
        """
        return any(
            e is not None and e.raw is not None and e.raw.needs_thread
            for e in (self._explicit_input, self._explicit_output)
        )

    @staticmethod
    def _validate_explicit(tool_name: str, explicit: ExplicitSchema, args: Mapping[str, Any] | str | bytes) -> Any:
        if explicit.raw is None:
            data = _json_object_text(tool_name, args)
            try:
                value = validate_json_strict(tool_name, explicit.validate_json, data)
            except ToolInputError as exc:
                unknown = explicit.unknown_keys(tool_name, args if isinstance(args, Mapping) else data)
                raise ToolInputError(tool_name, [*exc.errors, *unknown]) from None
            unknown = explicit.unknown_keys(tool_name, args if isinstance(args, Mapping) else data)
            if unknown:
                raise ToolInputError(tool_name, unknown)
            return value
        if isinstance(args, (str, bytes, bytearray)):
            try:
                args = parse_json(args or "{}")
            except ValueError as exc:
                invalid = ToolInputError(tool_name, [ErrorDetail("$", f"Invalid JSON: {exc}", args, "json_invalid")])
                raise surrogate_error(tool_name, args) or invalid from None
        elif isinstance(args, Mapping):  # pyright: ignore[reportUnnecessaryIsInstance]  # as JSON text would be: no lone surrogate
            unicode = surrogate_error(tool_name, args, parsed=True)
            if unicode is not None:
                raise unicode
        if not isinstance(args, Mapping):
            raise ToolInputError(tool_name, [ErrorDetail("$", "Arguments must be a JSON object", args, "object_type")])
        errors = explicit.raw.errors(args)
        if errors:
            raise ToolInputError(tool_name, errors)
        return dict(args)

    def validate_output(self, tool_name: str, value: Any) -> Any:
        """Validate a result against the output schema; return the validated value.

        Raises:
            ToolOutputError: with every problem found.
        """
        explicit = self._explicit_output
        if explicit is not None and explicit.raw is not None:
            errors = explicit.raw.errors(value)
            if errors:
                raise ToolOutputError(tool_name, errors)
            return value
        if self.returns_content:
            if is_content(value) or (isinstance(value, str) and _allows_text(self.return_annotation)):
                return value
            message = "Expected an ImagePart, a TextPart, or a list of parts (and text), as the annotation says"
            raise ToolOutputError(tool_name, [ErrorDetail("$", message, value, "content_type")])
        validate = self._output_validate
        if validate is None:
            return value
        try:
            return validate(value)
        except validation_error_type() as exc:
            raise ToolOutputError(tool_name, details_from_pydantic(exc, value)) from None

    @cached_property
    def _output_validate(self) -> Callable[[Any], Any] | None:
        adapter = self._output_adapter
        return adapter.validator.validate_python if adapter is not None else None

    @cached_property
    def _output_to_json(self) -> Callable[..., bytes]:
        adapter = self._output_adapter
        if adapter is not None:
            return adapter.serializer.to_json
        to_json = pydantic_to_json()

        def dump(value: Any) -> bytes:
            return to_json(value, fallback=repr)

        return dump

    def dump_output_json(self, value: Any) -> str:
        """The validated result as JSON text (strings are returned as they are)."""
        if isinstance(value, str):
            return value
        try:
            return self._output_to_json(value).decode()
        except ValueError:  # PydanticSerializationError: a lone surrogate (a file name read with surrogateescape)?
            data = self.dump_output_python(value)
            if surrogate_at(data) is None:
                raise
            return escaped(json_text(data, ensure_ascii=False, compact=True))  # as its JSON escape: UTF-8 cannot

    def dump_output_python(self, value: Any) -> Any:
        """The validated result as JSON-ready Python data (dicts, lists, scalars)."""
        adapter = self._output_adapter
        if adapter is not None:
            return adapter.dump_python(value, mode="json")
        from pydantic_core import to_jsonable_python

        return to_jsonable_python(value, fallback=repr)
