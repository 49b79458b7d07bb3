"""The whole shape of a snapshot document, checked and decoded in one pass (pydantic, no pickle).

`RunSnapshot` reads a document once, when it is made: every field's type (the history, the steps, the
budgets, the settings, the pending items, down to each count), then what types cannot say (a step's
message reference points at an assistant message, a suspension's schema is a JSON Schema). A document
that does not fit is a `SnapshotError` naming where, before a resume claims the pause or runs anything:
nothing an edited unsigned snapshot holds can fail a resume half-way. What passes is kept decoded, so
`resume` builds its run from it without reading the JSON again.
"""

from __future__ import annotations as _annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Optional, Union, cast

from pydantic import ConfigDict, Field, with_config
from typing_extensions import NotRequired, TypedDict

from .._agent.pending import PendingBackground, PendingClientCall, PendingSuspension
from .._agent.results import PendingApproval, PendingItem, Step
from ..events import RunStatus
from ..exceptions import SnapshotError, ToolDefinitionError
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

__all__ = [
    "AnyMessage", "AnyPending", "Decoded", "Shaped", "decode", "decode_document", "read_text", "shape", "signed_body",
]  # fmt: skip

_Count = Annotated[int, Field(strict=True, ge=0)]
"""A count in a document: an int (a bool, a float or a text is refused), not below zero."""
_Keys = list[str]
AnyMessage = Annotated[
    Union[SystemMessage, UserMessage, AssistantMessage, ToolResultsMessage], Field(discriminator="role")
]
AnyPending = Annotated[
    Union[PendingApproval, PendingSuspension, PendingClientCall, PendingBackground], Field(discriminator="kind")
]
# what the codec writes: bytes as base64; a number a vendor would refuse (NaN, infinity) is refused here
_CONFIG = ConfigDict(ser_json_bytes="base64", val_json_bytes="base64", allow_inf_nan=False)


@with_config(_CONFIG)
class _Turn(TypedDict):
    """What a model turn records besides its message (a step's and a subagent response's)."""

    usage: NotRequired[Usage]
    finish_reason: NotRequired[Optional[str]]
    model_name: NotRequired[Optional[str]]
    response_id: NotRequired[Optional[str]]
    request_id: NotRequired[Optional[str]]
    provider_name: NotRequired[Optional[str]]
    provider_url: NotRequired[Optional[str]]


@with_config(_CONFIG)
class _Response(_Turn):
    message: AssistantMessage


@with_config(_CONFIG)
class _Step(_Turn):
    index: NotRequired[_Count]
    message: Union[_Count, AssistantMessage]  # an index into the history, or the message itself
    results: NotRequired[Union[_Count, list[ToolResult]]]


@with_config(_CONFIG)
class _Settings(TypedDict):
    tool_choice: NotRequired[str]
    active_tools: NotRequired[Optional[_Keys]]
    strict: NotRequired[Optional[bool]]
    parallel_tool_calls: NotRequired[Optional[bool]]
    aliases: NotRequired[bool]
    max_tokens: NotRequired[Optional[_Count]]
    temperature: NotRequired[Optional[float]]
    extra: NotRequired[dict[str, Any]]
    output: NotRequired[None]  # a run's base settings never hold a step's output request
    deferred_tools: NotRequired[_Keys]
    programmatic_tools: NotRequired[_Keys]


@with_config(_CONFIG)
class _Limits(TypedDict):
    max_tool_calls: NotRequired[Optional[_Count]]
    max_concurrency: NotRequired[Optional[_Count]]
    max_turn_concurrency: NotRequired[Optional[_Count]]


@with_config(_CONFIG)
class _Program(TypedDict):
    state: dict[str, Any]  # a paused program's own record (code mode reads it)


@with_config(_CONFIG)
class _Control(TypedDict):
    tool_calls: NotRequired[dict[str, _Count]]
    total_calls: NotRequired[_Count]
    found: NotRequired[_Keys]
    require_approval: NotRequired[bool]
    approved: NotRequired[_Keys]
    step_tools: NotRequired[Optional[_Keys]]
    limits: NotRequired[_Limits]
    deferred: NotRequired[Union[bool, _Keys, None]]
    run_keys: NotRequired[_Keys]
    programs: NotRequired[dict[str, _Program]]


@with_config(_CONFIG)
class _State(TypedDict):
    max_steps: _Count
    active_tools: NotRequired[Optional[_Keys]]
    settings: _Settings
    failures: dict[str, _Count]
    run_retries: _Count
    background: NotRequired[dict[str, Optional[ToolResult]]]
    structured: NotRequired[bool]
    output: NotRequired[Optional[str]]
    control: NotRequired[Optional[_Control]]


@with_config(_CONFIG)
class _Document(TypedDict):
    format: str
    version: int
    agent_id: str
    run_id: str
    pause_id: Optional[str]  # a paused run's (`RunSnapshot` requires it); None in a finished run's document
    status: RunStatus
    text: NotRequired[str]
    messages: list[AnyMessage]
    steps: list[_Step]
    usage: Usage
    state: _State
    subagent_responses: NotRequired[list[_Response]]
    pending: list[AnyPending]
    tools: dict[str, str]
    signature: NotRequired[str]


Shaped = _Document
"""A document whose every part has its type (what `shape` and `read_text` return; a plain dict)."""


@dataclass
class Decoded:
    """A snapshot document, decoded: typed values, tool outputs still JSON values (see `restore_outputs`)."""

    shaped: Shaped
    messages: list[Message]
    steps: list[Step]
    subagent_responses: list[ModelResponse]


@functools.cache
def _adapter() -> TypeAdapter[_Document]:
    from pydantic import TypeAdapter

    return TypeAdapter(_Document)


def _malformed(location: Sequence[int | str], message: str) -> SnapshotError:
    part = str(location[0]) if location else "document"
    where = ".".join(str(p) for p in location[1:]) or "$"
    return SnapshotError(
        f"the snapshot's {part} is malformed at {where}: {message}. Nothing ran (sign snapshots with a snapshot "
        "key to refuse every edit)"
    )


def shape(document: Mapping[str, Any]) -> Shaped:
    """`document` with every part typed (one pydantic pass).

    Raises:
        SnapshotError: the first place the document does not fit, named (``steps.3.usage.requests``).
    """
    from pydantic import ValidationError

    try:
        return _adapter().validate_python(document)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        raise _malformed(first["loc"], first["msg"]) from None
    except RecursionError:
        raise SnapshotError("the snapshot is nested too deeply to be read") from None


def read_text(text: str | bytes) -> Shaped | None:
    """`text` parsed and typed in one pass (pydantic-core reads the JSON), or None when it does not fit.

    None sends the caller to the standard library's parser and `shape`, which say exactly what is wrong;
    pydantic-core's parser also stops at 200 levels of nesting and at a lone surrogate's escape, which
    that path reads.
    """
    from pydantic import ValidationError

    try:
        return _adapter().validate_json(text)
    except (ValidationError, ValueError, RecursionError):
        return None


def decode(shaped: Shaped) -> Decoded:
    """The steps, responses and pending schemas of a typed document, cross-checked.

    Raises:
        SnapshotError: a step points at a message of another kind, a pending schema is no JSON Schema.
    """
    messages = shaped["messages"]
    steps = [_step(n, entry, messages) for n, entry in enumerate(shaped["steps"])]
    responses = [_response(cast("Mapping[str, Any]", r), r["message"]) for r in shaped.get("subagent_responses", ())]
    for item in shaped["pending"]:
        _check_pending_schema(item)
    return Decoded(shaped, messages, steps, responses)


def decode_document(document: Mapping[str, Any]) -> Decoded:
    """Every part of `document`, typed and cross-checked (`shape`, then `decode`)."""
    return decode(shape(document))


_SIGNATURE_TAIL = re.compile(rb',"signature":"(hmac-sha256:[0-9a-f]{64})"}\s*$')


def signed_body(text: str | bytes) -> tuple[bytes, str] | None:
    """The bytes a signature covers and the signature, when `text` is what a signed `to_json` writes.

    That text is the canonical JSON of the document without its signature, with the signature as its last
    member: checking the HMAC of those bytes needs no second serialisation. Any other text (a store that
    reformatted it) gives None, and the canonical form is made from the parsed document instead.
    """
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    found = _SIGNATURE_TAIL.search(data)
    if found is None:
        return None
    return data[: found.start()] + b"}", found.group(1).decode()


_RESPONSE_FIELDS = ("finish_reason", "model_name", "response_id", "request_id", "provider_name", "provider_url")


def _response(entry: Mapping[str, Any], message: AssistantMessage) -> ModelResponse:
    return ModelResponse(
        message, entry.get("usage") or Usage(), **{k: entry[k] for k in _RESPONSE_FIELDS if k in entry}
    )


def _step(n: int, entry: _Step, messages: Sequence[Message]) -> Step:
    message = entry["message"]
    if isinstance(message, int):
        message = _referenced(message, messages, AssistantMessage, f"steps[{n}].message")
    results = entry.get("results", [])
    if isinstance(results, int):
        results = _referenced(results, messages, ToolResultsMessage, f"steps[{n}].results").results
    return Step(
        entry.get("index", n), _response(cast("Mapping[str, Any]", entry), message), message.tool_calls, results
    )


def _referenced(index: int, messages: Sequence[Message], kind: type[Any], where: str) -> Any:
    if index >= len(messages) or not isinstance(messages[index], kind):
        raise SnapshotError(f"the snapshot's {where} points at message {index}, which is not a {kind.__name__}")
    return messages[index]


def _check_pending_schema(item: PendingItem) -> None:
    """A suspension's schema or a client call's output schema must be one (answers are checked against it)."""
    from .._raw_schema import RawSchema

    schema = (
        item.schema
        if isinstance(item, PendingSuspension)
        else item.output_schema
        if isinstance(item, PendingClientCall)
        else None
    )
    if schema is None:
        return
    try:
        RawSchema(schema, qualname=item.tool_name, role="schema")
    except ToolDefinitionError as exc:
        raise SnapshotError(f"the snapshot's pending call {item.call_id!r} has no usable schema: {exc}") from None
