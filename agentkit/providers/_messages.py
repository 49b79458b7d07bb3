"""Message and response helpers that several vendor modules share (pure: plain data in and out).

Only logic that is the same for every vendor using it lives here; each vendor's quirks (what counts as
text, which finish reasons exist, how an unusable image is described) stay in its own module.
"""

from __future__ import annotations as _annotations

import binascii
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .._jsonish import is_array, is_mapping
from ..messages import (
    AssistantMessage,
    ImagePart,
    Message,
    SystemMessage,
    ToolCall,
    ToolResult,
    ToolResultsMessage,
    Usage,
    UserMessage,
)
from ._names import NameMap, NameRule, alias_for

__all__ = [
    "args_object",
    "base64_of",
    "chat_messages",
    "chat_usage",
    "data_url",
    "detail_count",
    "image_url_content",
    "input_object",
    "mapped_reason",
    "message_of",
    "replayed_content",
    "response_id",
    "token_count",
    "wire_name",
]


def wire_name(names: NameMap | None, key: str, rule: NameRule) -> str:
    """The wire name of a key; a name outside the registry that the vendor would refuse gets an alias."""
    if names is not None and key in names.to_wire:
        return names.name_for(key)
    return key if rule.accepts(key) else alias_for(key, rule)


def input_object(call: ToolCall) -> dict[str, Any]:
    """The call's arguments as the JSON object a tool-use block's ``input`` must be."""
    try:
        return call.arguments_dict()
    except ValueError:
        # text that is no JSON object was answered by an error result; the history needs an object
        return {}


def args_object(call: ToolCall) -> dict[str, Any]:
    """The call's arguments as an object, for vendors that reject argument strings.

    Text that is not a JSON object (possible in a history recorded from a JSON-text vendor) is kept
    under ``"_raw_arguments"`` so the model still sees what it sent.
    """
    try:
        return call.arguments_dict()
    except ValueError:
        return {"_raw_arguments": call.arguments}


def base64_of(part: ImagePart) -> tuple[str, str | None]:
    """(media type, base64 text) of an image given as bytes or as a ``data:`` URL (None: not base64)."""
    if part.data is not None:
        return part.media_type, part.base64
    header, _, payload = (part.url or "").partition(",")
    media_type = header[5:].split(";", 1)[0] or part.media_type
    if not header.endswith(";base64"):
        return media_type, None
    try:
        binascii.a2b_base64(payload)
    except binascii.Error:
        return media_type, None
    return media_type, payload


def data_url(url: str) -> tuple[str, str] | None:
    """``(media type, base64 data)`` of a base64 ``data:`` URL, else None."""
    if not url.startswith("data:") or ";base64," not in url:
        return None
    head, data = url[5:].split(";base64,", 1)
    return head or "application/octet-stream", data


def image_url_content(message: UserMessage) -> str | list[dict[str, Any]]:
    """A user message's content in the chat-completions form: a string, or ``text`` / ``image_url`` parts."""
    if isinstance(message.content, str):
        return message.content
    return [
        {"type": "image_url", "image_url": {"url": part.data_url}}
        if isinstance(part, ImagePart)
        else {"type": "text", "text": part.text}
        for part in message.content
    ]


def message_of(response: Any) -> Mapping[str, Any]:
    """A response's ``message`` (or the response itself when it is the message)."""
    if not is_mapping(response):
        return {}
    message = response.get("message")
    return message if is_mapping(message) else response


def token_count(value: Any) -> int:
    """A vendor's token count as an int (0 for a missing, null, negative or non-numeric value)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        return 0
    return int(value)


def detail_count(usage: Mapping[str, Any], fields: Sequence[str], key: str) -> int:
    """``usage[field][key]`` for the first of `fields` that holds a mapping (0 when none does)."""
    for name in fields:
        details = usage.get(name)
        if is_mapping(details):
            return token_count(details.get(key))
    return 0


def chat_usage(usage: Any) -> Usage:
    """A chat-completions ``usage`` as one request's `Usage`.

    ``prompt_tokens`` (cached ones included) and ``completion_tokens`` (reasoning included), with
    ``prompt_tokens_details.cached_tokens`` and ``completion_tokens_details.reasoning_tokens`` where the
    server reports them (OpenAI; Mistral also spells them ``prompt_token_details`` and ``num_cached_tokens``).
    """
    usage = usage if is_mapping(usage) else {}
    cached = detail_count(usage, ("prompt_tokens_details", "prompt_token_details"), "cached_tokens")
    return Usage(
        input_tokens=token_count(usage.get("prompt_tokens")),
        output_tokens=token_count(usage.get("completion_tokens")),
        requests=1,
        cache_read_tokens=cached or token_count(usage.get("num_cached_tokens")),
        reasoning_tokens=detail_count(usage, ("completion_tokens_details",), "reasoning_tokens"),
    )


def cached_prompt_usage(usage: Mapping[str, Any], fields: tuple[str, str, str, str]) -> Usage:
    """One request's `Usage` where the vendor counts cache reads and writes apart from the prompt.

    `fields` names the input, output, cache-read and cache-write counts (Anthropic's snake_case, Bedrock's
    camelCase). Input tokens are the whole prompt: the uncached part plus what was read from and written
    to the cache, so `Usage.input_tokens` means the same on every vendor.
    """
    input_field, output_field, read_field, write_field = fields
    cache_read, cache_write = token_count(usage.get(read_field)), token_count(usage.get(write_field))
    return Usage(
        input_tokens=token_count(usage.get(input_field)) + cache_read + cache_write,
        output_tokens=token_count(usage.get(output_field)),
        requests=1,
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
    )


def response_id(value: Any) -> str | None:
    """A response id from a body field: a non-empty string, else None."""
    return value if isinstance(value, str) and value else None


def mapped_reason(reason: Any, table: Mapping[str, str]) -> str | None:
    """A vendor's finish reason through its `table` (unknown ones as sent); None when it is no string."""
    return table.get(reason, reason) if isinstance(reason, str) else None


def chat_messages(
    messages: Sequence[Message],
    assistant: Callable[[AssistantMessage], dict[str, Any]],
    results: Callable[[Sequence[ToolResult]], list[dict[str, Any]]],
) -> list[dict[str, Any]]:
    """A neutral history as chat-completions messages, system prompts in place.

    System and user messages have one form on every such vendor; `assistant` builds an assistant turn
    and `results` the message(s) answering tool results, as the vendor does.
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        # tool results and assistant turns first: a long history is made of them
        if isinstance(message, ToolResultsMessage):
            out.extend(results(message.results))
        elif isinstance(message, AssistantMessage):
            out.append(assistant(message))
        elif isinstance(message, SystemMessage):
            out.append({"role": "system", "content": message.text})
        elif isinstance(message, UserMessage):  # pyright: ignore[reportUnnecessaryIsInstance]  # untyped callers
            out.append({"role": "user", "content": image_url_content(message)})
        else:
            raise TypeError(f"not a conversation message: {message!r}")
    return out


def replayed_content(message: AssistantMessage, vendor: str) -> Any:
    """The content blocks `vendor` kept on its own turn (``provider_details[vendor]["content"]``), else the text.

    Another vendor's details are ignored.
    """
    details: Any = (message.provider_details or {}).get(vendor) or {}
    replay: Any = details.get("content")
    return replay if is_array(replay) and replay else message.text
