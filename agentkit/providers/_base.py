"""The `Provider` contract and what every vendor module shares.

A provider is pure: JSON-ready dicts in and out, no network, no vendor SDK needed. Each vendor module
subclasses `Provider` and implements the four `_`-free abstract methods; everything else (name
resolution, aliases, caching, null-to-default restoration, reading SDK objects) lives here once.
"""

from __future__ import annotations as _annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Literal, Union

from .._json_schema import JsonSchema
from ..dialects import Dialect, DialectResult, Loss, rewrite_for_tool
from ..exceptions import RegistryError
from ..messages import Message, ModelResponse, ToolCall, ToolResult
from ..registry import Registry
from ..tools import Tool, tools_generation
from ._ids import IdRule
from ._names import NameMap, NameRule, resolve_names
from ._nulls import restore_defaults

__all__ = [
    "FormatOptions",
    "Provider",
    "StreamAccumulator",
    "ToolCallDelta",
    "ToolChoice",
    "as_dict",
]

ToolChoice = Union[Literal["auto", "none", "required"], str]
"""``"auto"``, ``"none"``, ``"required"``, or a registry key (that one tool must be called)."""


_AS_DICT_DEPTH = 64  # SDK objects sit near the top; below this a response is plain data (tool arguments)


def as_dict(obj: Any, _depth: int = 0) -> Any:
    """A vendor response as plain JSON-ready data: dicts pass through; SDK objects are dumped.

    Pydantic-based SDK objects (openai, anthropic, google-genai, mistralai, cohere) are dumped with
    their wire (alias) names; other objects with ``to_dict()`` or ``__dict__`` are converted too.
    Values nested deeper than 64 levels are left as they are (a model's deeply nested arguments must
    not make parsing raise `RecursionError`: validation refuses them as data).
    """
    if obj is None or isinstance(obj, (str, int, float, bool)) or _depth > _AS_DICT_DEPTH:
        return obj
    deeper = _depth + 1
    if isinstance(obj, Mapping):
        return {k: as_dict(v, deeper) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [as_dict(v, deeper) for v in obj]
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        return as_dict(dump(mode="json", by_alias=True, exclude_none=True), deeper)
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict):
        return as_dict(to_dict(), deeper)
    if hasattr(obj, "__dict__"):
        return {k: as_dict(v, deeper) for k, v in vars(obj).items() if not k.startswith("_") and v is not None}
    return obj


@dataclass(frozen=True)
class FormatOptions:
    """The options of one `format_tools` call, normalised (hashable: used as a cache key)."""

    tool_choice: str = "auto"
    active_tools: tuple[str, ...] | None = None
    strict: bool | None = None
    parallel_tool_calls: bool | None = None
    aliases: bool = False


@dataclass
class ToolCallDelta:
    """A streamed tool call growing: what arrived now and everything so far."""

    index: int
    id: str | None
    name: str | None
    """The registry key (aliases already mapped back), once the vendor has sent the name."""
    arguments_delta: str
    arguments_so_far: str


@dataclass
class _PartialCall:
    id: str | None = None
    name: str | None = None
    arguments: str = ""
    parsed: Mapping[str, Any] | None = None  # vendors that stream whole argument objects
    extra: dict[str, Any] = field(default_factory=dict)


class StreamAccumulator:
    """Turns one vendor's stream events/chunks into `ToolCall`s, reporting argument deltas.

    Vendor modules subclass this and implement `feed`, calling `_start`, `_append` and `_set_args`.
    """

    def __init__(self, provider: Provider, names: NameMap | None, registry: Registry | None) -> None:
        self._provider = provider
        self._names = names
        self._registry = registry
        self._calls: dict[int, _PartialCall] = {}

    def feed(self, event: Any) -> list[ToolCallDelta]:
        """Consume one stream event/chunk (dict or SDK object); return the argument deltas it carried."""
        raise NotImplementedError

    def _key(self, name: str | None) -> str | None:
        if name is None or self._names is None:
            return name
        return self._names.key_for(name)

    def _start(self, index: int, id: str | None, name: str | None, **extra: Any) -> _PartialCall:  # noqa: A002
        call = self._calls.setdefault(index, _PartialCall())
        call.id = id or call.id
        call.name = name or call.name
        call.extra.update(extra)
        return call

    def _append(self, index: int, fragment: str) -> ToolCallDelta:
        call = self._calls.setdefault(index, _PartialCall())
        call.arguments += fragment
        return ToolCallDelta(index, call.id, self._key(call.name), fragment, call.arguments)

    def _set_args(self, index: int, arguments: Mapping[str, Any]) -> None:
        self._calls.setdefault(index, _PartialCall()).parsed = arguments

    def _parse_arguments(self, index: int) -> None:
        """At the end of a call's block, parse its argument text into the object a non-streamed call carries.

        No text keeps the object the block started with (else ``{}``); text that is no JSON object is
        kept as text, so validation reports it to the model.
        """
        call = self._calls[index]
        if not call.arguments.strip():
            self._set_args(index, call.parsed or {})
            return
        try:
            parsed = json.loads(call.arguments)
        except ValueError:
            return
        if isinstance(parsed, dict):
            self._set_args(index, parsed)

    @property
    def partial(self) -> dict[int, str]:
        """Argument text received so far, per call index."""
        return {i: c.arguments for i, c in sorted(self._calls.items())}

    def tool_calls(self) -> list[ToolCall]:
        """The calls assembled so far (complete once the stream has ended), in index order."""
        out = []
        for index, call in sorted(self._calls.items()):
            if call.name is None:
                continue
            arguments: str | Mapping[str, Any] = call.parsed if call.parsed is not None else call.arguments
            out.append(
                self._provider._finish_call(
                    ToolCall(
                        id=call.id or f"call_{index}",
                        name=call.name,
                        arguments=arguments,
                        provider_details=call.extra or None,
                    ),
                    self._names,
                    self._registry,
                )
            )
        return out


class Provider(ABC):
    """One vendor's function-calling wire format.

    Subclasses set `name`, `name_rule` (and `id_rule` when the vendor constrains call ids) and implement
    `_tool_definition`, `_tools_payload`, `_parse_calls`, `_result_messages` and `stream`.
    Users call the public methods below, which handle names, aliases and caching once for everyone.
    """

    name: ClassVar[str]
    """The provider's registered name, e.g. ``"anthropic"``."""
    name_rule: ClassVar[NameRule]
    """What tool names the vendor accepts."""
    id_rule: ClassVar[IdRule | None] = None
    """What tool-call ids the vendor accepts (None: any string)."""
    dialect: Dialect | None = None
    """The vendor's schema dialect (None: the canonical schema is sent as it is); may be set per instance."""

    def __init__(self) -> None:
        self._payload_cache: dict[tuple[int, int, int, FormatOptions], tuple[Registry, dict[str, Any]]] = {}

    # ---- public API ------------------------------------------------------------------------------

    def names(self, registry: Registry, *, aliases: bool = False) -> NameMap:
        """Registry key <-> wire name for this vendor.

        Raises:
            InvalidToolNameError: a key breaks the vendor's name rule and `aliases` is off.
        """
        return resolve_names(tuple(registry), self.name, self.name_rule, aliases=aliases)

    def check(self, registry: Registry, *, aliases: bool = False) -> None:
        """Raise now, before any request, if this vendor would reject the registry's names."""
        self.names(registry, aliases=aliases)

    def format_tools(
        self,
        registry: Registry,
        *,
        tool_choice: ToolChoice = "auto",
        active_tools: Iterable[str] | None = None,
        strict: bool | None = None,
        parallel_tool_calls: bool | None = None,
        aliases: bool = False,
    ) -> dict[str, Any]:
        """The request fragment to merge into the vendor's request (e.g. ``{"tools": [...], ...}``).

        Args:
            registry: the tools; keys are the names sent.
            tool_choice: ``"auto"``, ``"none"``, ``"required"`` or a registry key.
            active_tools: the keys the model may call (the vendor's allowed-tools form where it has one).
            strict: True/False forces strict schemas on or off; None means strict where the vendor
                supports it and the schema allows it.
            parallel_tool_calls: False asks the vendor for at most one call per turn, where it can.
            aliases: replace names the vendor rejects by deterministic aliases instead of raising.

        The result is cached per (registry contents, tool options, call options). Its containers are fresh
        on every call (adding to the tool list is safe); the tool entries inside are shared: read-only.
        """
        options = FormatOptions(
            tool_choice=tool_choice,
            active_tools=tuple(active_tools) if active_tools is not None else None,
            strict=strict,
            parallel_tool_calls=parallel_tool_calls,
            aliases=aliases,
        )
        cache_key = (id(registry), registry.version, tools_generation(), options)
        hit = self._payload_cache.get(cache_key)
        if hit is not None and hit[0] is registry:
            return _fresh_containers(hit[1])
        names = self.names(registry, aliases=aliases)
        self._check_choice(registry, options)
        definitions = [self.tool_definition(registry[key], names.name_for(key), strict) for key in registry]
        payload = self._tools_payload(definitions, names, options)
        if len(self._payload_cache) > 64:
            self._payload_cache.clear()
        self._payload_cache[cache_key] = (registry, payload)
        return _fresh_containers(payload)

    def tool_definition(self, item: Tool[..., Any], wire_name: str, strict: bool | None = None) -> dict[str, Any]:
        """One tool's entry in this vendor's tool list (cached on the tool per name and strictness)."""
        cache: dict[tuple[str, str, bool | None], dict[str, Any]] = item.__dict__.setdefault("_provider_cache", {})
        key = (f"{self.name}:{self.dialect.name if self.dialect is not None else ''}", wire_name, strict)
        hit = cache.get(key)
        if hit is None:
            hit = cache[key] = self._tool_definition(item, wire_name, strict)
        return hit

    def parse_tool_calls(
        self, response: Any, *, registry: Registry | None = None, aliases: bool = False
    ) -> list[ToolCall]:
        """The tool calls in a vendor response (dict or SDK object), named by registry key.

        With `registry`, aliases are mapped back to keys and a ``null`` sent for an optional
        parameter (as strict dialects force) is dropped so the Python default applies.
        """
        names = self.names(registry, aliases=aliases) if registry is not None else None
        return [self._finish_call(c, names, registry) for c in self._parse_calls(as_dict(response))]

    def format_tool_results(
        self, results: Sequence[ToolResult], *, registry: Registry | None = None, aliases: bool = False
    ) -> list[dict[str, Any]]:
        """The vendor message(s) answering `results` (ids linked, errors flagged, ids remapped as needed).

        With `registry`, result names are sent as wire names (the alias where `aliases` is on), for the
        vendors whose result messages carry the tool's name (Gemini, Mistral, Ollama).
        """
        if registry is not None:
            names = self.names(registry, aliases=aliases)
            results = [replace(r, name=names.name_for(r.name)) for r in results]
        return self._result_messages(list(results))

    def stream(self, *, registry: Registry | None = None, aliases: bool = False) -> StreamAccumulator:
        """A fresh accumulator for one streamed response."""
        names = self.names(registry, aliases=aliases) if registry is not None else None
        return self._accumulator(names, registry)

    def schema_dialect(self, item: Tool[..., Any], strict: bool | None = None) -> DialectResult:
        """The tool's input schema in this vendor's dialect, with the lossy changes recorded (cached).

        `strict` given here wins; None defers to the tool's own `strict`; None there means strict
        where the vendor and the schema allow it.
        """
        effective = strict if strict is not None else item.strict
        if self.dialect is None:
            return DialectResult(schema=item.input_schema, strict=False)
        return rewrite_for_tool(item, self.dialect, effective)

    # ---- whole conversations (what model clients build requests from) ------------------------------

    def format_messages(
        self, messages: Sequence[Message], *, registry: Registry | None = None, aliases: bool = False
    ) -> dict[str, Any]:
        """The request fragment carrying a neutral history.

        For example ``{"messages": [...]}`` (OpenAI Chat), ``{"system": ..., "messages": [...]}``
        (Anthropic), ``{"systemInstruction": ..., "contents": [...]}`` (Gemini), ``{"input": [...]}``
        (Responses). Tool names are sent as wire names (aliases where `aliases` is on) and call ids remapped as the
        vendor demands, consistently for calls and the results answering them. Vendor items kept in
        `AssistantMessage.provider_details` are replayed when they came from this vendor.
        """
        raise NotImplementedError(f"provider {self.name!r} does not format conversations")

    def parse_response(
        self, response: Any, *, registry: Registry | None = None, aliases: bool = False
    ) -> ModelResponse:
        """A whole vendor response (dict or SDK object) as a neutral `ModelResponse`.

        Text, tool calls named by registry key, usage and a normalised finish reason.
        """
        raise NotImplementedError(f"provider {self.name!r} does not parse whole responses")

    def build_request(
        self,
        messages: Sequence[Message],
        registry: Registry,
        *,
        tool_choice: ToolChoice = "auto",
        active_tools: Iterable[str] | None = None,
        strict: bool | None = None,
        parallel_tool_calls: bool | None = None,
        aliases: bool = False,
    ) -> dict[str, Any]:
        """`format_messages` merged with `format_tools` (when the registry has tools).

        The request body without the model name and sampling settings.
        """
        body = self.format_messages(messages, registry=registry, aliases=aliases)
        if len(registry):
            body.update(
                self.format_tools(
                    registry,
                    tool_choice=tool_choice,
                    active_tools=active_tools,
                    strict=strict,
                    parallel_tool_calls=parallel_tool_calls,
                    aliases=aliases,
                )
            )
        return self._complete_request(body)

    def request_strictness(self, registry: Registry, strict: bool | None = None) -> dict[str, Loss]:
        """Tools whose strictness a per-request rule changes (e.g. a vendor's strict budget), with why.

        A returned loss with ``rejected=False`` means the tool is sent non-strict; ``rejected=True`` that
        the vendor will refuse the request. Default: no per-request rules.
        """
        return {}

    def wire_id(self, call_id: str) -> str:
        """`call_id` as this vendor accepts it (deterministic; unchanged when already valid)."""
        return self.id_rule.apply(call_id) if self.id_rule is not None else call_id

    # ---- shared machinery ------------------------------------------------------------------------

    def _complete_request(self, body: dict[str, Any]) -> dict[str, Any]:
        """`build_request`'s last step: what a vendor adds to (or fixes in) the whole body. Default: nothing."""
        return body

    def _finish_call(self, call: ToolCall, names: NameMap | None, registry: Registry | None) -> ToolCall:
        name = names.key_for(call.name) if names is not None else call.name
        arguments = call.arguments
        if registry is not None and name in registry:
            arguments = restore_defaults(arguments, registry[name].input_schema)
        if name == call.name and arguments is call.arguments:
            return call
        return ToolCall(id=call.id, name=name, arguments=arguments, provider_details=call.provider_details)

    def _check_choice(self, registry: Registry, options: FormatOptions) -> None:
        for key in options.active_tools or ():
            registry[key]  # raises UnknownToolError with a "did you mean"
        if options.tool_choice not in ("auto", "none", "required") and options.tool_choice not in registry:
            registry[options.tool_choice]
        named = options.tool_choice not in ("auto", "none", "required")
        if options.active_tools is not None and named and options.tool_choice not in options.active_tools:
            raise RegistryError(
                f"tool_choice={options.tool_choice!r} is not among active_tools={list(options.active_tools)!r}; "
                "add it to active_tools or choose another tool"
            )

    # ---- what each vendor implements -------------------------------------------------------------

    @abstractmethod
    def _tool_definition(self, item: Tool[..., Any], wire_name: str, strict: bool | None) -> dict[str, Any]:
        """One tool's entry, e.g. ``{"type": "function", "function": {...}}``."""

    @abstractmethod
    def _tools_payload(
        self, definitions: list[dict[str, Any]], names: NameMap, options: FormatOptions
    ) -> dict[str, Any]:
        """The request fragment from the tool entries (all tools, in registry order) and the options."""

    @abstractmethod
    def _parse_calls(self, response: Any) -> list[ToolCall]:
        """Tool calls from a response already converted to plain data (names are wire names)."""

    @abstractmethod
    def _result_messages(self, results: list[ToolResult]) -> list[dict[str, Any]]:
        """The vendor message(s) answering `results`."""

    @abstractmethod
    def _accumulator(self, names: NameMap | None, registry: Registry | None) -> StreamAccumulator:
        """A stream accumulator for this vendor."""


def _fresh_containers(payload: dict[str, Any]) -> dict[str, Any]:
    """A copy of the payload's dicts and lists down to the tool entries, which stay shared."""
    out: dict[str, Any] = {}
    for key, value in payload.items():
        if isinstance(value, list):
            out[key] = list(value)
        elif isinstance(value, dict) and key != "tool_choice":
            out[key] = _fresh_containers(value)
        else:
            out[key] = value
    return out


def strip_nones(value: dict[str, Any]) -> dict[str, Any]:
    """`value` without keys whose value is None (optional wire fields are omitted, not null)."""
    return {k: v for k, v in value.items() if v is not None}


_WS = re.compile(r"\s+")


def one_line(text: str) -> str:
    """Collapse whitespace (for short labels, never for descriptions)."""
    return _WS.sub(" ", text).strip()


def schema_for(item: Tool[..., Any]) -> JsonSchema:
    """The tool's canonical input schema (a convenience for vendor modules)."""
    return item.input_schema
