"""`@resource` and `@prompt`: plain Python functions served as MCP resources and prompts.

The same inference as `@tool`: a `Resource` or `Prompt` wraps a `Tool` made of the function, so its
parameters' type hints are the schema, its docstring the descriptions, and its arguments are validated
as a tool's are (every problem with its JSON path). On the wire, URI template variables and prompt
arguments are strings: a parameter typed as a number, a boolean or a JSON value is read from its JSON
text (``"42"`` -> ``42``) before validation.

* ``@resource("docs://{name}")``: the template's variables are the function's parameters, checked when
  it is defined. A URI without variables is a static resource (``resources/list``), one with variables a
  template (``resources/templates/list``). The function returns ``str`` (text), ``bytes`` (a blob), an
  `ImagePart` (a blob of its type) or any JSON-serialisable value (JSON text).
* ``@prompt``: the parameters are the prompt's arguments (scalars only: MCP sends them as strings). The
  function returns a ``str`` (one user message), a `UserMessage`/`AssistantMessage`, or a list of them.
"""

from __future__ import annotations as _annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast, overload

from .._jsonish import is_array, is_mapping
from ..context import ToolContext
from ..exceptions import ErrorDetail, ToolDefinitionError, ToolInputError
from ..messages import AssistantMessage, ImagePart, SystemMessage, UserMessage
from ..tools import Tool
from ._remote import PromptArgument

__all__ = ["Prompt", "Resource", "ServedContents", "prompt", "resource"]

_VARIABLE = re.compile(r"\{[+#./;?&]?([^}]*)\}")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_SCALARS = frozenset({"string", "integer", "number", "boolean"})


def _variables(template: str) -> list[str]:
    """The variable names of an RFC 6570 template (``{a,b*}`` -> ``a``, ``b``)."""
    return [name.rstrip("*").split(":")[0] for group in _VARIABLE.findall(template) for name in group.split(",")]


def _from_text(value: Any, schema: Mapping[str, Any]) -> Any:
    """A wire string read as the JSON value a non-string parameter expects (left as it is otherwise)."""
    if not isinstance(value, str):
        return value
    kinds = schema.get("type")
    if kinds == "string" or (kinds is None and "enum" in schema and all(isinstance(v, str) for v in schema["enum"])):
        return value
    if kinds is None and "const" in schema and isinstance(schema["const"], str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


def _coerced(tool: Tool[..., Any], arguments: Mapping[str, Any]) -> dict[str, Any]:
    properties: Mapping[str, Any] = tool.input_schema.get("properties") or {}
    return {
        k: _from_text(v, properties.get(k) or {}) if is_mapping(properties.get(k)) else v for k, v in arguments.items()
    }


@dataclass(frozen=True)
class ServedContents:
    """What a resource function returned, ready for ``resources/read``: text or bytes, with a MIME type."""

    uri: str
    mime_type: str
    text: str | None = None
    data: bytes | None = None


class Resource:
    """An MCP resource (or resource template) served from a function; made by `resource`."""

    def __init__(
        self,
        fn: Callable[..., Any],
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
    ) -> None:
        """See `resource`."""
        qualname = getattr(fn, "__qualname__", repr(fn))
        if not isinstance(uri, str) or not _SCHEME.match(uri):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ToolDefinitionError(
                qualname, [f"@resource({uri!r}): the URI needs a scheme, e.g. 'docs://{{name}}' or 'file:///readme'"]
            )
        self.tool: Tool[..., Any] = Tool.from_function(fn, id=name or fn.__name__)
        """The function as a tool: its schema validates the template's variables."""
        self.uri = uri
        """The URI, or the URI template (RFC 6570) when it has variables."""
        self.name = self.tool.id
        self.title = title
        self.description = description if description is not None else self.tool.description
        self.mime_type = mime_type
        """The MIME type announced and sent (default: from what the function returns)."""
        self.variables = _variables(uri)
        schema = self.tool.input_schema
        parameters = set(schema.get("properties") or {})
        required = set(schema.get("required") or [])
        problems = [
            f"the URI template variable {v!r} is not a parameter of the function"
            for v in self.variables
            if v not in parameters
        ]
        problems += [
            f"the parameter {p!r} has no default and is not a variable of the URI {uri!r}: add {{{p}}} to it, "
            "or give the parameter a default"
            for p in sorted(required - set(self.variables))
        ]
        if problems:
            raise ToolDefinitionError(qualname, problems)

    @property
    def is_template(self) -> bool:
        """Whether the URI has variables (listed by ``resources/templates/list``)."""
        return bool(self.variables)

    async def read(self, uri: str, variables: Mapping[str, Any], *, deps: Any = None) -> ServedContents:
        """Call the function with the variables matched from `uri` (validated) and turn its result into contents.

        Raises:
            ToolInputError: a variable does not fit its parameter's type.
        """
        value = await self.tool.ainvoke(_coerced(self.tool, variables), context=ToolContext(deps=deps))
        if isinstance(value, str):
            return ServedContents(uri, self.mime_type or "text/plain", text=value)
        if isinstance(value, (bytes, bytearray)):
            return ServedContents(uri, self.mime_type or "application/octet-stream", data=bytes(value))
        if isinstance(value, ImagePart) and value.data is not None:
            return ServedContents(uri, self.mime_type or value.media_type, data=value.data)
        text = self.tool.schema.dump_output_json(value) if self.tool.output_schema is not None else json.dumps(value)
        return ServedContents(uri, self.mime_type or "application/json", text=text)

    def __repr__(self) -> str:
        return f"Resource({self.uri!r}, fn={self.tool.schema.qualname})"


class Prompt:
    """An MCP prompt served from a function; made by `prompt`."""

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
    ) -> None:
        """See `prompt`."""
        self.tool: Tool[..., Any] = Tool.from_function(fn, id=name or fn.__name__)
        """The function as a tool: its schema validates the prompt's arguments."""
        self.name = self.tool.id
        self.title = title
        self.description = description if description is not None else self.tool.description
        schema = self.tool.input_schema
        properties: Mapping[str, Any] = schema.get("properties") or {}
        required = set(schema.get("required") or [])
        problems = [
            f"the argument {key!r} is not a string, number or boolean (MCP sends prompt arguments as strings)"
            for key, sub in properties.items()
            if not _scalar(sub)
        ]
        if problems:
            raise ToolDefinitionError(self.tool.schema.qualname, problems)
        self.arguments = [
            PromptArgument(key, sub.get("description") if is_mapping(sub) else None, key in required)
            for key, sub in properties.items()
        ]
        """The prompt's arguments, in parameter order."""

    async def render(self, arguments: Mapping[str, Any], *, deps: Any = None) -> list[UserMessage | AssistantMessage]:
        """Call the function with `arguments` (validated) and return its messages.

        Raises:
            ToolInputError: an argument is missing, unknown, or does not fit its type.
            TypeError: the function returned something that is not a prompt.
        """
        value = await self.tool.ainvoke(_coerced(self.tool, arguments), context=ToolContext(deps=deps))
        items: list[Any] = list(cast("Sequence[Any]", value)) if isinstance(value, (list, tuple)) else [value]
        messages: list[UserMessage | AssistantMessage] = []
        for item in items:
            if isinstance(item, str):
                messages.append(UserMessage(item))
            elif isinstance(item, (UserMessage, AssistantMessage)):
                messages.append(item)
            else:
                hint = (
                    " (MCP prompts have no system role: say it in a user message)"
                    if isinstance(item, SystemMessage)
                    else ""
                )
                raise TypeError(
                    f"prompt {self.name!r} returned {type(item).__name__}{hint}; return a str, a UserMessage or "
                    "AssistantMessage, or a list of them"
                )
        return messages

    def __repr__(self) -> str:
        return f"Prompt({self.name!r}, fn={self.tool.schema.qualname})"


def _scalar(schema: Any) -> bool:
    if not is_mapping(schema):
        return False
    if schema.get("type") in _SCALARS or "enum" in schema or "const" in schema:
        return True
    options = schema.get("anyOf")
    if not is_array(options):
        return False
    return all(_scalar(o) or (is_mapping(o) and o.get("type") == "null") for o in options)


def resource(
    uri: str,
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
) -> Callable[[Callable[..., Any]], Resource]:
    """Serve a function as an MCP resource at `uri` (a URI template when it has ``{variables}``).

    Example:
        ```python
        @resource("docs://{page}", mime_type="text/markdown")
        def docs(page: str) -> str:
            # the docstring describes the resource
            return PAGES[page]

        serve(tools, resources=[docs])
        ```

    Args:
        uri: the resource's URI, or an RFC 6570 template whose variables are the function's parameters.
        name: the name clients see (default: the function's name).
        title: a human-readable title.
        description: what the resource holds (default: the docstring).
        mime_type: the MIME type (default: ``text/plain`` for ``str``, ``application/octet-stream`` for
            ``bytes``, the image's type for an `ImagePart`, ``application/json`` otherwise).

    Raises:
        ToolDefinitionError: the URI has no scheme, a variable is not a parameter, or a parameter
            without a default is not a variable.
    """

    def decorate(fn: Callable[..., Any]) -> Resource:
        return Resource(fn, uri, name=name, title=title, description=description, mime_type=mime_type)

    return decorate


@overload
def prompt(fn: Callable[..., Any], /) -> Prompt: ...
@overload
def prompt(
    *, name: str | None = None, title: str | None = None, description: str | None = None
) -> Callable[[Callable[..., Any]], Prompt]: ...
def prompt(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
) -> Prompt | Callable[[Callable[..., Any]], Prompt]:
    """Serve a function as an MCP prompt; bare (``@prompt``) or configured (``@prompt(name=...)``).

    Example:
        ```python
        @prompt
        def review(code: str, language: str = "python") -> str:
            # the docstring describes the prompt, and its Args section each argument
            return f"Review this {language} code: {code}"
        ```

    Args:
        fn: the function (bare use).
        name: the name clients see (default: the function's name).
        title: a human-readable title.
        description: what the prompt is for (default: the docstring).

    Raises:
        ToolDefinitionError: an argument is not a string, number or boolean.
    """
    if fn is not None:
        return Prompt(fn, name=name, title=title, description=description)

    def decorate(inner: Callable[..., Any]) -> Prompt:
        return Prompt(inner, name=name, title=title, description=description)

    return decorate


def argument_error(exc: ToolInputError) -> str:
    """One line naming each argument that does not fit, for a protocol error."""
    return "; ".join(f"{_name(e)}: {e.message}" for e in exc.errors)


def _name(error: ErrorDetail) -> str:
    return error.path[2:] if error.path.startswith("$.") else error.path
