"""Google Gemini ``generateContent`` / ``streamGenerateContent`` function calling (REST wire form, camelCase).

What maps to what:

* tools -> ``{"tools": [{"functionDeclarations": [{"name", "description"?, "parametersJsonSchema"?}]}]}``.
  ``parametersJsonSchema`` takes standard JSON Schema (`GeminiJsonSchemaDialect`: nearly pass-through).
  ``GeminiProvider(schema_format="openapi")`` sends the OpenAPI-subset ``parameters`` instead
  (`GeminiOpenAPIDialect`). A tool without parameters sends neither (Gemini documents leaving it unset).
* ``tool_choice`` / ``active_tools`` / strict -> ``toolConfig.functionCallingConfig``: ``"auto"`` -> ``AUTO``,
  ``"none"`` -> ``NONE``, ``"required"`` -> ``ANY``, a key -> ``ANY`` + ``allowedFunctionNames: [that one]``.
  ``active_tools`` is sent natively as ``allowedFunctionNames`` (the declarations stay the same, so
  prompt caching keeps working) with ``ANY`` when a call is required, else ``VALIDATED`` (``AUTO`` cannot
  restrict). ``strict=True`` asks for ``VALIDATED`` instead of ``AUTO`` (schema-adherent calls).
  ``parallel_tool_calls`` cannot be expressed (Gemini has no switch): it is ignored.
* calls: ``candidates[0].content.parts[].functionCall {id?, name, args}``; ``args`` is kept as the object
  Gemini sends. Other candidates are alternatives (``candidateCount``), not parallel calls, so only the
  first is read. A part's ``thoughtSignature`` is kept in ``ToolCall.provider_details``.
* call ids are optional on the Gemini API. A call without one gets a deterministic id built from its
  position in the response and a hash of its name and arguments (``gemini_call_<position>_<hash>``);
  such generated ids are never sent back (the result is matched by name and order instead).
* results -> one ``{"role": "user", "parts": [{"functionResponse": {"id"?, "name", "response"}}]}``
  content. ``response`` is always an object: ``{"output": value}`` (the JSON the tool's content holds,
  else its text) or ``{"error": message}`` for errors. Images go into ``functionResponse.parts`` as
  ``inlineData`` / ``fileData`` (Gemini 3); ``GeminiProvider(tool_result_images=False)`` sends a text
  placeholder instead, for older models.
* streaming: every chunk carries whole ``functionCall`` parts; each is reported as one delta holding its
  arguments' JSON text.
* conversations (`GeminiProvider.format_messages`): system messages -> ``systemInstruction.parts``; user
  messages -> ``user`` contents (``text``, ``inlineData``, ``fileData``); assistant turns -> ``model``
  contents, replaying Gemini's own parts verbatim (``provider_details["gemini"]["parts"]``, kept by
  `GeminiProvider.parse_response` when they hold thoughts or signatures) while the message still matches
  them; tool results as above. Details of other vendors are ignored.

google-genai is never imported: SDK response objects are read through `as_dict` (camelCase aliases), and
snake_case keys (``function_call``, ``thought_signature``) from ``to_json_dict()`` are accepted too.
"""

from __future__ import annotations as _annotations

import base64
import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal

from ..._jsonish import is_array, is_mapping, is_object
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
from .._dialect import Dialect, DialectResult
from .._messages import args_object, data_url, response_id, token_count
from .._names import NameMap, NameRule, alias_for
from ._dialect import GeminiJsonSchemaDialect, GeminiOpenAPIDialect

__all__ = ["GENERATED_ID_PREFIX", "GeminiProvider", "GeminiStreamAccumulator", "SchemaFormat", "generated_id"]

SchemaFormat = Literal["json_schema", "openapi"]
"""Where a tool's schema goes: ``parametersJsonSchema`` (JSON Schema) or ``parameters`` (OpenAPI subset)."""

GENERATED_ID_PREFIX = "gemini_call_"
"""Prefix of the ids agentkit makes up for calls Gemini sent without one (never sent back to Gemini)."""

_JSON_DIALECT = GeminiJsonSchemaDialect()
_OPENAPI_DIALECT = GeminiOpenAPIDialect()
# Media types Gemini documents for functionResponse.parts.
_RESULT_MEDIA = frozenset({"image/png", "image/jpeg", "image/webp", "application/pdf", "text/plain"})


def _get(node: Mapping[str, Any], camel: str, snake: str) -> Any:
    """A field under its REST (camelCase) name or its Python SDK (snake_case) name."""
    value = node.get(camel)
    return node.get(snake) if value is None else value


def _parts(response: Any) -> list[Mapping[str, Any]]:
    """The parts of the first candidate's content (or of a bare Content / list of parts)."""
    if is_array(response):
        return [p for p in response if is_mapping(p)]
    if not is_mapping(response):
        return []
    candidates = response.get("candidates")
    if is_array(candidates):
        first: Mapping[str, Any] = candidates[0] if candidates and is_mapping(candidates[0]) else {}
        content: Any = first.get("content") or {}
    else:
        content = response
    parts = content.get("parts") if is_mapping(content) else None
    return [p for p in parts if is_mapping(p)] if is_array(parts) else []


def generated_id(position: int, name: str, args: Mapping[str, Any]) -> str:
    """The deterministic id of the `position`-th call (0-based) of a response that carried no id."""
    digest = hashlib.sha256(f"{name}\0{json_text(args, sort_keys=True)}".encode()).hexdigest()
    return f"{GENERATED_ID_PREFIX}{position}_{digest[:8]}"


def _call_from_part(part: Mapping[str, Any], position: int) -> ToolCall | None:
    call = _get(part, "functionCall", "function_call")
    if not is_mapping(call):
        return None
    name = call.get("name") or ""
    args = call.get("args")
    arguments: Mapping[str, Any] = args if is_mapping(args) else {}
    raw_id = call.get("id")
    call_id = raw_id if isinstance(raw_id, str) and raw_id else generated_id(position, name, arguments)
    signature = _get(part, "thoughtSignature", "thought_signature")
    details = {"thoughtSignature": signature} if signature else None
    return ToolCall(id=call_id, name=name, arguments=arguments, provider_details=details)


def _output_value(result: ToolResult) -> Any:
    """What goes under ``response.output``: the JSON the tool's content holds, else its text.

    `ToolResult.content` is what the model is meant to see (``to_model_output`` may have shaped it), so it
    is used rather than the raw `output`; for the default content (the output's JSON) both are the same
    value, sent as structured JSON rather than as a string holding JSON.
    """
    text = result.text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _image_part(part: ImagePart) -> dict[str, Any] | None:
    """The ``functionResponse.parts[]`` entry for an image, or None if Gemini does not take its type."""
    if part.data is not None:
        media, data = part.media_type, base64.b64encode(part.data).decode("ascii")
    else:
        inline = data_url(part.url or "")
        if inline is None:
            if part.media_type not in _RESULT_MEDIA:
                return None
            return {"fileData": {"mimeType": part.media_type, "fileUri": part.url}}
        media, data = inline
    if media not in _RESULT_MEDIA:
        return None
    return {"inlineData": {"mimeType": media, "data": data}}


def _placeholder(part: ImagePart, reason: str) -> str:
    where = part.url if part.url is not None and not part.url.startswith("data:") else f"{len(part.data or b'')} bytes"
    return f"[image ({part.media_type}, {where}) not shown: {reason}]"


_GEMINI_VERSION = re.compile(r"gemini-(\d+)")


class GeminiProvider(Provider):
    """Gemini ``generateContent`` function declarations, function-calling config, calls, streams and results.

    Args:
        schema_format: ``"json_schema"`` (default) sends ``parametersJsonSchema``; ``"openapi"`` sends the
            OpenAPI-subset ``parameters`` (for endpoints or proxies that only take that form). Such an
            instance can be passed wherever a provider name is accepted, or registered under a name
            with `agentkit.providers.register_provider`.
        tool_result_images: send images in tool results as ``functionResponse.parts`` (Gemini 3 models);
            False replaces them by a text placeholder, for older models.
    """

    name = "gemini"
    # GenerateContentResponse: a candidate, or promptFeedback when the prompt was blocked (no candidate);
    # SDK objects are dumped in either spelling
    response_shape = (("candidates", 0), ("promptFeedback",), ("prompt_feedback",))
    name_rule = NameRule(
        pattern=r"^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$", allowed="[A-Za-z0-9_.:-]", max_length=128, first="[A-Za-z_]"
    )
    dialect: Dialect | None = _JSON_DIALECT
    refuses_forced_strict = False  # strict is the request's VALIDATED mode; rejections are the schema's own
    # the API's own 400: "tools[0].function_declarations: At most 512 function declarations can be specified"
    max_tools = 512
    max_tools_source = "the Gemini API's 400 'At most 512 function declarations can be specified'"

    def __init__(self, *, schema_format: SchemaFormat = "json_schema", tool_result_images: bool = True) -> None:
        super().__init__()
        if schema_format not in ("json_schema", "openapi"):
            raise ValueError(f"schema_format must be 'json_schema' or 'openapi', got {schema_format!r}")
        self.schema_format: SchemaFormat = schema_format
        """Where tool schemas go: ``parametersJsonSchema`` or ``parameters``."""
        self.tool_result_images = tool_result_images
        """Whether images in tool results are sent as ``functionResponse.parts``."""
        self.dialect = _OPENAPI_DIALECT if schema_format == "openapi" else _JSON_DIALECT

    def __repr__(self) -> str:
        return f"GeminiProvider(schema_format={self.schema_format!r})"

    # ---- structured output -----------------------------------------------------------------------

    native_output = "responseJsonSchema"

    def native_output_with_tools(self, model_name: str | None) -> bool:
        """Gemini 3 and later only: earlier models refuse function calling with a JSON response type.

        Without a model name (a bare provider) the answer is no, so the request is accepted either way.
        """
        found = _GEMINI_VERSION.search(model_name or "")
        return found is not None and int(found.group(1)) >= 3

    def _output_fragment(self, definition: ToolDefinition, result: DialectResult) -> dict[str, Any]:
        field = "responseSchema" if self.schema_format == "openapi" else "responseJsonSchema"
        return {"generationConfig": {"responseMimeType": "application/json", field: result.schema}}

    def _merge_output(self, body: dict[str, Any], fragment: dict[str, Any]) -> None:
        config = body.get("generationConfig")
        merged = fragment["generationConfig"]
        body["generationConfig"] = {**config, **merged} if is_object(config) else merged

    # ---- tools -----------------------------------------------------------------------------------

    def _tool_definition(self, definition: ToolDefinition, wire_name: str, strict: bool | None) -> dict[str, Any]:
        schema = self.schema_dialect(definition, strict).schema
        declaration: dict[str, Any] = {"name": wire_name}
        if definition.description:
            declaration["description"] = definition.description
        # Gemini documents leaving the parameters unset for a function without any (and has rejected
        # an OBJECT with empty `properties` in the OpenAPI form).
        bare = set(schema) <= {"type", "properties", "additionalProperties", "required"}
        if schema.get("properties") or not bare or is_object(schema.get("additionalProperties")):
            declaration["parameters" if self.schema_format == "openapi" else "parametersJsonSchema"] = schema
        return declaration

    def schema_problems(self, definitions: Sequence[ToolDefinition], strict: bool | None = None) -> list[str]:
        """What the dialect records as refused (a property name outside Gemini's rule, a root that is not an object).

        The API answers 400 INVALID_ARGUMENT for those, so they are not sent.
        """
        return [
            f"tool {definition.key!r}: {loss}"
            for definition in definitions
            for loss in self.schema_dialect(definition, strict).rejected
        ]

    def refusal_fix(self, problems: Sequence[str]) -> str:
        """The count's fix, and the schema's: the JSON Schema form takes any property name."""
        fix = super().refusal_fix(problems) if any(" tools in one request" in p for p in problems) else ""
        if any(p.startswith("tool ") for p in problems):
            fix += (
                " `parameters` takes property names matching ^[A-Za-z_][A-Za-z0-9_]{0,63}$ only: use "
                "GeminiProvider(schema_format='json_schema') (the default), or rename the property"
                if self.schema_format == "openapi"
                else " Give the tool an object schema."
            )
        return fix.strip()

    def _tools_payload(
        self,
        definitions: list[dict[str, Any]],
        by_key: Mapping[str, ToolDefinition],
        names: NameMap,
        options: FormatOptions,
    ) -> dict[str, Any]:
        if not definitions:
            return {}
        config: dict[str, Any] = {"mode": "AUTO"}
        allowed = self._allowed_names(names, options.active_tools)
        choice = options.tool_choice
        if choice == "none" or (choice == "auto" and allowed == []):
            config = {"mode": "NONE"}
        elif choice == "required":
            config = {"mode": "ANY"}
            if allowed is not None:
                config["allowedFunctionNames"] = allowed
        elif choice != "auto":
            config = {"mode": "ANY", "allowedFunctionNames": [names.name_for(choice)]}
        elif allowed is not None:
            config = {"mode": "VALIDATED", "allowedFunctionNames": allowed}
        elif options.strict:
            config = {"mode": "VALIDATED"}
        return {"tools": [{"functionDeclarations": definitions}], "toolConfig": {"functionCallingConfig": config}}

    @staticmethod
    def _allowed_names(names: NameMap, active: Iterable[str] | None) -> list[str] | None:
        """Wire names of `active` in registry order; None when unrestricted (every tool is active)."""
        if active is None:
            return None
        wanted = set(active)
        if wanted >= set(names.to_wire):
            return None
        return [wire for key, wire in names.to_wire.items() if key in wanted]

    # ---- calls -----------------------------------------------------------------------------------

    def _parse_calls(self, response: Any) -> list[ToolCall]:
        calls: list[ToolCall] = []
        for part in _parts(response):
            call = _call_from_part(part, len(calls))
            if call is not None:
                calls.append(call)
        return calls

    def _accumulator(self, names: NameMap | None, tools: Mapping[str, ToolDefinition] | None) -> StreamDecoder:
        return GeminiStreamAccumulator(self, names, tools)

    # ---- history ---------------------------------------------------------------------------------

    def model_content(
        self,
        calls: Sequence[ToolCall],
        *,
        text: str | None = None,
        registry: Tools | None = None,
        aliases: bool = False,
    ) -> dict[str, Any]:
        """The ``{"role": "model", "parts": [...]}`` content carrying `calls`, for replaying history.

        Each call's ``thoughtSignature`` (kept in `ToolCall.provider_details`) goes back on its part, as
        Gemini 3 requires; ids agentkit generated are left out. Prefer replaying the model's original
        content unchanged when you have it.
        """
        names = self.names(registry, aliases=aliases) if registry is not None else None
        parts: list[dict[str, Any]] = [{"text": text}] if text else []
        for call in calls:
            function: dict[str, Any] = {}
            if not call.id.startswith(GENERATED_ID_PREFIX):
                function["id"] = self.wire_id(call.id)
            function["name"] = self._wire_name(call.name, names)
            function["args"] = args_object(call)
            part: dict[str, Any] = {"functionCall": function}
            signature = (call.provider_details or {}).get("thoughtSignature")
            if signature:
                part["thoughtSignature"] = signature
            parts.append(part)
        return {"role": "model", "parts": parts}

    # ---- whole conversations ---------------------------------------------------------------------

    def format_messages(
        self, messages: Sequence[Message], *, registry: Tools | None = None, aliases: bool = False
    ) -> dict[str, Any]:
        """``{"systemInstruction"?, "contents"}`` for a neutral history.

        Every `SystemMessage` becomes one text part of ``systemInstruction`` (Gemini has no system role in
        ``contents``), in order. A `UserMessage` is a ``user`` content of ``text`` / ``inlineData`` /
        ``fileData`` parts. An `AssistantMessage` is a ``model`` content: the parts Gemini sent, verbatim,
        when `parse_response` kept them (``provider_details["gemini"]["parts"]``) and the message still says
        the same (text and calls); otherwise text plus ``functionCall`` parts rebuilt by `model_content`
        (each with the ``thoughtSignature`` from its `ToolCall.provider_details`). Tool results use
        `format_tool_results`. Names are wire names, consistently with `format_tools(aliases=...)`.
        """
        system: list[dict[str, Any]] = []
        contents: list[dict[str, Any]] = []
        for message in messages:
            if isinstance(message, SystemMessage):
                system.append({"text": message.text})
            elif isinstance(message, UserMessage):
                parts = [_user_part(part) for part in message.parts]
                if parts:
                    contents.append({"role": "user", "parts": parts})
            elif isinstance(message, AssistantMessage):
                content = self._assistant_content(message, registry, aliases)
                if content["parts"]:
                    contents.append(content)
            elif isinstance(message, ToolResultsMessage):  # pyright: ignore[reportUnnecessaryIsInstance]  # untyped callers
                contents += self.format_tool_results(message.results, registry=registry, aliases=aliases)
            else:  # pragma: no cover - the Message union is closed
                raise TypeError(f"not a conversation message: {message!r}")
        body: dict[str, Any] = {"systemInstruction": {"parts": system}} if system else {}
        body["contents"] = contents
        return body

    def _assistant_content(self, message: AssistantMessage, registry: Tools | None, aliases: bool) -> dict[str, Any]:
        rebuilt = self.model_content(message.tool_calls, text=message.text or None, registry=registry, aliases=aliases)
        details = (message.provider_details or {}).get(self.name)
        kept = details.get("parts") if is_mapping(details) else None
        # Replay Gemini's own parts (thought parts, signatures on text parts) only while they still say
        # what the message says: an edited message must not be overridden by stale parts.
        if is_array(kept) and kept and _visible(kept) == _visible(rebuilt["parts"]):
            return {"role": "model", "parts": [dict(part) for part in kept]}
        return rebuilt

    def parse_response(self, response: Any, *, registry: Tools | None = None, aliases: bool = False) -> ModelResponse:
        """A ``GenerateContentResponse`` (dict or SDK object) as a neutral `ModelResponse`.

        Text is the first candidate's non-thought text parts, joined. Calls come from `parse_tool_calls`.
        Usage: input is ``promptTokenCount`` (+ ``toolUsePromptTokenCount``), output is
        ``candidatesTokenCount`` + ``thoughtsTokenCount`` (thinking is billed as output). ``finishReason``
        ``STOP`` becomes ``"tool_calls"`` when there are calls, else ``"stop"``; ``MAX_TOKENS`` ->
        ``"length"``; the safety family (and a blocked prompt) -> ``"content_filter"``; anything else is
        lower-cased (e.g. ``"malformed_function_call"``). When the parts hold more than text and calls
        (thought parts, signatures), they are kept in ``provider_details["gemini"]["parts"]`` for replay.
        """
        decoded = as_dict(response)
        self._check_shape(decoded)
        data: Mapping[str, Any] = decoded if is_mapping(decoded) else {}
        parts = [_camel_part(part) for part in _parts(data)]
        text = "".join(p["text"] for p in parts if isinstance(p.get("text"), str) and not p.get("thought"))
        calls = self._calls_of(data, registry=registry, aliases=aliases)
        details = {self.name: {"parts": parts}} if any(set(p) - {"text", "functionCall"} for p in parts) else None
        return ModelResponse(
            message=AssistantMessage(text=text, tool_calls=calls, provider_details=details),
            usage=_usage(data),
            finish_reason=_finish_reason(data, bool(calls)),
            model_name=_get(data, "modelVersion", "model_version"),
            raw=response,
            response_id=response_id(_get(data, "responseId", "response_id")),
        )

    def format_tool_results(
        self, results: Sequence[ToolResult], *, registry: Tools | None = None, aliases: bool = False
    ) -> list[dict[str, Any]]:
        """One ``role: "user"`` content answering `results` (Gemini needs each function's wire name).

        With `registry` (and `aliases` as given to `format_tools`) each key is mapped to the name that was
        sent. Without it, a key that breaks Gemini's name rule is assumed to have been sent under its
        alias (`alias_for`), which is right unless two keys' aliases collided.
        """
        names = self.names(registry, aliases=aliases) if registry is not None else None
        return self._content_for(list(results), names)

    def _result_messages(self, results: list[ToolResult]) -> list[dict[str, Any]]:
        return self._content_for(results, None)

    def _content_for(self, results: list[ToolResult], names: NameMap | None) -> list[dict[str, Any]]:
        if not results:
            return []
        return [{"role": "user", "parts": [{"functionResponse": self._response(r, names)} for r in results]}]

    def _wire_name(self, key: str, names: NameMap | None) -> str:
        if names is not None:
            return names.name_for(key)
        return key if self.name_rule.accepts(key) else alias_for(key, self.name_rule)

    def _response(self, result: ToolResult, names: NameMap | None) -> dict[str, Any]:
        function: dict[str, Any] = {}
        if not result.call_id.startswith(GENERATED_ID_PREFIX):
            function["id"] = self.wire_id(result.call_id)
        function["name"] = self._wire_name(result.name, names)
        media: list[dict[str, Any]] = []
        notes: list[str] = []
        for part in result.content:
            if not isinstance(part, ImagePart):
                continue
            entry = _image_part(part) if self.tool_result_images else None
            if entry is not None:
                media.append(entry)
            else:
                reason = "this model cannot receive images in tool results"
                if self.tool_result_images:
                    reason = f"Gemini does not accept {part.media_type} in function responses"
                notes.append(_placeholder(part, reason))
        if result.is_error:
            message = "\n".join(filter(None, [result.text, *notes])) or "The tool failed."
            function["response"] = {"error": message}
        else:
            value = _output_value(result)
            if notes:
                value = "\n".join(filter(None, [value if isinstance(value, str) else json.dumps(value), *notes]))
            function["response"] = {"output": value}
        if media:
            function["parts"] = media
        return function


def _user_part(part: TextPart | ImagePart) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"text": part.text}
    if part.data is not None:
        return {"inlineData": {"mimeType": part.media_type, "data": part.base64}}
    inline = data_url(part.url or "")
    if inline is not None:
        return {"inlineData": {"mimeType": inline[0], "data": inline[1]}}
    # Gemini fetches nothing by itself except what fileData names (Files API / GCS / supported URLs).
    return {"fileData": {"mimeType": part.media_type, "fileUri": part.url}}


def _strip_nulls(value: Any) -> Any:
    if is_mapping(value):
        return {k: _strip_nulls(v) for k, v in value.items() if v is not None}
    if is_array(value):
        return [_strip_nulls(v) for v in value]
    return value


def _visible(parts: Sequence[Mapping[str, Any]]) -> tuple[str, list[tuple[Any, str]]]:
    """What a model turn says: its non-thought text and its calls (name, args without nulls).

    Nulls are ignored because `parse_tool_calls(registry=...)` drops a null sent for an optional
    parameter, so the parsed call legitimately differs from the part there.
    """
    text = "".join(p["text"] for p in parts if isinstance(p.get("text"), str) and not p.get("thought"))
    calls: list[tuple[Any, str]] = []
    for part in parts:
        call = _get(part, "functionCall", "function_call")
        if is_mapping(call):
            args = _strip_nulls(call.get("args") or {})
            calls.append((call.get("name"), json_text(args, sort_keys=True)))
    return text, calls


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def _camel_part(part: Mapping[str, Any]) -> dict[str, Any]:
    """A part with REST (camelCase) keys; `to_json_dict()` gives snake_case ones.

    Only the part's own keys and those of its media entries are renamed: ``args`` and ``response``
    hold the tool's own data, whose keys must stay as they are.
    """
    out: dict[str, Any] = {}
    for key, value in part.items():
        name = _camel(key)
        if name in ("inlineData", "fileData") and is_mapping(value):
            value = {_camel(k): v for k, v in value.items()}
        out[name] = value
    return out


_FILTERED = frozenset(
    {
        "SAFETY",
        "RECITATION",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
    }
)


def _finish_reason(data: Mapping[str, Any], has_calls: bool) -> str | None:
    candidates = data.get("candidates")
    first = candidates[0] if is_array(candidates) and candidates else None
    reason = _get(first, "finishReason", "finish_reason") if is_mapping(first) else None
    if reason is None:
        feedback = _get(data, "promptFeedback", "prompt_feedback")
        if is_mapping(feedback) and _get(feedback, "blockReason", "block_reason"):
            return "content_filter"  # the prompt itself was blocked: no candidate at all
        return "tool_calls" if has_calls else None
    reason = str(reason)
    if reason == "STOP":
        return "tool_calls" if has_calls else "stop"
    if reason == "MAX_TOKENS":
        return "length"
    if reason in _FILTERED:
        return "content_filter"
    return reason.lower()


def _first_candidate_reason(data: Mapping[str, Any]) -> Any:
    candidates = data.get("candidates")
    first = candidates[0] if is_array(candidates) and candidates else None
    return _get(first, "finishReason", "finish_reason") if is_mapping(first) else None


def _usage(data: Mapping[str, Any]) -> Usage:
    meta = _get(data, "usageMetadata", "usage_metadata")
    if not is_mapping(meta):
        return Usage(requests=1)

    def count(camel: str, snake: str) -> int:
        return token_count(_get(meta, camel, snake))

    thoughts = count("thoughtsTokenCount", "thoughts_token_count")
    return Usage(
        input_tokens=count("promptTokenCount", "prompt_token_count")
        + count("toolUsePromptTokenCount", "tool_use_prompt_token_count"),
        # candidatesTokenCount leaves the thoughts out; they are billed as output
        output_tokens=count("candidatesTokenCount", "candidates_token_count") + thoughts,
        requests=1,
        cache_read_tokens=count("cachedContentTokenCount", "cached_content_token_count"),  # part of the prompt's
        reasoning_tokens=thoughts,
    )


class GeminiStreamAccumulator(StreamDecoder):
    """Decodes ``streamGenerateContent`` chunks: each carries whole ``functionCall`` parts.

    Calls are numbered across the whole stream, so generated ids match what `parse_tool_calls` gives for
    the same calls in one response. Each call's delta is the JSON text of its complete arguments. The
    chunks are merged into one response (`_MergedResponse`), which `parse_response` reads at the end
    (``raw`` is that merged dict); the turn is complete once a candidate has a ``finishReason`` (or the
    prompt was blocked).
    """

    terminal = "a finishReason"

    def __init__(self, provider: Provider, names: NameMap | None, tools: Mapping[str, ToolDefinition] | None) -> None:
        super().__init__(provider, names, tools)
        self._seen = 0
        self._merged = _MergedResponse()

    def _decode(self, event: Any) -> list[ModelStreamEvent]:
        data = as_dict(event)
        if not is_mapping(data):
            return []
        out: list[ModelStreamEvent] = [TextDelta(text) for text in self._merged.add(data)]
        for delta in self.feed(data):
            out.append(ToolCallStart(delta.index, delta.id, delta.name or ""))
            out.append(ToolCallArgsDelta(delta.index, delta.arguments_delta, delta.arguments_so_far))
        feedback = _get(data, "promptFeedback", "prompt_feedback")
        blocked = is_mapping(feedback) and _get(feedback, "blockReason", "block_reason")
        if _first_candidate_reason(data) is not None or blocked:
            self.finished = True
        return out

    def _snapshot(self) -> dict[str, Any]:
        return self._merged.data()

    def response(self) -> ModelResponse:
        """The merged chunks parsed as one response; ``raw`` is that merged dict."""
        response = super().response()
        return replace(response, raw=self._merged.data())

    def feed(self, event: Any) -> list[ToolCallDelta]:
        """Consume one chunk (a ``GenerateContentResponse`` dict or SDK object); return its calls as deltas."""
        out: list[ToolCallDelta] = []
        for part in _parts(as_dict(event)):
            call = _call_from_part(part, self._seen)
            if call is None:
                continue
            index = self._seen
            self._seen += 1
            extra = dict(call.provider_details or {})
            self._start(index, call.id, call.name, **extra)
            arguments = dict(call.arguments_dict())
            self._set_args(index, arguments)
            out.append(self._append(index, json_text(arguments, ensure_ascii=False)))
        return out


class _MergedResponse:
    """Stream chunks folded into one ``GenerateContentResponse`` dict.

    Parts are kept in order; consecutive plain text parts (same ``thought`` flag, no signature on
    either) are joined, so the result looks like the non-streamed response. A part carrying a
    ``thoughtSignature`` stays whole, as Gemini asks for replays. The last ``finishReason``,
    ``usageMetadata``, ``modelVersion`` and ``responseId`` win.
    """

    def __init__(self) -> None:
        self._parts: list[dict[str, Any]] = []
        self._top: dict[str, Any] = {}
        self._candidate: dict[str, Any] = {}

    def add(self, chunk: Mapping[str, Any]) -> list[str]:
        """Fold one chunk in; return its visible (non-thought) text pieces."""
        for key in ("usageMetadata", "modelVersion", "responseId", "promptFeedback"):
            if chunk.get(key) is not None:
                self._top[key] = chunk[key]
        candidates = chunk.get("candidates")
        if not is_array(candidates) or not candidates or not is_mapping(candidates[0]):
            return []
        first = candidates[0]
        for key, value in first.items():
            if key != "content" and value is not None:
                self._candidate[key] = value
        content = first.get("content")
        parts = content.get("parts") if is_mapping(content) else None
        texts: list[str] = []
        for part in parts if is_array(parts) else ():
            if not is_mapping(part):
                continue
            text = part.get("text")
            if isinstance(text, str) and text and not part.get("thought"):
                texts.append(text)
            self._fold(dict(part))
        return texts

    def _fold(self, part: dict[str, Any]) -> None:
        last = self._parts[-1] if self._parts else None
        plain = set(part) <= {"text", "thought"} and isinstance(part.get("text"), str)
        if (
            plain
            and last is not None
            and set(last) <= {"text", "thought"}
            and isinstance(last.get("text"), str)
            and bool(last.get("thought")) == bool(part.get("thought"))
        ):
            last["text"] += part["text"]
            return
        self._parts.append(part)

    def data(self) -> dict[str, Any]:
        """The merged response."""
        candidate = {**self._candidate, "content": {"role": "model", "parts": [dict(p) for p in self._parts]}}
        return {"candidates": [candidate], **self._top}
