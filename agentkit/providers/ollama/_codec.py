"""Ollama native chat (``POST /api/chat``) function calling.

What maps to what:

* a tool -> ``{"type": "function", "function": {"name", "description"?, "parameters"}}``, the schema
  rewritten by `agentkit.providers.ollama._dialect` (``$ref``s inlined, what the server drops folded into
  descriptions). Ollama has no name rule; only an empty name is refused here.
* ``tool_choice``: Ollama has none. ``"auto"`` sends the tools; ``"none"`` sends no tools at all (an empty
  fragment); ``"required"`` sends every tool but cannot force a call; a key sends only that tool, which
  is the closest Ollama gets to "call this tool" (the model may still answer in text).
* ``active_tools`` filters the tool list; ``parallel_tool_calls`` and ``strict`` cannot be expressed.
* calls: ``message.tool_calls[]`` with ``function.arguments`` as an object (kept as sent) and, on newer
  servers, an ``id``; without one the id is ``call_<index>``. Streamed chunks carry whole calls.
* results -> one ``{"role": "tool", "tool_name", "tool_call_id", "content"}`` message per result
  (``tool_name`` links the result on servers without ids). No error flag: errors are text starting with
  ``"Error: "``. Images given as bytes go in the message's ``images`` (base64), which reach the model
  only if its chat template uses them; URL images become a text placeholder (Ollama takes no URLs).
* conversations (`OllamaProvider.format_messages`): ``system`` / ``user`` / ``assistant`` / ``tool``
  messages; user images as base64 ``images``; the model's ``thinking`` (kept by
  `OllamaProvider.parse_response` in ``provider_details["ollama"]``) is sent back with its turn.
"""

from __future__ import annotations as _annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..._jsonish import is_mapping
from ..._text import json_text
from ...definitions import ToolDefinition
from ...messages import (
    AssistantMessage,
    ImagePart,
    Message,
    ModelResponse,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    ToolResultsMessage,
    Usage,
    UserMessage,
)
from ...models._base import ModelStreamEvent, TextDelta, ToolCallArgsDelta, ToolCallStart
from .._codec import FormatOptions, Provider, StreamDecoder, ToolCallDelta, Tools, as_dict
from .._dialect import DialectResult
from .._messages import args_object, data_url, message_of, token_count
from .._names import NameMap, NameRule
from ._dialect import OllamaDialect, format_schema

__all__ = ["OllamaProvider", "OllamaStreamAccumulator"]


def _chunk(event: Any) -> Mapping[str, Any]:
    """One streamed chunk as data: a dict, an SDK object, or an NDJSON line."""
    if isinstance(event, bytes):
        event = event.decode()
    if isinstance(event, str):
        try:
            event = json.loads(event) if event.strip() else {}
        except ValueError:
            return {}
    data: object = as_dict(event)
    return data if is_mapping(data) else {}


class OllamaProvider(Provider):
    """Ollama ``/api/chat`` tools, calls, streams and tool messages."""

    name = "ollama"
    # /api/chat: message is in every answer (ollama-openapi.yaml ChatResponse)
    response_shape = (("message",),)
    name_rule = NameRule(pattern=r"^.+$", allowed=".")
    dialect = OllamaDialect()
    native_output = "format"

    def native_output_with_tools(self, model_name: str | None) -> bool:
        """Never: ``format`` constrains every token to the schema, so the model can no longer call a tool."""
        return False

    def output_schema(self, definition: ToolDefinition) -> DialectResult:
        """The canonical schema (``format`` becomes a grammar, not Go structs); untyped nodes recorded as rejected."""
        return format_schema(definition.input_schema)

    def _output_fragment(self, definition: ToolDefinition, result: DialectResult) -> dict[str, Any]:
        return {"format": result.schema}

    # ---- tools -----------------------------------------------------------------------------------

    def _tool_definition(self, definition: ToolDefinition, wire_name: str, strict: bool | None) -> dict[str, Any]:
        function: dict[str, Any] = {"name": wire_name}
        if definition.description:
            function["description"] = definition.description
        function["parameters"] = self.schema_dialect(definition, strict).schema
        return {"type": "function", "function": function}

    def _tools_payload(
        self,
        entries: list[dict[str, Any]],
        tools: Mapping[str, ToolDefinition],
        names: NameMap,
        options: FormatOptions,
    ) -> dict[str, Any]:
        choice = options.tool_choice
        if choice == "none":
            return {}  # the only way to keep Ollama from calling tools
        keep: set[str] | None = None
        if choice not in ("auto", "required"):
            keep = {names.name_for(choice)}
        elif options.active_tools is not None:
            keep = {names.name_for(key) for key in options.active_tools}
        kept = entries if keep is None else [d for d in entries if d["function"]["name"] in keep]
        return {"tools": kept}

    # ---- calls -----------------------------------------------------------------------------------

    def _parse_calls(self, response: Any) -> list[ToolCall]:
        calls: list[ToolCall] = []
        raw_calls: Iterable[Any] = message_of(response).get("tool_calls") or ()
        for position, raw in enumerate(raw_calls):
            function: Mapping[str, Any] = raw.get("function") or {}
            index = function["index"] if isinstance(function.get("index"), int) else position
            calls.append(
                ToolCall(
                    id=raw.get("id") or f"call_{index}",
                    name=function.get("name", ""),
                    arguments=function.get("arguments") or {},
                )
            )
        return calls

    def _accumulator(self, names: NameMap | None, tools: Mapping[str, ToolDefinition] | None) -> StreamDecoder:
        return OllamaStreamAccumulator(self, names, tools)

    # ---- history ---------------------------------------------------------------------------------

    def assistant_message(
        self,
        calls: Sequence[ToolCall],
        *,
        content: str = "",
        registry: Tools | None = None,
        aliases: bool = False,
    ) -> dict[str, Any]:
        """The assistant message carrying `calls` (arguments as objects), for replaying history.

        Send it as a plain dict: ollama-python's ``Message`` model drops call ids.
        """
        names = self.names(registry, aliases=aliases) if registry is not None else None
        tool_calls = [
            {
                "id": call.id,
                "function": {
                    "index": index,
                    "name": names.name_for(call.name) if names is not None else call.name,
                    "arguments": args_object(call),
                },
            }
            for index, call in enumerate(calls)
        ]
        return {"role": "assistant", "content": content, "tool_calls": tool_calls}

    # ---- whole conversations ---------------------------------------------------------------------

    def format_messages(
        self, messages: Sequence[Message], *, registry: Tools | None = None, aliases: bool = False
    ) -> dict[str, Any]:
        """``{"messages": [...]}`` for a neutral history.

        ``system`` / ``user`` messages carry their text in ``content`` and their images (bytes or
        ``data:`` URLs) as base64 in ``images``; a URL image becomes a text placeholder (Ollama fetches
        nothing). An assistant turn is `assistant_message` (calls with object arguments, wire names,
        ids), plus the ``thinking`` Ollama sent when `parse_response` kept it
        (``provider_details["ollama"]["thinking"]``). Each tool result is one ``tool`` message.
        """
        out: list[dict[str, Any]] = []
        for message in messages:
            if isinstance(message, SystemMessage):
                out.append({"role": "system", "content": message.text})
            elif isinstance(message, UserMessage):
                out.append(_user_message(message))
            elif isinstance(message, AssistantMessage):
                entry = self.assistant_message(
                    message.tool_calls, content=message.text, registry=registry, aliases=aliases
                )
                if not entry["tool_calls"]:
                    del entry["tool_calls"]
                details: object = (message.provider_details or {}).get(self.name)
                thinking = details.get("thinking") if is_mapping(details) else None
                if isinstance(thinking, str) and thinking:
                    entry["thinking"] = thinking
                out.append(entry)
            elif isinstance(message, ToolResultsMessage):  # pyright: ignore[reportUnnecessaryIsInstance]  # untyped callers
                out += self.format_tool_results(message.results, registry=registry, aliases=aliases)
            else:  # pragma: no cover - the Message union is closed
                raise TypeError(f"not a conversation message: {message!r}")
        return {"messages": out}

    def parse_response(self, response: Any, *, registry: Tools | None = None, aliases: bool = False) -> ModelResponse:
        """A ``/api/chat`` response (dict or SDK object) as a neutral `ModelResponse`.

        Usage is ``prompt_eval_count`` / ``eval_count``. Ollama says ``done_reason: "stop"`` even when
        the model called tools, so a turn with calls is ``"tool_calls"``; ``"length"`` stays; anything
        else is kept as sent. The model's ``thinking`` goes into ``provider_details["ollama"]``, so that
        it is sent back with the turn, as Ollama's docs ask.
        """
        data = _chunk(response)
        self._check_shape(data)
        message = message_of(data)
        calls = self._calls_of(data, registry=registry, aliases=aliases)
        thinking = message.get("thinking")
        details = {self.name: {"thinking": thinking}} if isinstance(thinking, str) and thinking else None
        content = message.get("content")
        reason = data.get("done_reason")
        if calls and reason in (None, "stop"):
            reason = "tool_calls"
        model = data.get("model")
        return ModelResponse(
            message=AssistantMessage(
                text=content if isinstance(content, str) else "",
                tool_calls=calls,
                provider_details=details,
            ),
            usage=Usage(
                input_tokens=token_count(data.get("prompt_eval_count")),
                output_tokens=token_count(data.get("eval_count")),
                requests=1,
            ),
            finish_reason=reason if isinstance(reason, str) else None,
            model_name=model if isinstance(model, str) else None,
            raw=response,
        )

    def _result_messages(self, results: list[ToolResult]) -> list[dict[str, Any]]:
        return [self._result_message(result) for result in results]

    def _result_message(self, result: ToolResult) -> dict[str, Any]:
        lines: list[str] = []
        images: list[str] = []
        for part in result.content:
            if isinstance(part, TextPart):
                lines.append(part.text)
            elif part.data is not None:
                images.append(part.base64)
            else:
                lines.append(_url_placeholder(part))
        text = "\n".join(lines)
        if result.is_error and not text.startswith("Error"):
            text = f"Error: {text}"
        message: dict[str, Any] = {
            "role": "tool",
            "tool_name": result.name,
            "tool_call_id": self.wire_id(result.call_id),
            "content": text,
        }
        if images:
            message["images"] = images
        return message


def _image_base64(part: ImagePart) -> str | None:
    if part.data is not None:
        return part.base64
    inline = data_url(part.url or "")
    return inline[1] if inline is not None else None


def _user_message(message: UserMessage) -> dict[str, Any]:
    lines: list[str] = []
    images: list[str] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            lines.append(part.text)
            continue
        data = _image_base64(part)
        if data is None:
            lines.append(_url_placeholder(part))
        else:
            images.append(data)
    entry: dict[str, Any] = {"role": "user", "content": "\n".join(lines)}
    if images:
        entry["images"] = images
    return entry


def _url_placeholder(part: ImagePart) -> str:
    return f"[image: {part.url} (not attached: Ollama accepts only base64 images)]"


class OllamaStreamAccumulator(StreamDecoder):
    """Decodes Ollama's NDJSON chunks: content, thinking, and the complete ``message.tool_calls`` they carry.

    The chunks are merged into one ``/api/chat`` response (content, thinking and calls gathered; counts
    and ``done_reason`` from the last chunk), parsed by `parse_response` at the end (``raw`` is that
    merged dict); the turn is complete at the chunk with ``done: true``.
    """

    terminal = "the chunk with done: true"

    def __init__(self, provider: Provider, names: NameMap | None, tools: Mapping[str, ToolDefinition] | None) -> None:
        super().__init__(provider, names, tools)
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._raw_calls: list[Any] = []
        self._last: Mapping[str, Any] = {}

    def _decode(self, event: Any) -> list[ModelStreamEvent]:
        chunk = _chunk(event)
        message = message_of(chunk)
        out: list[ModelStreamEvent] = []
        content = message.get("content")
        if isinstance(content, str) and content:
            self._text.append(content)
            out.append(TextDelta(content))
        if isinstance(message.get("thinking"), str):
            self._thinking.append(message["thinking"])
        self._raw_calls += message.get("tool_calls") or ()
        for delta in self.feed(chunk):
            out.append(ToolCallStart(delta.index, delta.id, delta.name or ""))
            out.append(ToolCallArgsDelta(delta.index, delta.arguments_delta, delta.arguments_so_far))
        self._last = chunk
        if chunk.get("done") is True:
            self.finished = True
        return out

    def _snapshot(self) -> dict[str, Any]:
        merged: dict[str, Any] = {"role": "assistant", "content": "".join(self._text)}
        if "".join(self._thinking):
            merged["thinking"] = "".join(self._thinking)
        if self._raw_calls:
            merged["tool_calls"] = self._raw_calls
        return {**self._last, "message": merged}

    def response(self) -> ModelResponse:
        """The merged chunks parsed as one response, the calls numbered as the events numbered them."""
        response = super().response()
        message = replace(response.message, tool_calls=self.tool_calls())
        return replace(response, message=message, raw=self._snapshot())

    def feed(self, event: Any) -> list[ToolCallDelta]:
        """Consume one chunk (dict, SDK object, or NDJSON line); each call arrives whole, as one delta."""
        out: list[ToolCallDelta] = []
        raw_calls: Iterable[Any] = message_of(_chunk(event)).get("tool_calls") or ()
        for raw in raw_calls:
            function: Mapping[str, Any] = raw.get("function") or {}
            index = function.get("index")
            if not isinstance(index, int) or index in self._calls:
                index = max(self._calls, default=-1) + 1  # a call never seen before gets the next slot
            self._start(index, raw.get("id"), function.get("name"))
            arguments = function.get("arguments")
            if is_mapping(arguments):
                self._set_args(index, arguments)
                arguments = json_text(dict(arguments))
            out.append(self._append(index, arguments if isinstance(arguments, str) else ""))
        return out
