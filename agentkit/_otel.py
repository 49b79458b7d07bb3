"""The spans of a traced run, per the OpenTelemetry GenAI semantic conventions (``opentelemetry-api`` only).

Imported only once tracing is turned on (`agentkit.instrumentation`). Attribute names are written out
here rather than taken from ``opentelemetry-semantic-conventions``, whose GenAI names are still
"incubating" (moving between releases) and which would be one more dependency.
"""

from __future__ import annotations as _annotations

import contextlib
import json
import traceback
import weakref
from collections.abc import Awaitable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlparse

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from ._agent.display import display_arguments, error_text, shape
from ._vendors import VENDORS
from .exceptions import ClientCallRequested, ModelAPIError, ToolSuspended
from .instrumentation import _enter_run, _leave_run  # pyright: ignore[reportPrivateUsage]  # agentkit's own run plumbing
from .messages import (
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

if TYPE_CHECKING:
    from ._agent.results import RunResult
    from .definitions import ToolDefinition
    from .hooks import ModelRequest
    from .instrumentation import InstrumentationSettings
    from .models import Model
    from .registry import Registry
    from .tools import ToolTransform

__all__ = ["PROVIDER_NAMES", "TracedRun", "Tracing"]


class TracedRun(Protocol):
    """What the spans read of a run (the run's `agentkit._agent.config.RunConfig`)."""

    @property
    def agent(self) -> Any:
        """The agent's facts: ``id``, ``name``, ``description``, ``instructions``."""
        ...

    @property
    def model(self) -> Model: ...

    @property
    def streaming(self) -> bool: ...

    @property
    def registry(self) -> Registry: ...

    def rules(self, key: str) -> ToolTransform: ...


PROVIDER_NAMES: Mapping[str, str] = MappingProxyType(
    {name: row.telemetry_name for name, row in VENDORS.items() if row.telemetry_name is not None}
)
"""agentkit vendor -> ``gen_ai.provider.name``: the vendor table's ``telemetry_name`` column (the conventions'
well-known values; a vendor without one is named as agentkit names it)."""


def _provider_and_model(model: Model) -> tuple[str, str]:
    vendor, sep, name = model.name.partition(":")
    return PROVIDER_NAMES.get(vendor, vendor), name if sep else vendor


_ENCODER = json.JSONEncoder(default=repr, ensure_ascii=False)
"""What ``json.dumps(value, default=repr, ensure_ascii=False)`` uses, made once: with arguments of its own,
``json.dumps`` makes a new encoder per call (~1 us; a content run serializes ~10 values)."""


def _json(value: Any) -> str:
    return _ENCODER.encode(value)


class Tracing:
    """One tracer and its settings; opens the run, model request and tool call spans."""

    def __init__(self, settings: InstrumentationSettings) -> None:
        from . import __version__

        self.settings = settings
        self.content = settings.include_content
        self.tracer = trace.get_tracer("agentkit", __version__, tracer_provider=settings.tracer_provider)
        # per model object: the chat span's name and the attributes that depend on the model only, not
        # streamed and streamed (made once, not per request; a model's name and base URL do not change)
        self._chat: weakref.WeakKeyDictionary[Model, tuple[str, dict[str, Any], dict[str, Any]]]
        self._chat = weakref.WeakKeyDictionary()
        # per agent spec (a new one when the agent changes): the run span's model, name and start attributes
        self._agents: weakref.WeakKeyDictionary[Any, tuple[Model, str, dict[str, Any]]] = weakref.WeakKeyDictionary()
        # content only: the tool definitions' JSON per definitions tuple (see `_definitions`)
        self._tools_json: dict[int, tuple[tuple[ToolDefinition, ...], str]] = {}

    def _chat_basis(self, model: Model, streaming: bool = False) -> tuple[str, dict[str, Any]]:
        """The chat span's name and its attributes that depend on the model and streaming only (shared)."""
        found = self._chat.get(model)
        if found is None:
            provider, name = _provider_and_model(model)
            attributes: dict[str, Any] = {
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": provider,
                "gen_ai.request.model": name,
                **_server(getattr(model, "base_url", None)),
            }
            found = (
                f"chat {name}",
                {**attributes, "gen_ai.request.stream": False},
                {**attributes, "gen_ai.request.stream": True},
            )
            with contextlib.suppress(TypeError):  # a model that cannot be weakly referenced: made per request
                self._chat[model] = found
        return found[0], found[2] if streaming else found[1]

    def _agent_basis(self, loop: TracedRun) -> tuple[str, dict[str, Any]]:
        """The run span's name and start attributes: made once per (agent spec, model), never changed."""
        agent, model = loop.agent, loop.model
        found = self._agents.get(agent)
        if found is None or found[0] is not model:
            provider, model_name = _provider_and_model(model)
            attributes: dict[str, Any] = {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": agent.name,
                "gen_ai.agent.id": agent.id,
                "gen_ai.provider.name": provider,
                "gen_ai.request.model": model_name,
            }
            if agent.description:
                attributes["gen_ai.agent.description"] = agent.description
            if self.content and agent.instructions:
                attributes["gen_ai.system_instructions"] = _json([{"type": "text", "content": agent.instructions}])
            found = (model, f"invoke_agent {agent.name}", attributes)
            with contextlib.suppress(TypeError):  # a spec that cannot be weakly referenced: made per run
                self._agents[agent] = found
        return found[1], found[2]

    # ---- a run -----------------------------------------------------------------------------------------

    async def agent(self, loop: TracedRun, body: Awaitable[RunResult]) -> RunResult:
        """Run `body` (the loop) inside an ``invoke_agent`` span, this tracer the one its subagents inherit."""
        name, attributes = self._agent_basis(loop)  # shared: the SDK copies what it keeps
        run = _enter_run(self)  # here, not in a coroutine of its own around this one
        span = self.tracer.start_span(name, kind=SpanKind.INTERNAL, attributes=attributes, **_OWN_ERRORS)
        token = otel_context.attach(trace.set_span_in_context(span))
        try:
            try:
                result = await body
            except BaseException as exc:
                self._failed(span, exc)
                raise
            if span.is_recording():  # a span the sampler dropped gets nothing: build nothing for it
                ended = _usage(result.usage)
                ended["agentkit.run.status"] = result.status
                ended["agentkit.run.steps"] = len(result.steps)
                if self.content:
                    ended["gen_ai.output.messages"] = _json([_text_message("assistant", result.text)])
                span.set_attributes(ended)
            return result
        finally:
            otel_context.detach(token)
            span.end()
            _leave_run(run)

    # ---- a model request -------------------------------------------------------------------------------

    async def chat(self, loop: TracedRun, request: ModelRequest, turn: Awaitable[ModelResponse]) -> ModelResponse:
        """Await `turn` (the model request `request`, streamed or not) inside a ``chat`` span."""
        settings = request.settings
        name, attributes = self._chat_basis(request.model, loop.streaming)
        if settings.max_tokens is not None or settings.temperature is not None or settings.output is not None:
            attributes = dict(attributes)  # the cached basis is shared: add to a copy
            if settings.max_tokens is not None:
                attributes["gen_ai.request.max_tokens"] = settings.max_tokens
            if settings.temperature is not None:
                attributes["gen_ai.request.temperature"] = settings.temperature
            if settings.output is not None:  # a structured answer asked for (native, prompted or the output tool)
                attributes["gen_ai.output.type"] = "json"
        span = self.tracer.start_span(name, kind=SpanKind.CLIENT, attributes=attributes, **_OWN_ERRORS)
        token = otel_context.attach(trace.set_span_in_context(span))
        try:
            # the content is serialized only for a span that records it (never for one a sampler dropped)
            recording = span.is_recording()
            if recording and self.content:
                span.set_attributes(self._request_content(loop, request))
            try:
                response = await turn
            except BaseException as exc:
                self._failed(span, exc)
                raise
            if recording:
                ended = _response(response)
                if self.content:
                    message = _assistant(loop, response.message)
                    message["finish_reason"] = response.finish_reason or "stop"
                    ended["gen_ai.output.messages"] = _json([message])
                span.set_attributes(ended)
            return response
        finally:
            otel_context.detach(token)
            span.end()

    def _request_content(self, loop: TracedRun, request: ModelRequest) -> dict[str, Any]:
        attributes: dict[str, Any] = {}
        system = [m.text for m in request.messages if isinstance(m, SystemMessage)]
        if system:
            attributes["gen_ai.system_instructions"] = _json([{"type": "text", "content": t} for t in system])
        messages = [_message(loop, m) for m in request.messages if not isinstance(m, SystemMessage)]
        attributes["gen_ai.input.messages"] = _json(messages)
        attributes["gen_ai.tool.definitions"] = self._definitions(request.tools.definitions())
        return attributes

    def _definitions(self, definitions: tuple[ToolDefinition, ...]) -> str:
        """The tools' JSON, made once per definitions tuple (a registry returns the same one while unchanged)."""
        found = self._tools_json.get(id(definitions))  # the tuple is kept with it: its id is not reused meanwhile
        if found is None or found[0] is not definitions:
            if len(self._tools_json) >= 64:  # registries made per run (a selection) must not pile up
                self._tools_json.clear()
            text = _json([{"type": "function", "name": d.key, "description": d.description} for d in definitions])
            found = self._tools_json[id(definitions)] = (definitions, text)
        return found[1]

    # ---- a tool call -----------------------------------------------------------------------------------

    async def tool(self, loop: TracedRun, call: ToolCall, run: Awaitable[ToolResult]) -> ToolResult:
        """Await `run` (one tool call) inside an ``execute_tool`` span; an error result marks the span."""
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.name,
            "gen_ai.tool.call.id": call.id,
            "gen_ai.tool.type": "function",
        }
        item = loop.registry.get(call.name)  # one dict lookup
        if item is not None and item.description:
            attributes["gen_ai.tool.description"] = item.description
        span = self.tracer.start_span(
            f"execute_tool {call.name}", kind=SpanKind.INTERNAL, attributes=attributes, **_OWN_ERRORS
        )
        token = otel_context.attach(trace.set_span_in_context(span))
        try:
            recording = span.is_recording()
            if recording and self.content:
                shown, _ = shape(loop.rules(call.name).input, display_arguments(call), "input")
                span.set_attribute("gen_ai.tool.call.arguments", _json(shown))
            try:
                result = await run
            except (ToolSuspended, ClientCallRequested) as signal:  # a pause, not a failure
                span.set_attribute("agentkit.tool.paused", type(signal).__name__)
                raise
            except BaseException as exc:
                self._failed(span, exc)
                raise
            if result.is_error:
                span.set_attribute("error.type", result.exception_type or result.error_kind or "error")
                span.set_attribute("agentkit.tool.error_kind", result.error_kind or "error")
                span.set_status(Status(StatusCode.ERROR, result.error_kind))
            if recording and self.content:
                span.set_attribute("gen_ai.tool.call.result", _json(_shown_result(loop, result)))
            return result
        finally:
            otel_context.detach(token)
            span.end()

    def _failed(self, span: Any, exc: BaseException) -> None:
        """Mark `span` failed by `exc`: in full with content, else only its summary.

        An exception's message may quote what content recording keeps out (a vendor's error body can echo
        a key or the prompt; a tool's exception its arguments): without ``include_content`` the span gets
        the exception's class, its frames and `ModelAPIError.summary` (class, model, status), never the text.
        """
        name = type(exc).__name__
        span.set_attribute("error.type", name)
        if self.content:
            span.record_exception(exc)
            span.set_status(Status(StatusCode.ERROR, f"{name}: {exc}"))
            return
        summary = exc.summary if isinstance(exc, ModelAPIError) else name
        frames = "".join(traceback.format_tb(exc.__traceback__))
        span.add_event(
            "exception",
            {
                "exception.type": f"{type(exc).__module__}.{type(exc).__qualname__}",
                "exception.message": summary,
                "exception.stacktrace": f"Traceback (most recent call last):\n{frames}{name} (message withheld)",
            },
        )
        span.set_status(Status(StatusCode.ERROR, summary))


_OWN_ERRORS: dict[str, Any] = {"record_exception": False, "set_status_on_exception": False}
"""Spans record their exceptions themselves (`Tracing._failed`), so a message never bypasses ``include_content``.

Each span is started with ``start_span`` and made current by hand (attach, then detach and end in a
``finally``): what ``start_as_current_span`` does with these flags (its ``use_span`` records nothing
then), without its two generator context managers, ~2 us a span."""


# ---- attribute values ---------------------------------------------------------------------------------------


def _usage(usage: Usage) -> dict[str, Any]:
    out = {"gen_ai.usage.input_tokens": usage.input_tokens, "gen_ai.usage.output_tokens": usage.output_tokens}
    if usage.cache_read_tokens:
        out["gen_ai.usage.cache_read.input_tokens"] = usage.cache_read_tokens
    if usage.cache_write_tokens:
        out["gen_ai.usage.cache_creation.input_tokens"] = usage.cache_write_tokens
    if usage.reasoning_tokens:
        out["gen_ai.usage.reasoning.output_tokens"] = usage.reasoning_tokens
    return out


def _response(response: ModelResponse) -> dict[str, Any]:
    out: dict[str, Any] = _usage(response.usage)
    if response.model_name:
        out["gen_ai.response.model"] = response.model_name
    if response.response_id:
        out["gen_ai.response.id"] = response.response_id
    if response.request_id:
        out["agentkit.response.request_id"] = response.request_id
    if response.finish_reason:
        out["gen_ai.response.finish_reasons"] = (response.finish_reason,)
    return out


def _server(base_url: Any) -> dict[str, Any]:
    if not isinstance(base_url, str) or not base_url:
        return {}
    parsed = urlparse(base_url)
    out: dict[str, Any] = {}
    if parsed.hostname:
        out["server.address"] = parsed.hostname
    try:
        port = parsed.port or (443 if parsed.scheme == "https" else 80 if parsed.scheme == "http" else None)
    except ValueError:
        port = None
    if port is not None:
        out["server.port"] = port
    return out


def _text_message(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def _parts(parts: Sequence[Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, TextPart):
            out.append({"type": "text", "content": part.text})
        elif isinstance(part, ImagePart):  # never the bytes: a trace is not the place for them
            entry: dict[str, Any] = {"type": "uri" if part.url else "blob", "mime_type": part.media_type}
            if part.url and not part.url.startswith("data:"):
                entry["uri"] = part.url
            out.append(entry)
    return out


def _assistant(loop: TracedRun, message: AssistantMessage) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"type": "text", "content": message.text}] if message.text else []
    for call in message.tool_calls:
        shown, _ = shape(loop.rules(call.name).input, display_arguments(call), "input")
        parts.append({"type": "tool_call", "id": call.id, "name": call.name, "arguments": shown})
    return {"role": "assistant", "parts": parts}


def _shown_result(loop: TracedRun, result: ToolResult) -> Any:
    """A result as a display sees it: the shaped output, or the (withheld where redacted) error text."""
    rules = loop.rules(result.name)
    if result.is_error:
        shown, _ = shape(rules.error, error_text(result, rules), "error")
    elif rules.output is not None:
        shown, _ = shape(rules.output, result.output, "output")
    else:
        shown = result.text
    return shown


def _message(loop: TracedRun, message: Message) -> dict[str, Any]:
    if isinstance(message, UserMessage):
        return {"role": "user", "parts": _parts(message.parts)}
    if isinstance(message, AssistantMessage):
        return _assistant(loop, message)
    if isinstance(message, ToolResultsMessage):
        parts = [
            {"type": "tool_call_response", "id": r.call_id, "response": _shown_result(loop, r)} for r in message.results
        ]
        return {"role": "tool", "parts": parts}
    return _text_message("system", message.text)
