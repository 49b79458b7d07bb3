"""Provider-neutral tool calls, results and their content parts.

These are what flows between the registry, the providers and the agent loop. `name` is always the
registry key, the name the model sees; a tool's `id` never appears here.
"""

from __future__ import annotations as _annotations

import base64
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Union

from ._jsonish import MAX_DEPTH, is_object, nested_deeper
from ._unicode import escaped, surrogate_at

if TYPE_CHECKING:
    from decimal import Decimal

__all__ = [
    "AssistantMessage",
    "ContentPart",
    "ImagePart",
    "Message",
    "ModelResponse",
    "SystemMessage",
    "TextPart",
    "ToolCall",
    "ToolResult",
    "ToolResultsMessage",
    "Usage",
    "UserMessage",
]


@dataclass(slots=True)
class TextPart:
    """Text given to the model."""

    text: str
    kind: Literal["text"] = "text"


@dataclass(slots=True)
class ImagePart:
    """An image given to the model, either by URL or as bytes with a media type."""

    url: str | None = None
    data: bytes | None = None
    media_type: str = "image/png"
    kind: Literal["image"] = "image"

    def __post_init__(self) -> None:
        if (self.url is None) == (self.data is None):
            raise ValueError("ImagePart needs exactly one of url= or data=")

    @property
    def base64(self) -> str:
        """The image bytes as base64 text (empty for a URL image)."""
        return base64.b64encode(self.data).decode("ascii") if self.data is not None else ""

    @property
    def data_url(self) -> str:
        """The image as a URL: its own URL, or a ``data:`` URL built from its bytes."""
        return self.url if self.url is not None else f"data:{self.media_type};base64,{self.base64}"


ContentPart = Union[TextPart, ImagePart]
"""One part of a message's or a tool result's content: text or an image."""


@dataclass(slots=True)
class ToolCall:
    """A model's request to call the tool registered under `name`.

    `arguments` is what the vendor sent: JSON text (OpenAI, Mistral) or an already parsed object
    (Anthropic, Gemini, Bedrock, Ollama). Both are accepted everywhere.
    """

    id: str
    name: str
    arguments: str | Mapping[str, Any] = field(default_factory=lambda: {})
    provider_details: Mapping[str, Any] | None = None
    """Vendor extras that must travel with the call (e.g. Gemini thought signatures)."""

    def arguments_dict(self) -> dict[str, Any]:
        r"""The arguments as a dict; raises `ValueError` for text that is not a JSON object.

        Text holding a lone surrogate (a ``\ud800`` escape) is not valid Unicode, so not an object either:
        agentkit reads JSON as pydantic-core does (and no vendor could be sent the decoded text). Nor is text
        nested more than 200 levels deep (validation refuses it; what reads it recursively would fail).
        """
        if isinstance(self.arguments, Mapping):
            return dict(self.arguments)
        try:
            parsed: Any = json.loads(self.arguments) if self.arguments.strip() else {}
        except RecursionError:
            raise ValueError("tool call arguments are nested too deeply to be read") from None
        if not is_object(parsed):
            raise ValueError(f"tool call arguments must be a JSON object, got {type(parsed).__name__}")
        if ("\\u" in self.arguments or not self.arguments.isascii()) and surrogate_at(parsed) is not None:
            raise ValueError("tool call arguments hold a lone surrogate, which is not valid Unicode")
        if self.arguments.count("{") + self.arguments.count("[") > MAX_DEPTH and nested_deeper(parsed):
            raise ValueError(f"tool call arguments are nested more than {MAX_DEPTH} levels deep")
        return parsed


@dataclass(slots=True)
class ToolResult:
    """The answer to one `ToolCall`.

    `output` is the tool's validated return value for the application; `content` is what the model
    receives. `is_error` marks failures the model should react to (bad arguments, an exception in
    the tool, a timeout, ...), with `content` explaining what went wrong.
    """

    call_id: str
    name: str
    content: Sequence[ContentPart]
    output: Any = None
    is_error: bool = False
    error_kind: str | None = None
    """For errors: ``unknown_tool``, ``invalid_arguments``, ``retry``, ``tool_error``, ``exception``,
    ``invalid_output``, ``timeout``, ``denied`` (by a person or a hook), ``budget`` (a call budget is spent),
    ``hook_error`` (a tool-call hook failed), ``limit_error`` (a concurrency limit's key failed) or
    ``cancelled`` (the run was cancelled before the call started, or a background call's event loop closed
    before it finished) or ``outcome_unknown`` (the call started and its outcome was lost: a crash, or a
    durable call's attempts ran out; see the "Side effects" guide)."""
    exception_type: str | None = None
    """For ``exception`` and ``invalid_output`` errors: the class name of what was raised, so a display
    can name it when the message itself must be withheld."""

    @property
    def text(self) -> str:
        """The text parts of `content`, joined by newlines."""
        content = self.content
        if len(content) == 1:  # the usual result: one text part (re-read for every message of a history)
            part = content[0]
            return part.text if isinstance(part, TextPart) else ""
        return "\n".join([p.text for p in content if isinstance(p, TextPart)])

    @classmethod
    def error(cls, call: ToolCall, message: str, kind: str, exception_type: str | None = None) -> ToolResult:
        """An error result for `call` whose content is `message`."""
        return cls(
            call_id=call.id,
            name=call.name,
            content=(TextPart(escaped(message)),),  # an exception's message may quote text UTF-8 cannot carry
            is_error=True,
            error_kind=kind,
            exception_type=exception_type,
        )


# ---- a provider-neutral conversation -----------------------------------------------------------------


@dataclass(slots=True)
class SystemMessage:
    """Instructions for the model."""

    text: str
    role: Literal["system"] = "system"


@dataclass(slots=True)
class UserMessage:
    """What the user said: text, or a list of text and image parts."""

    content: str | list[ContentPart]
    role: Literal["user"] = "user"

    @property
    def parts(self) -> list[ContentPart]:
        """The content as a list of parts."""
        return [TextPart(self.content)] if isinstance(self.content, str) else list(self.content)


@dataclass(slots=True)
class AssistantMessage:
    """One model turn: text and/or tool calls (named by registry key)."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=lambda: [])
    provider_details: dict[str, Any] | None = None
    """Vendor items that must be replayed verbatim in the next request of the *same* vendor (e.g.
    OpenAI Responses reasoning items, Anthropic thinking blocks), keyed by provider name
    (``{"anthropic": {"blocks": [...]}}``); other vendors ignore them."""
    role: Literal["assistant"] = "assistant"


@dataclass(slots=True)
class ToolResultsMessage:
    """The results answering the previous assistant turn's tool calls, in call order."""

    results: list[ToolResult]
    role: Literal["tool"] = "tool"


Message = Union[SystemMessage, UserMessage, AssistantMessage, ToolResultsMessage]
"""One entry of a provider-neutral history; reusable across calls and across vendors."""


@dataclass(slots=True)
class Usage:
    """Token counts of one request (`ModelResponse.usage`), or summed over a run's requests (`RunResult.usage`).

    `input_tokens` counts every input token, those read from or written to the vendor's prompt cache
    included; `output_tokens` every output token, reasoning included. The three details are parts of
    those totals, as far as the vendor reports them (0 where it does not): see the usage page of the docs
    for what each vendor reports.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0
    cache_read_tokens: int = 0
    """Input tokens read from the vendor's prompt cache (part of `input_tokens`)."""
    cache_write_tokens: int = 0
    """Input tokens written to the vendor's prompt cache (part of `input_tokens`)."""
    reasoning_tokens: int = 0
    """Output tokens the model spent reasoning (part of `output_tokens`)."""

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.requests + other.requests,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
        )

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens


@dataclass(slots=True)
class ModelResponse:
    """What a model returned for one request, in neutral form."""

    message: AssistantMessage
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    """The vendor's reason, normalised where possible: ``stop``, ``tool_calls``, ``length``, ``content_filter``."""
    model_name: str | None = None
    """The model that answered, as the vendor names it (e.g. ``gpt-4.1-2025-04-14``), else the one requested."""
    raw: Any = None
    """The vendor response as received (dict or SDK object), for debugging."""
    response_id: str | None = None
    """The vendor's id of this response, from its body (OpenAI ``chatcmpl-...``/``resp_...``, Anthropic
    ``msg_...``, Gemini ``responseId``, ...); None where the vendor sends none."""
    request_id: str | None = None
    """The vendor's id of the HTTP request, from its headers or metadata (OpenAI ``x-request-id``,
    Anthropic ``request-id``, Bedrock ``x-amzn-requestid``, ...): what the vendor's support asks for.
    None where the vendor sends none (a local server, a test model)."""
    provider_name: str | None = None
    """The vendor table's name of the API that answered (``"openai"``, ``"anthropic"``, ...), set by
    agentkit's model clients; what cost estimates and traces name."""
    provider_url: str | None = None
    """The endpoint the request went to (the client's base URL), set by agentkit's model clients."""

    def cost(self) -> Decimal | None:
        """This request's estimated price in USD, from the ``genai-prices`` table; None when unknown.

        Unknown: the model or the endpoint is not in the table (a local server, a test model), or the
        optional ``genai-prices`` package is not installed. See `agentkit.costs`.
        """
        from .costs import response_cost

        return response_cost(self)
