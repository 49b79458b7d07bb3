"""Neutral messages, steps and pending items as JSON data, and back (pydantic `TypeAdapter`s, no pickle).

Tool outputs are written as JSON through each tool's output schema (`FunctionSchema.dump_output_python`)
and read back as JSON values; `restore_outputs` re-validates them against the tools of the resuming
agent, so a resumed run holds the same typed values (a model instance, a datetime) as before. Bytes (an
`ImagePart`'s data) travel as base64. A `ModelResponse`'s vendor `raw` object is not kept.
"""

from __future__ import annotations as _annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, cast

from .._agent.pending import PendingBackground, PendingSuspension
from .._agent.results import PendingItem, Step
from .._jsonish import is_mapping
from .._text import json_text
from ..exceptions import SnapshotError, ToolOutputError
from ..messages import (
    AssistantMessage,
    ContentPart,
    Message,
    ModelResponse,
    TextPart,
    ToolResult,
    ToolResultsMessage,
    Usage,
)

if TYPE_CHECKING:
    from pydantic import TypeAdapter

    from ..models import ModelSettings
    from ..tools import Tool

__all__ = [
    "decode_messages",
    "decode_pending",
    "decode_response",
    "decode_results",
    "decode_settings",
    "decode_usage",
    "dump_output",
    "encode_messages",
    "encode_pending",
    "encode_response",
    "encode_results",
    "encode_settings",
    "encode_steps",
    "restore_outputs",
    "storable_json",
]

Tools = Mapping[str, "Tool[..., Any]"]


@cache
def _adapter(kind: str) -> TypeAdapter[Any]:
    from pydantic import ConfigDict, TypeAdapter

    from ._document import AnyMessage, AnyPending  # the unions as the document check reads them

    config = ConfigDict(ser_json_bytes="base64", val_json_bytes="base64")
    if kind == "messages":
        return TypeAdapter(list[AnyMessage], config=config)
    if kind == "results":
        return TypeAdapter(list[ToolResult], config=config)
    if kind == "parts":
        return TypeAdapter(list[ContentPart], config=config)
    if kind == "pending":
        return TypeAdapter(list[AnyPending], config=config)
    if kind == "usage":
        return TypeAdapter(Usage)
    raise AssertionError(kind)


def dump_output(result: ToolResult, tools: Tools) -> Any:
    """`result.output` as JSON data, through its tool's output schema when the tool is known."""
    output = result.output
    if output is None:
        return None
    item = tools.get(result.name)
    if item is not None:
        return item.schema.dump_output_python(output)
    from pydantic_core import to_jsonable_python

    return to_jsonable_python(output, fallback=repr, bytes_mode="base64")


_USAGE_FIELDS = tuple(f.name for f in dataclasses.fields(Usage))


def _usage_data(usage: Usage) -> dict[str, Any]:
    """`usage` as JSON data (what its TypeAdapter dumps, without the adapter's call per step)."""
    return {name: getattr(usage, name) for name in _USAGE_FIELDS}


def _result_data(result: ToolResult, tools: Tools) -> dict[str, Any]:
    """One tool result as JSON data: what the results adapter dumps (``exclude_none``), output included.

    The output goes through its tool's schema. Written out because pydantic serialises `ToolResult.content`
    (a ``Sequence``) through a Python function, a third of a long history's encoding; a test pins this to
    the adapter's output.
    """
    content = result.content
    texts = [part.text for part in content if isinstance(part, TextPart)]
    if len(texts) == len(content):
        parts: Any = [{"text": text, "kind": "text"} for text in texts]
    else:
        parts = _adapter("parts").dump_python(list(content), mode="json", exclude_none=True)
    data: dict[str, Any] = {"call_id": result.call_id, "name": result.name, "content": parts}
    if result.output is not None:
        data["output"] = dump_output(result, tools)
    data["is_error"] = result.is_error
    if result.error_kind is not None:
        data["error_kind"] = result.error_kind
    if result.exception_type is not None:
        data["exception_type"] = result.exception_type
    return data


def encode_messages(messages: Sequence[Message], tools: Tools) -> list[Any]:
    """The history as JSON data (tool outputs through their tools' output schemas)."""
    others = [m for m in messages if not isinstance(m, ToolResultsMessage)]
    dumped = iter(_adapter("messages").dump_python(others, mode="json", exclude_none=True))  # one call for all
    return [
        {"results": [_result_data(r, tools) for r in m.results], "role": "tool"}
        if isinstance(m, ToolResultsMessage)
        else next(dumped)
        for m in messages
    ]


def decode_messages(data: Any) -> list[Message]:
    """A history from JSON data; tool outputs stay JSON values until `restore_outputs`."""
    return cast("list[Message]", _validate("messages", data, "messages"))


def encode_results(results: Sequence[ToolResult], tools: Tools) -> list[Any]:
    """Tool results as JSON data."""
    return [_result_data(r, tools) for r in results]


def decode_results(data: Any, where: str) -> list[ToolResult]:
    """Tool results from JSON data."""
    return cast("list[ToolResult]", _validate("results", data, where))


def encode_pending(pending: Sequence[PendingItem]) -> list[Any]:
    """Pending items as JSON data; a display payload that cannot be dumped is withheld (named, not shown)."""
    from pydantic_core import PydanticSerializationError

    out: list[Any] = []
    for item in pending:
        try:
            out.append(_adapter("pending").dump_python([item], mode="json")[0])
        except PydanticSerializationError:
            withheld = "payload could not be serialized to JSON; withheld"
            if isinstance(item, PendingSuspension):
                item = dataclasses.replace(item, payload=None, request=None, transform_error=withheld)
            elif not isinstance(item, PendingBackground):
                item = dataclasses.replace(item, payload=None, transform_error=withheld)
            out.append(_adapter("pending").dump_python([item], mode="json")[0])
    return out


def decode_pending(data: Any) -> list[PendingItem]:
    """Pending items from JSON data."""
    return cast("list[PendingItem]", _validate("pending", data, "pending"))


def encode_steps(steps: Sequence[Step], messages: Sequence[Message], tools: Tools) -> list[Any]:
    """Steps by reference into `messages` where they share its objects (as a run's steps do), else inline."""
    assistant = {id(m): i for i, m in enumerate(messages) if isinstance(m, AssistantMessage)}
    answered = {id(m.results): i for i, m in enumerate(messages) if isinstance(m, ToolResultsMessage)}
    out: list[Any] = []
    for step in steps:
        response = step.response
        position = assistant.get(id(response.message))
        entry: dict[str, Any] = {
            "index": step.index,
            "message": position if position is not None else encode_messages([response.message], tools)[0],
            "usage": _usage_data(response.usage),
        }
        entry.update(_response_fields(response))
        if step.results:
            where = answered.get(id(step.results))
            entry["results"] = where if where is not None else encode_results(step.results, tools)
        out.append(entry)
    return out


def restore_outputs(messages: Sequence[Message], steps: Sequence[Step], tools: Tools) -> None:
    """Re-validate every tool output (JSON values) against its tool's output schema, in place.

    The results are set their typed outputs: they must be the caller's own (freshly decoded) objects.

    Raises:
        SnapshotError: an output no longer fits its tool's schema (names the call).
    """
    seen: set[int] = set()
    groups = [m.results for m in messages if isinstance(m, ToolResultsMessage)] + [s.results for s in steps]
    for results in groups:
        for result in results:
            if result.is_error or result.output is None or result.name not in tools or id(result) in seen:
                continue
            seen.add(id(result))
            try:
                result.output = tools[result.name].schema.validate_output(result.name, result.output)
            except ToolOutputError as exc:
                raise SnapshotError(
                    f"the output of call {result.call_id!r} ({result.name!r}) does not fit the tool's output "
                    f"schema any more: {exc}",
                    [result.name],
                ) from None


def decode_usage(data: Any) -> Usage:
    """`Usage` from JSON data."""
    return cast(Usage, _validate("usage", data, "usage"))


def storable_json(data: Any, *, indent: int | None = None) -> str:
    """JSON text of `data`, for storing, in text that encodes as UTF-8 whatever the strings hold.

    pydantic-core's encoder writes it (4x the standard library's speed); a lone surrogate, which it
    refuses, makes the standard library write the text with every non-ASCII character escaped, and data
    nested deeper than Python recurses is written iteratively.
    """
    from pydantic_core import to_json

    if indent is None:
        try:
            return to_json(data, inf_nan_mode="constants").decode()
        except Exception:  # noqa: BLE001 - lone surrogates, very deep data: the standard library decides
            pass
    try:
        text = json.dumps(data, ensure_ascii=False, indent=indent)
    except RecursionError:
        return json_text(data)  # iterative, every non-ASCII character escaped
    try:
        text.encode()
    except UnicodeEncodeError:
        return json.dumps(data, ensure_ascii=True, indent=indent)
    return text


def _validate(kind: str, data: Any, where: str) -> Any:
    from pydantic import ValidationError

    try:
        return _adapter(kind).validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        location = ".".join(str(part) for part in first["loc"])
        raise SnapshotError(f"the snapshot's {where} is malformed at {location or '$'}: {first['msg']}") from None


def encode_settings(settings: ModelSettings) -> dict[str, Any]:
    """`ModelSettings` as JSON data."""
    data = dataclasses.asdict(settings)
    data["active_tools"] = list(settings.active_tools) if settings.active_tools is not None else None
    data["deferred_tools"] = list(settings.deferred_tools)
    data["programmatic_tools"] = list(settings.programmatic_tools)
    data["extra"] = dict(settings.extra)
    return data


def decode_settings(data: Any) -> ModelSettings:
    """`ModelSettings` from JSON data."""
    from ..models import ModelSettings

    if not is_mapping(data):
        raise SnapshotError("settings must be an object")
    fields = dict(data)
    active = fields.get("active_tools")
    fields["active_tools"] = tuple(active) if active is not None else None
    fields["deferred_tools"] = tuple(fields.get("deferred_tools", ()))  # a list in JSON; hashable here
    fields["programmatic_tools"] = tuple(fields.get("programmatic_tools", ()))
    try:
        return ModelSettings(**fields)
    except TypeError as exc:
        raise SnapshotError(f"settings are malformed: {exc}") from None


# the text fields of a ModelResponse that travel (the model, the ids, where it came from: what cost
# estimates, traces and support requests need after a resume)
_RESPONSE_FIELDS = ("finish_reason", "model_name", "response_id", "request_id", "provider_name", "provider_url")


def _response_fields(response: ModelResponse) -> dict[str, str]:
    return {name: value for name in _RESPONSE_FIELDS if isinstance(value := getattr(response, name), str)}


def _response_kwargs(data: Mapping[str, Any]) -> dict[str, Any]:
    return {name: value for name in _RESPONSE_FIELDS if isinstance(value := data.get(name), str)}


def encode_response(response: ModelResponse, tools: Tools) -> dict[str, Any]:
    """A model turn as JSON data (the vendor's `raw` object is not kept)."""
    return {
        "message": encode_messages([response.message], tools)[0],
        "usage": _usage_data(response.usage),
        **_response_fields(response),
    }


def decode_response(data: Mapping[str, Any]) -> ModelResponse:
    """A model turn from JSON data."""
    message = decode_messages([data["message"]])[0]
    if not isinstance(message, AssistantMessage):
        raise SnapshotError("a model response must hold an assistant message")
    usage = _validate("usage", data.get("usage", {}), "usage")
    return ModelResponse(message, usage, **_response_kwargs(data))
