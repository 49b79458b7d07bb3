"""AWS Bedrock Runtime Converse / ConverseStream tool use (the JSON wire form, not boto3).

What maps to what (``../shared/vendors/WIRE-FORMATS.md`` §7; botocore service-2.json shapes):

* a registry entry -> ``{"toolSpec": {name, description?, inputSchema: {"json": <schema>}, strict?}}``,
  the schema in the Bedrock dialect (`agentkit.providers.bedrock._dialect`: strict only when forced, because
  only some models support it); the fragment is ``{"toolConfig": {"tools": [...], "toolChoice"?}}``;
* ``tool_choice``: ``"auto"`` -> no ``toolChoice`` (auto is the default, and some models refuse the
  field); ``"required"`` -> ``{"any": {}}``; a key -> ``{"tool": {"name"}}`` (Claude 3+ and Nova only);
* ``"none"`` has no Converse form. Leaving ``toolConfig`` out is no substitute: Converse refuses a
  request whose history holds ``toolUse``/``toolResult`` blocks without it (§7d). So the tools stay
  and no ``toolChoice`` is sent: the model is *not* prevented from calling a tool. Callers that know
  the history holds no tool blocks may drop ``toolConfig`` themselves;
* ``active_tools`` filters ``tools`` (no allowed-subset form); a filter that leaves nothing is
  handled like ``"none"`` (``tools`` must hold at least one tool);
* ``parallel_tool_calls`` has no Converse switch and is ignored;
* ``output.message.content[]`` blocks ``{"toolUse": {toolUseId, name, input}}`` -> `ToolCall`
  (``input`` kept as the object sent; ``server_tool_use`` blocks are the service's own and skipped);
* stream events ``contentBlockStart.start.toolUse`` / ``contentBlockDelta.delta.toolUse.input``
  (string fragments) / ``contentBlockStop`` -> argument deltas, the text parsed at the stop;
* structured output (native) -> ``outputConfig: {"textFormat": {"type": "json_schema", "structure":
  {"jsonSchema": {"schema": <the schema as JSON text>, "name", "description"?}}}}`` (botocore service-2.json
  ``OutputConfig``; docs.aws.amazon.com/bedrock/latest/userguide/structured-output.html), the schema in
  the strict dialect (constrained decoding; models without structured outputs refuse the field); it
  combines with tools;
* `ToolResult` objects -> ONE ``user`` message of ``{"toolResult": {toolUseId, content: [...], status?}}``
  blocks. Errors get ``status: "error"`` and, because that flag only reaches Claude and Nova models,
  text that starts with ``"Error: "`` (never empty: Converse refuses an empty error result).
  Images become ``image`` blocks with base64 ``bytes`` (the JSON form of the blob) or an
  ``s3Location`` for ``s3://`` URLs; an http(s) URL cannot be sent and is replaced by a text note.
  Ids are made to match ``[a-zA-Z0-9_.:-]{1,64}``;
* a neutral history (`format_messages`) -> ``{"system"?: [{"text"}], "messages": [...]}``: consecutive
  same-role turns merged (Converse wants user and assistant to alternate), ``toolResult`` blocks first
  in a user turn, assistant calls as ``toolUse`` blocks with wire names and the same remapped ids as
  their results, blocks kept in ``AssistantMessage.provider_details["bedrock"]["blocks"]`` (reasoning)
  replayed first. `build_request` keeps a ``toolConfig`` whenever the history holds tool blocks (§7d),
  declaring the tools the history names when the registry is empty;
* a whole Converse response (`parse_response`) -> `ModelResponse`: ``stopReason`` ``end_turn`` /
  ``stop_sequence`` -> ``stop``, ``tool_use`` -> ``tool_calls``, ``max_tokens`` /
  ``model_context_window_exceeded`` -> ``length``, ``guardrail_intervened`` / ``content_filtered`` ->
  ``content_filter`` (others as sent); input tokens include cache reads and writes.
"""

from __future__ import annotations as _annotations

import base64
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..._jsonish import is_array, is_object
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
    UserMessage,
)
from ...models._base import ModelStreamEvent, TextDelta, ToolCallStart
from .._codec import FormatOptions, Provider, StreamDecoder, ToolCallDelta, Tools, as_dict
from .._dialect import DialectResult
from .._ids import IdRule
from .._messages import base64_of, cached_prompt_usage, input_object, mapped_reason, response_id, wire_name
from .._names import NameMap, NameRule
from ._dialect import BedrockDialect

__all__ = ["BEDROCK_ID_RULE", "BEDROCK_NAME_RULE", "BedrockProvider", "BedrockStream", "json_form"]

BEDROCK_NAME_RULE = NameRule(pattern=r"^[a-zA-Z0-9_-]{1,64}$", allowed="[a-zA-Z0-9_-]", max_length=64)
"""``ToolName``: 1 to 64 of ``[a-zA-Z0-9_-]`` (service-2.json; the Smithy pattern is unanchored)."""

BEDROCK_ID_RULE = IdRule(pattern=r"^[a-zA-Z0-9_.:-]{1,64}$", allowed="[a-zA-Z0-9_.:-]", max_length=64)
"""``ToolUseId``: 1 to 64 of ``[a-zA-Z0-9_.:-]`` (service-2.json)."""

_FORMATS = {"image/png": "png", "image/jpeg": "jpeg", "image/jpg": "jpeg", "image/gif": "gif", "image/webp": "webp"}
_ERROR_PREFIX = "Error: "
_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter",
}
# input, output, cache-read and cache-write counts (reads and writes are counted apart from the input)
_USAGE_FIELDS = ("inputTokens", "outputTokens", "cacheReadInputTokens", "cacheWriteInputTokens")
_RETIRED = "Not available in this request; do not call it."


class BedrockProvider(Provider):
    """Bedrock Converse. Pure: plain dicts in and out, in the service's JSON form (blobs as base64)."""

    name = "bedrock"
    # ConverseResponse: output (a union whose one member is message) is required (service-2.json)
    response_shape = (("output", "message"),)
    name_rule = BEDROCK_NAME_RULE
    id_rule = BEDROCK_ID_RULE
    dialect = BedrockDialect()
    native_output = "outputConfig.textFormat"

    def output_schema(self, definition: ToolDefinition) -> DialectResult:
        """The strict form, always: ``outputConfig.textFormat`` is constrained decoding (Claude's strict subset)."""
        return self.schema_dialect(definition, True)

    def _output_fragment(self, definition: ToolDefinition, result: DialectResult) -> dict[str, Any]:
        schema: dict[str, Any] = {"schema": json.dumps(result.schema, ensure_ascii=False), "name": definition.key}
        if definition.description:
            schema["description"] = definition.description
        text_format = {"type": "json_schema", "structure": {"jsonSchema": schema}}
        return {"outputConfig": {"textFormat": text_format}}

    def _merge_output(self, body: dict[str, Any], fragment: dict[str, Any]) -> None:
        config = body.get("outputConfig")
        body["outputConfig"] = {**config, **fragment["outputConfig"]} if is_object(config) else fragment["outputConfig"]

    def format_messages(
        self, messages: Sequence[Message], *, registry: Tools | None = None, aliases: bool = False
    ) -> dict[str, Any]:
        """``{"system"?: [...], "messages": [...]}`` for a neutral history; see `Provider.format_messages`.

        Blobs (image bytes) are base64 text, as in the service's JSON body; boto3 callers decode them.
        """
        names = self.names(registry, aliases=aliases) if registry is not None else None
        system: list[dict[str, Any]] = []
        turns: list[dict[str, Any]] = []
        for message in messages:
            role: str
            blocks: list[dict[str, Any]]
            if isinstance(message, SystemMessage):
                if message.text.strip():
                    system.append({"text": message.text})
                continue
            if isinstance(message, UserMessage):
                role, blocks = "user", [_part(p, _USER_NOTE) for p in message.parts]
            elif isinstance(message, AssistantMessage):
                role, blocks = "assistant", self._assistant_blocks(message, names)
            elif isinstance(message, ToolResultsMessage):  # pyright: ignore[reportUnnecessaryIsInstance]  # untyped callers
                role, blocks = "user", [{"toolResult": self._result_block(r)} for r in message.results]
            else:
                raise TypeError(f"not a conversation message: {message!r}")
            blocks = [b for b in blocks if "text" not in b or b["text"].strip()]  # blank text is refused
            if not blocks:
                continue
            if turns and turns[-1]["role"] == role:
                turns[-1]["content"].extend(blocks)  # Converse wants user and assistant turns to alternate
            else:
                turns.append({"role": role, "content": blocks})
        for turn in turns:
            if turn["role"] == "user":
                # results first: Claude models behind Converse demand it, the others do not mind
                content: list[dict[str, Any]] = turn["content"]
                content.sort(key=lambda block: "toolResult" not in block)
        fragment: dict[str, Any] = {}
        if system:
            fragment["system"] = system
        fragment["messages"] = turns
        return fragment

    def _assistant_blocks(self, message: AssistantMessage, names: NameMap | None) -> list[dict[str, Any]]:
        mine = (message.provider_details or {}).get(self.name)
        kept = mine.get("blocks") if is_object(mine) else None
        # reasoning blocks go back unmodified, before the text and the calls
        blocks = [dict(b) for b in kept if is_object(b)] if is_array(kept) else []
        if message.text:
            blocks.append({"text": message.text})
        for call in message.tool_calls:
            use = {
                "toolUseId": self.wire_id(call.id),
                "name": wire_name(names, call.name, self.name_rule),
                "input": input_object(call),
            }
            blocks.append({"toolUse": use})
        return blocks

    def parse_response(self, response: Any, *, registry: Tools | None = None, aliases: bool = False) -> ModelResponse:
        """A Converse response (dict, as boto3 returns it) as a `ModelResponse`; see `Provider.parse_response`."""
        data = as_dict(response)
        if not is_object(data):
            raise TypeError(f"not a Converse response: {response!r}")
        self._check_shape(data)
        content = [b for b in _content_of(data) if is_object(b)]
        text = "".join(b["text"] for b in content if isinstance(b.get("text"), str))
        kept = [b for b in content if "text" not in b and not _is_client_call(b)]
        usage = data.get("usage")
        usage = usage if is_object(usage) else {}
        metadata = data.get("ResponseMetadata")
        return ModelResponse(
            message=AssistantMessage(
                text=text,
                tool_calls=self._calls_of(data, registry=registry, aliases=aliases),
                provider_details={self.name: {"blocks": kept}} if kept else None,
            ),
            usage=cached_prompt_usage(usage, _USAGE_FIELDS),
            finish_reason=mapped_reason(data.get("stopReason"), _FINISH),
            raw=response,
            # boto3 puts the x-amzn-requestid header here, for converse and converse_stream alike
            request_id=response_id(metadata.get("RequestId")) if is_object(metadata) else None,
        )

    def _complete_request(self, body: dict[str, Any]) -> dict[str, Any]:
        """`build_request`'s last step: keep a ``toolConfig`` while the history holds tool blocks.

        Converse refuses ``toolUse``/``toolResult`` blocks in a request without ``toolConfig`` (§7d). With
        an empty registry, the tools the history names are declared with a note not to call them; Converse
        has no ``none`` choice, so a model may still call one, and the registry answers it as unknown.
        """
        if "toolConfig" not in body:
            used = _history_tool_names(body["messages"])
            if used:
                schema = {"json": {"type": "object"}}
                specs = [{"name": n, "description": _RETIRED, "inputSchema": schema} for n in used]
                body["toolConfig"] = {"tools": [{"toolSpec": spec} for spec in specs]}
        return body

    def _tool_definition(self, definition: ToolDefinition, wire_name: str, strict: bool | None) -> dict[str, Any]:
        result = self.schema_dialect(definition, strict)
        spec: dict[str, Any] = {"name": wire_name}
        if definition.description:
            spec["description"] = definition.description  # NonEmptyString: omitted when empty
        spec["inputSchema"] = {"json": result.schema}
        if result.strict:
            spec["strict"] = True
        return {"toolSpec": spec}

    def _tools_payload(
        self,
        entries: list[dict[str, Any]],
        tools: Mapping[str, ToolDefinition],
        names: NameMap,
        options: FormatOptions,
    ) -> dict[str, Any]:
        if not entries:
            return {}  # toolConfig.tools needs at least one tool
        by_wire = dict(zip(names.to_wire, entries, strict=True))  # registry order, as the entries
        choice = options.tool_choice
        sent = list(by_wire)
        if options.active_tools is not None:
            allowed = set(options.active_tools)
            sent = [k for k in sent if k in allowed] or sent
            if not allowed:
                choice = "none"
        config: dict[str, Any] = {"tools": [by_wire[k] for k in sent]}
        if choice == "required":
            config["toolChoice"] = {"any": {}}
        elif choice not in ("auto", "none"):
            config["toolChoice"] = {"tool": {"name": names.name_for(choice)}}
        return {"toolConfig": config}

    def _parse_calls(self, response: Any) -> list[ToolCall]:
        calls: list[ToolCall] = []
        for block in _content_of(response):
            use = block.get("toolUse") if is_object(block) else None
            if not is_object(use) or use.get("type") == "server_tool_use":
                continue
            arguments: object = use.get("input")
            calls.append(
                ToolCall(
                    id=use.get("toolUseId") or "",
                    name=use.get("name") or "",
                    arguments=arguments if is_object(arguments) or isinstance(arguments, str) else {},
                )
            )
        return calls

    def _result_messages(self, results: list[ToolResult]) -> list[dict[str, Any]]:
        if not results:
            return []
        return [{"role": "user", "content": [{"toolResult": self._result_block(r)} for r in results]}]

    def _result_block(self, result: ToolResult) -> dict[str, Any]:
        content = [_part(p) for p in result.content]
        content = [c for c in content if c.get("text") != ""]  # blank text blocks are refused
        if result.is_error:
            first = next((c for c in content if "text" in c), None)
            if first is None:
                content.insert(0, {"text": _ERROR_PREFIX + "the tool call failed"})
            elif not first["text"].startswith(_ERROR_PREFIX):
                first["text"] = _ERROR_PREFIX + first["text"]
        block: dict[str, Any] = {"toolUseId": self.wire_id(result.call_id), "content": content}
        if result.is_error:
            block["status"] = "error"
        return block

    def _accumulator(self, names: NameMap | None, tools: Mapping[str, ToolDefinition] | None) -> StreamDecoder:
        return BedrockStream(self, names, tools)


def _content_of(response: Any) -> list[Any]:
    """The content blocks of a Converse response, of its ``output.message``, or of a message."""
    if is_array(response):
        return response
    if not is_object(response):
        return []
    output = response.get("output")
    if is_object(output):
        response = output.get("message") or {}
    content = response.get("content") if is_object(response) else None
    return content if is_array(content) else []


_RESULT_NOTE = "Bedrock tool results take image bytes or s3:// locations"
_USER_NOTE = "Bedrock takes image bytes or s3:// locations"


def _part(part: TextPart | ImagePart, note: str = _RESULT_NOTE) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"text": part.text}
    url = part.url or ""
    if part.data is not None or url.startswith("data:"):
        media_type, data = base64_of(part)
        fmt = _FORMATS.get(media_type)
        if fmt is not None and data is not None:
            return {"image": {"format": fmt, "source": {"bytes": data}}}
        return {"text": f"[image of type {media_type} omitted: Bedrock takes png, jpeg, gif or webp]"}
    fmt = _FORMATS.get(part.media_type)
    if url.startswith("s3://") and fmt is not None:
        return {"image": {"format": fmt, "source": {"s3Location": {"uri": url}}}}
    # Converse images are bytes or S3 objects; fetching a URL would make the provider impure.
    return {"text": f"[image at {url} omitted: {note}]"}


def _is_client_call(block: dict[str, Any]) -> bool:
    use = block.get("toolUse")
    return is_object(use) and use.get("type") != "server_tool_use"


def _history_tool_names(turns: list[dict[str, Any]]) -> list[str]:
    """The tool names of the client ``toolUse`` blocks in formatted turns, first use first."""
    seen: dict[str, None] = {}
    for turn in turns:
        for block in turn.get("content") or ():
            if _is_client_call(block):
                seen.setdefault(block["toolUse"]["name"], None)
    return list(seen)


class BedrockStream(StreamDecoder):
    """Decodes ConverseStream events (``{"contentBlockStart": {...}}`` etc., as boto3 yields them).

    ``toolUse`` content blocks become calls 0, 1, ... in the order they start. The events rebuild the
    Converse response they describe (`_Snapshot`), read by `parse_response` in the service's JSON form
    at the end; the turn is complete at ``messageStop``.
    """

    terminal = "messageStop"

    def __init__(self, provider: Provider, names: NameMap | None, tools: Mapping[str, ToolDefinition] | None) -> None:
        super().__init__(provider, names, tools)
        self._blocks: dict[int, int] = {}  # contentBlockIndex -> call index
        self._converse = _Snapshot()

    def _decode(self, event: Any) -> list[ModelStreamEvent]:
        if not is_object(event):
            event = as_dict(event)
            if not is_object(event):
                return []
        out: list[ModelStreamEvent] = []
        started = self._converse.feed(event)
        if started is not None:
            index, call_id, wire = started
            out.append(ToolCallStart(index, call_id, self._key(wire) or wire))
        text = _text_delta(event)
        if text:
            out.append(TextDelta(text))
        if "messageStop" in event:
            self.finished = True
        return out + self._args_events(event)

    def _snapshot(self) -> Any:
        return json_form(self._converse.response)

    def feed(self, event: Any) -> list[ToolCallDelta]:
        """Consume one stream event; return its argument deltas."""
        data = as_dict(event)
        if not is_object(data):
            return []
        start = data.get("contentBlockStart")
        if is_object(start):
            start_block: Mapping[str, Any] = start.get("start") or {}
            use = start_block.get("toolUse")
            block_index = start.get("contentBlockIndex")
            if is_object(use) and isinstance(block_index, int):
                started = self._blocks.setdefault(block_index, len(self._blocks))
                self._start(started, use.get("toolUseId"), use.get("name"))
            return []
        delta = data.get("contentBlockDelta")
        if is_object(delta):
            growing = self._blocks.get(delta.get("contentBlockIndex", -1))
            inner: Mapping[str, Any] = delta.get("delta") or {}
            use = inner.get("toolUse")
            fragment = use.get("input") if is_object(use) else None
            if growing is None or not isinstance(fragment, str) or not fragment:
                return []
            return [self._append(growing, fragment)]
        stop = data.get("contentBlockStop")
        if is_object(stop):
            done = self._blocks.get(stop.get("contentBlockIndex", -1))
            if done is not None:
                self._parse_arguments(done)
        return []


def json_form(value: Any) -> Any:
    """A boto3 response in the service's JSON form: bytes as base64 text, ``ResponseMetadata`` dropped."""
    if is_object(value):
        return {k: json_form(v) for k, v in value.items() if k != "ResponseMetadata"}
    if is_array(value):
        return [json_form(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    return value


def _text_delta(event: dict[str, Any]) -> str:
    block_delta: Mapping[str, Any] = event.get("contentBlockDelta") or {}
    delta: Mapping[str, Any] = block_delta.get("delta") or {}
    text = delta.get("text")
    return text if isinstance(text, str) else ""


class _Snapshot:
    """Rebuilds the Converse response a stream describes, so the stream ends with what `request` returns."""

    def __init__(self) -> None:
        self._blocks: dict[int, dict[str, Any]] = {}
        self._json: dict[int, str] = {}
        self._calls = 0
        self._end: dict[str, Any] = {}

    @property
    def response(self) -> dict[str, Any]:
        """The response so far, in ``converse``'s shape."""
        content = [self._blocks[i] for i in sorted(self._blocks)]
        return {"output": {"message": {"role": "assistant", "content": content}}, **self._end}

    def feed(self, event: dict[str, Any]) -> tuple[int, str | None, str] | None:
        """Apply one event; return (call index, id, wire name) when it starts a tool call."""
        if "contentBlockStart" in event:
            start = event["contentBlockStart"]
            start_block: Mapping[str, Any] = start.get("start") or {}
            use = start_block.get("toolUse")
            index = start.get("contentBlockIndex")
            if is_object(use) and isinstance(index, int):
                self._blocks[index] = {"toolUse": {**use, "input": {}}}
                self._json[index] = ""
                self._calls += 1
                return self._calls - 1, use.get("toolUseId"), use.get("name") or ""
        elif "contentBlockDelta" in event:
            self._delta(event["contentBlockDelta"].get("contentBlockIndex"), event["contentBlockDelta"].get("delta"))
        elif "contentBlockStop" in event:
            index = event["contentBlockStop"].get("contentBlockIndex")
            text = self._json.pop(index, None) if isinstance(index, int) else None
            if text is not None and text.strip():
                try:
                    self._blocks[index]["toolUse"]["input"] = json.loads(text)
                except ValueError:
                    self._blocks[index]["toolUse"]["input"] = text  # as the accumulator: validation reports it
        elif "messageStop" in event:
            stop = event["messageStop"]
            self._end["stopReason"] = stop.get("stopReason")
            if "additionalModelResponseFields" in stop:
                self._end["additionalModelResponseFields"] = stop["additionalModelResponseFields"]
        elif "metadata" in event:
            self._end.update(event["metadata"])  # usage, metrics, trace
        return None

    def _delta(self, index: Any, delta: Any) -> None:
        if not isinstance(index, int) or not is_object(delta):
            return
        if isinstance(delta.get("text"), str):
            block = self._blocks.setdefault(index, {"text": ""})
            block["text"] = block.get("text", "") + delta["text"]
        elif is_object(delta.get("toolUse")) and index in self._json:
            self._json[index] += delta["toolUse"].get("input") or ""
        elif is_object(delta.get("reasoningContent")):
            reasoning = self._blocks.setdefault(index, {"reasoningContent": {}}).setdefault("reasoningContent", {})
            piece = delta["reasoningContent"]
            if "text" in piece or "signature" in piece:
                text = reasoning.setdefault("reasoningText", {"text": ""})
                text["text"] += piece.get("text") or ""
                if "signature" in piece:
                    text["signature"] = piece["signature"]
            if "redactedContent" in piece:
                reasoning["redactedContent"] = reasoning.get("redactedContent", b"") + piece["redactedContent"]
