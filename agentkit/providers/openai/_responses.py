"""OpenAI Responses (``/v1/responses``) function calling.

What maps to what (``../shared/vendors/WIRE-FORMATS.md`` §2):

* a registry entry -> the flat ``{"type": "function", name, description?, parameters, strict,
  output_schema?}``, parameters in the OpenAI dialect (`agentkit.providers.openai._dialect`). ``strict`` is
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
* structured output (native) -> ``text: {"format": {"type": "json_schema", name, description?, schema,
  strict}}`` (openai SDK ``ResponseFormatTextJSONSchemaConfigParam``; OpenAPI
  ``TextResponseFormatJsonSchema``), the schema in the strict-tool dialect; it combines with tools;
* a `ToolResult` -> ``{"type": "function_call_output", "call_id", "output"}``: a string for text, a list
  of ``input_text`` / ``input_image`` parts when there are images. There is no error flag, so an
  error's text starts with ``"Error: "``. ``call_id`` is at most 64 characters; longer ids (from another
  vendor's history) are shortened deterministically.

An empty registry gives ``{}``. Reasoning models also need their ``reasoning`` output items sent back
with the results; that is the caller's history, not part of this fragment.

Whole conversations (what `agentkit.providers.openai.OpenAIResponsesModel` sends and reads):

* every `SystemMessage` -> ``instructions`` (joined by blank lines, in order); `UserMessage` ->
  ``{"role": "user", "content"}`` with a string or ``input_text`` / ``input_image`` parts;
  `AssistantMessage` -> its output items: the ``reasoning`` (and other vendor) items kept in
  ``provider_details["openai-responses"]["output"]`` replayed verbatim and in their order, the text as an
  assistant message, each tool call as a ``function_call`` item (wire name, ``call_id`` through
  `wire_id`, its ``fc_`` item id when it has one); `ToolResultsMessage` -> ``function_call_output`` items;
* a response -> `ModelResponse`: ``output_text`` (or ``refusal``) parts as text, the calls, every output
  item kept for replay, usage, and a finish reason from ``status`` / ``incomplete_details``.
"""

from __future__ import annotations as _annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from ..._jsonish import is_array, is_mapping, is_object
from ...definitions import ToolDefinition
from ...exceptions import ModelAPIError
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
from .._ids import IdRule
from .._messages import detail_count, response_id, token_count
from .._names import NameMap
from ._chat import (
    OPENAI_NAME_RULE,
    arguments_text,
    error_text,
    json_schema_format,
    openai_tool_choice,
    tools_fragment,
)
from ._dialect import OpenAIDialect

__all__ = ["DETAILS_KEY", "TOOL_SEARCH", "OpenAIResponsesProvider", "OpenAIResponsesStream"]

TOOL_SEARCH = MappingProxyType({"type": "tool_search"})
"""The hosted tool search of the Responses API (developers.openai.com, guides/tools-tool-search; openai SDK
``ToolSearchTool``), sent with the deferred functions, which carry ``defer_loading: true``. Its
``tool_search_call`` / ``tool_search_output`` items are kept and replayed like reasoning items."""

PROGRAMMATIC = MappingProxyType({"type": "programmatic_tool_calling"})
"""OpenAI's programmatic tool calling (openai SDK ``responses.tool_param.ProgrammaticToolCalling``): the model writes
a JavaScript ``program`` item the server runs; its calls of the tools marked ``allowed_callers: ["programmatic"]``
arrive as ``function_call`` items with ``caller: {"type": "program", "caller_id"}`` (kept in
``ToolCall.provider_details["caller"]`` and sent back on the call and its output); the ``program`` and
``program_output`` items are replayed like reasoning items."""

DETAILS_KEY = "openai-responses"
"""The key of this vendor's entry in `AssistantMessage.provider_details` (other vendors' keys are ignored)."""


class OpenAIResponsesProvider(Provider):
    """OpenAI Responses. Pure: plain dicts in and out; SDK objects are accepted as responses."""

    name = "openai-responses"
    # Response: output[] is required (openai-openapi.yaml); it may be empty
    response_shape = (("output",),)
    name_rule = OPENAI_NAME_RULE
    id_rule = IdRule(pattern=r"^.{1,64}$", allowed=".", max_length=64)
    dialect = OpenAIDialect()
    native_output = "text.format"

    def _output_fragment(self, definition: ToolDefinition, result: DialectResult) -> dict[str, Any]:
        return {"text": {"format": {"type": "json_schema", **json_schema_format(definition, result)}}}

    def _merge_output(self, body: dict[str, Any], fragment: dict[str, Any]) -> None:
        text = body.get("text")
        body["text"] = {**text, **fragment["text"]} if is_object(text) else fragment["text"]

    tool_search = TOOL_SEARCH
    programmatic_tool = PROGRAMMATIC
    programmatic_caller = "programmatic"

    def _tool_definition(self, definition: ToolDefinition, wire_name: str, strict: bool | None) -> dict[str, Any]:
        result = self.schema_dialect(definition, strict)
        entry: dict[str, Any] = {"type": "function", "name": wire_name}
        if definition.description:
            entry["description"] = definition.description
        entry["parameters"] = result.schema
        entry["strict"] = result.strict  # never omitted: omitted means "server decides" on Responses
        output = definition.output_schema
        if output is not None and output != {"type": "null"} and definition.output_json:
            entry["output_schema"] = output
        return entry

    def _tools_payload(
        self,
        definitions: list[dict[str, Any]],
        by_key: Mapping[str, ToolDefinition],
        names: NameMap,
        options: FormatOptions,
    ) -> dict[str, Any]:
        choice = openai_tool_choice(names, options, _function_ref, nested=False)
        return tools_fragment(definitions, choice, options)

    def _parse_calls(self, response: Any) -> list[ToolCall]:
        return [_call_of(item) for item in _output_items(response) if item.get("type") == "function_call"]

    def _result_messages(self, results: list[ToolResult]) -> list[dict[str, Any]]:
        return [
            {"type": "function_call_output", "call_id": self.wire_id(r.call_id), "output": _output(r)} for r in results
        ]

    def _accumulator(self, names: NameMap | None, tools: Mapping[str, ToolDefinition] | None) -> StreamDecoder:
        return OpenAIResponsesStream(self, names, tools)

    # ---- whole conversations ---------------------------------------------------------------------------

    def format_messages(
        self, messages: Sequence[Message], *, registry: Tools | None = None, aliases: bool = False
    ) -> dict[str, Any]:
        """``{"instructions"?: ..., "input": [...]}`` for a neutral history."""
        names = self.names(registry, aliases=aliases) if registry is not None else None
        instructions: list[str] = []
        items: list[dict[str, Any]] = []
        callers: dict[str, Any] = {}  # call id -> the program that made it: its output names it too
        for message in messages:
            # tool results and assistant turns first: a long history is made of them
            if isinstance(message, ToolResultsMessage):
                outputs = self._named_results(message.results, names)
                if callers:
                    outputs = [_with_caller(o, callers) for o in outputs]
                items.extend(outputs)
            elif isinstance(message, AssistantMessage):
                items.extend(self._assistant_items(message, names))
                for call in message.tool_calls:
                    caller = (call.provider_details or {}).get("caller")
                    if is_object(caller):
                        callers[self.wire_id(call.id)] = caller
            elif isinstance(message, SystemMessage):
                instructions.append(message.text)
            elif isinstance(message, UserMessage):  # pyright: ignore[reportUnnecessaryIsInstance]  # untyped callers
                items.append({"role": "user", "content": _user_content(message)})
            else:
                raise TypeError(f"not a conversation message: {message!r}")
        fragment: dict[str, Any] = {}
        if instructions:
            fragment["instructions"] = "\n\n".join(instructions)
        fragment["input"] = items
        return fragment

    def _assistant_items(self, message: AssistantMessage, names: NameMap | None) -> list[dict[str, Any]]:
        """The turn's items, in the order the model produced them when that order is known.

        Stored items are walked in order: reasoning (and any other vendor item) goes back verbatim, since
        a reasoning item must be followed by the item it led to; stored message and call items are
        rebuilt from the neutral message, so edits to the text or the calls are what is sent.
        """
        stored = _stored_output(message)
        if not stored:  # a turn from another vendor (or built by hand): its text, then its calls
            plain = [_assistant_text(message.text)] if message.text else []
            plain.extend([self._call_item(call, names) for call in message.tool_calls])
            return plain
        calls = {call.id: call for call in message.tool_calls}
        text = message.text
        # stored message items are replayed only while they still say the message's text
        stored_text = "".join([_item_text(i) for i in stored if i.get("type") == "message"]) if text else ""
        items: list[dict[str, Any]] = []
        sent: set[str] = set()
        text_sent = False
        for item in stored:
            kind = item.get("type")
            if kind == "function_call":
                call = calls.get(item.get("call_id") or "")
                if call is not None and call.id not in sent:
                    items.append(self._call_item(call, names))
                    sent.add(call.id)
            elif kind == "message":
                if text and stored_text == text:
                    items.append(item)  # unchanged: replayed with its id, which a reasoning item may point to
                    text_sent = True
                elif text and not text_sent:
                    items.append(_assistant_text(text))
                    text_sent = True
            else:
                items.append(item)
        if text and not text_sent:
            items.append(_assistant_text(text))
        if len(sent) < len(calls):
            items.extend([self._call_item(call, names) for call in message.tool_calls if call.id not in sent])
        return items

    def _call_item(self, call: ToolCall, names: NameMap | None) -> dict[str, Any]:
        item: dict[str, Any] = {
            "type": "function_call",
            "call_id": self.wire_id(call.id),
            "name": names.name_for(call.name) if names is not None else call.name,
            "arguments": arguments_text(call),
        }
        details = call.provider_details or {}
        item_id = details.get("item_id")
        if isinstance(item_id, str) and item_id.startswith("fc"):  # the API rejects other id forms here
            item["id"] = item_id
        caller = details.get("caller")
        if is_object(caller):
            item["caller"] = caller
        return item

    def parse_response(self, response: Any, *, registry: Tools | None = None, aliases: bool = False) -> ModelResponse:
        """A response (dict or SDK ``Response``) as a `ModelResponse`; its output items are kept for replay."""
        data = as_dict(response)
        self._check_shape(data)
        if not is_object(data):
            data = {}
        output = [item for item in data.get("output") or () if is_object(item)]
        calls = self._calls_of({"output": output}, registry=registry, aliases=aliases)
        text = "".join(_item_text(item) for item in output if item.get("type") == "message")
        sent_usage = data.get("usage")
        usage: Mapping[str, Any] = sent_usage if is_mapping(sent_usage) else {}
        return ModelResponse(
            message=AssistantMessage(
                text=text, tool_calls=calls, provider_details={DETAILS_KEY: {"output": output}} if output else None
            ),
            usage=Usage(
                input_tokens=token_count(usage.get("input_tokens")),
                output_tokens=token_count(usage.get("output_tokens")),
                requests=1,
                cache_read_tokens=detail_count(usage, ("input_tokens_details",), "cached_tokens"),
                reasoning_tokens=detail_count(usage, ("output_tokens_details",), "reasoning_tokens"),
            ),
            finish_reason=_finish_reason(data, has_calls=bool(calls)),
            model_name=data.get("model"),
            raw=response,
            response_id=response_id(data.get("id")),
        )


def _function_ref(name: str) -> dict[str, Any]:
    return {"type": "function", "name": name}


def failure(response: Any) -> Any:
    """The ``error`` of a failed response, for the message of the `ModelAPIError` it raises."""
    error = response.get("error") if is_mapping(response) else getattr(response, "error", None)
    return as_dict(error)


def failed(response: Any) -> bool:
    """Whether a whole response (dict or SDK ``Response``) says ``status: failed``."""
    status = response.get("status") if is_mapping(response) else getattr(response, "status", None)
    return bool(status == "failed")


def _stored_output(message: AssistantMessage) -> list[dict[str, Any]]:
    """This vendor's output items kept on the message (none for a turn from another vendor)."""
    details = message.provider_details
    if not details:
        return []
    mine = details.get(DETAILS_KEY)
    output = mine.get("output") if is_mapping(mine) else None
    return [item for item in output or () if is_object(item)]


def _item_text(item: Mapping[str, Any]) -> str:
    """The text of an output message item: its ``output_text`` parts, or a refusal."""
    parts = [p for p in item.get("content") or () if is_object(p)]
    text = "".join(p.get("text", "") for p in parts if p.get("type") == "output_text")
    return text or "".join(p.get("refusal", "") for p in parts if p.get("type") == "refusal")


def _assistant_text(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def _user_content(message: UserMessage) -> str | list[dict[str, Any]]:
    if isinstance(message.content, str):
        return message.content
    return [
        {"type": "input_image", "image_url": part.data_url, "detail": "auto"}
        if isinstance(part, ImagePart)
        else {"type": "input_text", "text": part.text}
        for part in message.content
    ]


_INCOMPLETE = {"max_output_tokens": "length", "content_filter": "content_filter"}


def _finish_reason(data: Mapping[str, Any], *, has_calls: bool) -> str | None:
    """``status`` (``completed`` / ``incomplete`` / ``failed`` ...) as a normalised finish reason."""
    status = data.get("status")
    if status == "incomplete":
        details = data.get("incomplete_details")
        reason = details.get("reason") if is_mapping(details) else None
        return _INCOMPLETE.get(reason or "", reason or "incomplete")
    if status in ("completed", None):
        return "tool_calls" if has_calls else "stop"
    return str(status)  # failed, cancelled, in_progress: the raw status says more than a guess


def _output_items(response: Any) -> list[dict[str, Any]]:
    """The output items of a response; a list of items or one item is accepted too."""
    if is_object(response):
        items = response.get("output", [response])
    elif is_array(response):
        items = response
    else:
        items = []
    return [item for item in items or () if is_object(item)]


def _call_of(item: dict[str, Any]) -> ToolCall:
    details = {k: item[k] for k in ("id", "namespace") if item.get(k)}
    if "id" in details:
        details["item_id"] = details.pop("id")
    caller = item.get("caller")
    if is_object(caller) and caller.get("type") not in (None, "direct"):
        details["caller"] = caller  # made by a program the server runs (programmatic tool calling)
    return ToolCall(
        id=item.get("call_id") or item.get("id") or "",
        name=item.get("name", ""),
        arguments=item.get("arguments", ""),
        provider_details=details or None,
    )


def _with_caller(output: dict[str, Any], callers: Mapping[str, Any]) -> dict[str, Any]:
    caller = callers.get(output.get("call_id") or "")
    return {**output, "caller": caller} if caller is not None else output


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


class OpenAIResponsesStream(StreamDecoder):
    """Decodes Responses stream events; calls are numbered 0, 1, ... in the order they start.

    The turn is the response that ``response.completed`` (or ``response.incomplete``) carries;
    ``response.failed`` raises `ModelAPIError`.
    """

    terminal = "response.completed"

    def __init__(self, provider: Provider, names: NameMap | None, tools: Mapping[str, ToolDefinition] | None) -> None:
        super().__init__(provider, names, tools)
        self._order: dict[Any, int] = {}
        self._announced: set[int] = set()
        self._announced_ids: set[str] = set()
        self._final: dict[str, Any] | None = None

    def _decode(self, event: Any) -> list[ModelStreamEvent]:
        data = as_dict(event)
        if not is_object(data):
            return []
        kind = data.get("type")
        if kind in ("response.output_text.delta", "response.refusal.delta"):
            return [TextDelta(data["delta"])] if data.get("delta") else []
        if kind == "response.failed":
            raise ModelAPIError(
                self.model_name or self._provider.name, f"response failed: {failure(data.get('response'))}"
            )
        deltas = self.feed(data)
        out: list[ModelStreamEvent] = [
            ToolCallStart(index, call_id, self._key(wire) or wire) for index, call_id, wire in self._new_calls(data)
        ]
        out += [ToolCallArgsDelta(d.index, d.arguments_delta, d.arguments_so_far) for d in deltas]
        if kind in ("response.completed", "response.incomplete") and is_object(data.get("response")):
            self._final = data["response"]
            self.finished = True
        return out

    def _snapshot(self) -> dict[str, Any] | None:
        return self._final

    def _new_calls(self, event: dict[str, Any]) -> list[tuple[int, str | None, str]]:
        """Calls numbered with this event: ``(index, call_id, wire name)``, each announced once.

        Calls are numbered in the order they first appear; the function call items this event carries
        (one for ``output_item.added`` / ``.done``, several for ``response.completed``) name them.
        """
        waiting = sorted(set(self.partial) - self._announced)
        if not waiting:
            return []
        items: Sequence[Any]
        if event.get("type") == "response.completed":
            response: dict[str, Any] = event.get("response") or {}
            items = response.get("output") or ()
        else:
            items = [event.get("item") or {}]
        fresh = [
            item
            for item in items
            if is_object(item)
            and item.get("type") == "function_call"
            and item.get("name")
            and item.get("call_id") not in self._announced_ids
        ]
        out: list[tuple[int, str | None, str]] = []
        for index, item in zip(waiting, fresh, strict=False):
            self._announced.add(index)
            self._announced_ids.add(item.get("call_id") or "")
            out.append((index, item.get("call_id"), item["name"]))
        return out

    def feed(self, event: Any) -> list[ToolCallDelta]:
        """Consume one stream event (dict or SDK event object); return the argument deltas it carried."""
        data = as_dict(event)
        kind = data.get("type") if is_object(data) else None
        if kind in ("response.output_item.added", "response.output_item.done"):
            item: dict[str, Any] = data.get("item") or {}
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
            response: dict[str, Any] = data.get("response") or {}
            for position, item in enumerate(response.get("output") or ()):
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
