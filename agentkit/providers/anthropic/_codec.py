"""Anthropic Messages (``/v1/messages``) tool use.

What maps to what (``../shared/vendors/WIRE-FORMATS.md`` §3):

* a registry entry -> ``{name, description?, input_schema, strict?}`` (no wrapper), the schema in the
  Anthropic dialect (`agentkit.providers.anthropic._dialect`); ``strict: true`` only where the schema is strict;
* ``tool_choice`` ``"auto"`` / ``"none"`` / ``"required"`` / a key -> ``{"type": "auto" | "none" | "any"
  | "tool", "name"?}``; ``parallel_tool_calls=False`` -> ``disable_parallel_tool_use: true`` inside it
  (not on ``none``, which does not take it);
* ``active_tools``: Anthropic has no allowed-subset form, so the ``tools`` list is filtered. When the
  filter leaves nothing, every tool is sent with ``tool_choice: {"type": "none"}``: a request whose
  history holds ``tool_use`` blocks must still define tools;
* the per-request strict budget (at most 20 strict tools, 24 optional and 16 union-typed parameters
  over all strict schemas): with ``strict=None`` the tools past it, in registry order, are sent
  non-strict, logged, and reported by `AnthropicProvider.strict_budget`;
* ``content[]`` blocks of ``type: "tool_use"`` -> `ToolCall` (``input`` kept as the object sent);
* stream events ``content_block_start`` (a ``tool_use`` block) / ``content_block_delta``
  (``input_json_delta.partial_json``) / ``content_block_stop`` -> argument deltas; the text is parsed
  at the block's stop;
* structured output (native) -> ``output_config: {"format": {"type": "json_schema", "schema"}}`` (anthropic
  SDK ``OutputConfigParam`` / ``JSONOutputFormatParam``; platform.claude.com "Structured outputs", which
  replaced the beta ``output_format``): the schema is always in the strict dialect (constrained
  decoding), and a schema strict cannot express is asked for with an output tool instead; it combines
  with tools;
* `ToolResult` objects -> ONE ``user`` message whose content is one ``tool_result`` block per result (so
  the tool results come first, as the API demands), ``is_error: true`` for errors, images as
  ``image`` blocks (base64 or URL source), ids made to match ``^[a-zA-Z0-9_-]+$``;
* a neutral history (`format_messages`) -> ``{"system"?: str, "messages": [...]}``: system messages
  joined into the top-level ``system``; consecutive same-role turns merged (the API wants user and
  assistant to alternate), with ``tool_result`` blocks first in a user turn; assistant tool calls as
  ``tool_use`` blocks with wire names and the same remapped ids as their results; blocks kept in
  ``AssistantMessage.provider_details["anthropic"]["blocks"]`` (thinking, server tools) replayed first;
* a whole ``Message`` (`parse_response`) -> `ModelResponse`: ``stop_reason`` ``end_turn`` /
  ``stop_sequence`` -> ``stop``, ``tool_use`` -> ``tool_calls``, ``max_tokens`` /
  ``model_context_window_exceeded`` -> ``length``, ``refusal`` -> ``content_filter`` (others as sent);
  input tokens include cache reads and writes.
"""

from __future__ import annotations as _annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
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
from .._dialect import DialectResult, Loss, per_result
from .._ids import IdRule
from .._messages import base64_of, cached_prompt_usage, input_object, mapped_reason, response_id, wire_name
from .._names import NameMap, NameRule
from ._dialect import AnthropicDialect, StrictCounts, strict_budget_counts

__all__ = [
    "ANTHROPIC_ID_RULE",
    "ANTHROPIC_NAME_RULE",
    "STRICT_LIMITS",
    "TOOL_SEARCH",
    "AnthropicProvider",
    "AnthropicStream",
    "BudgetFallback",
    "StrictBudget",
]

logger = logging.getLogger(__name__)

ANTHROPIC_NAME_RULE = NameRule(pattern=r"^[a-zA-Z0-9_-]{1,64}$", allowed="[a-zA-Z0-9_-]", max_length=64)
"""Tool names: letters, digits, ``_`` and ``-``, 1 to 64 (platform.claude.com, define-tools)."""

ANTHROPIC_ID_RULE = IdRule(pattern=r"^[a-zA-Z0-9_-]+$", allowed="[a-zA-Z0-9_-]")
"""``tool_use.id`` / ``tool_result.tool_use_id``: the API answers 400 "String should match pattern" otherwise."""

TOOL_SEARCH = MappingProxyType({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"})
"""Anthropic's server-side BM25 tool search (platform.claude.com, tool-search-tool; anthropic SDK
``ToolSearchToolBm25_20251119Param``): sent with the deferred tools, which carry ``defer_loading: true``.
Its ``server_tool_use`` and ``tool_search_tool_result`` blocks are kept and replayed like thinking blocks."""

PROGRAMMATIC = MappingProxyType({"type": "code_execution_20260120", "name": "code_execution"})
"""Anthropic's code execution tool (anthropic SDK ``CodeExecutionTool20260120Param``; platform.claude.com,
programmatic-tool-calling): tools marked ``allowed_callers: ["code_execution_20260120"]`` are called by the
programs it runs; those ``tool_use`` blocks carry ``caller: {"type": "code_execution_20260120", "tool_id"}``
(kept in ``ToolCall.provider_details["caller"]``), the ``server_tool_use`` and ``code_execution_tool_result``
blocks are replayed like thinking blocks, and the response's ``container`` id is sent back as ``container``."""

STRICT_LIMITS = {"tools": 20, "optional": 24, "unions": 16}
"""Anthropic's per-request strict budget (constraints.json ``anthropic_strict.per_request_limits``)."""

_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}
# input, output, cache-read and cache-write counts (reads and writes are counted apart from the input)
_USAGE_FIELDS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
_RETIRED = "Not available in this request; do not call it."
_IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
_CHOICES = {"auto": "auto", "none": "none", "required": "any"}


@dataclass(frozen=True)
class BudgetFallback:
    """A tool sent non-strict because strict mode's per-request budget was used up."""

    key: str
    reason: str


@dataclass(frozen=True)
class StrictBudget:
    """How one request's tools share Anthropic's strict budget."""

    strict: tuple[str, ...]
    """Keys sent strict."""
    fallbacks: tuple[BudgetFallback, ...]
    """Tools that strict=None would have made strict, sent non-strict for lack of budget."""
    over_budget: tuple[str, ...]
    """Tools forced strict (``strict=True``) past the budget: the API will reject the request."""
    optional: int
    """Optional parameters over the strict schemas sent."""
    unions: int
    """Union-typed parameters over the strict schemas sent."""


class AnthropicProvider(Provider):
    """Anthropic Messages. Pure: plain dicts in and out; SDK objects are accepted as responses."""

    name = "anthropic"
    # Message: content[] is required (it may be empty: an end_turn with nothing more to say)
    response_shape = (("content",),)
    name_rule = ANTHROPIC_NAME_RULE
    id_rule = ANTHROPIC_ID_RULE
    dialect = AnthropicDialect()
    native_output = "output_config.format"

    def output_schema(self, definition: ToolDefinition) -> DialectResult:
        """The strict form, always: ``output_config.format`` is constrained decoding, with strict's limits."""
        return self.schema_dialect(definition, True)

    def _output_fragment(self, definition: ToolDefinition, result: DialectResult) -> dict[str, Any]:
        return {"output_config": {"format": {"type": "json_schema", "schema": result.schema}}}

    def _merge_output(self, body: dict[str, Any], fragment: dict[str, Any]) -> None:
        config = body.get("output_config")
        body["output_config"] = (
            {**config, **fragment["output_config"]} if is_object(config) else fragment["output_config"]
        )

    tool_search = TOOL_SEARCH
    programmatic_tool = PROGRAMMATIC
    programmatic_caller = "code_execution_20260120"

    def strict_budget(
        self, registry: Tools, *, strict: bool | None = None, active_tools: Iterable[str] | None = None
    ) -> StrictBudget:
        """Which of the tools sent would be strict, and which fall back for lack of budget.

        Tools forced strict (``strict=True`` here or on the tool) are counted first; the others keep
        strict in registry order while the budget lasts.
        """
        tools = self._tools(registry).by_key
        return _plan(self, tools, _sent_keys(list(tools), active_tools), strict)

    def request_strictness(self, registry: Tools, strict: bool | None = None) -> dict[str, Loss]:
        """The strict budget's effect: tools sent non-strict, and forced ones the API would refuse."""
        plan = self.strict_budget(registry, strict=strict)
        changes = {f.key: Loss("", "strict", f"{f.reason}; sent without strict") for f in plan.fallbacks}
        for key in plan.over_budget:
            changes[key] = Loss("", "strict", "forced strict past the per-request budget", rejected=True)
        return changes

    def format_messages(
        self, messages: Sequence[Message], *, registry: Tools | None = None, aliases: bool = False
    ) -> dict[str, Any]:
        """``{"system"?: ..., "messages": [...]}`` for a neutral history; see `Provider.format_messages`."""
        names = self.names(registry, aliases=aliases) if registry is not None else None
        system: list[str] = []
        turns: list[dict[str, Any]] = []
        container: str | None = None
        for message in messages:
            if isinstance(message, SystemMessage):
                if message.text:
                    system.append(message.text)
                continue
            if isinstance(message, UserMessage):
                role, blocks = "user", [_part(p, _USER_NOTE) for p in message.parts]
            elif isinstance(message, AssistantMessage):
                role, blocks = "assistant", self._assistant_blocks(message, names)
                mine = (message.provider_details or {}).get(self.name)
                if is_object(mine) and isinstance(mine.get("container"), str):
                    container = mine["container"]
            elif isinstance(message, ToolResultsMessage):  # pyright: ignore[reportUnnecessaryIsInstance]  # untyped callers
                role, blocks = "user", [self._result_block(r) for r in message.results]
            else:
                raise TypeError(f"not a conversation message: {message!r}")
            blocks = [b for b in blocks if b.get("type") != "text" or b.get("text")]  # empty text is refused
            if not blocks:
                continue
            if turns and turns[-1]["role"] == role:
                turns[-1]["content"].extend(blocks)  # the API wants user and assistant turns to alternate
            else:
                turns.append({"role": role, "content": blocks})
        for turn in turns:
            if turn["role"] != "user":
                continue
            # tool_result blocks must open the user turn that follows the tool_use blocks
            content: list[dict[str, Any]] = turn["content"]
            content.sort(key=lambda block: block.get("type") != "tool_result")
            if len(turn["content"]) == 1 and turn["content"][0]["type"] == "text":
                turn["content"] = turn["content"][0]["text"]
        fragment: dict[str, Any] = {}
        if system:
            fragment["system"] = "\n\n".join(system)
        fragment["messages"] = turns
        if container is not None:
            fragment["container"] = container  # the programs of this conversation run on in their container
        return fragment

    def _assistant_blocks(self, message: AssistantMessage, names: NameMap | None) -> list[dict[str, Any]]:
        mine = (message.provider_details or {}).get(self.name)
        kept = mine.get("blocks") if is_object(mine) else None
        # thinking blocks must come back unmodified and before the text and tool_use blocks
        blocks = [dict(b) for b in kept if is_object(b)] if is_array(kept) else []
        if message.text:
            blocks.append({"type": "text", "text": message.text})
        for call in message.tool_calls:
            block: dict[str, Any] = {
                "type": "tool_use",
                "id": self.wire_id(call.id),
                "name": wire_name(names, call.name, self.name_rule),
                "input": input_object(call),
            }
            caller = (call.provider_details or {}).get("caller")
            if is_object(caller):
                block["caller"] = caller
            blocks.append(block)
        return blocks

    def parse_response(self, response: Any, *, registry: Tools | None = None, aliases: bool = False) -> ModelResponse:
        """A ``Message`` (dict or SDK object) as a `ModelResponse`; see `Provider.parse_response`."""
        data = as_dict(response)
        if not is_object(data):
            raise TypeError(f"not an Anthropic Message: {response!r}")
        self._check_shape(data)
        content = [b for b in _content_of(data) if is_object(b)]
        text = "".join(b.get("text") or "" for b in content if b.get("type") == "text")
        kept = [b for b in content if b.get("type") not in ("text", "tool_use")]
        usage = data.get("usage")
        usage = usage if is_object(usage) else {}
        mine: dict[str, Any] = {"blocks": kept} if kept else {}
        container = data.get("container")
        if is_object(container) and isinstance(container.get("id"), str):
            mine["container"] = container["id"]  # a program's container: the next request continues in it
        return ModelResponse(
            message=AssistantMessage(
                text=text,
                tool_calls=self._calls_of(data, registry=registry, aliases=aliases),
                provider_details={self.name: mine} if mine else None,
            ),
            usage=cached_prompt_usage(usage, _USAGE_FIELDS),
            finish_reason=mapped_reason(data.get("stop_reason"), _FINISH),
            model_name=data.get("model"),
            raw=response,
            response_id=response_id(data.get("id")),
        )

    def _complete_request(self, body: dict[str, Any]) -> dict[str, Any]:
        """`build_request`'s last step: stand-in tools when the registry is empty but the history is not.

        The API refuses a request whose history holds ``tool_use`` blocks unless it defines tools, so the
        tools named in the history are declared (with a note not to call them) and ``tool_choice`` is
        ``none``.
        """
        if "tools" not in body:
            used = _history_tool_names(body["messages"])
            if used:
                body["tools"] = [{"name": n, "description": _RETIRED, "input_schema": {"type": "object"}} for n in used]
                body["tool_choice"] = {"type": "none"}
        return body

    def _tool_definition(self, definition: ToolDefinition, wire_name: str, strict: bool | None) -> dict[str, Any]:
        result = self.schema_dialect(definition, strict)
        entry: dict[str, Any] = {"name": wire_name}
        if definition.description:
            entry["description"] = definition.description
        entry["input_schema"] = result.schema
        if result.strict:
            entry["strict"] = True
        return entry

    def _tools_payload(
        self,
        definitions: list[dict[str, Any]],
        by_key_defs: Mapping[str, ToolDefinition],
        names: NameMap,
        options: FormatOptions,
    ) -> dict[str, Any]:
        if not definitions:
            return {}
        keys = list(names.to_wire)  # registry order, as the definitions
        by_key = dict(zip(keys, definitions, strict=True))
        choice = options.tool_choice
        sent = _sent_keys(keys, options.active_tools)
        if not sent:
            sent, choice = keys, "none"  # nothing may be called, but tool blocks in history need tools
        if options.strict is None:
            plan = _plan(self, by_key_defs, sent, options.strict)
            if plan.fallbacks:  # a fallback, logged at DEBUG like the loop's requests and retries
                logger.debug(
                    "anthropic: %d tools sent non-strict (strict budget per request), first: %r",
                    len(plan.fallbacks),
                    plan.fallbacks[0].key,
                )
            for fallback in plan.fallbacks:
                by_key[fallback.key] = self.tool_definition(
                    by_key_defs[fallback.key], names.name_for(fallback.key), False
                )
        tool_choice: dict[str, Any] = {"type": _CHOICES.get(choice, "tool")}
        if tool_choice["type"] == "tool":
            tool_choice["name"] = names.name_for(choice)
        if options.parallel_tool_calls is False and tool_choice["type"] != "none":
            tool_choice["disable_parallel_tool_use"] = True
        return {"tools": [by_key[k] for k in sent], "tool_choice": tool_choice}

    def _parse_calls(self, response: Any) -> list[ToolCall]:
        calls: list[ToolCall] = []
        for block in _content_of(response):
            if not is_object(block) or block.get("type") != "tool_use":
                continue  # text, thinking, and server tools (server_tool_use) are not ours to run
            caller = block.get("caller")
            details = {"caller": caller} if is_object(caller) and caller.get("type") != "direct" else None
            arguments = block.get("input")
            calls.append(
                ToolCall(
                    id=block.get("id") or "",
                    name=block.get("name") or "",
                    arguments=arguments if is_object(arguments) or isinstance(arguments, str) else {},
                    provider_details=details,
                )
            )
        return calls

    def _result_messages(self, results: list[ToolResult]) -> list[dict[str, Any]]:
        if not results:
            return []
        return [{"role": "user", "content": [self._result_block(r) for r in results]}]

    def _result_block(self, result: ToolResult) -> dict[str, Any]:
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": self.wire_id(result.call_id)}
        parts = [_part(p) for p in result.content]
        parts = [p for p in parts if p.get("type") != "text" or p.get("text")]  # empty text blocks are refused
        if len(parts) == 1 and parts[0]["type"] == "text":
            block["content"] = parts[0]["text"]
        elif parts:
            block["content"] = parts
        if result.is_error:
            block["is_error"] = True
        return block

    def _accumulator(self, names: NameMap | None, tools: Mapping[str, ToolDefinition] | None) -> StreamDecoder:
        return AnthropicStream(self, names, tools)


def _sent_keys(keys: list[str], active_tools: Iterable[str] | None) -> list[str]:
    if active_tools is None:
        return keys
    allowed = set(active_tools)
    return [k for k in keys if k in allowed]


_counts = per_result(strict_budget_counts)


def _plan(
    provider: Provider, tools: Mapping[str, ToolDefinition], keys: list[str], strict: bool | None
) -> StrictBudget:
    """Share the budget: forced-strict tools first, then the rest in order while it lasts."""
    entries: list[tuple[str, StrictCounts, bool]] = []
    for key in keys:
        item = tools[key]
        result = provider.schema_dialect(item, strict)
        if result.strict:
            forced = (strict if strict is not None else item.strict) is True
            entries.append((key, _counts(result), forced))
    entries.sort(key=lambda entry: not entry[2])  # stable: registry order within each group
    used = {"tools": 0, "optional": 0, "unions": 0}
    kept: list[str] = []
    fallbacks: list[BudgetFallback] = []
    over: list[str] = []
    for key, counts, forced in entries:
        wanted = {"tools": used["tools"] + 1, "optional": used["optional"] + counts.optional}
        wanted["unions"] = used["unions"] + counts.unions
        exceeded = [f"{wanted[k]} {k} > {STRICT_LIMITS[k]}" for k in STRICT_LIMITS if wanted[k] > STRICT_LIMITS[k]]
        if exceeded and not forced:
            fallbacks.append(BudgetFallback(key, "strict budget per request exceeded (" + ", ".join(exceeded) + ")"))
            continue
        if exceeded:
            over.append(key)
        used = wanted
        kept.append(key)
    order = {key: i for i, key in enumerate(keys)}
    return StrictBudget(
        strict=tuple(sorted(kept, key=order.__getitem__)),
        fallbacks=tuple(fallbacks),
        over_budget=tuple(over),
        optional=used["optional"],
        unions=used["unions"],
    )


def _content_of(response: Any) -> list[Any]:
    """The content blocks of a Message (or of a message param, or a bare list of blocks)."""
    if is_array(response):
        return response
    if is_object(response):
        content = response.get("content")
        if is_array(content):
            return content
    return []  # a string content (message param) holds no tool_use


_RESULT_NOTE = "not accepted in tool results"
_USER_NOTE = "Anthropic takes jpeg, png, gif or webp"


def _part(part: TextPart | ImagePart, note: str = _RESULT_NOTE) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if part.url is not None and not part.url.startswith("data:"):
        return {"type": "image", "source": {"type": "url", "url": part.url}}
    media_type, data = base64_of(part)
    if media_type not in _IMAGE_TYPES or data is None:
        # documented fallback: the API takes jpeg/png/gif/webp only
        return {"type": "text", "text": f"[image of type {media_type} omitted: {note}]"}
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


def _history_tool_names(turns: list[dict[str, Any]]) -> list[str]:
    """The tool names of the ``tool_use`` blocks in formatted turns, first use first."""
    seen: dict[str, None] = {}
    for turn in turns:
        content = turn.get("content")
        for block in content if is_array(content) else ():
            if block.get("type") == "tool_use":
                seen.setdefault(block["name"], None)
    return list(seen)


class AnthropicStream(StreamDecoder):
    """Decodes Messages stream events; ``tool_use`` content blocks become calls 0, 1, ... in order.

    The events rebuild the ``Message`` they describe (`_Snapshot`), which `parse_response` reads at the
    end; the turn is complete at ``message_stop``.
    """

    terminal = "message_stop"

    def __init__(self, provider: Provider, names: NameMap | None, tools: Mapping[str, ToolDefinition] | None) -> None:
        super().__init__(provider, names, tools)
        self._blocks: dict[int, int] = {}  # content-block index -> call index
        self._message = _Snapshot()

    def _decode(self, event: Any) -> list[ModelStreamEvent]:
        data = as_dict(event)
        if not is_object(data):
            return []
        out: list[ModelStreamEvent] = []
        started = self._message.feed(data)
        if started is not None:
            index, call_id, wire = started
            out.append(ToolCallStart(index, call_id, self._key(wire) or wire))
        text = _Snapshot.text_delta(data)
        if text:
            out.append(TextDelta(text))
        if data.get("type") == "message_stop":
            self.finished = True
        return out + self._args_events(data)

    def _snapshot(self) -> dict[str, Any]:
        return self._message.message

    def feed(self, event: Any) -> list[ToolCallDelta]:
        """Consume one stream event (dict or SDK event object); return its argument deltas."""
        data = as_dict(event)
        if not is_object(data):
            return []
        kind = data.get("type")
        block_index = data.get("index")
        if kind == "content_block_start":
            block: dict[str, Any] = data.get("content_block") or {}
            if block.get("type") != "tool_use" or not isinstance(block_index, int):
                return []
            started = self._blocks.setdefault(block_index, len(self._blocks))
            self._start(started, block.get("id"), block.get("name"))
            if is_object(block.get("input")) and block["input"]:
                self._set_args(started, block["input"])
            return []
        index = self._blocks.get(block_index) if isinstance(block_index, int) else None
        if index is None:
            return []
        if kind == "content_block_delta":
            delta: dict[str, Any] = data.get("delta") or {}
            fragment = delta.get("partial_json") if delta.get("type") == "input_json_delta" else None
            return [self._append(index, fragment)] if fragment else []
        if kind == "content_block_stop":
            self._parse_arguments(index)
        return []


class _Snapshot:
    """Rebuilds the ``Message`` a stream describes, so the stream ends with what `request` returns."""

    def __init__(self) -> None:
        self.message: dict[str, Any] = {"content": []}
        self._blocks: dict[int, dict[str, Any]] = {}
        self._json: dict[int, str] = {}
        self._calls = 0

    def feed(self, event: dict[str, Any]) -> tuple[int, str | None, str] | None:
        """Apply one event; return (call index, id, wire name) when it starts a tool call."""
        kind = event.get("type")
        index = event.get("index")
        if kind == "message_start":
            self.message = {**event.get("message", {}), "content": []}
        elif kind == "content_block_start" and isinstance(index, int):
            block = dict(event.get("content_block") or {})
            self._blocks[index] = block
            self.message["content"] = [self._blocks[i] for i in sorted(self._blocks)]
            if block.get("type") == "tool_use":
                self._json[index] = ""
                self._calls += 1
                return self._calls - 1, block.get("id"), block.get("name") or ""
        elif kind == "content_block_delta" and isinstance(index, int) and index in self._blocks:
            self._delta(self._blocks[index], index, event.get("delta") or {})
        elif kind == "content_block_stop" and index in self._json:
            block, text = self._blocks[index], self._json.pop(index)
            if text.strip():
                try:
                    block["input"] = json.loads(text)
                except ValueError:
                    block["input"] = text  # kept as text, as the accumulator does: validation reports it
        elif kind == "message_delta":
            message_delta: dict[str, Any] = event.get("delta") or {}
            self.message.update({k: v for k, v in message_delta.items() if v is not None})
            usage = self.message.setdefault("usage", {})
            usage_delta: dict[str, Any] = event.get("usage") or {}
            usage.update({k: v for k, v in usage_delta.items() if v is not None})
        return None

    def _delta(self, block: dict[str, Any], index: int, delta: dict[str, Any]) -> None:
        kind = delta.get("type")
        if kind == "text_delta":
            block["text"] = block.get("text", "") + delta.get("text", "")
        elif kind == "input_json_delta":
            self._json[index] = self._json.get(index, "") + delta.get("partial_json", "")
        elif kind == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + delta.get("thinking", "")
        elif kind == "signature_delta":
            block["signature"] = delta.get("signature", "")
        elif kind == "citations_delta":
            block.setdefault("citations", []).append(delta.get("citation"))

    @staticmethod
    def text_delta(event: dict[str, Any]) -> str:
        """The text an event adds, if it is a text delta."""
        delta: dict[str, Any] = event.get("delta") or {}
        if event.get("type") == "content_block_delta" and delta.get("type") == "text_delta":
            return str(delta.get("text", ""))
        return ""
