"""The renderings the rendering lab compares: the same BFCL functions, sent to a model in different forms.

Each rendering turns one question's tools into the ``tools`` list of an OpenAI Chat request (or, for
free decoding, into the system prompt); `benchmarks/rendering_lab.py` sends them to the same model and
scores the calls with agentkit's BFCL checker. Every agentkit variant is one change from agentkit's
default (``OpenAIChatProvider`` with ``strict=None``: strict where the schema allows it, aliases for
names with dots), so a paired test isolates that one choice:

* ``agentkit``: agentkit's default payload, nothing changed (the lab also runs ``agentkit+retry``:
  validation feedback and one retry);
* ``non-strict``: ``strict=False``, the canonical schema (optional parameters optional, defaults in it);
* ``plain-optional``: the strict payload, optional parameters left optional instead of required+nullable;
* ``enums-described``: enums removed from the schema and listed in the parameter's description;
* ``constraints-described``: non-strict, with ``default``, ``minimum``, ``maximum``, ``format`` and item
  counts moved into descriptions (compared with ``non-strict``);
* ``docstring``: the description followed by a Google-style ``Args:`` section, as docstring tools render;
* ``dotted-names``: BFCL's names (``math.factorial``) sent as they are, not aliased (``math_factorial``);
* ``free-decoding``: no ``tools`` field: the prompt the chat template would build, the calls parsed from
  the text, so the server's tool-call grammar never applies;
* ``pydantic-ai``: pydantic-ai's OpenAI Chat rendering of the same JSON Schema (``ToolDefinition`` ->
  ``_map_tool_definition``);
* ``openai-agents``: ``FunctionTool(strict_json_schema=True)`` -> ``Converter.tool_to_openai`` (non-strict
  where its strict rewrite refuses the schema);
* ``bfcl``: BFCL's own OpenAI Chat handler (``convert_to_tool`` with its Python hint), from
  ``python -m dev.bfcl render``.

Peers' calls are judged as their libraries would read them: a ``null`` stays a ``null`` (agentkit's
reading drops a ``null`` for a parameter that cannot be null, the strict round trip).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from agentkit.evals import EvalCase
from agentkit.providers.openai import OpenAIChatProvider

Tools = list[dict[str, Any]]

AGENTKIT = OpenAIChatProvider()


def agentkit_tools(case: EvalCase, *, strict: bool | None = None) -> Tools:
    payload = AGENTKIT.format_tools(case.registry(), aliases=True, strict=strict)
    return copy.deepcopy(payload["tools"])


def _params(tool: dict[str, Any]) -> dict[str, Any]:
    parameters: dict[str, Any] = tool["function"].setdefault("parameters", {"type": "object", "properties": {}})
    return parameters


def _canonical_required(case: EvalCase, wire: str) -> set[str]:
    names = AGENTKIT.names(case.registry(), aliases=True)
    key = names.key_for(wire)
    return set(case.registry()[key].input_schema.get("required", ()))


def _drop_null(prop: dict[str, Any]) -> None:
    kind = prop.get("type")
    if isinstance(kind, list):
        rest = [k for k in kind if k != "null"]
        prop["type"] = rest[0] if len(rest) == 1 else rest
    if isinstance(prop.get("enum"), list):
        prop["enum"] = [v for v in prop["enum"] if v is not None]
    any_of = prop.get("anyOf")
    if isinstance(any_of, list):
        rest = [m for m in any_of if m != {"type": "null"}]
        if len(rest) == 1:
            prop.pop("anyOf")
            prop.update(rest[0])
        else:
            prop["anyOf"] = rest


def plain_optional(case: EvalCase) -> Tools:
    tools = agentkit_tools(case)
    for tool in tools:
        parameters = _params(tool)
        required = _canonical_required(case, tool["function"]["name"])
        for name, prop in parameters.get("properties", {}).items():
            if name not in required:
                _drop_null(prop)
        if "required" in parameters:
            parameters["required"] = [r for r in parameters["required"] if r in required]
    return tools


def _append(prop: dict[str, Any], text: str) -> None:
    description = prop.get("description")
    prop["description"] = f"{description} {text}" if description else text


def _walk_props(parameters: dict[str, Any], visit: Callable[[dict[str, Any]], None]) -> None:
    for prop in parameters.get("properties", {}).values():
        if isinstance(prop, dict):
            visit(prop)
            if isinstance(prop.get("properties"), dict):
                _walk_props(prop, visit)
            items = prop.get("items")
            if isinstance(items, dict) and isinstance(items.get("properties"), dict):
                _walk_props(items, visit)


def enums_described(case: EvalCase) -> Tools:
    tools = agentkit_tools(case)

    def visit(prop: dict[str, Any]) -> None:
        enum = prop.pop("enum", None)
        if isinstance(enum, list):
            values = [v for v in enum if v is not None]
            _append(prop, "One of: " + ", ".join(json.dumps(v) for v in values) + ".")

    for tool in tools:
        _walk_props(_params(tool), visit)
    return tools


_CONSTRAINTS = {
    "default": "Default: {}.",
    "minimum": "Minimum: {}.",
    "maximum": "Maximum: {}.",
    "format": "Format: {}.",
    "minItems": "At least {} items.",
    "maxItems": "At most {} items.",
}


def constraints_described(case: EvalCase) -> Tools:
    tools = agentkit_tools(case, strict=False)

    def visit(prop: dict[str, Any]) -> None:
        for keyword, text in _CONSTRAINTS.items():
            if keyword in prop:
                value = prop.pop(keyword)
                _append(prop, text.format(json.dumps(value) if keyword != "format" else value))

    for tool in tools:
        _walk_props(_params(tool), visit)
    return tools


def docstring(case: EvalCase) -> Tools:
    tools = agentkit_tools(case)
    for tool in tools:
        function = tool["function"]
        lines = [
            f"    {name}: {prop.get('description', '')}".rstrip()
            for name, prop in _params(tool).get("properties", {}).items()
        ]
        if lines:
            function["description"] = f"{function.get('description', '')}\n\nArgs:\n" + "\n".join(lines)
    return tools


def dotted_names(case: EvalCase) -> Tools:
    tools = agentkit_tools(case)
    names = AGENTKIT.names(case.registry(), aliases=True)
    for tool in tools:
        tool["function"]["name"] = names.key_for(tool["function"]["name"])
    return tools


def pydantic_ai(case: EvalCase) -> Tools:
    from pydantic_ai.models import ModelRequestParameters
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_ai.tools import ToolDefinition

    model = _pai_model(OpenAIChatModel, OpenAIProvider)
    names = AGENTKIT.names(case.registry(), aliases=True)
    registry = case.registry()
    definitions = [
        ToolDefinition(name=names.name_for(key), description=tool.description, parameters_json_schema=tool.input_schema)
        for key, tool in registry.items()
    ]
    params = model.customize_request_parameters(ModelRequestParameters(function_tools=definitions))
    return [model._map_tool_definition(d, {}) for d in params.function_tools]


_PAI: list[Any] = []


def _pai_model(model_class: Any, provider_class: Any) -> Any:
    if not _PAI:
        _PAI.append(model_class("gpt-4.1", provider=provider_class(api_key="lab")))
    return _PAI[0]


def openai_agents(case: EvalCase) -> Tools:
    from agents import FunctionTool
    from agents.models.chatcmpl_converter import Converter

    async def invoke(ctx: Any, args: str) -> str:
        return ""

    names = AGENTKIT.names(case.registry(), aliases=True)
    out: Tools = []
    for key, tool in case.registry().items():
        common = {"name": names.name_for(key), "description": tool.description, "on_invoke_tool": invoke}
        try:
            made = FunctionTool(params_json_schema=copy.deepcopy(tool.input_schema), strict_json_schema=True, **common)
        except Exception:  # its strict rewrite refuses some schemas: then as its users would, non-strict
            made = FunctionTool(params_json_schema=copy.deepcopy(tool.input_schema), strict_json_schema=False, **common)
        out.append(dict(Converter.tool_to_openai(made)))
    return out


class BFCLRendering:
    """BFCL's OpenAI-handler tools, read from the file ``python -m dev.bfcl render`` wrote."""

    def __init__(self, path: str) -> None:
        with open(path) as handle:
            self.by_id: Mapping[str, Tools] = json.load(handle)

    def __call__(self, case: EvalCase) -> Tools:
        return copy.deepcopy(self.by_id[case.id])


PAYLOAD_RENDERINGS: dict[str, Callable[[EvalCase], Tools]] = {
    "non-strict": lambda case: agentkit_tools(case, strict=False),
    "plain-optional": plain_optional,
    "enums-described": enums_described,
    "constraints-described": constraints_described,
    "docstring": docstring,
    "dotted-names": dotted_names,
    "pydantic-ai": pydantic_ai,
    "openai-agents": openai_agents,
}
"""Renderings that are a ``tools`` list (``agentkit``, ``free-decoding`` and ``bfcl`` are made elsewhere)."""

PEERS = frozenset({"pydantic-ai", "openai-agents", "bfcl"})
"""Renderings judged as their library reads a call (no null restoration)."""

# the system prompt of dev/qwen25-bare-tools.jinja, for free decoding (the same prompt, no grammar)
DEFAULT_SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."
TOOLS_HEADER = (
    "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
TOOLS_FOOTER = (
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments as a bare "
    'JSON object and nothing else:\n{"name": <function-name>, "arguments": <args-json-object>}'
)


def template_system_prompt(system: str | None, tools: Tools) -> str:
    """The system message the bare-tools chat template renders for `tools` (for free decoding)."""
    body = "".join("\n" + json.dumps(tool, ensure_ascii=False) for tool in tools)
    return (system if system is not None else DEFAULT_SYSTEM) + TOOLS_HEADER + body + TOOLS_FOOTER


_CALL = re.compile(r'\{\s*"name"\s*:\s*"([^"]+)"\s*,\s*"arguments"\s*:\s*')


def _balanced(text: str, start: int) -> str | None:
    """The text of the brace-balanced value at `start` (strings skipped), or None when it never closes."""
    depth, in_string, escaped = 0, False, False
    for position in range(start, len(text)):
        char = text[position]
        if in_string:
            escaped = not escaped and char == "\\"
            if char == '"' and not escaped:
                in_string = False
            continue
        if char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return text[start : position + 1]
    return None


def parse_bare_calls(text: str) -> list[tuple[str, Any]]:
    """``{"name": ..., "arguments": ...}`` calls in the model's text, in order (the template's call form).

    A call whose arguments are not valid JSON is kept with its arguments' text as it came (what was
    wrong), so it is judged ``malformed_arguments`` and argument repair can be measured on it.
    """
    calls: list[tuple[str, Any]] = []
    for match in _CALL.finditer(text):
        arguments = _balanced(text, match.end())
        if arguments is None:
            continue  # cut off by the token limit
        try:
            value = json.loads(arguments)
        except ValueError:
            calls.append((match.group(1), arguments))
            continue
        calls.append((match.group(1), value if isinstance(value, dict) else arguments))
    return calls
