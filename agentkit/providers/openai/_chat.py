"""OpenAI Chat Completions (``/v1/chat/completions``) function calling.

What maps to what (``../shared/vendors/WIRE-FORMATS.md`` §1):

* a registry entry -> ``{"type": "function", "function": {name, description?, parameters, strict}}``,
  parameters in the OpenAI dialect (`agentkit.providers.openai._dialect`); ``strict`` is always sent explicitly;
* ``tool_choice`` ``"auto" | "none" | "required"`` as they are, a key -> ``{"type": "function",
  "function": {"name"}}``; ``active_tools`` -> ``{"type": "allowed_tools", "allowed_tools": {mode,
  tools}}`` so the ``tools`` list stays byte-stable for prompt caching; ``parallel_tool_calls`` as is;
* ``choices[0].message.tool_calls[]`` -> `ToolCall` (arguments kept as the JSON text sent);
* stream chunks ``choices[0].delta.tool_calls[]`` (keyed by ``index``) -> argument deltas;
* structured output (native) -> ``response_format: {"type": "json_schema", "json_schema": {name,
  description?, schema, strict}}`` (openai SDK ``ResponseFormatJSONSchema``; OpenAPI
  ``ResponseFormatJsonSchema``), the schema in the same dialect as strict tools; it combines with tools;
* a `ToolResult` -> ``{"role": "tool", "tool_call_id", "content"}``. Chat has no error flag, so an
  error's text starts with ``"Error: "``. Tool messages carry text only: images are replaced by a
  placeholder and sent in one ``user`` message after all tool messages (every call must be answered
  before any other message).

An empty registry gives ``{}``: the API rejects an empty ``tools`` array and a ``tool_choice`` without tools.

Whole conversations (what `agentkit.providers.openai.OpenAIChatModel` sends and reads):

* `SystemMessage` -> ``{"role": "system"}`` in place; `UserMessage` -> ``{"role": "user"}`` with a string
  or ``text`` / ``image_url`` parts; `AssistantMessage` -> ``{"role": "assistant", "content",
  "tool_calls"}`` with wire names (``content`` null when there are only calls); `ToolResultsMessage` ->
  the result messages above. Chat has no vendor items to replay, so ``provider_details`` are ignored;
* a completion -> `ModelResponse`: ``message.content`` (or ``refusal``) as text, the tool calls, usage
  from ``prompt_tokens`` / ``completion_tokens``, and ``finish_reason`` (``function_call`` reads as
  ``tool_calls``; ``stop`` with calls present too, as some OpenAI-compatible servers send it).
"""

from __future__ import annotations as _annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..._jsonish import is_array, is_object
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
)
from ...models._base import ModelStreamEvent, TextDelta, ToolCallStart
from .._codec import FormatOptions, Provider, StreamDecoder, ToolCallDelta, Tools, as_dict
from .._dialect import DialectResult
from .._messages import chat_messages, chat_usage, response_id
from .._names import NameMap, NameRule
from ._dialect import OpenAIDialect

__all__ = [
    "OPENAI_NAME_RULE",
    "OpenAIChatProvider",
    "OpenAIChatStream",
    "arguments_text",
    "error_text",
    "json_schema_format",
    "normalise_finish_reason",
    "openai_tool_choice",
    "tools_fragment",
]

OPENAI_NAME_RULE = NameRule(pattern=r"^[a-zA-Z0-9_-]{1,64}$", allowed="[a-zA-Z0-9_-]", max_length=64)
"""Function names on both OpenAI APIs: letters, digits, ``_`` and ``-``, at most 64 (FunctionObject.name)."""

_ERROR_PREFIX = "Error: "


def error_text(result: ToolResult) -> str:
    """The result's text, with ``"Error: "`` in front for an error (the OpenAI APIs have no error flag)."""
    text = result.text
    if result.is_error and not text.startswith(_ERROR_PREFIX):
        return _ERROR_PREFIX + text
    return text


def arguments_text(call: ToolCall) -> str:
    """The call's arguments as the JSON text both OpenAI APIs carry (objects from other vendors are dumped)."""
    if isinstance(call.arguments, str):
        return call.arguments
    return json_text(dict(call.arguments), compact=True, ensure_ascii=False)  # any depth


_FINISH = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
}


def normalise_finish_reason(reason: str | None, *, has_calls: bool) -> str | None:
    """``stop`` / ``tool_calls`` / ``length`` / ``content_filter`` where the vendor's reason maps to one.

    A turn that carries tool calls reads as ``tool_calls`` even when the server said ``stop`` (or
    nothing): some OpenAI-compatible servers do, and callers decide on the calls, not the word.
    """
    normal = _FINISH.get(reason, reason) if reason is not None else None
    if has_calls and normal in (None, "stop"):
        return "tool_calls"
    return normal


def json_schema_format(definition: ToolDefinition, result: DialectResult) -> dict[str, Any]:
    """``{name, description?, schema, strict}``: the json_schema format both OpenAI APIs take (Chat nests it)."""
    entry: dict[str, Any] = {"name": definition.key}
    if definition.description:
        entry["description"] = definition.description
    entry["schema"] = result.schema
    entry["strict"] = result.strict  # explicit either way, as for tools
    return entry


def openai_tool_choice(
    names: NameMap, options: FormatOptions, ref: Callable[[str], dict[str, Any]], *, nested: bool
) -> str | dict[str, Any]:
    """``tool_choice`` for either OpenAI API; `ref` builds the API's function reference from a wire name.

    `active_tools` becomes the native ``allowed_tools`` form (nested under ``allowed_tools`` on Chat,
    flat on Responses) so the tool list itself never changes. A named choice already holds the model
    to one tool, and ``"none"`` to none, so those ignore `active_tools`.
    """
    choice = options.tool_choice
    if choice not in ("auto", "none", "required"):
        return ref(names.name_for(choice))
    if options.active_tools is None or choice == "none":
        return choice
    if not options.active_tools:
        return "none"  # nothing may be called; an empty allowed list is not a documented form
    allowed = {"mode": choice, "tools": [ref(names.name_for(key)) for key in options.active_tools]}
    return {"type": "allowed_tools", "allowed_tools": allowed} if nested else {"type": "allowed_tools", **allowed}


def tools_fragment(
    definitions: list[dict[str, Any]], choice: str | dict[str, Any], options: FormatOptions
) -> dict[str, Any]:
    """The request fragment both OpenAI APIs share; ``{}`` without tools (the API rejects ``tools: []``)."""
    if not definitions:
        return {}
    payload: dict[str, Any] = {"tools": definitions, "tool_choice": choice}
    if options.parallel_tool_calls is not None:
        payload["parallel_tool_calls"] = options.parallel_tool_calls
    return payload


class OpenAIChatProvider(Provider):
    """OpenAI Chat Completions. Pure: plain dicts in and out; SDK objects are accepted as responses."""

    name = "openai"
    # CreateChatCompletionResponse: choices[].message is required (openai-openapi.yaml)
    response_shape = (("choices", 0, "message"),)
    name_rule = OPENAI_NAME_RULE
    dialect = OpenAIDialect()
    native_output = "response_format"
    # "A max of 128 functions are supported" (openai-openapi.yaml, CreateChatCompletionRequest.functions, the
    # form `tools` replaced); the API answers 400 array_above_max_length past it, allowed_tools or not
    max_tools = 128
    max_tools_source = (
        "api.openai.com answers 400 array_above_max_length; openai-openapi.yaml: 'A max of 128 functions'"
    )

    def _output_fragment(self, definition: ToolDefinition, result: DialectResult) -> dict[str, Any]:
        return {"response_format": {"type": "json_schema", "json_schema": json_schema_format(definition, result)}}

    def _tool_definition(self, definition: ToolDefinition, wire_name: str, strict: bool | None) -> dict[str, Any]:
        result = self.schema_dialect(definition, strict)
        function: dict[str, Any] = {"name": wire_name}
        if definition.description:
            function["description"] = definition.description
        function["parameters"] = result.schema
        function["strict"] = result.strict  # explicit either way, so the payload says what was chosen
        return {"type": "function", "function": function}

    def _tools_payload(
        self,
        definitions: list[dict[str, Any]],
        by_key: Mapping[str, ToolDefinition],
        names: NameMap,
        options: FormatOptions,
    ) -> dict[str, Any]:
        choice = openai_tool_choice(names, options, _function_ref, nested=True)
        return tools_fragment(definitions, choice, options)

    def _parse_calls(self, response: Any) -> list[ToolCall]:
        message = _message_of(response)
        calls: list[ToolCall] = []
        for entry in message.get("tool_calls") or ():
            function = entry.get("function")
            if entry.get("type", "function") != "function" or not is_object(function):
                continue  # custom (free-text) tools are never sent by agentkit
            calls.append(
                ToolCall(
                    id=entry.get("id") or "", name=function.get("name", ""), arguments=function.get("arguments", "")
                )
            )
        return calls

    def _result_messages(self, results: list[ToolResult]) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = []
        images: list[dict[str, Any]] = []
        for result in results:
            call_id = self.wire_id(result.call_id)
            content = result.content
            one_text = len(content) == 1 and type(content[0]) is TextPart  # the usual result, no scan
            pictures = [] if one_text else [p for p in content if isinstance(p, ImagePart)]
            text = error_text(result)
            if pictures:
                note = f"[{len(pictures)} image(s) follow in the next user message]"
                text = f"{text}\n{note}" if text else note
                images.append({"type": "text", "text": f"Image(s) returned by tool call {call_id} ({result.name}):"})
                images.extend({"type": "image_url", "image_url": {"url": p.data_url}} for p in pictures)
            messages.append({"role": "tool", "tool_call_id": call_id, "content": text})
        if images:
            messages.append({"role": "user", "content": images})
        return messages

    def _accumulator(self, names: NameMap | None, tools: Mapping[str, ToolDefinition] | None) -> StreamDecoder:
        return OpenAIChatStream(self, names, tools)

    # ---- whole conversations ---------------------------------------------------------------------------

    def format_messages(
        self, messages: Sequence[Message], *, registry: Tools | None = None, aliases: bool = False
    ) -> dict[str, Any]:
        """``{"messages": [...]}`` for a neutral history (system prompts stay where they are)."""
        names = self.names(registry, aliases=aliases) if registry is not None else None
        out = chat_messages(
            messages,
            lambda message: self._assistant(message, names),
            lambda results: self._named_results(results, names),
        )
        return {"messages": out}

    def _assistant(self, message: AssistantMessage, names: NameMap | None) -> dict[str, Any]:
        entry: dict[str, Any] = {"role": "assistant"}
        if message.tool_calls:
            # content may be null beside tool calls (ChatCompletionRequestAssistantMessage)
            entry["content"] = message.text or None
            entry["tool_calls"] = [
                {
                    "id": self.wire_id(call.id),
                    "type": "function",
                    "function": {
                        "name": names.name_for(call.name) if names is not None else call.name,
                        "arguments": arguments_text(call),
                    },
                }
                for call in message.tool_calls
            ]
        else:
            entry["content"] = message.text
        return entry

    def parse_response(self, response: Any, *, registry: Tools | None = None, aliases: bool = False) -> ModelResponse:
        """A chat completion (dict or SDK ``ChatCompletion``) as a `ModelResponse` (first choice only)."""
        data = as_dict(response)
        self._check_shape(data)
        if not is_object(data):
            data = {}
        choices = data.get("choices")
        choice = choices[0] if is_array(choices) and choices and is_object(choices[0]) else {}
        message = choice.get("message")
        message = message if is_object(message) else {}
        calls = self._calls_of(data, registry=registry, aliases=aliases)
        return ModelResponse(
            message=AssistantMessage(text=_text_of(message), tool_calls=calls),
            usage=chat_usage(data.get("usage")),
            finish_reason=normalise_finish_reason(choice.get("finish_reason"), has_calls=bool(calls)),
            model_name=data.get("model"),
            raw=response,
            response_id=response_id(data.get("id")),
        )


def _text_of(message: Mapping[str, Any]) -> str:
    """The message's text; a refusal stands in for missing content so the caller sees why."""
    content = message.get("content")
    if is_array(content):  # some compatible servers answer with parts
        content = "".join(p.get("text", "") for p in content if is_object(p))
    if content:
        return str(content)
    refusal = message.get("refusal")
    return str(refusal) if refusal else ""


def _function_ref(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name}}


def _message_of(response: Any) -> dict[str, Any]:
    """The assistant message of a completion; a choice or a message itself is accepted too."""
    if not is_object(response):
        return {}
    choices = response.get("choices")
    if is_array(choices):
        # n > 1 gives alternative answers, not more calls: the first choice is the answer
        response = choices[0] if choices else {}
    message = response.get("message", response)
    return message if is_object(message) else {}


class OpenAIChatStream(StreamDecoder):
    """Decodes ``chat.completion.chunk`` objects: text, ``delta.tool_calls[]`` growing per ``index``, usage.

    The turn is complete once choice 0 has a ``finish_reason`` (the SDK consumes ``[DONE]`` itself).
    """

    terminal = "a finish_reason"

    def __init__(self, provider: Provider, names: NameMap | None, tools: Mapping[str, ToolDefinition] | None) -> None:
        super().__init__(provider, names, tools)
        self._text: list[str] = []
        self._announced: set[int] = set()
        self._finish: str | None = None
        self._usage: Any = None
        self._id: str | None = None  # the response id, sent with every chunk (Cohere: with message-start)
        self._model: str | None = None

    def feed(self, event: Any) -> list[ToolCallDelta]:
        """Consume one chunk (dict or SDK ``ChatCompletionChunk``); return its argument deltas."""
        chunk = as_dict(event)
        choices = chunk.get("choices") if is_object(chunk) else None
        deltas: list[ToolCallDelta] = []
        for choice in choices or ():
            if choice.get("index", 0) != 0:
                continue  # alternative answers (n > 1) are not merged into the first
            choice_delta: dict[str, Any] = choice.get("delta") or {}
            for position, entry in enumerate(choice_delta.get("tool_calls") or ()):
                index = entry.get("index", position)
                function = entry.get("function") or {}
                if entry.get("id") or function.get("name"):
                    self._start(index, entry.get("id"), function.get("name"))
                fragment = function.get("arguments")
                if fragment:
                    deltas.append(self._append(index, fragment))
        return deltas

    def _decode(self, event: Any) -> list[ModelStreamEvent]:
        chunk = as_dict(event)
        if not is_object(chunk):
            return []
        self._model = chunk.get("model") or self._model
        if isinstance(chunk.get("id"), str):
            self._id = chunk["id"]
        if is_object(chunk.get("usage")):
            self._usage = chunk["usage"]
        out: list[ModelStreamEvent] = []
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue
            delta: dict[str, Any] = choice.get("delta") or {}
            piece = delta.get("content") or delta.get("refusal")
            if piece:
                self._text.append(piece)
                out.append(TextDelta(piece))
            for position, entry in enumerate(delta.get("tool_calls") or ()):
                index = entry.get("index", position)
                function: dict[str, Any] = entry.get("function") or {}
                wire = function.get("name")
                if wire and index not in self._announced:
                    self._announced.add(index)
                    out.append(ToolCallStart(index, entry.get("id"), self._key(wire) or wire))
            if choice.get("finish_reason"):
                self._finish = choice["finish_reason"]
                self.finished = True
        return out + self._args_events(chunk)

    def _snapshot(self) -> dict[str, Any]:
        calls = [
            {
                "id": call.id or f"call_{index}",
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for index, call in self._call_dicts()
        ]
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self._text) or None}
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
