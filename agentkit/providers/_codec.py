"""The `Provider` contract: the wire-codec base every vendor's ``_codec.py`` subclasses.

A provider is pure: JSON-ready dicts in and out, no network, no vendor SDK needed. Below the public
methods it sees only `ToolDefinition`s (a registry hands over `Registry.definitions`), so every vendor
hook is a function of definitions and options. What all vendors share lives here once: name resolution
and aliases, the caches (per definitions tuple and per definition, never on tools), null-to-default
restoration, and reading SDK objects.
"""

from __future__ import annotations as _annotations

import copy
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Literal, Union, cast

from .._choice import check_tool_choice, require_keys
from .._json_schema import JsonSchema
from .._jsonish import is_array, is_mapping, is_object
from ..definitions import ToolDefinition
from ..exceptions import AgentSetupError, PayloadRejectedError, RegistryError, StrictSchemaError
from ..messages import Message, ModelResponse, ToolCall, ToolResult
from ..models._output import OutputMode, OutputPlan, OutputRequest
from ..registry import Registry
from ..tools import Tool
from ._dialect import Dialect, DialectResult, Loss, PerDefinition
from ._ids import IdRule
from ._malformed import check_shape, checked_call, guarded
from ._names import NameMap, NameRule, resolve_names
from ._nulls import restore_defaults
from ._output import with_output_prompt
from ._stream import StreamAccumulator, StreamDecoder, ToolCallDelta

__all__ = [
    "FormatOptions",
    "Provider",
    "StreamAccumulator",
    "StreamDecoder",
    "ToolCallDelta",
    "ToolChoice",
    "Tools",
    "as_dict",
]

ToolChoice = Union[Literal["auto", "none", "required"], str]
"""``"auto"``, ``"none"``, ``"required"``, or a registry key (that one tool must be called)."""

Tools = Union[Registry, Sequence[ToolDefinition]]
"""What the public methods take: a `Registry`, or its definitions (`Registry.definitions`)."""


_READERS = ("parse_response", "parse_tool_calls")


def _vendor(provider: Provider) -> str:
    return provider.name


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
    if is_mapping(obj):
        return {k: as_dict(v, deeper) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        items = cast("Sequence[Any]", obj)  # an SDK's untyped list
        return [as_dict(v, deeper) for v in items]
    dump = getattr(obj, "model_dump", None)
    if callable(dump):  # JSON mode gives plain data already: nothing below needs converting
        return dump(mode="json", by_alias=True, exclude_none=True)
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict):
        return as_dict(to_dict(), deeper)
    if hasattr(obj, "__dict__"):
        attributes = cast("dict[str, Any]", vars(obj))
        return {k: as_dict(v, deeper) for k, v in attributes.items() if not k.startswith("_") and v is not None}
    return obj


@dataclass(frozen=True)
class FormatOptions:
    """The options of one `format_tools` call, normalised (hashable: used as a cache key)."""

    tool_choice: str = "auto"
    active_tools: tuple[str, ...] | None = None
    strict: bool | None = None
    parallel_tool_calls: bool | None = None
    aliases: bool = False
    deferred: tuple[str, ...] = ()
    """Keys sent in the vendor's native deferred form, with its tool search tool (`Provider.tool_search`)."""
    programmatic: tuple[str, ...] = ()
    """Keys a vendor-run program may call (``allowed_callers``), sent with `Provider.programmatic_tool`."""
    programmatic_direct: bool = False
    """Whether the `programmatic` keys stay callable by the model directly too."""


class _ToolSet:
    """One definitions tuple as one provider sees it: keys, wire names, and the payloads built from it."""

    __slots__ = ("by_key", "definitions", "memo", "names", "payloads")

    def __init__(self, definitions: tuple[ToolDefinition, ...]) -> None:
        self.definitions = definitions
        self.by_key: dict[str, ToolDefinition] = {d.key: d for d in definitions}
        self.names: dict[bool, NameMap] = {}
        self.payloads: dict[FormatOptions, dict[str, Any]] = {}
        self.memo: dict[Any, Any] = {}
        """Per-request decisions a vendor makes once per tool set (Cohere's request-wide strict)."""


class Provider(ABC):
    """One vendor's function-calling wire format.

    Subclasses set `name`, `name_rule` (and `id_rule` when the vendor constrains call ids) and implement
    `_tool_definition`, `_tools_payload`, `_parse_calls`, `_result_messages` and `_accumulator`, each a
    function of `ToolDefinition`s and options. Users call the public methods below, which take a `Registry`
    (or its definitions) and handle names, aliases and caching once for everyone.
    """

    name: ClassVar[str]
    """The provider's registered name, e.g. ``"anthropic"``."""
    name_rule: ClassVar[NameRule]
    """What tool names the vendor accepts."""
    id_rule: ClassVar[IdRule | None] = None
    """What tool-call ids the vendor accepts (None: any string)."""
    dialect: Dialect | None = None
    """The vendor's schema dialect (None: the canonical schema is sent as it is); may be set per instance."""
    native_output: ClassVar[str | None] = None
    """The request field of the vendor's native structured output (e.g. ``"response_format"``); None when
    it has none, and structured output is asked for with an output tool instead."""
    tool_search: ClassVar[Mapping[str, Any] | None] = None
    """The vendor's own tool search tool entry, sent beside tools in its native deferred form
    (``defer_loading: true``) when `FormatOptions.deferred` names some; None: the vendor has none."""
    programmatic_tool: ClassVar[Mapping[str, Any] | None] = None
    """The vendor's own code tool, sent when `FormatOptions.programmatic` names tools its programs may call
    (each marked ``allowed_callers``); None: the vendor runs no programs that call tools."""
    programmatic_caller: ClassVar[str] = ""
    """The ``allowed_callers`` value that lets the vendor's programs call a tool."""
    response_shape: ClassVar[tuple[tuple[str | int, ...], ...]] = ()
    """Where the vendor puts every answer's content in a whole response (``("choices", 0, "message")``): one
    of these paths must lead to an object or a list, else `parse_response` raises `ModelAPIError` instead of
    reading an unrelated JSON document as an empty, finished answer. Empty: no check."""
    max_tools: ClassVar[int | None] = None
    """The most tools one request may carry, as the vendor documents it (None: no documented limit);
    the model clients raise `PayloadRejectedError` past it instead of sending (see `count_problems`)."""
    max_tools_source: ClassVar[str] = ""
    """Where the vendor says so (for the error and the report)."""
    refuses_forced_strict: ClassVar[bool] = True
    """Whether `format_tools` raises `StrictSchemaError` for a tool forced strict that the dialect rejects
    (False where "strict" is a request-level mode whose rejections are not strict mode's, as Gemini's)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in _READERS:  # a response of the wrong shape is a ModelAPIError, in every vendor's reading
            method = cls.__dict__.get(name)
            if method is not None:
                setattr(cls, name, guarded(method, _vendor))

    def __init__(self) -> None:
        # keyed by the identity of a definitions tuple (held, so the id cannot be reused)
        self._toolsets: dict[int, _ToolSet] = {}
        # one tool's entry per (wire name, strict), for as long as its definition lives
        self._entries: PerDefinition[tuple[str, bool | None], dict[str, Any]] = PerDefinition()
        # one output's native request fragment, for as long as its definition lives
        self._outputs: PerDefinition[None, dict[str, Any]] = PerDefinition()

    def _tools(self, tools: Tools) -> _ToolSet:
        """The cached view of `tools` (a registry's definitions are the same tuple while it is unchanged)."""
        definitions = tools.definitions() if isinstance(tools, Registry) else tuple(tools)
        found = self._toolsets.get(id(definitions))
        if found is None or found.definitions is not definitions:
            if len(self._toolsets) > 64:
                self._toolsets.clear()
            found = self._toolsets[id(definitions)] = _ToolSet(definitions)
        return found

    def _names_of(self, toolset: _ToolSet, aliases: bool) -> NameMap:
        found = toolset.names.get(aliases)
        if found is None:
            keys = tuple(toolset.by_key)
            found = toolset.names[aliases] = resolve_names(keys, self.name, self.name_rule, aliases=aliases)
        return found

    # ---- public API ------------------------------------------------------------------------------

    def names(self, registry: Tools, *, aliases: bool = False) -> NameMap:
        """Registry key <-> wire name for this vendor.

        Raises:
            InvalidToolNameError: a key breaks the vendor's name rule and `aliases` is off.
        """
        return self._names_of(self._tools(registry), aliases)

    def check(self, registry: Tools, *, aliases: bool = False) -> None:
        """Raise now, before any request, if this vendor would reject the registry's names."""
        self.names(registry, aliases=aliases)

    def format_tools(
        self,
        registry: Tools,
        *,
        tool_choice: ToolChoice = "auto",
        active_tools: Iterable[str] | None = None,
        strict: bool | None = None,
        parallel_tool_calls: bool | None = None,
        aliases: bool = False,
        deferred: Iterable[str] = (),
        programmatic: Iterable[str] = (),
        programmatic_direct: bool = False,
    ) -> dict[str, Any]:
        """The request fragment to merge into the vendor's request (e.g. ``{"tools": [...], ...}``).

        Args:
            registry: the tools (a `Registry`, or its `definitions`); keys are the names sent.
            tool_choice: ``"auto"``, ``"none"``, ``"required"`` or a registry key.
            active_tools: the keys the model may call (the vendor's allowed-tools form where it has one).
            strict: True/False forces strict schemas on or off; None means strict where the vendor
                supports it and the schema allows it.
            parallel_tool_calls: False asks the vendor for at most one call per turn, where it can.
            aliases: replace names the vendor rejects by deterministic aliases instead of raising.
            deferred: keys to send in the vendor's native deferred form (``defer_loading``), with its own
                tool search tool first (Anthropic, OpenAI Responses; other vendors raise `RegistryError`).
            programmatic: keys a program the vendor runs may call (``allowed_callers``), with its code tool last
                (Anthropic, OpenAI Responses; other vendors raise `RegistryError`); see `agentkit.codemode`.
            programmatic_direct: keep the `programmatic` keys callable by the model directly too.

        The result is cached per (definitions, call options); a registry keeps its definitions while it is
        unchanged. Its containers are fresh on every call (adding to the tool list is safe); the tool
        entries inside are shared: read-only.
        """
        options = FormatOptions(
            tool_choice=tool_choice,
            active_tools=tuple(active_tools) if active_tools is not None else None,
            strict=strict,
            parallel_tool_calls=parallel_tool_calls,
            aliases=aliases,
            deferred=tuple(deferred),
            programmatic=tuple(programmatic),
            programmatic_direct=programmatic_direct,
        )
        return _fresh_containers(self._payload(registry, options))

    def _payload(self, registry: Tools, options: FormatOptions) -> dict[str, Any]:
        """The cached fragment itself (shared, read-only): what the model clients send as it is."""
        toolset = self._tools(registry)
        asked = options.strict
        options = self._request_options(toolset, options)
        payload = toolset.payloads.get(options)
        if payload is None:
            names = self._names_of(toolset, options.aliases)
            self._check_choice(toolset, options)
            self._check_forced(toolset.definitions, asked)
            entries = [self.tool_definition(d, names.name_for(d.key), options.strict) for d in toolset.definitions]
            payload = self._tools_payload(entries, toolset.by_key, names, options)
            if options.deferred:
                payload = self._with_deferred(payload, names, options)
            if options.programmatic:
                payload = self._with_programmatic(payload, names, options)
            self._check_payload(toolset.definitions, options)
            toolset.payloads[options] = payload
        return payload

    def _with_deferred(self, payload: dict[str, Any], names: NameMap, options: FormatOptions) -> dict[str, Any]:
        """`payload` with the deferred tools marked ``defer_loading`` and the vendor's search tool first.

        The cached entries are shared, so a marked entry is a copy. Vendors whose tool entries keep the
        name elsewhere than a top-level ``name`` override this.
        """
        assert self.tool_search is not None  # checked with the options
        deferred = {names.name_for(key) for key in options.deferred}
        tools = [{**t, "defer_loading": True} if t.get("name") in deferred else t for t in payload.get("tools", [])]
        return {**payload, "tools": [dict(self.tool_search), *tools]}

    def _with_programmatic(self, payload: dict[str, Any], names: NameMap, options: FormatOptions) -> dict[str, Any]:
        """`payload` with the tools a vendor-run program may call marked ``allowed_callers``, its code tool last.

        The cached entries are shared, so a marked entry is a copy (see `agentkit.codemode` for the option).
        """
        assert self.programmatic_tool is not None  # checked with the options
        chosen = {names.name_for(key) for key in options.programmatic}
        callers = ["direct", self.programmatic_caller] if options.programmatic_direct else [self.programmatic_caller]
        tools = [{**t, "allowed_callers": callers} if t.get("name") in chosen else t for t in payload.get("tools", [])]
        return {**payload, "tools": [*tools, dict(self.programmatic_tool)]}

    def _request_options(self, toolset: _ToolSet, options: FormatOptions) -> FormatOptions:
        """The options a request is built with: a vendor may settle a per-request choice here (Cohere's strict)."""
        return options

    def tool_definition(
        self, item: ToolDefinition | Tool[..., Any], wire_name: str, strict: bool | None = None
    ) -> dict[str, Any]:
        """One tool's entry in this vendor's tool list (cached per definition, wire name and strictness)."""
        definition = item if isinstance(item, ToolDefinition) else item.definition()
        hit = self._entries.get(definition, (wire_name, strict))
        if hit is None:
            hit = self._entries.put(
                definition, (wire_name, strict), self._tool_definition(definition, wire_name, strict)
            )
        return hit

    def parse_tool_calls(
        self, response: Any, *, registry: Tools | None = None, aliases: bool = False
    ) -> list[ToolCall]:
        """The tool calls in a vendor response (dict or SDK object), named by registry key.

        With `registry`, aliases are mapped back to keys and a ``null`` sent for an optional
        parameter (as strict dialects force) is dropped so the Python default applies.
        """
        return self._calls_of(as_dict(response), registry=registry, aliases=aliases)

    def _calls_of(self, data: Any, *, registry: Tools | None, aliases: bool) -> list[ToolCall]:
        """`parse_tool_calls` of a response already converted by `as_dict` (as `parse_response` has it)."""
        names, by_key = self._lookup(registry, aliases)
        return [self._finish_call(c, names, by_key) for c in self._parse_calls(data)]

    def _lookup(
        self, registry: Tools | None, aliases: bool
    ) -> tuple[NameMap | None, Mapping[str, ToolDefinition] | None]:
        if registry is None:
            return None, None
        toolset = self._tools(registry)
        return self._names_of(toolset, aliases), toolset.by_key

    def format_tool_results(
        self, results: Sequence[ToolResult], *, registry: Tools | None = None, aliases: bool = False
    ) -> list[dict[str, Any]]:
        """The vendor message(s) answering `results` (ids linked, errors flagged, ids remapped as needed).

        With `registry`, result names are sent as wire names (the alias where `aliases` is on), for the
        vendors whose result messages carry the tool's name (Gemini, Mistral, Ollama).
        """
        return self._named_results(results, self.names(registry, aliases=aliases) if registry is not None else None)

    def _named_results(self, results: Sequence[ToolResult], names: NameMap | None) -> list[dict[str, Any]]:
        """`format_tool_results` with the names already resolved (once per history, not once per message)."""
        if names is not None and names.renames:
            results = [
                r if names.name_for(r.name) == r.name else replace(r, name=names.name_for(r.name)) for r in results
            ]
        return self._result_messages(list(results))

    def stream(self, *, registry: Tools | None = None, aliases: bool = False) -> StreamAccumulator:
        """A fresh accumulator for one streamed response (its `StreamAccumulator.feed` reports argument deltas)."""
        return self.decoder(registry=registry, aliases=aliases)

    def decoder(self, *, registry: Tools | None = None, aliases: bool = False) -> StreamDecoder:
        """A fresh decoder for one streamed response: the vendor's one reading of its stream.

        The same object `stream` returns; model clients use its `StreamDecoder.decode` (neutral events)
        and `StreamDecoder.response` (the whole turn, parsed as `parse_response` parses a whole response).
        """
        names, by_key = self._lookup(registry, aliases)
        decoder = self._accumulator(names, by_key)
        decoder.source = (registry, aliases)
        return decoder

    def schema_dialect(self, item: ToolDefinition | Tool[..., Any], strict: bool | None = None) -> DialectResult:
        """The tool's input schema in this vendor's dialect, with the lossy changes recorded (cached).

        `strict` given here wins; None defers to the tool's own `strict`; None there means strict
        where the vendor and the schema allow it.
        """
        definition = item if isinstance(item, ToolDefinition) else item.definition()
        effective = strict if strict is not None else definition.strict
        if self.dialect is None:
            return DialectResult(schema=definition.input_schema, strict=False)
        return self.dialect.result(definition, effective)

    # ---- whole conversations (what model clients build requests from) ------------------------------

    def format_messages(
        self, messages: Sequence[Message], *, registry: Tools | None = None, aliases: bool = False
    ) -> dict[str, Any]:
        """The request fragment carrying a neutral history.

        For example ``{"messages": [...]}`` (OpenAI Chat), ``{"system": ..., "messages": [...]}``
        (Anthropic), ``{"systemInstruction": ..., "contents": [...]}`` (Gemini), ``{"input": [...]}``
        (Responses). Tool names are sent as wire names (aliases where `aliases` is on) and call ids remapped as the
        vendor demands, consistently for calls and the results answering them. Vendor items kept in
        `AssistantMessage.provider_details` are replayed when they came from this vendor.
        """
        raise NotImplementedError(f"provider {self.name!r} does not format conversations")

    def parse_response(self, response: Any, *, registry: Tools | None = None, aliases: bool = False) -> ModelResponse:
        """A whole vendor response (dict or SDK object) as a neutral `ModelResponse`.

        Text, tool calls named by registry key, usage and a normalised finish reason.
        """
        raise NotImplementedError(f"provider {self.name!r} does not parse whole responses")

    def build_request(
        self,
        messages: Sequence[Message],
        registry: Tools,
        *,
        tool_choice: ToolChoice = "auto",
        active_tools: Iterable[str] | None = None,
        strict: bool | None = None,
        parallel_tool_calls: bool | None = None,
        aliases: bool = False,
        output: OutputRequest | None = None,
        deferred: Iterable[str] = (),
        programmatic: Iterable[str] = (),
        programmatic_direct: bool = False,
    ) -> dict[str, Any]:
        """`format_messages` merged with `format_tools` (when the registry has tools) and `output`.

        The request body without the model name and sampling settings. A ``native`` `output` adds the
        vendor's structured-output field (`format_output`); a ``prompted`` one adds its instructions
        after the leading system messages.
        """
        options = FormatOptions(
            tool_choice=tool_choice,
            active_tools=tuple(active_tools) if active_tools is not None else None,
            strict=strict,
            parallel_tool_calls=parallel_tool_calls,
            aliases=aliases,
            deferred=tuple(deferred),
            programmatic=tuple(programmatic),
            programmatic_direct=programmatic_direct,
        )
        return self._request(messages, registry, options, shared=False, output=output)

    def _request(
        self,
        messages: Sequence[Message],
        registry: Tools,
        options: FormatOptions,
        *,
        shared: bool,
        output: OutputRequest | None = None,
    ) -> dict[str, Any]:
        """`build_request`; with `shared`, the tool fragment's containers are the cached ones (never edit them).

        Model clients send the body as it is, so they take the shared form: nothing proportional to the
        registry is copied per request, and the client can reuse the encoded JSON of an unchanged tool list.
        """
        if output is not None and output.mode == "prompted" and output.prompt:
            messages = with_output_prompt(messages, output.prompt)
        body = self.format_messages(messages, registry=registry, aliases=options.aliases)
        if len(registry):
            payload = self._payload(registry, options)
            body.update(payload if shared else _fresh_containers(payload))
        if output is not None and output.mode == "native":
            fragment = self._output_payload(output.definition)
            self._merge_output(body, fragment if shared else copy.deepcopy(fragment))
        return self._complete_request(body)

    # ---- structured output ---------------------------------------------------------------------------

    def output_plan(
        self,
        definition: ToolDefinition,
        *,
        mode: OutputMode = "auto",
        with_tools: bool = False,
        model_name: str | None = None,
    ) -> OutputPlan:
        """How this vendor serves the output `definition`: natively where it can, else with an output tool.

        ``auto`` takes the native form unless the vendor has none, cannot combine it with tools
        (`with_tools`: the request also sends tools), or cannot take the schema; the plan's `reason`
        then says why an output tool is used instead. A forced ``native`` that cannot work raises.

        Raises:
            AgentSetupError: ``mode="native"`` where the vendor cannot serve it (the reason is given).
        """
        if mode in ("tool", "prompted"):
            return OutputPlan(mode)
        problem = self.native_output_problem(definition, with_tools=with_tools, model_name=model_name)
        if problem is None:
            return OutputPlan("native", strict=self.output_schema(definition).strict)
        if mode == "native":
            raise AgentSetupError(
                f"{self.name} cannot ask for this output natively: {problem}. Use Output(..., mode='tool') "
                "(an output tool) or mode='prompted' (the schema in the instructions), or mode='auto'."
            )
        return OutputPlan("tool", reason=f"{problem}: asked for with the output tool {definition.key!r}")

    def native_output_problem(
        self, definition: ToolDefinition, *, with_tools: bool = False, model_name: str | None = None
    ) -> str | None:
        """Why the native form cannot serve `definition` (None: it can); see `output_plan`."""
        if self.native_output is None:
            return f"{self.name} has no native structured-output form"
        if with_tools and not self.native_output_with_tools(model_name):
            return f"{self.name} does not accept {self.native_output} together with tools" + (
                f" (model {model_name!r})" if model_name else ""
            )
        rejected = self.output_schema(definition).rejected
        if rejected:
            return f"{self.name} rejects the schema in {self.native_output} ({'; '.join(map(str, rejected))})"
        return None

    def native_output_with_tools(self, model_name: str | None) -> bool:
        """Whether the native form may be sent in a request that also has tools (by default it may)."""
        return True

    def output_schema(self, definition: ToolDefinition) -> DialectResult:
        """The output's schema as the native form sends it, in this vendor's dialect, losses recorded (cached).

        By default the tool dialect's result for the output's object schema (strict as the definition
        asks: None is strict where the vendor and the schema allow).
        """
        return self.schema_dialect(definition, definition.strict)

    def format_output(self, definition: ToolDefinition) -> dict[str, Any]:
        """The request fragment asking natively for the output `definition` (e.g. ``{"response_format": ...}``).

        Raises:
            AgentSetupError: the vendor has no native structured-output form.
        """
        if self.native_output is None:
            raise AgentSetupError(f"{self.name} has no native structured-output form; use an output tool")
        return copy.deepcopy(self._output_payload(definition))

    def _output_payload(self, definition: ToolDefinition) -> dict[str, Any]:
        hit = self._outputs.get(definition, None)
        if hit is None:
            hit = self._outputs.put(definition, None, self._output_fragment(definition, self.output_schema(definition)))
        return hit

    def _output_fragment(self, definition: ToolDefinition, result: DialectResult) -> dict[str, Any]:
        """The vendor's native structured-output fragment for `definition`, its schema being `result`."""
        raise NotImplementedError(f"provider {self.name!r} has no native structured-output form")

    def _merge_output(self, body: dict[str, Any], fragment: dict[str, Any]) -> None:
        """Put the output fragment into the request body (by default: its keys at the top level)."""
        body.update(fragment)

    def request_strictness(self, registry: Tools, strict: bool | None = None) -> dict[str, Loss]:
        """Tools whose strictness a per-request rule changes (e.g. a vendor's strict budget), with why.

        A returned loss with ``rejected=False`` means the tool is sent non-strict; ``rejected=True`` that
        the vendor will refuse the request. Default: no per-request rules.
        """
        return {}

    def wire_id(self, call_id: str) -> str:
        """`call_id` as this vendor accepts it (deterministic; unchanged when already valid)."""
        return self.id_rule.apply(call_id) if self.id_rule is not None else call_id

    # ---- shared machinery ------------------------------------------------------------------------

    def _check_shape(self, data: Any) -> None:
        """Raise `ModelAPIError` when a whole response has none of `response_shape` (see there)."""
        check_shape(data, self.response_shape, self.name)

    def _complete_request(self, body: dict[str, Any]) -> dict[str, Any]:
        """`build_request`'s last step: what a vendor adds to (or fixes in) the whole body. Default: nothing."""
        return body

    def _finish_call(
        self, call: ToolCall, names: NameMap | None, tools: Mapping[str, ToolDefinition] | None
    ) -> ToolCall:
        call = checked_call(call, self.name)
        name = names.key_for(call.name) if names is not None else call.name
        arguments = call.arguments
        definition = tools.get(name) if tools is not None else None
        if definition is not None:
            arguments = restore_defaults(arguments, definition.input_schema)
        if name == call.name and arguments is call.arguments:
            return call
        return ToolCall(id=call.id, name=name, arguments=arguments, provider_details=call.provider_details)

    def _check_forced(self, definitions: Sequence[ToolDefinition], strict: bool | None) -> None:
        """Refuse to send a tool forced strict whose schema the vendor's strict mode cannot take.

        Forced: `strict` True (the call's), or None and the tool's own True. Raised here, before the
        payload exists, instead of as the vendor's HTTP 400 on every request; with ``strict=None`` such a
        tool goes non-strict and `compatibility` reports why.

        Raises:
            StrictSchemaError: for the first such tool, listing what strict mode cannot express.
        """
        if strict is False or self.dialect is None or not self.refuses_forced_strict:
            return
        for definition in definitions:
            if strict is True or definition.strict is True:
                result = self.schema_dialect(definition, strict)
                rejected = result.rejected if result.strict else ()
                if rejected:
                    raise StrictSchemaError(definition.key, self.name, [str(loss) for loss in rejected])

    def request_problems(
        self, definitions: Sequence[ToolDefinition], strict: bool | None = None, *, tool_count: int | None = None
    ) -> list[str]:
        """What the vendor documents it refuses in a request carrying `definitions` (empty: nothing).

        The tool count (`tool_count`, else one per definition) against `max_tools`, then `schema_problems`.
        `compatibility` (and ``agentkit lint``) reports them.
        """
        count = len(definitions) if tool_count is None else tool_count
        return [*self.count_problems(count), *self.schema_problems(definitions, strict)]

    def count_problems(self, count: int) -> list[str]:
        """`count` tools against `max_tools` (empty when within it, or when the vendor documents no limit).

        Checked by the model clients before they send, on the vendor's own endpoint (OpenAI-compatible
        servers take more), never by `format_tools`, which builds whatever it is asked for.
        """
        limit = self.max_tools
        if limit is not None and count > limit:
            return [f"{count} tools in one request: {self.name} takes at most {limit} ({self.max_tools_source})"]
        return []

    def schema_problems(self, definitions: Sequence[ToolDefinition], strict: bool | None = None) -> list[str]:
        """Tool schemas the vendor refuses whatever the request (default: none); `format_tools` raises for them."""
        return []

    def _check_payload(self, definitions: Sequence[ToolDefinition], options: FormatOptions) -> None:
        """Raise `PayloadRejectedError` for tool schemas the vendor documents it refuses (`schema_problems`)."""
        problems = self.schema_problems(definitions, options.strict)
        if problems:
            raise PayloadRejectedError(self.name, problems, self.refusal_fix(problems))

    def refusal_fix(self, problems: Sequence[str]) -> str:
        """What to do about `problems` (said in `PayloadRejectedError.fix`)."""
        return (
            "Send fewer tools per request: defer the ones a turn rarely needs (@tool(deferred=True), or "
            "Agent(deferred_tools=True): the model finds them with a search tool), or send a subset "
            "(registry.select([...]))."
        )

    def _check_choice(self, toolset: _ToolSet, options: FormatOptions) -> None:
        keys = toolset.by_key
        if options.deferred:
            search = self.tool_search
            if search is None:
                raise RegistryError(
                    f"provider {self.name!r} has no native deferred tools (deferred={list(options.deferred)!r}): "
                    "leave ModelSettings.deferred_tools empty and let an agent run search them"
                )
            if search.get("name") in keys:
                raise RegistryError(
                    f"the key {search['name']!r} is the name of {self.name}'s own tool search tool; rename the tool"
                )
        if options.programmatic:
            hosted = self.programmatic_tool
            if hosted is None:
                raise RegistryError(
                    f"provider {self.name!r} runs no programs that call tools (programmatic="
                    f"{list(options.programmatic)!r}): use agentkit's own code mode (CodeMode(hosted=False)) with it"
                )
            if hosted.get("name") in keys:
                raise RegistryError(
                    f"the key {hosted['name']!r} is the name of {self.name}'s own code tool; rename the tool"
                )
        require_keys(keys, (*(options.active_tools or ()), *options.deferred, *options.programmatic))
        check_tool_choice(options.tool_choice, options.active_tools, keys)  # the agent's own rule

    # ---- what each vendor implements -------------------------------------------------------------

    @abstractmethod
    def _tool_definition(self, definition: ToolDefinition, wire_name: str, strict: bool | None) -> dict[str, Any]:
        """One tool's entry, e.g. ``{"type": "function", "function": {...}}``."""

    @abstractmethod
    def _tools_payload(
        self,
        entries: list[dict[str, Any]],
        tools: Mapping[str, ToolDefinition],
        names: NameMap,
        options: FormatOptions,
        /,  # positional: each vendor names them its own way
    ) -> dict[str, Any]:
        """The request fragment from the tool entries and definitions (all tools, in registry order)."""

    @abstractmethod
    def _parse_calls(self, response: Any) -> list[ToolCall]:
        """Tool calls from a response already converted to plain data (names are wire names)."""

    @abstractmethod
    def _result_messages(self, results: list[ToolResult]) -> list[dict[str, Any]]:
        """The vendor message(s) answering `results`."""

    @abstractmethod
    def _accumulator(self, names: NameMap | None, tools: Mapping[str, ToolDefinition] | None) -> StreamDecoder:
        """This vendor's stream decoder."""


for _name in _READERS:
    setattr(Provider, _name, guarded(getattr(Provider, _name), _vendor))


def _fresh_containers(payload: dict[str, Any]) -> dict[str, Any]:
    """A copy of the payload's dicts and lists down to the tool entries, which stay shared."""
    out: dict[str, Any] = {}
    for key, value in payload.items():
        if is_array(value):
            out[key] = list(value)
        elif is_object(value) and key != "tool_choice":
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
