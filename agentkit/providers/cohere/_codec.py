"""Cohere v2 chat (``POST /v2/chat``) function calling.

What maps to what:

* a tool -> ``{"type": "function", "function": {"name", "description"?, "parameters"}}``; names must match
  ``^[A-Za-z_][A-Za-z0-9_]*$`` (no dashes: use ``aliases=True`` for such keys).
* strict -> the request-level ``strict_tools: true``, sent only when every tool in the request comes out
  strict (`agentkit.providers.cohere._dialect`); one tool that cannot be strict turns it off for the request.
* ``tool_choice``: ``"auto"`` -> omitted, ``"none"`` -> ``"NONE"``, ``"required"`` -> ``"REQUIRED"``, a key ->
  the tool list filtered to that tool plus ``"REQUIRED"`` (Cohere has no specific-tool form).
* ``active_tools``: no allowed-tools form, so the tool list is filtered. ``parallel_tool_calls=False``
  cannot be expressed and is ignored.
* calls: ``message.tool_calls[]`` with JSON-text arguments; ``message.tool_plan`` travels in each call's
  ``provider_details`` so `CohereProvider.assistant_message` can echo it. Streams are the SSE events
  ``tool-call-start`` / ``tool-call-delta`` / ``tool-call-end``.
* results -> one ``{"role": "tool", "tool_call_id", "content": [...]}`` message per result. A JSON object
  becomes a ``document`` block (``data`` is an object, as the spec requires; documents can be cited),
  a JSON array of objects one document each, other text a ``text`` block. No error flag: errors are a
  text block starting with ``"Error: "``. No images: they become a text placeholder.

Whole conversations (what `agentkit.providers.cohere.CohereModel` sends and reads):

* `SystemMessage` -> ``{"role": "system"}`` in place; `UserMessage` -> ``{"role": "user"}`` with a string or
  ``text`` / ``image_url`` blocks; `AssistantMessage` -> ``{"role": "assistant"}`` with ``tool_calls`` (wire
  names) and the ``tool_plan`` parsed with them (`assistant_message`), and its text as ``content``;
  `ToolResultsMessage` -> the tool messages above;
* an assistant turn whose content held more than text (``thinking`` blocks) keeps the blocks in
  ``provider_details["cohere"]["content"]``; they are replayed verbatim to Cohere only;
* a chat response -> `ModelResponse`: the ``text`` blocks as text, the tool calls (with their
  ``tool_plan``), usage from ``usage.tokens`` (else ``billed_units``), ``finish_reason`` normalised
  (``COMPLETE``/``STOP_SEQUENCE`` -> ``stop``, ``TOOL_CALL`` -> ``tool_calls``, ``MAX_TOKENS`` -> ``length``).
"""

from __future__ import annotations as _annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..._jsonish import is_array, is_mapping, is_object
from ..._text import json_text
from ...definitions import ToolDefinition
from ...messages import (
    AssistantMessage,
    ImagePart,
    Message,
    ModelResponse,
    TextPart,
    ToolCall,
    ToolResult,
    Usage,
)
from ...models._base import ModelStreamEvent, TextDelta, ToolCallStart
from .._codec import (
    FormatOptions,
    Provider,
    StreamDecoder,
    ToolCallDelta,
    Tools,
    _ToolSet,  # pyright: ignore[reportPrivateUsage]  # the base class's tool set, for the hooks overridden here
    as_dict,
)
from .._dialect import DialectResult, Loss, per_result
from .._messages import chat_messages, message_of, replayed_content, response_id, token_count
from .._names import NameMap, NameRule
from ._dialect import CohereDialect, count_fields

__all__ = ["CohereProvider", "CohereStreamAccumulator", "content_text", "normalise_finish_reason", "usage_of"]

_MAX_STRICT_FIELDS = 200


def _image_placeholder(part: ImagePart) -> str:
    where = part.url if part.url is not None else f"{part.media_type}, {len(part.data or b'')} bytes"
    return f"[image ({where}) not shown: Cohere does not accept images in tool results]"


def _json_text(arguments: str | Mapping[str, Any]) -> str:
    return arguments if isinstance(arguments, str) else json_text(dict(arguments))


def _text_blocks(text: str) -> list[dict[str, Any]]:
    """Document blocks for JSON objects (or arrays of them), else one text block."""
    try:
        value: object = json.loads(text)
    except ValueError:
        value = None
    if is_object(value):
        return [{"type": "document", "document": {"data": value}}]
    if is_array(value) and value and all(is_object(v) for v in value):
        return [{"type": "document", "document": {"data": v}} for v in value]
    return [{"type": "text", "text": text}]


_field_count = per_result(count_fields)


class CohereProvider(Provider):
    """Cohere v2 tools, tool choice, calls, streams and tool messages."""

    name = "cohere"
    # v2 ChatResponse: message is required (cohere-openapi.yaml)
    response_shape = (("message",),)
    name_rule = NameRule(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", allowed="[A-Za-z0-9_]", first="[A-Za-z_]")
    dialect = CohereDialect()
    native_output = "response_format"

    def native_output_with_tools(self, model_name: str | None) -> bool:
        """Never: the API refuses ``response_format`` "in combinations with the documents or tools parameters"."""
        return False

    def output_schema(self, definition: ToolDefinition) -> DialectResult:
        """The strict form: ``json_schema`` is constrained decoding with the same limits as ``strict_tools``."""
        return self.schema_dialect(definition, True)

    def _output_fragment(self, definition: ToolDefinition, result: DialectResult) -> dict[str, Any]:
        return {"response_format": {"type": "json_object", "json_schema": result.schema}}

    def _request_options(self, toolset: _ToolSet, options: FormatOptions) -> FormatOptions:
        """``strict=None`` resolves to one request-wide answer first.

        ``strict_tools`` covers every tool in the request, so it is on only when each tool sent
        (after `tool_choice`/`active_tools` filtering) is strict-capable, does not opt out with
        ``strict=False``, and the request stays within Cohere's 200-field limit.
        """
        if options.strict is not None:
            return options
        return replace(options, strict=self._request_strict(toolset, options.tool_choice, options.active_tools))

    def request_strictness(self, registry: Tools, strict: bool | None = None) -> dict[str, Loss]:
        """``strict_tools`` is request-wide: when one tool cannot be strict, none is sent strict."""
        if strict is not None or self._request_strict(registry, "auto", None):
            return {}
        why = "strict_tools is request-wide and another tool (or the 200-field limit) rules it out; sent without strict"
        tools = self._tools(registry).by_key
        return {key: Loss("", "strict", why) for key, item in tools.items() if self.schema_dialect(item).strict}

    def _request_strict(self, registry: Tools | _ToolSet, tool_choice: str, active: tuple[str, ...] | None) -> bool:
        # Decided once per tool set and choice: walking every schema per request would cost more than
        # the cached payload it guards.
        toolset = registry if isinstance(registry, _ToolSet) else self._tools(registry)
        key = ("strict_tools", tool_choice, active)
        decision = toolset.memo.get(key)
        if decision is None:
            decision = toolset.memo[key] = self._decide_request_strict(toolset.by_key, tool_choice, active)
        return bool(decision)

    def _decide_request_strict(
        self, tools: Mapping[str, ToolDefinition], tool_choice: str, active: tuple[str, ...] | None
    ) -> bool:
        if tool_choice not in ("auto", "none", "required") and tool_choice in tools:
            keys: Iterable[str] = (tool_choice,)
        else:
            keys = [k for k in active if k in tools] if active is not None else list(tools)
        fields = 0
        for key in keys:
            result = self.schema_dialect(tools[key], None)
            if not result.strict:
                return False
            fields += _field_count(result)
        return 0 < fields <= _MAX_STRICT_FIELDS

    # ---- tools -----------------------------------------------------------------------------------

    def _tool_definition(self, definition: ToolDefinition, wire_name: str, strict: bool | None) -> dict[str, Any]:
        result = self.schema_dialect(definition, strict)
        function: dict[str, Any] = {"name": wire_name}
        if definition.description:
            function["description"] = definition.description
        function["parameters"] = result.schema
        return {"type": "function", "function": function}

    def _tools_payload(
        self,
        entries: list[dict[str, Any]],
        tools: Mapping[str, ToolDefinition],
        names: NameMap,
        options: FormatOptions,
    ) -> dict[str, Any]:
        choice = options.tool_choice
        keep: set[str] | None = None
        if options.active_tools == () and choice != "required":
            choice = "none"  # nothing may be called: keep the tools (a history may hold calls), say NONE
        elif choice not in ("auto", "none", "required"):
            keep = {names.name_for(choice)}  # no specific-tool form: offer only that tool, and require a call
        elif options.active_tools is not None:
            keep = {names.name_for(key) for key in options.active_tools}
        kept = entries if keep is None else [d for d in entries if d["function"]["name"] in keep]
        payload: dict[str, Any] = {"tools": kept}
        if choice == "none":
            payload["tool_choice"] = "NONE"
        elif choice != "auto":
            payload["tool_choice"] = "REQUIRED"
        if options.strict:
            payload["strict_tools"] = True
        return payload

    # ---- calls -----------------------------------------------------------------------------------

    def _parse_calls(self, response: Any) -> list[ToolCall]:
        message = message_of(response)
        plan = message.get("tool_plan")
        details = {"tool_plan": plan} if isinstance(plan, str) and plan else None
        calls: list[ToolCall] = []
        raw_calls: Iterable[Any] = message.get("tool_calls") or ()
        for index, raw in enumerate(raw_calls):
            function: Mapping[str, Any] = raw.get("function") or {}
            calls.append(
                ToolCall(
                    id=raw.get("id") or f"call_{index}",
                    name=function.get("name", ""),
                    arguments=function.get("arguments", ""),
                    provider_details=details,
                )
            )
        return calls

    def _accumulator(self, names: NameMap | None, tools: Mapping[str, ToolDefinition] | None) -> StreamDecoder:
        return CohereStreamAccumulator(self, names, tools)

    # ---- history ---------------------------------------------------------------------------------

    def assistant_message(
        self,
        calls: Sequence[ToolCall],
        *,
        tool_plan: str | None = None,
        registry: Tools | None = None,
        aliases: bool = False,
    ) -> dict[str, Any]:
        """The assistant message carrying `calls` (and the model's ``tool_plan``), for replaying history.

        `tool_plan` defaults to the one parsed with the calls. With `registry`, keys are sent as wire
        names (aliases where `aliases` is on).
        """
        names = self.names(registry, aliases=aliases) if registry is not None else None
        if tool_plan is None:
            tool_plan = next((c.provider_details.get("tool_plan") for c in calls if c.provider_details), None)
        message: dict[str, Any] = {"role": "assistant"}
        if tool_plan:
            message["tool_plan"] = tool_plan
        message["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {
                    "name": names.name_for(call.name) if names is not None else call.name,
                    "arguments": _json_text(call.arguments),
                },
            }
            for call in calls
        ]
        return message

    def _result_messages(self, results: list[ToolResult]) -> list[dict[str, Any]]:
        return [
            {"role": "tool", "tool_call_id": self.wire_id(result.call_id), "content": self._content(result)}
            for result in results
        ]

    def _content(self, result: ToolResult) -> list[dict[str, Any]]:
        if result.is_error:
            text = "\n".join(p.text if isinstance(p, TextPart) else _image_placeholder(p) for p in result.content)
            return [{"type": "text", "text": text if text.startswith("Error") else f"Error: {text}"}]
        blocks: list[dict[str, Any]] = []
        for part in result.content:
            if isinstance(part, TextPart):
                blocks.extend(_text_blocks(part.text))
            else:
                blocks.append({"type": "text", "text": _image_placeholder(part)})
        return blocks or [{"type": "text", "text": "(no output)"}]

    # ---- whole conversations ---------------------------------------------------------------------

    def format_messages(
        self, messages: Sequence[Message], *, registry: Tools | None = None, aliases: bool = False
    ) -> dict[str, Any]:
        """``{"messages": [...]}`` for a neutral history (system prompts stay where they are)."""
        out = chat_messages(
            messages,
            lambda message: self._assistant(message, registry, aliases),
            lambda results: self.format_tool_results(results, registry=registry, aliases=aliases),
        )
        return {"messages": out}

    def _assistant(self, message: AssistantMessage, registry: Tools | None, aliases: bool) -> dict[str, Any]:
        # Blocks kept from a Cohere reasoning turn go back as they came; another vendor's details are ignored.
        content: Any = replayed_content(message, self.name)
        if not message.tool_calls:
            return {"role": "assistant", "content": content}
        entry = self.assistant_message(message.tool_calls, registry=registry, aliases=aliases)
        if content:  # text beside calls (e.g. from another vendor) is kept; Cohere's own plan is tool_plan
            entry["content"] = content
        return entry

    def parse_response(self, response: Any, *, registry: Tools | None = None, aliases: bool = False) -> ModelResponse:
        """A v2 chat response (dict or SDK ``V2ChatResponse``) as a `ModelResponse`."""
        data = _mapping(as_dict(response))
        self._check_shape(data)
        content = message_of(data).get("content")
        details = None
        if is_array(content) and any(is_mapping(c) and c.get("type") != "text" for c in content):
            details = {self.name: {"content": content}}
        return ModelResponse(
            message=AssistantMessage(
                text=content_text(content),
                tool_calls=self._calls_of(data, registry=registry, aliases=aliases),
                provider_details=details,
            ),
            usage=usage_of(data.get("usage")),
            finish_reason=normalise_finish_reason(data.get("finish_reason")),
            model_name=data.get("model") if isinstance(data.get("model"), str) else None,
            raw=response,
            response_id=response_id(data.get("id")),
        )


def content_text(content: Any) -> str:
    """The text of a Cohere message ``content`` (a string, or blocks of which only ``text`` ones count)."""
    if isinstance(content, str):
        return content
    if is_array(content):
        return "".join(c.get("text") or "" for c in content if is_mapping(c) and c.get("type") == "text")
    return ""


_FINISH = {
    "COMPLETE": "stop",
    "STOP_SEQUENCE": "stop",
    "TOOL_CALL": "tool_calls",
    "MAX_TOKENS": "length",
}


def normalise_finish_reason(reason: Any) -> str | None:
    """Cohere's ``finish_reason`` as ``stop``/``tool_calls``/``length``; others lower-cased (``error``, ``timeout``)."""
    if not isinstance(reason, str) or not reason:
        return None
    return _FINISH.get(reason.upper(), reason.lower())


def usage_of(usage: Any) -> Usage:
    """A Cohere ``usage`` as one request's `Usage`: ``tokens`` (what the model processed), else ``billed_units``.

    ``cached_tokens`` (prompt tokens that hit the cache) is a part of the input tokens.
    """
    usage = _mapping(usage)
    counts = _mapping(usage.get("tokens") if is_mapping(usage.get("tokens")) else usage.get("billed_units"))
    return Usage(
        input_tokens=token_count(counts.get("input_tokens")),
        output_tokens=token_count(counts.get("output_tokens")),
        requests=1,
        cache_read_tokens=token_count(usage.get("cached_tokens")),
    )


class CohereStreamAccumulator(StreamDecoder):
    """Decodes Cohere v2 SSE events: content, ``tool-plan-delta``, ``tool-call-start/delta/end``, ``message-end``.

    ``tool-plan-delta`` text is gathered into `tool_plan`. The turn is complete at ``message-end``;
    `response` parses the v2 response the events describe.
    """

    terminal = "message-end"

    def __init__(self, provider: Provider, names: NameMap | None, tools: Mapping[str, ToolDefinition] | None) -> None:
        super().__init__(provider, names, tools)
        self.tool_plan = ""
        """The model's plan, streamed before its calls."""
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._usage: Any = None
        self._id: str | None = None  # the response id, sent with every chunk (Cohere: with message-start)
        self._finish: Any = None

    def _decode(self, event: Any) -> list[ModelStreamEvent]:
        data = _event(event)
        kind = data.get("type")
        delta = _mapping(data.get("delta"))
        message = _mapping(delta.get("message"))
        out: list[ModelStreamEvent] = []
        if kind == "message-start" and isinstance(data.get("id"), str):
            self._id = data["id"]
        if kind == "content-delta":
            content = _mapping(message.get("content"))
            thinking, text = content.get("thinking"), content.get("text")
            if isinstance(thinking, str):
                self._thinking.append(thinking)
            if isinstance(text, str) and text:
                self._text.append(text)
                out.append(TextDelta(text))
        elif kind == "tool-call-start":
            # the start event names the call (arguments come in deltas): announce it right away
            raw = _mapping(message.get("tool_calls"))
            name = _mapping(raw.get("function")).get("name")
            index = data.get("index")
            if isinstance(name, str):
                out.append(
                    ToolCallStart(index if isinstance(index, int) else 0, raw.get("id"), self._key(name) or name)
                )
        elif kind == "message-end":
            self.finished = True
            if delta.get("finish_reason"):
                self._finish = delta.get("finish_reason")
            if isinstance(delta.get("usage"), Mapping):
                self._usage = delta.get("usage")
        return out + self._args_events(data)

    def _snapshot(self) -> dict[str, Any]:
        text, thinking = "".join(self._text), "".join(self._thinking)
        content: list[dict[str, Any]] = [{"type": "thinking", "thinking": thinking}] if thinking else []
        if text:
            content.append({"type": "text", "text": text})
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if self.tool_plan:
            message["tool_plan"] = self.tool_plan
        calls = [
            {
                "id": call.id or f"call_{index}",
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for index, call in self._call_dicts()
        ]
        if calls:
            message["tool_calls"] = calls
        snapshot: dict[str, Any] = {"message": message, "finish_reason": self._finish}
        if self._usage is not None:
            snapshot["usage"] = self._usage
        if self._id is not None:
            snapshot["id"] = self._id
        return snapshot

    def feed(self, event: Any) -> list[ToolCallDelta]:
        """Consume one event (dict, SDK object, or an SSE ``data:`` line); return the argument fragments."""
        data = _event(event)
        kind = data.get("type")
        index: int = data["index"] if isinstance(data.get("index"), int) else 0
        delta: Mapping[str, Any] = data.get("delta") or {}
        message: Mapping[str, Any] = delta.get("message") or {}
        if kind == "tool-plan-delta":
            self.tool_plan += message.get("tool_plan") or ""
            return []
        raw: Mapping[str, Any] = message.get("tool_calls") or {}
        function: Mapping[str, Any] = raw.get("function") or {}
        if kind == "tool-call-start":
            self._start(index, raw.get("id"), function.get("name"))
        elif kind != "tool-call-delta":
            return []
        fragment = function.get("arguments")
        return [self._append(index, fragment)] if isinstance(fragment, str) and fragment else []

    def tool_calls(self) -> list[ToolCall]:
        """The calls assembled so far, each carrying the streamed ``tool_plan`` as in `parse_tool_calls`."""
        calls = super().tool_calls()
        if not self.tool_plan:
            return calls
        details = {"tool_plan": self.tool_plan}
        return [ToolCall(c.id, c.name, c.arguments, {**(c.provider_details or {}), **details}) for c in calls]


def _event(event: Any) -> Mapping[str, Any]:
    if isinstance(event, bytes):
        event = event.decode()
    if isinstance(event, str):
        text = event.strip()
        text = text[len("data:") :].strip() if text.startswith("data:") else text
        try:
            event = json.loads(text) if text else {}
        except ValueError:
            return {}
    return _mapping(as_dict(event))


def _mapping(value: object) -> Mapping[str, Any]:
    return value if is_mapping(value) else {}
