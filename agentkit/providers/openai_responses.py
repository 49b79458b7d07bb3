"""OpenAI Responses (``/v1/responses``) function calling.

What maps to what (``../shared/vendors/WIRE-FORMATS.md`` §2):

* a registry entry -> the flat ``{"type": "function", name, description?, parameters, strict,
  output_schema?}``, parameters in the OpenAI dialect (`agentkit.dialects.openai`). ``strict`` is
  always sent: left out, the server tries strict on its own and may make optional fields mandatory.
  The tool's output schema goes to ``output_schema`` when the model receives the result as its JSON
  text (no ``to_model_output``; not for ``-> None``);
* ``tool_choice`` ``"auto" | "none" | "required"`` as they are, a key -> ``{"type": "function", "name"}``;
  ``active_tools`` -> ``{"type": "allowed_tools", "mode", "tools"}`` (the ``tools`` list stays
  byte-stable for prompt caching); ``parallel_tool_calls`` as is;
* ``output[]`` items of type ``function_call`` -> `ToolCall` with ``id`` = ``call_id`` (what results
  link to) and the item id (``fc_...``) in ``provider_details["item_id"]``;
* stream events ``response.output_item.added`` / ``response.function_call_arguments.delta`` /
  ``...arguments.done`` / ``response.output_item.done`` / ``response.completed`` -> argument deltas;
* a `ToolResult` -> ``{"type": "function_call_output", "call_id", "output"}``: a string for text, a list
  of ``input_text`` / ``input_image`` parts when there are images. There is no error flag, so an
  error's text starts with ``"Error: "``. ``call_id`` is at most 64 characters; longer ids (from another
  vendor's history) are shortened deterministically.

An empty registry gives ``{}``. Reasoning models also need their ``reasoning`` output items sent back
with the results; that is the caller's history, not part of this fragment.
"""

from __future__ import annotations as _annotations

from typing import Any

from ..dialects.openai import OpenAIDialect
from ..messages import ImagePart, TextPart, ToolCall, ToolResult
from ..registry import Registry
from ..tools import Tool
from ._base import FormatOptions, Provider, StreamAccumulator, ToolCallDelta, as_dict
from ._ids import IdRule
from ._names import NameMap
from .openai_chat import OPENAI_NAME_RULE, error_text, openai_tool_choice, tools_fragment

__all__ = ["OpenAIResponsesProvider", "OpenAIResponsesStream"]


class OpenAIResponsesProvider(Provider):
    """OpenAI Responses. Pure: plain dicts in and out; SDK objects are accepted as responses."""

    name = "openai-responses"
    name_rule = OPENAI_NAME_RULE
    id_rule = IdRule(pattern=r"^.{1,64}$", allowed=".", max_length=64)
    dialect = OpenAIDialect()

    def _tool_definition(self, item: Tool[..., Any], wire_name: str, strict: bool | None) -> dict[str, Any]:
        result = self.schema_dialect(item, strict)
        entry: dict[str, Any] = {"type": "function", "name": wire_name}
        if item.description:
            entry["description"] = item.description
        entry["parameters"] = result.schema
        entry["strict"] = result.strict  # never omitted: omitted means "server decides" on Responses
        output = item.output_schema
        if output is not None and output != {"type": "null"} and item.to_model_output is None:
            entry["output_schema"] = output
        return entry

    def _tools_payload(
        self, definitions: list[dict[str, Any]], names: NameMap, options: FormatOptions
    ) -> dict[str, Any]:
        choice = openai_tool_choice(names, options, _function_ref, nested=False)
        return tools_fragment(definitions, choice, options)

    def _parse_calls(self, response: Any) -> list[ToolCall]:
        return [_call_of(item) for item in _output_items(response) if item.get("type") == "function_call"]

    def _result_messages(self, results: list[ToolResult]) -> list[dict[str, Any]]:
        return [
            {"type": "function_call_output", "call_id": self.wire_id(r.call_id), "output": _output(r)} for r in results
        ]

    def _accumulator(self, names: NameMap | None, registry: Registry | None) -> StreamAccumulator:
        return OpenAIResponsesStream(self, names, registry)


def _function_ref(name: str) -> dict[str, Any]:
    return {"type": "function", "name": name}


def _output_items(response: Any) -> list[dict[str, Any]]:
    """The output items of a response; a list of items or one item is accepted too."""
    if isinstance(response, dict):
        items = response.get("output", [response])
    elif isinstance(response, list):
        items = response
    else:
        items = []
    return [item for item in items or () if isinstance(item, dict)]


def _call_of(item: dict[str, Any]) -> ToolCall:
    details = {k: item[k] for k in ("id", "namespace") if item.get(k)}
    if "id" in details:
        details["item_id"] = details.pop("id")
    return ToolCall(
        id=item.get("call_id") or item.get("id") or "",
        name=item.get("name", ""),
        arguments=item.get("arguments", ""),
        provider_details=details or None,
    )


def _output(result: ToolResult) -> str | list[dict[str, Any]]:
    """``function_call_output.output``: plain text, or parts in order when the result has images."""
    if not any(isinstance(p, ImagePart) for p in result.content):
        return error_text(result)
    parts: list[dict[str, Any]] = []
    flagged = not result.is_error  # the error prefix goes on the first text part
    for part in result.content:
        if isinstance(part, TextPart):
            text = part.text if flagged or part.text.startswith("Error: ") else "Error: " + part.text
            flagged = True
            parts.append({"type": "input_text", "text": text})
        else:
            parts.append({"type": "input_image", "image_url": part.data_url, "detail": "auto"})
    if not flagged:
        parts.insert(0, {"type": "input_text", "text": "Error:"})
    return parts


class OpenAIResponsesStream(StreamAccumulator):
    """Accumulates Responses stream events; calls are numbered 0, 1, ... in the order they start."""

    def __init__(self, provider: Provider, names: NameMap | None, registry: Registry | None) -> None:
        super().__init__(provider, names, registry)
        self._order: dict[Any, int] = {}

    def feed(self, event: Any) -> list[ToolCallDelta]:
        """Consume one stream event (dict or SDK event object); return the argument deltas it carried."""
        data = as_dict(event)
        kind = data.get("type") if isinstance(data, dict) else None
        if kind in ("response.output_item.added", "response.output_item.done"):
            item = data.get("item") or {}
            if item.get("type") == "function_call":
                return self._item(item, data.get("output_index"))
        elif kind == "response.function_call_arguments.delta":
            index = self._index(data.get("item_id"), data.get("output_index"))
            return [self._append(index, data["delta"])] if data.get("delta") else []
        elif kind == "response.function_call_arguments.done":
            index = self._index(data.get("item_id"), data.get("output_index"))
            return self._catch_up(index, data.get("arguments"))
        elif kind == "response.completed":
            deltas: list[ToolCallDelta] = []
            for position, item in enumerate((data.get("response") or {}).get("output") or ()):
                if item.get("type") == "function_call":
                    deltas += self._item(item, position)
            return deltas
        return []

    def _index(self, item_id: str | None, output_index: int | None) -> int:
        # known by item id or by output index, whichever an event carries (servers differ)
        keys = [k for k in (item_id or None, None if output_index is None else ("at", output_index)) if k]
        index = next((self._order[k] for k in keys if k in self._order), len(set(self._order.values())))
        for key in keys:
            self._order.setdefault(key, index)
        return index

    def _item(self, item: dict[str, Any], output_index: int | None) -> list[ToolCallDelta]:
        index = self._index(item.get("id"), output_index)
        extra = {"item_id": item["id"]} if item.get("id") else {}
        self._start(index, item.get("call_id"), item.get("name"), **extra)
        return self._catch_up(index, item.get("arguments"))

    def _catch_up(self, index: int, full: str | None) -> list[ToolCallDelta]:
        """Reconcile with the complete arguments a done/completed event repeats (deltas may be missed)."""
        if not full:
            return []
        so_far = self.partial.get(index, "")
        if full == so_far:
            return []
        if full.startswith(so_far):
            return [self._append(index, full[len(so_far) :])]
        self._calls[index].arguments = full  # the complete text wins over a garbled accumulation
        return []
