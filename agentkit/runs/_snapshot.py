"""`RunSnapshot`: a paused run as a versioned, JSON-only document, optionally signed (HMAC-SHA256).

The document holds everything `Agent.resume` needs and nothing a process owns: the neutral history,
the steps (by reference into the history), usage, the loop's counters and retry budgets, the pending
items, the run's and the pause's ids, the agent's id, and per tool key a fingerprint of its input and
output schemas. ``to_json()`` / ``from_json()`` round-trip it.

With a key (``Agent(snapshot_key=...)`` or the run store's), `RunResult.snapshot` signs the canonical
JSON of the document (sorted keys, no spaces) and `resume` refuses a snapshot whose signature is missing
or does not match: an edited argument, decision, payload or history is refused. Without a key nothing is
signed or checked: whoever can write the stored JSON can change what a resume will run.
"""

from __future__ import annotations as _annotations

import dataclasses
import hashlib
import hmac
import json
from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, Union, cast

from .._agent.hooks import background_result
from .._agent.results import PAUSED_STATUSES, PendingItem, RunResult
from .._agent.state import RunRequest, RunState
from .._jsonish import is_array, is_mapping
from ..events import RunStatus
from ..exceptions import ResumeError, SnapshotError
from ..messages import AssistantMessage, Message, ToolResult, ToolResultsMessage, Usage
from ._codec import (
    decode_messages,
    decode_pending,
    decode_response,
    decode_results,
    decode_settings,
    decode_steps,
    encode_messages,
    encode_pending,
    encode_response,
    encode_results,
    encode_settings,
    encode_steps,
    restore_outputs,
)

if TYPE_CHECKING:
    from ..tools import Tool

__all__ = [
    "FORMAT",
    "VERSION",
    "RunSnapshot",
    "SnapshotKey",
    "fingerprint",
    "restore",
    "result_document",
    "result_from_document",
    "snapshot_of",
]

FORMAT = "agentkit.run-snapshot"
"""The ``format`` field of every snapshot this agentkit writes (a snapshot without it is refused)."""
VERSION = 1
"""The snapshot format this agentkit writes; it reads this version and older ones."""

SnapshotKey = Union[bytes, str, Sequence[Union[bytes, str]]]
"""A signing key, or several (the first signs, any verifies: rotate keys without stranding paused runs)."""


def signing_keys(key: Any) -> list[bytes]:
    """`key` (a key, several, or None) as bytes keys, the first signing; `ValueError` for one under 16 bytes."""
    if key is None:
        return []
    if isinstance(key, (bytes, str)):
        key = [key]
    keys = [k.encode() if isinstance(k, str) else bytes(k) for k in key]
    if any(len(k) < 16 for k in keys):
        raise ValueError("a snapshot key must have at least 16 bytes (e.g. secrets.token_bytes(32))")
    return keys


def _canonical(document: Mapping[str, Any]) -> bytes:
    body = {k: v for k, v in document.items() if k != "signature"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _sign(document: Mapping[str, Any], key: bytes) -> str:
    return "hmac-sha256:" + hmac.new(key, _canonical(document), hashlib.sha256).hexdigest()


def fingerprint(item: Tool[..., Any]) -> str:
    """A short hash of a tool's input and output schemas (what a stored call and output must still fit)."""
    text = json.dumps([item.input_schema, item.output_schema], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class RunSnapshot:
    """A paused run as a JSON document: store it anywhere, resume it anywhere, once.

    Get one from a paused result (``result.snapshot()``) or from stored text (`from_json`); hand it to
    ``agent.resume(snapshot, answers)``. The accessors (`pending`, `messages`, ...) read the document;
    tool outputs in `messages` are plain JSON values here (a resume re-validates them against the tools).
    """

    __slots__ = ("__dict__", "document")

    def __init__(self, document: Mapping[str, Any]) -> None:
        _check_shape(document)
        self.document: dict[str, Any] = dict(document)
        """The JSON document (read it; editing it breaks the signature)."""

    # ---- JSON ------------------------------------------------------------------------------------

    def to_json(self, *, indent: int | None = None) -> str:
        """The snapshot as JSON text."""
        return json.dumps(self.document, ensure_ascii=False, indent=indent)

    @classmethod
    def from_json(cls, text: str | bytes) -> RunSnapshot:
        """Read a snapshot written by `to_json` (the signature is checked by `resume`, with the agent's key).

        Raises:
            SnapshotError: not JSON, not a snapshot, or a format newer than this agentkit reads.
        """
        try:
            document = json.loads(text)
        except ValueError as exc:
            raise SnapshotError(f"a snapshot must be JSON text: {exc}") from None
        return cls(document)

    def __repr__(self) -> str:
        return (
            f"RunSnapshot(agent_id={self.agent_id!r}, status={self.status!r}, pending={len(self.document['pending'])})"
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RunSnapshot) and other.document == self.document

    __hash__ = None  # type: ignore[assignment]

    # ---- what it says ------------------------------------------------------------------------------

    @property
    def agent_id(self) -> str:
        """The id of the agent that ran it (only that agent can resume it)."""
        return str(self.document["agent_id"])

    @property
    def run_id(self) -> str:
        """The run's id, the same across its pauses."""
        return str(self.document["run_id"])

    @property
    def pause_id(self) -> str:
        """This pause's id: the key a run store claims on resume (one resume per pause)."""
        return str(self.document["pause_id"])

    @property
    def status(self) -> RunStatus:
        """Why the run paused (``"awaiting_approval"``, ``"suspended"``, ``"awaiting_client"``, ...)."""
        return cast(RunStatus, self.document["status"])

    @property
    def text(self) -> str:
        """The model's text of the last turn."""
        return str(self.document.get("text", ""))

    @property
    def signed(self) -> bool:
        """Whether the document carries a signature (checked only against a key, by `verify` or `resume`)."""
        return isinstance(self.document.get("signature"), str)

    @cached_property
    def pending(self) -> list[PendingItem]:
        """What the run waits for (approvals, suspensions, client calls, background calls)."""
        return decode_pending(self.document["pending"])

    @cached_property
    def messages(self) -> list[Message]:
        """The neutral history (tool outputs as JSON values)."""
        return decode_messages(self.document["messages"])

    @property
    def usage(self) -> Usage:
        """Tokens and requests used so far."""
        return Usage(**self.document["usage"])

    def verify(self, key: Any) -> None:
        """Check the signature against `key` (or any of several keys).

        Raises:
            SnapshotError: the snapshot is unsigned, or was signed with another key, or was edited.
        """
        keys = signing_keys(key)
        signature = self.document.get("signature")
        if not isinstance(signature, str):
            raise SnapshotError(
                "the snapshot is not signed, but a snapshot key is configured: only snapshots signed with the key "
                "are resumed (an unsigned one could have been edited)"
            )
        if not any(hmac.compare_digest(signature, _sign(self.document, k)) for k in keys):
            raise SnapshotError(
                "the snapshot's signature does not match: it was edited after it was signed, or signed with "
                "another key. Nothing ran."
            )


def _check_shape(document: Any) -> None:
    if not is_mapping(document) or document.get("format") != FORMAT:
        raise SnapshotError(f"not an agentkit run snapshot (expected an object with format={FORMAT!r})")
    version = document.get("version")
    if not isinstance(version, int) or version < 1:
        raise SnapshotError(f"the snapshot has no valid format version (got {version!r})")
    if version > VERSION:
        raise SnapshotError(
            f"the snapshot has format version {version}, newer than this agentkit reads ({VERSION}): upgrade "
            "agentkit where it is resumed"
        )
    missing = [k for k in _REQUIRED if k not in document]
    if missing:
        raise SnapshotError(f"the snapshot lacks {missing}")
    if document["status"] not in PAUSED_STATUSES:
        raise SnapshotError(f"the snapshot's status {document['status']!r} is not a paused one")


_REQUIRED = ("agent_id", "run_id", "pause_id", "status", "messages", "steps", "usage", "state", "pending", "tools")


# ---- result -> snapshot ------------------------------------------------------------------------------


def snapshot_of(
    result: RunResult[Any], *, tools: Mapping[str, Tool[..., Any]] | None = None, key: Any = None
) -> RunSnapshot:
    """The snapshot of a paused `result` (see `RunResult.snapshot`), signed with `key` or the run's agent key.

    Raises:
        ResumeError: the result is not paused, or it was copied or unpickled (its tools are unknown: use
            ``agent.snapshot(result)``).
    """
    state = result._state  # pyright: ignore[reportPrivateUsage]  # runs/ writes the loop's private run state
    if result.status not in PAUSED_STATUSES or state is None or state.pause_token is None:
        raise ResumeError(f"only a paused run has a snapshot (status {result.status!r})")
    if tools is None:
        tools = state.registry
    if tools is None:
        raise ResumeError(
            "this result was copied or unpickled, so it no longer knows its tools: use agent.snapshot(result)"
        )
    if key is None and state.signing_key is not None:
        key = state.signing_key()
    signing = signing_keys(key)
    document = result_document(result, tools)
    if signing:
        document["signature"] = _sign(document, signing[0])
    return RunSnapshot(document)


def result_document(result: RunResult[Any], tools: Mapping[str, Tool[..., Any]]) -> dict[str, Any]:
    """Any run result as a snapshot-shaped JSON document (unsigned; ``pause_id`` is None unless paused)."""
    state = result._state  # pyright: ignore[reportPrivateUsage]  # runs/ writes the loop's private run state
    if state is None:
        raise ResumeError("this result has no run state to write (it was not returned by a run)")
    messages = result.messages
    return {
        "format": FORMAT,
        "version": VERSION,
        "agent_id": result.agent_id,
        "run_id": state.run_id,
        "pause_id": state.pause_token,
        "status": result.status,
        "text": result.text,
        "messages": encode_messages(messages, tools),
        "steps": encode_steps(result.steps, messages, tools),
        "usage": dataclasses.asdict(result.usage),  # every count, the cache and reasoning details too
        "state": _encode_state(state, tools),
        # the subagents' model responses: what the run's cost() adds to its own steps'
        "subagent_responses": [encode_response(r, tools) for r in result._subagent_responses],  # pyright: ignore[reportPrivateUsage]
        "pending": encode_pending(result.pending),
        "tools": {k: fingerprint(t) for k, t in tools.items()},
    }


def _encode_state(state: RunState, tools: Mapping[str, Tool[..., Any]]) -> dict[str, Any]:
    request = state.request
    settings = encode_settings(request.settings)
    background: dict[str, Any] = {}
    for call_id, done in state.background.items():
        if done is None:  # finished meanwhile (or cancelled): its result travels with the snapshot
            done = background_result(state.run_id, call_id)
        background[call_id] = encode_results([done], tools)[0] if done is not None else None
    return {
        "max_steps": request.max_steps,
        "active_tools": list(request.active_tools) if request.active_tools is not None else None,
        "settings": settings,
        "failures": dict(state.failures),
        "run_retries": state.run_retries,
        "background": background,
        "structured": request.structured,
        "output": output_fingerprint(request.output),
        "control": _encode_control(state),
    }


def _encode_control(state: RunState) -> dict[str, Any]:
    """What run control keeps across a pause: budgets spent, limits, found tools, approval rule, the step's tools."""
    request = state.request
    limits = request.limits
    deferred = request.deferred
    return {
        "tool_calls": dict(state.tool_calls),
        "total_calls": state.total_calls,
        "found": list(state.found),
        "require_approval": request.require_approval,
        "approved": sorted(state.approved),
        "step_tools": list(state.step_tools) if state.step_tools is not None else None,
        "limits": {
            "max_tool_calls": limits.max_tool_calls,
            "max_concurrency": limits.max_concurrency,
            "max_turn_concurrency": limits.max_turn_concurrency,
            # a run's own turns and retries, when it set them (else the agent's apply on resume)
            **{n: v for n in ("max_steps", "retries", "max_retries") if (v := getattr(limits, n)) is not None},
        },
        "deferred": sorted(deferred) if isinstance(deferred, frozenset) else deferred,
        "run_keys": sorted(request.run_keys),
        "programs": {call_id: {"state": entry["state"]} for call_id, entry in state.programs.items()},
    }


def _decode_control(data: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """`RunRequest` and `RunState` fields from `_encode_control`'s JSON (a snapshot without them: the defaults)."""
    from ..limits import RunLimits

    if data is None:
        return {}, {}
    if not is_mapping(data):
        raise TypeError("'control' must be an object")
    deferred = data.get("deferred")
    step_tools = data.get("step_tools")
    asked = {
        "require_approval": bool(data.get("require_approval", False)),
        "limits": RunLimits(**dict(data.get("limits", {}))),
        "deferred": frozenset(str(k) for k in deferred) if is_array(deferred) else deferred,
        "run_keys": frozenset(str(k) for k in data.get("run_keys", [])),
    }
    happened = {
        "approved": frozenset(str(k) for k in data.get("approved", [])),
        "programs": {str(k): {"state": dict(v["state"])} for k, v in dict(data.get("programs", {})).items()},
        "tool_calls": {str(k): int(v) for k, v in dict(data.get("tool_calls", {})).items()},
        "total_calls": int(data.get("total_calls", 0)),
        "found": [str(k) for k in data.get("found", [])],
        "step_tools": tuple(str(k) for k in step_tools) if step_tools is not None else None,
    }
    return asked, happened


def output_fingerprint(config: Any) -> str | None:
    """A hash of what a run asks of its answer (schema, name, mode, tools that end it); None for a plain run.

    A snapshot carries it in place of the output type (a Python type does not travel as JSON): the run
    resumes with its agent's output, which must hash the same.
    """
    if config is None or (not config.structured and not config.stop_at):
        return None
    schema = config.schema()
    record = {
        "schema": schema.schema if schema is not None else None,
        "name": config.name,
        "mode": config.mode,
        "stop_at": sorted(config.stop_at),
    }
    return hashlib.sha256(json.dumps(record, sort_keys=True, default=str).encode()).hexdigest()[:32]


# ---- snapshot -> result ------------------------------------------------------------------------------


def restore(snapshot: RunSnapshot, agent_id: str, tools: Mapping[str, Tool[..., Any]], key: Any) -> RunResult[Any]:
    """The paused `RunResult` a snapshot describes, for `Agent.resume` (signature, agent and tools checked).

    Raises:
        SnapshotError: a bad signature (with `key`), another agent's snapshot, changed tools, a malformed
            document.
    """
    if signing_keys(key):
        snapshot.verify(key)
    document = snapshot.document
    if document["agent_id"] != agent_id:
        raise SnapshotError(
            f"the snapshot belongs to agent {document['agent_id']!r}, not {agent_id!r}: resume it with that agent"
        )
    return result_from_document(document, tools)


def result_from_document(document: Mapping[str, Any], tools: Mapping[str, Tool[..., Any]]) -> RunResult[Any]:
    """The `RunResult` a document of `result_document` describes, outputs re-validated against `tools`.

    Raises:
        SnapshotError: changed tools or a malformed document.
    """
    messages = decode_messages(document["messages"])
    pending = decode_pending(document["pending"])
    _check_tools(document["tools"], messages, pending, tools)
    steps = decode_steps(document["steps"], messages)
    state = _decode_state(document["state"], document, tools)
    restore_outputs(messages, steps, tools)
    return RunResult(
        text=str(document.get("text", "")),
        status=document["status"],
        steps=steps,
        messages=messages,
        usage=Usage(**document["usage"]),
        _subagent_responses=[decode_response(r) for r in document.get("subagent_responses", ())],
        pending=pending,
        agent_id=str(document["agent_id"]),
        _state=state,
    )


def _check_tools(
    recorded: Any, messages: Sequence[Message], pending: Iterable[PendingItem], tools: Mapping[str, Tool[..., Any]]
) -> None:
    if not is_mapping(recorded):
        raise SnapshotError("the snapshot's 'tools' must map tool keys to fingerprints")
    used = {c.name for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls}
    used |= {r.name for m in messages if isinstance(m, ToolResultsMessage) for r in m.results}
    used |= {p.tool_name for p in pending}
    problems: list[str] = []
    keys: list[str] = []
    for key in sorted(used):
        then = recorded.get(key)
        if then is None:
            continue  # not a tool when the run paused (an unknown name the model made up): nothing to compare
        if key not in tools:
            problems.append(f"{key!r} is gone")
            keys.append(key)
        elif fingerprint(tools[key]) != then:
            problems.append(f"{key!r} has other input or output schemas")
            keys.append(key)
    if problems:
        raise SnapshotError(
            "the agent's tools changed since the run paused: "
            + "; ".join(problems)
            + ". Resume with the tools the run used (or start a new run).",
            keys,
        )


def _decode_state(data: Any, document: Mapping[str, Any], tools: Mapping[str, Tool[..., Any]]) -> RunState:
    if not is_mapping(data):
        raise SnapshotError("the snapshot's 'state' must be an object")
    try:
        settings = decode_settings(data["settings"])
        background: dict[str, ToolResult | None] = {
            call_id: decode_results([done], f"state.background[{call_id!r}]")[0] if done is not None else None
            for call_id, done in dict(data.get("background", {})).items()
        }
        run_active = data.get("active_tools")
        asked, happened = _decode_control(data.get("control"))
        request = RunRequest(
            max_steps=int(data["max_steps"]),
            active_tools=tuple(run_active) if run_active is not None else None,
            settings=settings,
            structured=bool(data.get("structured", False)),
            output_fingerprint=str(data["output"]) if data.get("output") is not None else None,
            **asked,
        )
        return RunState(
            request,
            failures={str(k): int(v) for k, v in dict(data["failures"]).items()},
            run_retries=int(data["run_retries"]),
            pause_token=str(document["pause_id"]) if document.get("pause_id") is not None else None,
            run_id=str(document["run_id"]),
            background=background,
            registry=tools,
            **happened,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise SnapshotError(f"the snapshot's 'state' is malformed ({type(exc).__name__}: {exc})") from None
