"""The `Model` contract: one request (and its stream) to a vendor, in neutral messages.

A model turns a neutral history plus a registry into a vendor request (through its `Provider`, which
does all the formatting and parsing), sends it through the vendor's official SDK, and returns a neutral
`ModelResponse`. Streaming yields `ModelStreamEvent`s and ends with the full response.
"""

from __future__ import annotations as _annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Union
from urllib.parse import urlparse

from ..definitions import ToolDefinition
from ..exceptions import ModelSetupError
from ..messages import Message, ModelResponse
from ..registry import Registry
from ._output import OutputMode, OutputPlan, OutputRequest

__all__ = [
    "Model",
    "ModelSettings",
    "ModelStreamEvent",
    "ResponseDone",
    "TextDelta",
    "ToolCallArgsDelta",
    "ToolCallStart",
    "allow_model_requests",
    "check_request_allowed",
]


@dataclass(frozen=True)
class ModelSettings:
    """Per-request options a model passes on to its provider and the vendor."""

    tool_choice: str = "auto"
    active_tools: tuple[str, ...] | None = None
    strict: bool | None = None
    parallel_tool_calls: bool | None = None
    aliases: bool = False
    """Send deterministic aliases for keys a vendor rejects (mapped back on the way in)."""
    max_tokens: int | None = None
    temperature: float | None = None
    extra: Mapping[str, Any] = field(default_factory=lambda: {})
    """Vendor request fields merged last, as they are (e.g. ``{"top_p": 0.9}``)."""
    output: OutputRequest | None = None
    """Structured output asked of this request (set by the agent loop from its output type)."""
    deferred_tools: tuple[str, ...] = ()
    """Keys to send in the vendor's native deferred form (Anthropic and OpenAI Responses ``defer_loading``),
    with the vendor's own tool search tool beside them; set by agent runs (see `agentkit.search`)."""
    programmatic_tools: tuple[str, ...] = ()
    """Keys a program the vendor runs may call (OpenAI Responses ``programmatic_tool_calling``, Anthropic code
    execution, each with ``allowed_callers``); the vendor's code tool is sent beside them. Set by agent runs
    with a hosted `agentkit.codemode.CodeMode`."""
    programmatic_direct: bool = False
    """Whether the `programmatic_tools` may also be called directly by the model (not only by its program)."""


@dataclass(frozen=True)
class TextDelta:
    """A piece of the model's text."""

    text: str


@dataclass(frozen=True)
class ToolCallStart:
    """The model began a tool call (its name is the registry key)."""

    index: int
    call_id: str | None
    tool_name: str


@dataclass(frozen=True)
class ToolCallArgsDelta:
    """More argument text for the tool call at `index`."""

    index: int
    delta: str
    arguments_so_far: str


@dataclass(frozen=True)
class ResponseDone:
    """The stream ended; `response` is the whole turn, exactly what `request` would have returned."""

    response: ModelResponse


ModelStreamEvent = Union[TextDelta, ToolCallStart, ToolCallArgsDelta, ResponseDone]
"""What `Model.stream` yields: text and tool-call deltas as they arrive, then one `ResponseDone`."""


class Model(ABC):
    """A model behind a vendor API (or a test double).

    Subclasses implement `request`; `stream` defaults to one `request` replayed as events, and
    `payload` (the exact request body, for snapshot tests) to `NotImplementedError`.
    """

    @property
    @abstractmethod
    def name(self) -> str:
        """``vendor:model-name``, e.g. ``"openai:gpt-4o-mini"``."""

    @abstractmethod
    async def request(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> ModelResponse:
        """Send one request and return the model's turn."""

    async def stream(
        self, messages: Sequence[Message], tools: Registry, settings: ModelSettings
    ) -> AsyncIterator[ModelStreamEvent]:
        """Stream one request. The default replays `request`'s answer as events."""
        response = await self.request(messages, tools, settings)
        if response.message.text:
            yield TextDelta(response.message.text)
        for index, call in enumerate(response.message.tool_calls):
            yield ToolCallStart(index, call.id, call.name)
            text = call.arguments if isinstance(call.arguments, str) else _json(call.arguments)
            yield ToolCallArgsDelta(index, text, text)
        yield ResponseDone(response)

    def native_tool_search(self, requested: bool | None = None) -> bool:
        """Whether deferred tools go to this model in its vendor's native form (server-side tool search).

        `requested` is `ToolSearch.native`: None lets the model decide (native where the vendor and this
        model support it), True insists, False declines. The default: no native form.

        Raises:
            ModelSetupError: native was insisted on but this vendor has no native tool search.
        """
        if requested:
            raise ModelSetupError(
                f"{self.name} has no native tool search (Anthropic and OpenAI Responses do): use "
                "ToolSearch(native=None) or native=False for agentkit's own search, which works with every model"
            )
        return False

    def payload(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> dict[str, Any]:
        """Exactly what `request` would send (the request body), for snapshot tests."""
        raise NotImplementedError(f"{type(self).__name__} cannot show its payload")

    def output_plan(self, definition: ToolDefinition, mode: OutputMode, *, with_tools: bool) -> OutputPlan:
        """How this model is asked for the structured output `definition` (see `OutputPlan`).

        Vendor models ask their provider (native where the vendor has a form for it, else an output
        tool). The default, for models without a vendor (test doubles), is the `mode` asked, ``auto``
        meaning ``native``: the model's text answer is read as the JSON value.
        """
        plan = _PLANS.get(mode)
        return plan if plan is not None else OutputPlan("native" if mode == "auto" else mode)

    async def aclose(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Release what the model opened itself (never a client the caller passed in)."""

    async def __aenter__(self) -> Model:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


_PLANS: dict[str, OutputPlan] = {
    "auto": OutputPlan("native"),
    "native": OutputPlan("native"),
    "tool": OutputPlan("tool"),
    "prompted": OutputPlan("prompted"),
}
"""The default plans, made once (frozen: shared by every run of every model without a vendor)."""


def _json(value: Any) -> str:
    from .._text import json_text  # arguments may be nested deeper than json.dumps recurses

    return json_text(value, compact=True)


# ---- blocking real requests in test runs ----------------------------------------------------------

_ALLOW = [True]


@contextlib.contextmanager
def allow_model_requests(allow: bool) -> Generator[None, None, None]:
    """Allow or block requests to non-local vendor endpoints within a ``with`` block.

    Test suites block them (``allow_model_requests(False)`` in a fixture, or
    ``agentkit.models.set_allow_model_requests(False)``) so nothing reaches a real vendor by accident;
    requests to 127.0.0.1/localhost and in-process transports stay allowed.
    """
    previous = _ALLOW[0]
    _ALLOW[0] = allow
    try:
        yield
    finally:
        _ALLOW[0] = previous


def set_allow_model_requests(allow: bool) -> None:
    """Allow or block requests to non-local vendor endpoints for the rest of the process."""
    _ALLOW[0] = allow


def check_request_allowed(model_name: str, base_url: str | None) -> None:
    """Raise `ModelSetupError` if real vendor requests are blocked and `base_url` is not local.

    Model clients call this before each request; `base_url` None means the vendor's default endpoint. A
    replaying `agentkit.testing.Cassette` answers every request itself (nothing is sent): allowed.
    """
    if _ALLOW[0]:
        return
    from .._cassettes._cassette import replaying

    if replaying():
        return
    host = urlparse(base_url).hostname if base_url else None
    if host in ("127.0.0.1", "localhost", "::1") or (host or "").endswith(".local.test"):
        return
    raise ModelSetupError(
        f"Request to {model_name} blocked: real vendor requests are disabled in this run "
        f"(base URL {base_url or 'vendor default'!s}). Use agentkit.testing.TestModel or FunctionModel, point the "
        "client at a local server, or allow requests with agentkit.models.allow_model_requests(True)."
    )
