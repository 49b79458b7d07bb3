"""Registry tools as the typed Python module a program is shown: one ``async def`` per tool.

Each tool's input schema becomes a signature (required parameters first, so they can be passed by
position), its output schema the return type, object schemas `TypedDict` classes, and its description
and the parameters' descriptions a Google-style docstring. Keys and property names that are not Python
identifiers get one (``"my-tool"`` -> ``my_tool``, ``"from"`` -> ``from_``); `FunctionSpec` maps them back.
Names are decided once, when the code tool is built: two keys that would share a name are an error then.
"""

from __future__ import annotations as _annotations

import builtins
import keyword
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from .._jsonish import is_array, is_object
from ..exceptions import AgentSetupError
from ..tools import Tool

__all__ = ["FunctionSpec", "ModuleStubs", "build_stubs", "python_name"]

_RESERVED = frozenset(
    {*keyword.kwlist, *dir(builtins), "asyncio", "json", "math", "re", "Any", "Literal", "NotRequired", "TypedDict"}
)
_SIMPLE = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}


def python_name(name: str) -> str:
    """`name` as a Python identifier: other characters become ``_``; keywords and builtins get a ``_`` suffix."""
    text = re.sub(r"\W", "_", name, flags=re.ASCII) or "_"
    if text[0].isdigit():
        text = f"_{text}"
    return f"{text}_" if text in _RESERVED else text


def _class_name(*parts: str) -> str:
    words = [w for part in parts for w in re.split(r"[^0-9A-Za-z]+", part) if w]
    name = "".join(w[:1].upper() + w[1:] for w in words) or "Value"
    return f"_{name}" if name[0].isdigit() else name


@dataclass(frozen=True)
class FunctionSpec:
    """How a program's call of one function becomes a registry call."""

    key: str
    """The registry key the calls go to."""
    name: str
    """The function's Python name in the program."""
    params: tuple[str, ...]
    """Python parameter names in positional order (required first)."""
    properties: Mapping[str, str]
    """Python parameter name -> the input schema's property name."""
    open_ended: bool = False
    """Whether the schema takes properties it does not list (then unknown keywords pass through)."""

    def arguments(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """The call's arguments by property name; raises `TypeError` (shown in the program) for a bad call."""
        if len(args) > len(self.params):
            raise TypeError(f"{self.name}() takes {len(self.params)} positional argument(s) but {len(args)} were given")
        named: dict[str, Any] = {}
        for pname, value in zip(self.params, args, strict=False):
            named[self.properties[pname]] = value
        for pname, value in kwargs.items():
            prop = self.properties.get(pname)
            if prop is None:
                if pname in self.properties.values():
                    prop = pname  # the schema's own spelling is accepted too
                elif self.open_ended:
                    prop = pname
                else:
                    raise TypeError(f"{self.name}() got an unexpected keyword argument {pname!r}")
            if prop in named:
                raise TypeError(f"{self.name}() got multiple values for argument {pname!r}")
            named[prop] = value
        return named


@dataclass
class ModuleStubs:
    """The stub module shown to the model and the specs its calls are resolved by."""

    text: str
    functions: dict[str, FunctionSpec] = field(default_factory=lambda: {})
    """Python name -> spec."""


class _Renderer:
    """Turns JSON Schemas into type expressions, collecting the `TypedDict` classes they need."""

    def __init__(self) -> None:
        self.classes: list[str] = []
        self.names: set[str] = set()
        self.done: dict[int, str] = {}

    def unique(self, name: str) -> str:
        base, n = name, 2
        while name in self.names or name in _RESERVED:
            name = f"{base}{n}"
            n += 1
        self.names.add(name)
        return name

    def type_of(self, schema: Any, defs: Mapping[str, Any], hint: str, depth: int = 0) -> str:
        if depth > 12 or not is_object(schema):
            return "Any"
        ref = schema.get("$ref")
        if isinstance(ref, str):
            target = ref.rsplit("/", 1)[-1]
            found = defs.get(target)
            if found is None or depth > 8:
                return "Any"
            return self.type_of(found, defs, target, depth + 1)
        if "const" in schema:
            return f"Literal[{schema['const']!r}]" if _literal_ok(schema["const"]) else "Any"
        enum = schema.get("enum")
        if is_array(enum) and enum and all(_literal_ok(v) for v in enum):
            return f"Literal[{', '.join(repr(v) for v in enum)}]"
        for combo in ("anyOf", "oneOf"):
            options = schema.get(combo)
            if is_array(options) and options:
                return _union([self.type_of(o, defs, hint, depth + 1) for o in options])
        all_of = schema.get("allOf")
        if is_array(all_of) and len(all_of) == 1:
            return self.type_of(all_of[0], defs, hint, depth + 1)
        kind = schema.get("type")
        if is_array(kind):
            return _union([self.type_of({**schema, "type": k}, defs, hint, depth + 1) for k in kind])
        if kind in _SIMPLE:
            return _SIMPLE[kind]
        if kind == "array":
            items = schema.get("items")
            return f"list[{self.type_of(items, defs, hint + 'Item', depth + 1)}]" if items else "list[Any]"
        if kind == "object" or "properties" in schema:
            props = schema.get("properties")
            if is_object(props) and props:
                return self.typed_dict(schema, props, defs, hint, depth)
            extra = schema.get("additionalProperties")
            value = self.type_of(extra, defs, hint + "Value", depth + 1) if is_object(extra) else "Any"
            return f"dict[str, {value}]"
        return "Any"

    def typed_dict(
        self, schema: Mapping[str, Any], props: Mapping[str, Any], defs: Mapping[str, Any], hint: str, depth: int
    ) -> str:
        seen = self.done.get(id(schema))
        if seen is not None:
            return seen
        title = schema.get("title")
        name = self.unique(_class_name(title if isinstance(title, str) and title else hint))
        self.done[id(schema)] = name
        required: set[str] = set(schema.get("required") or ())
        lines = [f"class {name}(TypedDict):"]
        doc = schema.get("description")
        if isinstance(doc, str) and doc.strip():
            lines.append(f"    {_docstring(doc.strip(), 4)}")
        fields: list[str] = []
        for prop, sub in props.items():
            kind = self.type_of(sub, defs, _class_name(name, prop), depth + 1)
            kind = kind if prop in required else f"NotRequired[{kind}]"
            fname = python_name(prop) if not prop.isidentifier() or keyword.iskeyword(prop) else prop
            comment = _inline_comment(sub)
            if fname != prop:  # a TypedDict field must be an identifier: the program uses the JSON key itself
                comment = f"  # JSON key {prop!r}" + comment.replace("  #", ";", 1)
            fields.append(f"    {fname}: {kind}{comment}")
        lines.extend(fields or ["    pass"])
        self.classes.append("\n".join(lines))
        return name


def _inline_comment(schema: Any) -> str:
    doc = schema.get("description") if is_object(schema) else None
    if not isinstance(doc, str) or not doc.strip():
        return ""
    return "  # " + " ".join(doc.split())[:160]


def _literal_ok(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, bool))


def _union(options: list[str]) -> str:
    unique = list(dict.fromkeys(options))
    if "Any" in unique:
        return "Any"
    return " | ".join(unique)


def _docstring(text: str, indent: int) -> str:
    pad = " " * indent
    body = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    lines = body.splitlines()
    if len(lines) == 1:
        return f'"""{lines[0]}"""'
    return '"""' + "\n".join((pad + line) if line.strip() else "" for line in lines)[indent:] + f"\n{pad}" + '"""'


def _default(value: Any) -> str:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return repr(value)
    if isinstance(value, (list, dict)):
        text = repr(cast(Any, value))
        return text if len(text) <= 80 else "..."
    return "..."


HEADER = '''"""The tools your program can call. Every function is async: `await` it.

Run independent calls at once with `await asyncio.gather(f(...), g(...))`. The program's last expression
is its result (keep it small: it is what you read back), and `print` output is returned too. A call that
fails raises inside the program, where you can catch it: PermissionError (denied), ValueError (invalid
arguments), TimeoutError, LookupError (unknown function), RuntimeError (any other failure).
"""

import asyncio
from typing import Any, Literal, NotRequired, TypedDict
'''


def build_stubs(tools: Mapping[str, Tool[..., Any]]) -> ModuleStubs:
    """The stub module for `tools` (registry key -> tool), in registry order."""
    renderer = _Renderer()
    taken: dict[str, str] = {}
    functions: dict[str, FunctionSpec] = {}
    defs_text: list[str] = []
    for key, item in tools.items():
        name = python_name(key)
        if name in taken:
            raise AgentSetupError(
                f"code mode: the tool keys {taken[name]!r} and {key!r} would both be the Python function {name!r}; "
                "register one of them under another key"
            )
        taken[name] = key
        renderer.names.add(name)
        spec, text = _function(renderer, key, name, item)
        functions[name] = spec
        defs_text.append(text)
    parts = [HEADER, *renderer.classes, *defs_text]
    return ModuleStubs("\n\n".join(p.rstrip("\n") for p in parts) + "\n", functions)


def _function(renderer: _Renderer, key: str, name: str, item: Tool[..., Any]) -> tuple[FunctionSpec, str]:
    schema = item.input_schema
    defs: dict[str, Any] = {**schema.get("$defs", {}), **schema.get("definitions", {})}
    props: dict[str, Any] = schema.get("properties") or {}
    needed: set[str] = set(schema.get("required") or ())
    required = [p for p in props if p in needed]
    optional = [p for p in props if p not in required]
    params: list[str] = []
    mapping: dict[str, str] = {}
    pieces: list[str] = []
    docs: list[str] = []
    used: set[str] = set()
    for prop in (*required, *optional):
        pname = python_name(prop)
        while pname in used:
            pname += "_"
        used.add(pname)
        params.append(pname)
        mapping[pname] = prop
        sub = props[prop]
        kind = renderer.type_of(sub, defs, _class_name(name, prop))
        if prop in required:
            pieces.append(f"{pname}: {kind}")
        else:
            has_default = is_object(sub) and "default" in sub
            pieces.append(f"{pname}: {kind} = {_default(sub['default']) if has_default else '...'}")
        doc = sub.get("description") if is_object(sub) else None
        if isinstance(doc, str) and doc.strip():
            docs.append(f"{pname}: {' '.join(doc.split())}")
    out = item.output_schema
    returns = "Any"
    if out is not None:
        out_defs = {**out.get("$defs", {}), **out.get("definitions", {})}
        returns = renderer.type_of(out, out_defs, _class_name(name, "result"))
    description = (item.description or "").strip()
    body = [description] if description else []
    if docs:
        body.extend(["", "Args:", *(f"    {line}" for line in docs)])
    out_doc = out.get("description") if out is not None else None
    if isinstance(out_doc, str) and out_doc.strip() and not (is_object(out) and out.get("properties")):
        body.extend(["", "Returns:", f"    {' '.join(out_doc.split())}"])
    signature = ", ".join(pieces)
    lines = [f"async def {name}({signature}) -> {returns}:"]
    if body:
        lines.append(f"    {_docstring(chr(10).join(body), 4)}")
    lines.append("    ...")
    open_ended = schema.get("additionalProperties", True) is not False and not props
    spec = FunctionSpec(key=key, name=name, params=tuple(params), properties=mapping, open_ended=open_ended)
    return spec, "\n".join(lines)
