"""Mistral chat completions (``POST /v1/chat/completions``) function calling.

What maps to what:

* a tool -> ``{"type": "function", "function": {"name", "description", "parameters", "strict"?}}``;
  ``parameters`` is required by Mistral, so a no-argument tool sends ``{"type": "object", "properties": {}}``.
* ``tool_choice``: ``"auto"`` -> ``"auto"``, ``"none"`` -> ``"none"``, ``"required"`` -> ``"any"`` (Mistral's
  spelling; ``"required"`` is its alias), a key -> ``{"type": "function", "function": {"name": ...}}``.
* ``active_tools``: Mistral has no allowed-tools form, so the tool list is filtered to those keys.
* ``parallel_tool_calls`` -> the request field of the same name.
* calls: ``choices[0].message.tool_calls[]`` with ``function.arguments`` as JSON text (kept as sent);
  streamed as ``choices[0].delta.tool_calls[]`` keyed by ``index``.
* results -> one ``{"role": "tool", "tool_call_id", "name", "content"}`` message per result. There is no
  error flag: errors are sent as text starting with ``"Error: "``.
* call ids: models on tokenizers v3-v11 accept only ids of exactly nine letters/digits. Every id is mapped
  deterministically onto that form (`Provider.wire_id`); ids already in it pass unchanged. Build the
  assistant message you replay with `MistralProvider.assistant_message` so its ids are mapped the same way.
* images in tool results: only models on tokenizer v15+ accept them. By default they become a text
  placeholder; ``MistralProvider(tool_result_images=True)`` sends ``image_url`` chunks instead.

Whole conversations (what `agentkit.providers.mistral.MistralModel` sends and reads):

* `SystemMessage` -> ``{"role": "system"}`` in place; `UserMessage` -> ``{"role": "user"}`` with a string or
  ``text`` / ``image_url`` chunks; `AssistantMessage` -> `assistant_message` (wire names, ids through
  `wire_id`, so calls and their results stay linked); `ToolResultsMessage` -> the tool messages above;
* an assistant turn whose content held more than text (``thinking`` chunks of reasoning models) keeps the
  chunks in ``provider_details["mistral"]["content"]``; they are replayed verbatim to Mistral only;
* a completion -> `ModelResponse`: the text chunks as text, the tool calls, usage from ``prompt_tokens`` /
  ``completion_tokens``, ``finish_reason`` normalised (``model_length`` reads as ``length``).
"""

from __future__ import annotations as _annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..._jsonish import is_array, is_mapping
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
from ...models._base import ModelStreamEvent, TextDelta, ToolCallArgsDelta, ToolCallStart
from .._codec import FormatOptions, Provider, StreamDecoder, ToolCallDelta, Tools, as_dict
from .._dialect import DialectResult
from .._ids import IdRule
from .._messages import chat_messages, chat_usage, mapped_reason, replayed_content, response_id
from .._names import NameMap, NameRule
from ._dialect import MistralDialect

__all__ = ["MistralProvider", "MistralStreamAccumulator", "content_text", "normalise_finish_reason", "usage_of"]


def _message(response: Any) -> Mapping[str, Any]:
    """The assistant message of a chat completion (or the message itself when given one)."""
    if not is_mapping(response):
        return {}
    choices = response.get("choices")
    if is_array(choices):
        return (choices[0].get("message") or {}) if choices else {}
    message = response.get("message")
    return message if is_mapping(message) else response


def _call_id(raw: Any, index: int) -> str:
    # Mistral's SDK fills a missing id with the string "null": treat it as absent.
    return raw if isinstance(raw, str) and raw and raw != "null" else f"call_{index}"


def _image_placeholder(part: ImagePart) -> str:
    if part.url is not None:
        return f"[image: {part.url}]"
    size = len(part.data or b"")
    return f"[image ({part.media_type}, {size} bytes) not shown: this model cannot receive images in tool results]"


class MistralProvider(Provider):
    """Mistral chat completions tools, tool choice, calls, streams and tool messages."""

    name = "mistral"
    # ChatCompletionResponse: choices[].message (mistral-openapi.yaml)
    response_shape = (("choices", 0, "message"),)
    name_rule = NameRule(pattern=r"^[a-zA-Z0-9_-]{1,64}$", allowed="[a-zA-Z0-9_-]", max_length=64)
    id_rule = IdRule(pattern=r"^[a-zA-Z0-9]{9}$", allowed="[a-zA-Z0-9]", exact_length=9)
    dialect = MistralDialect()
    native_output = "response_format"

    def _output_fragment(self, definition: ToolDefinition, result: DialectResult) -> dict[str, Any]:
        schema: dict[str, Any] = {"name": definition.key}
        if definition.description:
            schema["description"] = definition.description
        schema["schema"] = result.schema
        schema["strict"] = result.strict
        return {"response_format": {"type": "json_schema", "json_schema": schema}}

    def __init__(self, *, tool_result_images: bool = False, text_with_tool_calls: bool = True) -> None:
        """Options for the model family served.

        Args:
            tool_result_images: send images in tool messages (tokenizer v15+ models only).
            text_with_tool_calls: replay an assistant turn's text beside its tool calls. La Plateforme and
                tokenizer v7+ models take both; mistral-common's v1-v3 validators refuse such a turn (older
                open-weight models, e.g. Mistral 7B v0.3 served by vLLM), and their prompt format has no
                place for the text (two assistant messages are merged back into one): with False, the
                text of a turn that calls tools is left out of the request, the history keeping it.
        """
        super().__init__()
        self.tool_result_images = tool_result_images
        self.text_with_tool_calls = text_with_tool_calls

    # ---- tools -----------------------------------------------------------------------------------

    def _tool_definition(self, definition: ToolDefinition, wire_name: str, strict: bool | None) -> dict[str, Any]:
        result = self.schema_dialect(definition, strict)
        function: dict[str, Any] = {
            "name": wire_name,
            "description": definition.description,
            "parameters": result.schema,
        }
        if result.strict:
            function["strict"] = True
        return {"type": "function", "function": function}

    def _tools_payload(
        self,
        entries: list[dict[str, Any]],
        tools: Mapping[str, ToolDefinition],
        names: NameMap,
        options: FormatOptions,
    ) -> dict[str, Any]:
        kept = entries
        if options.active_tools == ():
            # Nothing may be called: keep the tools (a history with tool calls needs them) and say "none".
            options = replace(options, tool_choice="none") if options.tool_choice != "required" else options
        elif options.active_tools is not None:
            allowed = {names.name_for(key) for key in options.active_tools}
            kept = [d for d in entries if d["function"]["name"] in allowed]
        choice: str | dict[str, Any]
        if options.tool_choice in ("auto", "none"):
            choice = options.tool_choice
        elif options.tool_choice == "required":
            choice = "any"
        else:
            choice = {"type": "function", "function": {"name": names.name_for(options.tool_choice)}}
        payload: dict[str, Any] = {"tools": kept, "tool_choice": choice}
        if options.parallel_tool_calls is not None:
            payload["parallel_tool_calls"] = options.parallel_tool_calls
        return payload

    # ---- calls -----------------------------------------------------------------------------------

    def _parse_calls(self, response: Any) -> list[ToolCall]:
        calls: list[ToolCall] = []
        raw_calls: Iterable[Any] = _message(response).get("tool_calls") or ()
        for position, raw in enumerate(raw_calls):
            function: Mapping[str, Any] = raw.get("function") or {}
            index = raw.get("index", position) if isinstance(raw.get("index"), int) else position
            calls.append(
                ToolCall(
                    id=_call_id(raw.get("id"), index),
                    name=function.get("name", ""),
                    arguments=function.get("arguments", ""),
                )
            )
        return calls

    def _accumulator(self, names: NameMap | None, tools: Mapping[str, ToolDefinition] | None) -> StreamDecoder:
        return MistralStreamAccumulator(self, names, tools)

    # ---- history ---------------------------------------------------------------------------------

    def assistant_message(
        self,
        calls: Sequence[ToolCall],
        *,
        content: str = "",
        registry: Tools | None = None,
        aliases: bool = False,
    ) -> dict[str, Any]:
        """The assistant message carrying `calls`, for replaying history to Mistral.

        Ids go through `wire_id` exactly as in `format_tool_results`, so calls and results stay linked
        even when the calls came from another vendor. With `registry`, keys are sent as wire names
        (aliases where `aliases` is on).
        """
        names = self.names(registry, aliases=aliases) if registry is not None else None
        tool_calls: list[dict[str, Any]] = []
        for call in calls:
            arguments = call.arguments if isinstance(call.arguments, str) else json_text(dict(call.arguments))
            tool_calls.append(
                {
                    "id": self.wire_id(call.id),
                    "type": "function",
                    "function": {
                        "name": names.name_for(call.name) if names is not None else call.name,
                        "arguments": arguments,
                    },
                }
            )
        return {"role": "assistant", "content": content, "tool_calls": tool_calls}

    def _result_messages(self, results: list[ToolResult]) -> list[dict[str, Any]]:
        return [self._result_message(result) for result in results]

    def _result_message(self, result: ToolResult) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "tool", "tool_call_id": self.wire_id(result.call_id)}
        # `name` is optional and Mistral checks it against its name rule; a key that breaks the rule
        # was sent under an alias this method cannot see, so the name is left out (the id links it).
        if self.name_rule.accepts(result.name):
            message["name"] = result.name
        message["content"] = self._content(result)
        return message

    def _content(self, result: ToolResult) -> str | list[dict[str, Any]]:
        has_images = any(isinstance(p, ImagePart) for p in result.content)
        if self.tool_result_images and has_images:
            chunks: list[dict[str, Any]] = [{"type": "text", "text": "Error: "}] if result.is_error else []
            for part in result.content:
                if isinstance(part, TextPart):
                    chunks.append({"type": "text", "text": part.text})
                else:
                    chunks.append({"type": "image_url", "image_url": {"url": part.data_url}})
            return chunks
        lines = [p.text if isinstance(p, TextPart) else _image_placeholder(p) for p in result.content]
        text = "\n".join(lines)
        return f"Error: {text}" if result.is_error and not text.startswith("Error") else text

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
        # Chunks kept from a Mistral reasoning turn go back as they came; another vendor's details are ignored.
        content: Any = replayed_content(message, self.name)
        if message.tool_calls:
            entry = self.assistant_message(message.tool_calls, registry=registry, aliases=aliases)
            # v1-v3 validators: "Assistant message must have either content or tool_calls, but not both."
            entry["content"] = content if self.text_with_tool_calls else ""
            return entry
        return {"role": "assistant", "content": content}

    def parse_response(self, response: Any, *, registry: Tools | None = None, aliases: bool = False) -> ModelResponse:
        """A chat completion (dict or SDK ``ChatCompletionResponse``) as a `ModelResponse` (first choice only)."""
        data = _mapping(as_dict(response))
        self._check_shape(data)
        choices = data.get("choices")
        choice: Mapping[str, Any] = choices[0] if is_array(choices) and choices and is_mapping(choices[0]) else {}
        message = _message(data)
        content = message.get("content")
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
            finish_reason=normalise_finish_reason(choice.get("finish_reason")),
            model_name=data.get("model"),
            raw=response,
            response_id=response_id(data.get("id")),
        )


def content_text(content: Any) -> str:
    """The text of a Mistral ``content`` (a string, or chunks of which only ``text`` ones count)."""
    if isinstance(content, str):
        return content
    if is_array(content):
        return "".join(c.get("text") or "" for c in content if is_mapping(c) and c.get("type", "text") == "text")
    return ""


_FINISH = {"stop": "stop", "tool_calls": "tool_calls", "length": "length", "model_length": "length"}


def normalise_finish_reason(reason: Any) -> str | None:
    """Mistral's ``finish_reason`` as ``stop``/``tool_calls``/``length``; others (``error``) pass unchanged."""
    return mapped_reason(reason, _FINISH) if reason else None


def usage_of(usage: Any) -> Usage:
    """A Mistral ``usage`` object as one request's `Usage`: tokens, and the cache and reasoning details where sent."""
    return chat_usage(usage)


class MistralStreamAccumulator(StreamDecoder):
    """Decodes the chunks of a streamed Mistral chat completion: text, ``thinking`` and tool calls.

    Mistral usually sends each call whole in one chunk, but fragments are appended by ``index`` too.
    The turn is complete once a choice has a ``finish_reason``; `response` parses the completion the
    chunks describe (reasoning kept as the chunks a non-streamed turn carries).
    """

    terminal = "a finish_reason"

    def __init__(self, provider: Provider, names: NameMap | None, tools: Mapping[str, ToolDefinition] | None) -> None:
        super().__init__(provider, names, tools)
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._usage: Any = None
        self._id: str | None = None  # the response id, sent with every chunk (Cohere: with message-start)
        self._finish: str | None = None
        self._model: str | None = None
        self._announced: dict[int, str | None] = {}

    def _decode(self, event: Any) -> list[ModelStreamEvent]:
        data: object = as_dict(event)
        if not is_mapping(data):
            return []
        chunk: Mapping[str, Any] = data
        if is_mapping(chunk.get("data")) and "choices" not in chunk:  # the SDK's CompletionEvent
            chunk = chunk["data"]
        if isinstance(chunk.get("model"), str):
            self._model = chunk["model"]
        if isinstance(chunk.get("id"), str):
            self._id = chunk["id"]
        if is_mapping(chunk.get("usage")):
            self._usage = chunk["usage"]
        choices: Sequence[Any] = chunk.get("choices") or []
        choice: Mapping[str, Any] = choices[0] if choices and is_mapping(choices[0]) else {}
        if choice.get("finish_reason"):
            self._finish = choice["finish_reason"]
            self.finished = True
        out: list[ModelStreamEvent] = []
        choice_delta: Mapping[str, Any] = choice.get("delta") or {}
        content = choice_delta.get("content")
        text = content_text(content)
        if text:
            self._text.append(text)
            out.append(TextDelta(text))
        if is_array(content):
            self._thinking.extend(_thinking_text(c) for c in content if is_mapping(c))
        for delta in self.feed(chunk):
            if delta.index not in self._announced and delta.name:
                self._announced[delta.index] = delta.id
                out.append(ToolCallStart(delta.index, delta.id, delta.name))
            out.append(ToolCallArgsDelta(delta.index, delta.arguments_delta, delta.arguments_so_far))
        return out

    def flush(self) -> list[ModelStreamEvent]:
        """Start events for calls that never streamed an argument (e.g. empty arguments)."""
        calls = self.tool_calls()
        indexes = sorted(self.partial)
        if len(indexes) != len(calls):  # a call without a name was dropped: fall back to matching ids
            seen = set(self._announced.values())
            return [ToolCallStart(i, c.id, c.name) for i, c in enumerate(calls) if c.id not in seen]
        return [
            ToolCallStart(index, call.id, call.name)
            for index, call in zip(indexes, calls, strict=True)
            if index not in self._announced
        ]

    def _snapshot(self) -> dict[str, Any]:
        text, thinking = "".join(self._text), "".join(self._thinking)
        content: Any = text
        if thinking:  # the same replayable chunks a non-streamed reasoning turn carries
            content = [{"type": "thinking", "thinking": [{"type": "text", "text": thinking}]}]
            if text:
                content.append({"type": "text", "text": text})
        message: dict[str, Any] = {"role": "assistant", "content": content}
        calls = [
            {
                "id": call.id,
                "index": index,
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": call.parsed if call.parsed is not None else call.arguments,
                },
            }
            for index, call in self._call_dicts()
        ]
        if calls:
            message["tool_calls"] = calls
        snapshot: dict[str, Any] = {"choices": [{"index": 0, "message": message, "finish_reason": self._finish}]}
        if self._model is not None:
            snapshot["model"] = self._model
        if self._usage is not None:
            snapshot["usage"] = self._usage
        if self._id is not None:
            snapshot["id"] = self._id
        return snapshot

    def feed(self, event: Any) -> list[ToolCallDelta]:
        """Consume one chunk (dict or SDK object); return the argument fragments it carried."""
        data: object = as_dict(event)
        if not is_mapping(data):
            return []
        chunk: Mapping[str, Any] = data
        if "data" in chunk and "choices" not in chunk:  # the SDK's CompletionEvent wrapper
            chunk = chunk["data"]
        choices: Sequence[Any] = chunk.get("choices") or []
        delta: Mapping[str, Any] = (choices[0].get("delta") or {}) if choices else chunk.get("delta") or {}
        out: list[ToolCallDelta] = []
        raw_calls: Iterable[Any] = delta.get("tool_calls") or ()
        for position, raw in enumerate(raw_calls):
            index = raw["index"] if isinstance(raw.get("index"), int) else position
            function: Mapping[str, Any] = raw.get("function") or {}
            raw_id = raw.get("id")
            self._start(index, raw_id if raw_id not in (None, "", "null") else None, function.get("name"))
            arguments: object = function.get("arguments")
            if is_mapping(arguments):
                self._set_args(index, arguments)
                arguments = json_text(dict(arguments))
            if isinstance(arguments, str) and arguments:
                out.append(self._append(index, arguments))
        return out


def _thinking_text(chunk: Mapping[str, Any]) -> str:
    if chunk.get("type") != "thinking":
        return ""
    inner = chunk.get("thinking")
    if isinstance(inner, str):
        return inner
    return content_text(inner) if is_array(inner) else ""


def _mapping(value: object) -> Mapping[str, Any]:
    return value if is_mapping(value) else {}
