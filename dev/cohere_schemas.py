"""JSON Schemas of Cohere's v2 chat wire format, generated from the `cohere` SDK's own types (MIT).

    python -m dev.cohere_schemas          # rewrite the Cohere files of tests/data/specs

Cohere's OpenAPI document is marked ``license: proprietary``; the same types are published under MIT in
its Python SDK, so the test data is generated from the SDK (``pydantic.TypeAdapter(...).json_schema()``):

* ``specs/jsonschema/cohere.v2.*.schema.json``: one schema per payload part the codec tests check;
* ``specs/cohere-sdk.schemas.json``: the whole request body (`V2Client.chat`'s parameters), the response,
  the system and user messages and each stream event, under ``components/schemas``, with the stream
  events' ``type`` -> component table under ``x-stream-events``.

The SDK's types are written to read whatever the API may send later, which is looser than the wire format
the API accepts. Three rewrites, each recorded in the files' ``$comment``, make the schemas judge what is
sent as the API documents it:

1. Fern's forward-compatible enums, ``Union[Literal[...], Any]``, keep only the documented values.
2. ``Optional[X] = None`` means "may be left out" (the SDK omits unset fields; the API documents no null),
   so such a field is ``X``, not ``X | null``.
3. A field fixed to one value with that value as its default (``type: Literal["text"] = "text"``, the
   discriminants of the SDK's unions) is required: the SDK always sends it and the API reads it.
"""

from __future__ import annotations

import inspect
import json
from importlib.metadata import version
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / "tests" / "data" / "specs"
D2020 = "https://json-schema.org/draft/2020-12/schema"
REWRITES = (
    "rewrites: Fern's forward-compatible enums (Union[Literal, Any]) keep only their documented values; "
    "Optional[X] = None fields are X, left out rather than null; a field fixed to its default value (a "
    "union's discriminant such as type or role) is required"
)


def _is_any(node: Any) -> bool:
    return isinstance(node, dict) and not (set(node) - {"title", "description"})


def wire(node: Any) -> Any:
    """`node` with the three rewrites of the module docstring applied, recursively (a new object)."""
    if isinstance(node, list):
        return [wire(value) for value in node]
    if not isinstance(node, dict):
        return node
    node = {key: wire(value) for key, value in node.items()}
    if "anyOf" in node:
        arms = node["anyOf"]
        if any("enum" in arm or "const" in arm for arm in arms):
            arms = [arm for arm in arms if not _is_any(arm)]  # rewrite 1
        if node.get("default", ...) is None:
            arms = [arm for arm in arms if arm != {"type": "null"}]  # rewrite 2
            del node["default"]
        if len(arms) == 1:
            [arm] = arms
            del node["anyOf"]
            node = {**node, **arm}
        else:
            node["anyOf"] = arms
    properties = node.get("properties")
    if isinstance(properties, dict):
        fixed = [
            name
            for name, field in properties.items()
            if isinstance(field, dict) and "const" in field and field.get("default", ...) == field["const"]
        ]
        required = node.get("required", [])
        if missing := [name for name in fixed if name not in required]:
            node["required"] = [*required, *missing]  # rewrite 3
    return node


def _chat_request() -> Any:
    """A pydantic model of `V2Client.chat`'s body: its parameters (``model`` and ``messages`` required)."""
    import pydantic
    from cohere.v2.client import V2Client

    fields: dict[str, Any] = {}
    for parameter in inspect.signature(V2Client.chat).parameters.values():
        if parameter.name in ("self", "request_options"):
            continue  # the client's own options, not the body
        required = parameter.default is inspect.Parameter.empty
        fields[parameter.name] = (parameter.annotation, ... if required else None)
    return pydantic.create_model("V2ChatRequest", **fields)


def _note(what: str) -> str:
    return f"Generated from cohere=={version('cohere')} SDK types (MIT) via pydantic.TypeAdapter: {what}; {REWRITES}"


def part_schemas() -> dict[str, tuple[Any, str]]:
    """The payload parts the codec tests check: file name -> (SDK type, what it is)."""
    from cohere import types
    from cohere.v2.types import v2chat_stream_response as stream
    from cohere.v2.types.v2chat_request_tool_choice import V2ChatRequestToolChoice

    return {
        "cohere.v2.tool": (types.ToolV2, "ToolV2, an entry of tools"),
        "cohere.v2.tool_choice": (V2ChatRequestToolChoice, "V2ChatRequestToolChoice"),
        "cohere.v2.tool_call": (types.ToolCallV2, "ToolCallV2"),
        "cohere.v2.assistant_message": (types.AssistantChatMessageV2, "AssistantChatMessageV2"),
        "cohere.v2.tool_message": (types.ToolChatMessageV2, "ToolChatMessageV2"),
        "cohere.v2.response_format": (types.ResponseFormatV2, "ResponseFormatV2"),
        "cohere.v2.stream.tool_call_start": (stream.ToolCallStartV2ChatStreamResponse, "tool-call-start"),
        "cohere.v2.stream.tool_call_delta": (stream.ToolCallDeltaV2ChatStreamResponse, "tool-call-delta"),
    }


def document() -> dict[str, Any]:
    """``cohere-sdk.schemas.json``: the request, response, messages and stream events as components."""
    import pydantic
    from cohere import types
    from cohere.v2.types import V2ChatResponse
    from cohere.v2.types import v2chat_stream_response as stream

    roots: dict[str, Any] = {
        "V2ChatRequest": _chat_request(),
        "V2ChatResponse": V2ChatResponse,
        "SystemChatMessageV2": types.SystemChatMessageV2,
        "UserChatMessageV2": types.UserChatMessageV2,
    }
    events: dict[str, str] = {}
    for name, member in inspect.getmembers(stream, inspect.isclass):
        fields: dict[str, Any] = getattr(member, "model_fields", {})
        if name.endswith("V2ChatStreamResponse") and "type" in fields:
            roots[name] = member
            events[fields["type"].default] = f"#/components/schemas/{name}"
    keyed, definitions = pydantic.TypeAdapter.json_schemas(
        [(name, "validation", pydantic.TypeAdapter(kind)) for name, kind in roots.items()],
        ref_template="#/components/schemas/{model}",
    )
    schemas = dict(definitions.get("$defs", {}))
    for (name, _), schema in keyed.items():
        if schema.get("$ref") != f"#/components/schemas/{name}":
            schemas[name] = schema
    return {
        "$comment": _note("V2Client.chat's parameters, V2ChatResponse, the messages, V2ChatStreamResponse's members"),
        "components": {"schemas": wire(dict(sorted(schemas.items())))},
        "x-stream-events": dict(sorted(events.items())),
    }


def write() -> list[Path]:
    """Write every Cohere file of ``tests/data/specs``; return their paths."""
    import pydantic

    written = []
    for name, (kind, what) in part_schemas().items():
        schema = {"$schema": D2020, **wire(pydantic.TypeAdapter(kind).json_schema()), "$comment": _note(what)}
        path = SPECS / "jsonschema" / f"{name}.schema.json"
        path.write_text(json.dumps(schema, indent=1, ensure_ascii=False) + "\n")
        written.append(path)
    path = SPECS / "cohere-sdk.schemas.json"
    path.write_text(json.dumps(document(), indent=1, ensure_ascii=False) + "\n")
    return [*written, path]


if __name__ == "__main__":
    for path in write():
        print(f"{path.relative_to(ROOT)}: {path.stat().st_size:,} bytes")
