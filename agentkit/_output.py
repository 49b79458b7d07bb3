"""An output type as a model is asked for it: one object schema, the tool that carries it, its validation.

Every output type becomes an output *tool*, whatever the mode: its arguments are the answer. A pydantic
model, dataclass or TypedDict is the arguments object itself; anything else (a scalar, a list, a
``Literal``, a union of models, a ``dict``, a root model) is wrapped as ``{"response": <value>}``, since
every vendor's structured-output form and tool call needs an object at the root. In ``native`` and
``prompted`` mode the model's text answer is validated exactly as those tool arguments would be, so one
validator (the tool's: strict JSON, errors with JSON paths) serves all three modes, and the schema a
vendor sees goes through the same dialect machinery as any tool's.
"""

from __future__ import annotations as _annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any, Union, cast

from typing_extensions import is_typeddict

from ._jsonish import is_object
from ._partial import PartialValidator
from .definitions import ToolDefinition
from .exceptions import AgentSetupError, ErrorDetail, ToolDefinitionError, ToolInputError
from .tools import Tool

__all__ = ["DEFAULT_OUTPUT_NAME", "WRAPPER_KEY", "OutputSchema", "is_text_output", "union_of"]

DEFAULT_OUTPUT_NAME = "final_result"
"""The output tool's name (and the native schema's name) unless `Output(name=...)` says otherwise."""
WRAPPER_KEY = "response"
"""The one property of the object a non-object output is wrapped in."""

_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # accepted by every vendor's tool and schema names
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


def is_text_output(target: Any) -> bool:
    """Whether `target` asks for today's behaviour: the model's text, unvalidated (`str` or nothing)."""
    return target is None or target is str


def union_of(types: Sequence[Any], said: str) -> Any:
    """The union a list of output types stands for (``[Cat, Dog]`` is ``Cat | Dog``; one type is itself).

    Raises:
        AgentSetupError: an empty list (`said` is how the caller wrote it, for the message).
    """
    if not types:
        raise AgentSetupError(f"{said}: no output types; list the types the answer may be, e.g. [Cat, Dog]")
    return Union[tuple(types)] if len(types) > 1 else types[0]


def _is_object_type(target: Any) -> bool:
    """A class whose JSON form is an object with named fields (sent as the arguments object itself)."""
    if not isinstance(target, type):
        return False
    target = cast("type[Any]", target)
    from pydantic import BaseModel, RootModel

    if issubclass(target, RootModel):
        return False
    return issubclass(target, BaseModel) or dataclasses.is_dataclass(target) or is_typeddict(target)


def _type_name(target: Any) -> str:
    return getattr(target, "__qualname__", None) or repr(target)


class OutputSchema:
    """One output type as models are asked for it (built once per type and options, then shared)."""

    def __init__(
        self,
        target: Any,
        *,
        name: str = DEFAULT_OUTPUT_NAME,
        description: str | None = None,
        strict: bool | None = None,
    ) -> None:
        if not isinstance(name, str) or not _NAME.match(name):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise AgentSetupError(
                f"Output(name={name!r}): an output name is 1 to 64 letters, digits, '_' or '-' (every vendor "
                "accepts those), e.g. 'final_result'"
            )
        self.target = target
        self.name = name
        self.wrapped = not _is_object_type(target)
        """Whether the value travels as ``{"response": <value>}`` (anything that is not an object type)."""
        try:
            self.tool = self._make_tool(description, strict)
            _ = self.tool.input_schema  # schema problems surface now, naming the type
        except ToolDefinitionError as exc:
            problems = "; ".join(exc.problems)
            raise AgentSetupError(
                f"output_type={_type_name(target)} cannot be asked of a model: {problems}. Use a pydantic model, "
                "dataclass, TypedDict, or a standard type (int, list[str], Literal[...], a union of models)."
            ) from None
        self._param = next(iter(self.tool.schema.params)).name

    def _make_tool(self, description: str | None, strict: bool | None) -> Tool[..., Any]:
        text = description if description is not None else self._default_description()
        if self.wrapped:

            def answer(response: Any) -> Any:
                return response

            answer.__annotations__ = {"response": self.target}
            answer.__name__ = answer.__qualname__ = self.name
            return Tool(answer, id=self.name, description=text, strict=strict)

        def answer_object(value: Any) -> Any:
            return value

        answer_object.__annotations__ = {"value": self.target}
        answer_object.__name__ = answer_object.__qualname__ = self.name
        return Tool(answer_object, id=self.name, description=text, input_schema=self.target, strict=strict)

    def _default_description(self) -> str:
        base = "The final answer, which ends the conversation."
        doc = self.target.__dict__.get("__doc__") if _is_object_type(self.target) else None
        if not isinstance(doc, str) or doc.startswith(f"{self.target.__name__}("):  # a dataclass's generated doc
            return base
        return f"{base} {' '.join(doc.split())}"

    # ---- what models are told -----------------------------------------------------------------------

    @property
    def definition(self) -> ToolDefinition:
        """The output's object schema, name and description, as vendors receive them."""
        return self.tool.definition(self.name)

    @property
    def schema(self) -> dict[str, Any]:
        """The object schema of the answer (JSON Schema draft 2020-12)."""
        return self.tool.input_schema

    def prompt(self) -> str:
        """The instructions a ``prompted`` request adds: the schema, and how to answer."""
        schema = json.dumps(self.schema, ensure_ascii=False, separators=(",", ":"))
        return (
            "Give your final answer as one JSON object that fits this JSON Schema, with nothing before or after "
            f"it (no Markdown fence):\n{schema}"
        )

    # ---- reading answers ----------------------------------------------------------------------------

    def validate_arguments(self, arguments: str | Mapping[str, Any]) -> Any:
        """The value of an answer given as the output tool's arguments (JSON text or a mapping).

        Raises:
            ToolInputError: the answer does not fit (every problem, with JSON paths into the answer).
        """
        kwargs = self.tool.schema.validate_arguments(self.name, arguments)
        return kwargs[self._param]

    def validate_text(self, text: str, *, restore: bool = False) -> Any:
        """The value of a text answer (the JSON object, possibly in a Markdown fence or after a sentence).

        With `restore`, ``null`` for an optional field (which a strict schema made nullable) means its
        default, as for tool arguments.

        Raises:
            ToolInputError: not JSON, or JSON that does not fit (every problem, with JSON paths).
        """
        candidate = _json_part(text)
        if restore and "null" in candidate:  # nothing to restore without a null: no second parse
            from .providers._nulls import restore_defaults

            try:
                parsed = json.loads(candidate)
            except (ValueError, RecursionError):
                parsed = None
            if is_object(parsed):
                restored = restore_defaults(parsed, self.schema)
                if restored is not parsed:
                    return self.validate_arguments(restored)
        return self.validate_arguments(candidate)

    def validate_value(self, value: Any) -> Any:
        """`value` (a Python value, e.g. a tool's result) checked against the output type.

        Raises:
            ToolInputError: it does not fit.
        """
        from ._error_paths import details_from_pydantic
        from ._validation import validation_error_type

        try:
            return self._adapter.validate_python(value)
        except validation_error_type() as exc:
            raise ToolInputError(self.name, details_from_pydantic(exc, value)) from None
        except RecursionError:
            raise ToolInputError(self.name, [ErrorDetail("$", "nested too deeply", value, "too_deep")]) from None

    @cached_property
    def _adapter(self) -> Any:
        from pydantic import TypeAdapter

        return TypeAdapter(self.target)

    def raw_of(self, arguments: str | Mapping[str, Any]) -> str:
        """An answer as text (the raw JSON an error reports)."""
        if isinstance(arguments, str):
            return arguments
        from ._text import json_text

        return json_text(dict(arguments), compact=True, ensure_ascii=False)

    # ---- streaming ----------------------------------------------------------------------------------

    @cached_property
    def _partial(self) -> PartialValidator:
        return PartialValidator(self.schema)

    def partial(self, text: str) -> Any:
        """What of the answer so far fits the schema (JSON data, see `agentkit._partial`); None: nothing yet."""
        value = self._partial(text)
        if self.wrapped:
            return value.get(WRAPPER_KEY) if is_object(value) else None
        return value


def _json_part(text: str) -> str:
    """The JSON object in a text answer: all of it, else a fenced block, else from the first ``{`` to the last ``}``."""
    stripped = text.strip()
    if stripped.startswith("{") or not stripped:
        return stripped or text
    fenced = _FENCE.search(stripped)
    if fenced is not None:
        return fenced.group(1).strip()
    start, end = stripped.find("{"), stripped.rfind("}")
    if 0 <= start < end:
        return stripped[start : end + 1]
    return stripped
