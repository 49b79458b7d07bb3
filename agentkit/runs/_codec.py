"""Neutral messages, steps and pending items as JSON data, and back (pydantic `TypeAdapter`s, no pickle).

Tool outputs are written as JSON through each tool's output schema (`FunctionSchema.dump_output_python`)
and read back as JSON values; `restore_outputs` re-validates them against the tools of the resuming
agent, so a resumed run holds the same typed values (a model instance, a datetime) as before. Bytes (an
`ImagePart`'s data) travel as base64. A `ModelResponse`'s vendor `raw` object is not kept.
"""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, Union, cast

from .._agent.pending import PendingBackground, PendingClientCall, PendingSuspension
from .._agent.results import PendingApproval, PendingItem, Step
from .._jsonish import is_array, is_mapping
from ..exceptions import SnapshotError, ToolOutputError
from ..messages import (
    AssistantMessage,
    Message,
    ModelResponse,
    SystemMessage,
    ToolResult,
    ToolResultsMessage,
    Usage,
    UserMessage,
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
    "decode_steps",
    "dump_output",
    "encode_messages",
    "encode_pending",
    "encode_response",
    "encode_results",
    "encode_settings",
    "encode_steps",
    "restore_outputs",
]

Tools = Mapping[str, "Tool[..., Any]"]


@cache
def _adapter(kind: str) -> TypeAdapter[Any]:
    from pydantic import ConfigDict, Field, TypeAdapter

    config = ConfigDict(ser_json_bytes="base64", val_json_bytes="base64")
    if kind == "messages":
        message = Annotated[
            Union[SystemMessage, UserMessage, AssistantMessage, ToolResultsMessage], Field(discriminator="role")
        ]
        return TypeAdapter(list[message], config=config)  # pyright: ignore[reportInvalidTypeForm]  # built at run time
    if kind == "results":
        return TypeAdapter(list[ToolResult], config=config)
    if kind == "pending":
        item = Annotated[
            Union[PendingApproval, PendingSuspension, PendingClientCall, PendingBackground],
            Field(discriminator="kind"),
        ]
        return TypeAdapter(list[item], config=config)  # pyright: ignore[reportInvalidTypeForm]  # built at run time
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


def _with_json_outputs(results: Iterable[ToolResult], tools: Tools) -> list[ToolResult]:
    return [r if r.output is None else dataclasses.replace(r, output=dump_output(r, tools)) for r in results]


def encode_messages(messages: Sequence[Message], tools: Tools) -> list[Any]:
    """The history as JSON data (tool outputs through their tools' output schemas)."""
    shallow: list[Message] = [
        ToolResultsMessage(_with_json_outputs(m.results, tools)) if isinstance(m, ToolResultsMessage) else m
        for m in messages
    ]
    return cast("list[Any]", _adapter("messages").dump_python(shallow, mode="json", exclude_none=True))


def decode_messages(data: Any) -> list[Message]:
    """A history from JSON data; tool outputs stay JSON values until `restore_outputs`."""
    return cast("list[Message]", _validate("messages", data, "messages"))


def encode_results(results: Sequence[ToolResult], tools: Tools) -> list[Any]:
    """Tool results as JSON data."""
    return cast(
        "list[Any]", _adapter("results").dump_python(_with_json_outputs(results, tools), mode="json", exclude_none=True)
    )


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
            "usage": _adapter("usage").dump_python(response.usage),
        }
        entry.update(_response_fields(response))
        if step.results:
            where = answered.get(id(step.results))
            entry["results"] = where if where is not None else encode_results(step.results, tools)
        out.append(entry)
    return out


def decode_steps(data: Any, messages: Sequence[Message]) -> list[Step]:
    """Steps from JSON data, sharing the message objects of `messages` they refer to."""
    if not is_array(data):
        raise SnapshotError("the snapshot's 'steps' must be a list")
    steps: list[Step] = []
    for n, entry in enumerate(data):
        if not is_mapping(entry):
            raise SnapshotError(f"the snapshot's steps[{n}] must be an object")
        message = _referenced(entry.get("message"), messages, AssistantMessage, f"steps[{n}].message")
        if not isinstance(message, AssistantMessage):
            message = decode_messages([message])[0]
            if not isinstance(message, AssistantMessage):
                raise SnapshotError(f"the snapshot's steps[{n}].message is not an assistant message")
        raw_results = entry.get("results", [])
        if isinstance(raw_results, int):
            answer = _referenced(raw_results, messages, ToolResultsMessage, f"steps[{n}].results")
            results = answer.results
        else:
            results = decode_results(raw_results, f"steps[{n}].results")
        usage = _validate("usage", entry.get("usage", {}), f"steps[{n}].usage")
        response = ModelResponse(message, usage, **_response_kwargs(entry))
        steps.append(Step(int(entry.get("index", n)), response, message.tool_calls, results))
    return steps


def _referenced(value: Any, messages: Sequence[Message], kind: type[Any], where: str) -> Any:
    if isinstance(value, bool) or not isinstance(value, int):
        return value
    if not 0 <= value < len(messages) or not isinstance(messages[value], kind):
        raise SnapshotError(f"the snapshot's {where} points at message {value}, which is not a {kind.__name__}")
    return messages[value]


def restore_outputs(messages: Sequence[Message], steps: Sequence[Step], tools: Tools) -> None:
    """Re-validate every tool output (JSON values) against its tool's output schema, in place.

    Raises:
        SnapshotError: an output no longer fits its tool's schema (names the call).
    """
    seen: set[int] = set()
    groups = [m.results for m in messages if isinstance(m, ToolResultsMessage)] + [s.results for s in steps]
    for results in groups:
        if id(results) in seen:
            continue
        seen.add(id(results))
        for index, result in enumerate(results):
            if result.is_error or result.output is None or result.name not in tools:
                continue
            try:
                value = tools[result.name].schema.validate_output(result.name, result.output)
            except ToolOutputError as exc:
                raise SnapshotError(
                    f"the output of call {result.call_id!r} ({result.name!r}) does not fit the tool's output "
                    f"schema any more: {exc}",
                    [result.name],
                ) from None
            results[index] = dataclasses.replace(result, output=value)


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
        "usage": _adapter("usage").dump_python(response.usage),
        **_response_fields(response),
    }


def decode_response(data: Mapping[str, Any]) -> ModelResponse:
    """A model turn from JSON data."""
    message = decode_messages([data["message"]])[0]
    if not isinstance(message, AssistantMessage):
        raise SnapshotError("a model response must hold an assistant message")
    usage = _validate("usage", data.get("usage", {}), "usage")
    return ModelResponse(message, usage, **_response_kwargs(data))
