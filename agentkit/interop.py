"""Import tool definitions written for other systems as agentkit `Tool`s.

`tool_from_definition` accepts the shapes tools are usually found in:

* OpenAI / Mistral / Cohere / Ollama: ``{"type": "function", "function": {"name", "description", "parameters"}}``
  and the flat ``{"name", "description", "parameters"}`` (OpenAI Responses; BFCL function documents);
* Anthropic: ``{"name", "description", "input_schema"}``;
* MCP: ``{"name", "title"?, "description", "inputSchema", "outputSchema"?}``;
* Gemini: ``{"name", "description", "parametersJsonSchema" | "parameters"}``;
* Bedrock Converse: ``{"toolSpec": {"name", "description", "inputSchema": {"json": ...}}}``.

The schema is normalised into draft 2020-12 JSON Schema with ``type: object`` at its root
(`normalize_schema`). Definitions found in the wild are often not valid JSON Schema: BFCL's data set
writes ``"dict"``, ``"float"``, ``"tuple"`` and ``"any"`` as types, Java and JavaScript type names
(``"String"``, ``"HashMap"``, ``"long"``), ``optional: true`` instead of ``required``, defaults of the
wrong type (``"none"`` for an integer, ``"false"`` as a string for a boolean) and enums that contradict
their type. Each such repair is recorded as a `SchemaFix`, and `tool_from_definition` emits one
`AgentkitWarning` per kind of repair, naming the tool. Nothing that carries meaning is dropped silently:
a default that cannot be kept is moved into the description.

The name is kept exactly, dots included (``math.factorial``): it becomes the tool's id and, in
`registry_from_definitions`, its registry key. Vendors whose name rules reject it need
``aliases=True`` (see ``agentkit.providers``).
"""

from __future__ import annotations as _annotations

import copy
import json
import math
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ._json_schema import JsonSchema
from ._jsonish import is_array, is_mapping, is_object
from .exceptions import AgentkitWarning, ToolDefinitionError
from .registry import Registry
from .tools import Tool

__all__ = [
    "NormalizedSchema",
    "SchemaFix",
    "normalize_schema",
    "registry_from_definitions",
    "tool_from_definition",
]


@dataclass(frozen=True)
class SchemaFix:
    """One repair `normalize_schema` made to a foreign schema."""

    path: str
    """JSON pointer of the subschema in the schema as given (``""`` is the root)."""
    kind: str
    """What was repaired, the same text for every repair of this kind, e.g. ``type "dict" -> "object"``."""
    detail: str = ""
    """The value concerned, when it helps (e.g. the default that was moved)."""
    quiet: bool = False
    """A repair that changes no meaning (e.g. a draft-07 ``$schema`` removed): recorded, never warned."""

    def __str__(self) -> str:
        return f"{self.path or '/'}: {self.kind}" + (f" ({self.detail})" if self.detail else "")


@dataclass(frozen=True)
class NormalizedSchema:
    """A schema made valid draft 2020-12, and the repairs that took."""

    schema: JsonSchema
    fixes: tuple[SchemaFix, ...] = ()

    def kinds(self) -> dict[str, list[SchemaFix]]:
        """The repairs grouped by kind, in the order each kind first occurred."""
        grouped: dict[str, list[SchemaFix]] = {}
        for fix in self.fixes:
            grouped.setdefault(fix.kind, []).append(fix)
        return grouped


# ---- types -------------------------------------------------------------------------------------------

_JSON_TYPES = ("string", "number", "integer", "boolean", "object", "array", "null")

# Lower-cased foreign type names -> JSON Schema type (None: "any value", the type is dropped).
_TYPE_ALIASES: dict[str, str | None] = {
    **{t: t for t in _JSON_TYPES},
    # Python (BFCL)
    "dict": "object",
    "float": "number",
    "tuple": "array",
    "list": "array",
    "set": "array",
    "int": "integer",
    "bool": "boolean",
    "str": "string",
    "none": "null",
    "nonetype": "null",
    "any": None,
    "": None,
    # Java / JavaScript / C# (BFCL simple_java, simple_javascript)
    "double": "number",
    "decimal": "number",
    "long": "integer",
    "short": "integer",
    "byte": "integer",
    "bigint": "integer",
    "char": "string",
    "character": "string",
    "hashmap": "object",
    "hashtable": "object",
    "map": "object",
    "arraylist": "array",
    "queue": "array",
    "stack": "array",
    "mixed": None,
    "*": None,
}

_ARRAY_ONLY = ("minItems", "maxItems", "uniqueItems")
_PLACEHOLDER_DEFAULTS = frozenset({"none", "null", "nil", "undefined", ""})
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_SINGLES = ("not", "if", "then", "else", "contains", "propertyNames", "unevaluatedProperties")
_SUBSCHEMA_MAPS = ("$defs", "definitions", "patternProperties", "dependentSchemas")
_DRAFT_2020 = "https://json-schema.org/draft/2020-12/schema"


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    return "object"


def _fits(value: Any, types: list[str]) -> bool:
    kind = _json_type(value)
    return kind in types or (kind == "integer" and "number" in types)


def _coerce(value: Any, types: list[str]) -> tuple[bool, Any]:
    """`value` read as one of `types` (``"5"`` as 5, ``"false"`` as False); (False, None) if it cannot be."""
    if not isinstance(value, str):
        return False, None
    text = value.strip()
    for kind in types:
        if kind == "boolean" and text.lower() in ("true", "false"):
            return True, text.lower() == "true"
        if kind == "integer":
            try:
                return True, int(text)
            except ValueError:
                pass
        if kind == "number":
            try:
                number = float(text)
            except ValueError:
                continue
            if math.isfinite(number):
                return True, int(number) if number.is_integer() and "." not in text else number
    return False, None


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


# ---- the normaliser ------------------------------------------------------------------------------------


class _Normalizer:
    def __init__(self) -> None:
        self.fixes: list[SchemaFix] = []

    def fix(self, path: str, kind: str, detail: Any = None, *, quiet: bool = False) -> None:
        text = "" if detail is None else (detail if isinstance(detail, str) else json.dumps(detail, ensure_ascii=False))
        self.fixes.append(SchemaFix(path, kind, text[:200], quiet))

    # Each node returns (schema, requiredness): True for a draft-3 ``required: true``, False for
    # BFCL's ``optional: true``, None when the node says nothing; the parent object applies it.
    def node(self, raw: Any, path: str) -> tuple[Any, bool | None]:
        if isinstance(raw, bool):
            return raw, None
        if isinstance(raw, str):
            self.fix(path, "a type name given where a schema belongs", raw)
            raw = {"type": raw}
        elif not is_mapping(raw):
            self.fix(path, "a non-schema value replaced by {} (any value)", raw)
            return {}, None
        node: dict[str, Any] = dict(raw)
        flag = self._requiredness(node, path)
        self._type(node, path)
        self._description(node, path)
        self._draft07(node, path)
        self._children(node, path)
        self._object(node, path)
        self._infer_type(node, path)
        self._enum(node, path)
        self._default(node, path)
        return node, flag

    # -- keyword groups --

    def _requiredness(self, node: dict[str, Any], path: str) -> bool | None:
        flag: bool | None = None
        if "optional" in node and not isinstance(node["optional"], list):
            value = node.pop("optional")
            truthy = value is True or (isinstance(value, str) and value.strip().lower() in ("true", "yes", "1"))
            flag = False if truthy else None
            self.fix(path, 'non-standard "optional" replaced by the parent\'s "required"', value)
        if isinstance(node.get("required"), bool):
            value = node.pop("required")
            flag = value if flag is None else flag
            self.fix(path, 'draft-3 "required: true/false" moved to the parent\'s "required"', value)
        return flag

    def _type(self, node: dict[str, Any], path: str) -> None:
        nullable = node.pop("nullable", None)  # OpenAPI 3.0 (Gemini's `parameters` form)
        if nullable is not None:
            self.fix(path, 'OpenAPI "nullable" -> a "null" type', nullable)
        if "type" not in node:
            return
        if nullable is True:
            node["type"] = [*(node["type"] if is_array(node["type"]) else [node["type"]]), "null"]
        raw = node["type"]
        names = raw if is_array(raw) else [raw]
        mapped: list[str] = []
        anything = False
        for name in names:
            if not isinstance(name, str):
                self.fix(path, "a non-string type dropped", name)
                continue
            key = name.strip().lower()
            if key in _TYPE_ALIASES:
                target = _TYPE_ALIASES[key]
                if target != name:
                    self.fix(path, f"type {json.dumps(name)} -> {json.dumps(target) if target else 'any value'}")
            else:
                target = None
                self.fix(path, "an unknown type name dropped (kept in the description)", name)
                self._append_description(node, f"Type: {name}.")
            if target is None:
                anything = True
            elif target not in mapped:
                mapped.append(target)
        if anything or not mapped:
            node.pop("type")
        else:
            node["type"] = mapped[0] if len(mapped) == 1 and not is_array(raw) else mapped

    def _description(self, node: dict[str, Any], path: str) -> None:
        for key in ("description", "title"):
            if key in node and not isinstance(node[key], str):
                value = node.pop(key)
                if value is not None:
                    node[key] = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
                self.fix(path, f"a non-string {key} converted to text", value)

    def _draft07(self, node: dict[str, Any], path: str) -> None:
        """Forms older drafts allow and 2020-12 reads differently."""
        if isinstance(node.get("items"), list):
            node["prefixItems"] = node.pop("items")
            if "additionalItems" in node:
                node["items"] = node.pop("additionalItems")
            self.fix(path, 'draft-07 tuple "items": [...] -> "prefixItems"')
        elif "additionalItems" in node:
            node.pop("additionalItems")
            self.fix(path, '"additionalItems" without tuple items dropped (it had no effect)', quiet=True)
        dependencies = node.pop("dependencies", None)
        if is_mapping(dependencies):
            for name, value in dependencies.items():
                target = "dependentRequired" if is_array(value) else "dependentSchemas"
                node.setdefault(target, {})[name] = value
            self.fix(path, 'draft-07 "dependencies" -> "dependentRequired"/"dependentSchemas"')
        for bound in ("Minimum", "Maximum"):
            exclusive = node.get(f"exclusive{bound}")
            if isinstance(exclusive, bool):
                node.pop(f"exclusive{bound}")
                if exclusive and f"{bound.lower()}" in node:
                    node[f"exclusive{bound}"] = node.pop(bound.lower())
                self.fix(path, f'draft-04 boolean "exclusive{bound}" -> a number')

    def _children(self, node: dict[str, Any], path: str) -> None:
        items = node.get("items")
        if items is not None:
            child, _ = self.node(items, f"{path}/items")
            node["items"] = child
            self._lift_array_keywords(node, child, path)
        if "additionalProperties" in node:
            node["additionalProperties"], _ = self.node(node["additionalProperties"], f"{path}/additionalProperties")
        for key in _SUBSCHEMA_LISTS:
            if key in node:
                if isinstance(node[key], list) and node[key]:
                    node[key] = [self.node(s, f"{path}/{key}/{i}")[0] for i, s in enumerate(node[key])]
                else:
                    self.fix(path, f'an empty or malformed "{key}" dropped', node.pop(key))
        for key in _SUBSCHEMA_SINGLES:
            if key in node:
                node[key], _ = self.node(node[key], f"{path}/{key}")
        for key in _SUBSCHEMA_MAPS:
            if key in node:
                if isinstance(node[key], Mapping):
                    node[key] = {n: self.node(s, f"{path}/{key}/{_escape(n)}")[0] for n, s in node[key].items()}
                else:
                    self.fix(path, f'a malformed "{key}" dropped', node.pop(key))

    def _lift_array_keywords(self, node: dict[str, Any], child: Any, path: str) -> None:
        """``minItems`` & co. written on the items of an array (where they mean nothing) belong to the array."""
        if not is_object(child) or "array" in _types_of(child) or "prefixItems" in child:
            return
        for key in _ARRAY_ONLY:
            if key in child:
                value = child.pop(key)
                if key not in node:
                    node[key] = value
                self.fix(f"{path}/items", "array keywords on non-array items moved to the array", {key: value})

    def _object(self, node: dict[str, Any], path: str) -> None:
        optional_names = node.pop("optional", None)  # BFCL's root-level list of optional names
        if optional_names is not None:
            self.fix(path, 'non-standard "optional" list replaced by "required"', optional_names)
        properties = node.get("properties")
        if properties is not None and not is_mapping(properties):
            self.fix(path, 'a malformed "properties" dropped', node.pop("properties"))
            properties = None
        flags: dict[str, bool] = {}
        if properties is not None:
            out = {}
            for name, sub in properties.items():
                out[name], flag = self.node(sub, f"{path}/properties/{_escape(name)}")
                if flag is not None:
                    flags[name] = flag
            node["properties"] = out
        if is_array(optional_names):
            flags.update({n: False for n in optional_names if isinstance(n, str)})
        if "required" not in node and not any(flags.values()):
            return
        self._required(node, path, flags)

    def _required(self, node: dict[str, Any], path: str, flags: dict[str, bool]) -> None:
        raw = node.pop("required", [])
        if isinstance(raw, str):
            raw = [raw]
            self.fix(path, '"required" given as a string', raw[0])
        elif not is_array(raw):
            self.fix(path, 'a malformed "required" dropped', raw)
            raw = []
        required: list[str] = []
        for name in raw:
            if isinstance(name, str) and name not in required:
                required.append(name)
        if len(required) != len(raw):
            self.fix(path, 'duplicate or non-string names removed from "required"')
        for name, flag in flags.items():
            if flag and name not in required:
                required.append(name)
            elif not flag and name in required:
                required.remove(name)
                self.fix(path, 'a name both required and "optional": kept optional', name)
        properties = node.get("properties")
        declares = is_object(properties) or "object" in _types_of(node)  # not a bare {"required": [...]}
        missing = [n for n in required if declares and (not is_object(properties) or n not in properties)]
        if missing:
            node["properties"] = {**(properties or {}), **{n: {} for n in missing}}
            self.fix(path, '"required" names undeclared properties: declared as any value', missing)
        if required:
            node["required"] = required

    def _infer_type(self, node: dict[str, Any], path: str) -> None:
        if "type" in node or any(k in node for k in ("$ref", "anyOf", "oneOf", "allOf", "const")):
            return
        if "properties" in node:
            node["type"] = "object"
            self.fix(path, 'missing type inferred from "properties"')
        elif "items" in node or "prefixItems" in node:
            node["type"] = "array"
            self.fix(path, 'missing type inferred from "items"')
        elif isinstance(node.get("enum"), list) and node["enum"]:
            kinds = {_json_type(v) for v in node["enum"]}
            if len(kinds) == 1:
                node["type"] = kinds.pop()
                self.fix(path, 'missing type inferred from "enum"')

    def _enum(self, node: dict[str, Any], path: str) -> None:
        if "enum" not in node:
            return
        values = node["enum"]
        if not is_array(values):
            values = node["enum"] = [values]
            self.fix(path, 'a single "enum" value wrapped in a list')
        if not values:
            node.pop("enum")
            self.fix(path, 'an empty "enum" dropped (no value could match)')
            return
        unique: list[Any] = []
        seen: set[str] = set()
        for value in values:
            key = json.dumps(value, sort_keys=True)
            if key not in seen:
                seen.add(key)
                unique.append(value)
        if len(unique) != len(values):
            node["enum"] = unique
            self.fix(path, 'duplicate "enum" values removed')
        self._enum_fits_type(node, path)

    def _enum_fits_type(self, node: dict[str, Any], path: str) -> None:
        types = _types_of(node)
        values = node["enum"]
        if not types or all(_fits(v, types) for v in values):
            return
        if types == ["array"] and not any(is_array(v) for v in values):
            items = node.get("items")
            if not is_object(items) or "enum" not in items:
                node["items"] = {**(items if is_object(items) else {}), "enum": node.pop("enum")}
                self._enum(node["items"], f"{path}/items")
                self.fix(path, 'an array\'s "enum" of single values moved to its items')
                return
        coerced = [v if _fits(v, types) else _coerce(v, types) for v in values]
        if all(_fits(v, types) or c[0] for v, c in zip(values, coerced, strict=True)):
            node["enum"] = [v if _fits(v, types) else c[1] for v, c in zip(values, coerced, strict=True)]
            self.fix(path, '"enum" values converted to the declared type', values)
            return
        kinds = sorted({_json_type(v) for v in values}, key=_JSON_TYPES.index)
        node["type"] = kinds[0] if len(kinds) == 1 else kinds
        self.fix(path, 'type contradicted by the "enum": replaced by the enum values\' type', f"{types} -> {kinds}")

    def _default(self, node: dict[str, Any], path: str) -> None:
        if "default" not in node:
            return
        default = node["default"]
        if path == "" and not is_mapping(default):
            node.pop("default")
            self.fix(path, "a non-object default at the root dropped", default)
            return
        rest = {k: v for k, v in node.items() if k != "default"}
        if _valid(rest, default):
            return
        if default is None or (isinstance(default, str) and default.strip().lower() in _PLACEHOLDER_DEFAULTS):
            node.pop("default")
            self.fix(path, 'a placeholder default ("None", null, "") that the schema does not accept dropped', default)
            return
        ok, value = _coerce(default, _types_of(node))
        if ok and _valid(rest, value):
            node["default"] = value
            self.fix(path, "a default converted to the declared type", default)
            return
        node.pop("default")
        self._append_description(node, f"Default: {_show(default)}.")
        self.fix(path, "a default the schema does not accept moved into the description", default)

    @staticmethod
    def _append_description(node: dict[str, Any], text: str) -> None:
        description = node.get("description")
        node["description"] = f"{description.rstrip()} {text}" if isinstance(description, str) and description else text


def _show(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _types_of(node: Mapping[str, Any]) -> list[str]:
    kind = node.get("type")
    if isinstance(kind, str):
        return [kind]
    return [k for k in kind if isinstance(k, str)] if is_array(kind) else []


def _has_ref(node: Any) -> bool:
    if is_object(node):
        return "$ref" in node or "$dynamicRef" in node or any(_has_ref(v) for v in node.values())
    if is_array(node):
        return any(_has_ref(v) for v in node)
    return False


def _valid(schema: JsonSchema, value: Any) -> bool:
    """Whether `value` fits `schema` (a subschema without references; with them, assume it does)."""
    if _has_ref(schema):
        return True
    # the timeout signal stays private to agentkit (every public error class lives in exceptions.py)
    from ._raw_schema import _PatternTimeout, linear_validator_class, pattern_budget  # pyright: ignore[reportPrivateUsage]

    try:
        # linear-time patterns, and a short budget for the others: an imported schema cannot stall the import
        with pattern_budget(0.1):
            return bool(linear_validator_class()(schema).is_valid(value))
    except _PatternTimeout:
        return False  # not shown to fit: handled like a default that does not
    except Exception:  # noqa: BLE001 - a subschema jsonschema cannot evaluate: treat the default as fine
        return True


def normalize_schema(schema: Any, *, root_object: bool = True, check: bool = True) -> NormalizedSchema:
    """`schema` repaired into valid draft 2020-12 JSON Schema, with every repair recorded.

    Args:
        schema: a JSON Schema as found in the wild (BFCL's ``"dict"``/``"float"`` types, draft-07
            forms, wrong-typed defaults, ...). It is not modified.
        root_object: require ``type: object`` at the root (tool inputs): a root without a type gets
            it; a root of another type raises `ValueError`.
        check: confirm the result with jsonschema's ``check_schema`` (`Tool` does it anyway, so
            `tool_from_definition` skips it here).
    """
    normalizer = _Normalizer()
    if schema is None:
        schema = {}
    source = copy.deepcopy(schema)
    if is_mapping(source) and "$schema" in source and source["$schema"] != _DRAFT_2020:
        source = {k: v for k, v in source.items() if k != "$schema"}
        normalizer.fix("", "$schema of another draft removed (read as draft 2020-12)", schema["$schema"], quiet=True)
    result, _ = normalizer.node(source, "")
    if root_object:
        result = _object_root(result, normalizer)
    if not check:
        return NormalizedSchema(result, tuple(normalizer.fixes))
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(result)
    except SchemaError as exc:  # not expected: every repair above keeps the schema valid
        path = "/" + "/".join(str(p) for p in exc.path)
        raise ValueError(f"the schema is still not valid draft 2020-12 after repairs: {path}: {exc.message}") from None
    return NormalizedSchema(result, tuple(normalizer.fixes))


def _object_root(result: Any, normalizer: _Normalizer) -> JsonSchema:
    if result is True or result == {}:
        normalizer.fix("", "an empty root schema given type object", quiet=True)
        return {"type": "object", "properties": {}}
    if not is_object(result):
        raise ValueError(f"a tool's input schema must be an object schema, got {result!r}")
    types = _types_of(result)
    if not types:
        normalizer.fix("", "root without a type given type object", quiet="properties" in result)
        return {"type": "object", **result}
    if types != ["object"]:
        if "object" not in types:
            raise ValueError(f"a tool's input schema must have type object at its root, got {result['type']!r}")
        normalizer.fix("", "root type narrowed to object", result["type"])
    return {**result, "type": "object"}


# ---- definitions -----------------------------------------------------------------------------------------


def _unwrap(definition: Mapping[str, Any]) -> tuple[Mapping[str, Any], Any, Any]:
    """(the inner definition, its input schema, its output schema) for every supported shape."""
    if "toolSpec" in definition:  # Bedrock
        definition = definition["toolSpec"]
        input_schema = definition.get("inputSchema", {})
        input_schema = input_schema.get("json", input_schema) if is_mapping(input_schema) else input_schema
        return definition, input_schema, None
    if isinstance(definition.get("function"), Mapping):  # OpenAI Chat, Mistral, Cohere, Ollama
        definition = definition["function"]
    for key in ("inputSchema", "input_schema", "parametersJsonSchema", "parameters"):
        if key in definition:
            input_schema = definition[key]
            break
    else:
        input_schema = None
    output_schema = None
    for key in ("outputSchema", "output_schema", "responseJsonSchema", "response"):
        if definition.get(key) is not None:
            output_schema = definition[key]
            break
    return definition, input_schema, output_schema


def tool_from_definition(
    definition: Mapping[str, Any],
    *,
    fn: Callable[[dict[str, Any]], Any] | None = None,
    id: str | None = None,  # noqa: A002 - the name `Tool` uses
    strict: bool | None = None,
    timeout: float | None = None,
    warn: bool = True,
) -> Tool[[dict[str, Any]], Any]:
    """A `Tool` from a foreign tool definition (OpenAI, Anthropic, Gemini, Bedrock, MCP, BFCL).

    Args:
        definition: the definition as a vendor or framework writes it (see the module docstring).
        fn: called with the validated arguments as one dict; without it the tool can be described to
            models (payloads, compatibility reports) but calling it fails with a `ToolError`.
        id: the tool's id; default: the definition's ``name``, kept exactly (dots included).
        strict: as in `@tool`; default: the definition's own ``strict`` when it has one.
        timeout: as in `@tool`.
        warn: emit one `AgentkitWarning` per kind of repair made to the schemas, naming the tool.

    Raises:
        ToolDefinitionError: no name, or a schema that cannot describe a tool's arguments.
    """
    if not is_mapping(definition):
        raise ToolDefinitionError(repr(definition), ["a tool definition must be a mapping (a JSON object)"])
    inner, input_schema, output_schema = _unwrap(definition)
    name = id if id is not None else inner.get("name")
    if not isinstance(name, str) or not name:
        raise ToolDefinitionError(repr(dict(definition))[:80], ['the definition has no "name"; pass id=...'])
    try:
        normalized_input = normalize_schema(input_schema, check=False)
        normalized_output = (
            normalize_schema(output_schema, root_object=False, check=False) if output_schema is not None else None
        )
    except ValueError as exc:
        raise ToolDefinitionError(name, [str(exc)]) from None
    if warn:
        _warn(name, "input schema", normalized_input)
        if normalized_output is not None:
            _warn(name, "output schema", normalized_output)
    description = inner.get("description")
    if strict is None and isinstance(inner.get("strict"), bool):
        strict = inner["strict"]
    return Tool.from_json_schema(
        name,
        normalized_input.schema,
        description=description if isinstance(description, str) else "",
        output_schema=normalized_output.schema if normalized_output is not None else None,
        fn=fn,
        strict=strict,
        timeout=timeout,
    )


def _warn(name: str, role: str, normalized: NormalizedSchema) -> None:
    for kind, fixes in normalized.kinds().items():
        loud = [f for f in fixes if not f.quiet]
        if not loud:
            continue
        where = ", ".join(f.path or "/" for f in loud[:3]) + (f" and {len(loud) - 3} more" if len(loud) > 3 else "")
        warnings.warn(AgentkitWarning(f"tool {name!r}: {role}: {kind} (at {where})"), stacklevel=3)


def registry_from_definitions(
    definitions: Iterable[Mapping[str, Any]],
    *,
    fns: Mapping[str, Callable[[dict[str, Any]], Any]] | None = None,
    warn: bool = True,
) -> Registry:
    """A `Registry` of `tool_from_definition` tools, keyed by each definition's name.

    Args:
        definitions: the definitions (e.g. an OpenAI ``tools`` list or an MCP ``tools/list`` result).
        fns: implementations by name; a tool without one can be described but not called.
        warn: as in `tool_from_definition`.

    Raises:
        RegistryError: two definitions share a name.
    """
    registry = Registry()
    for definition in definitions:
        name = _name_of(definition)
        item = tool_from_definition(definition, fn=(fns or {}).get(name) if name is not None else None, warn=warn)
        registry.add(item.id, item)
    return registry


def _name_of(definition: Mapping[str, Any]) -> str | None:
    inner, _, _ = _unwrap(definition)
    name = inner.get("name")
    return name if isinstance(name, str) else None
