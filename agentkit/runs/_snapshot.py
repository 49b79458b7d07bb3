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
import weakref
from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, Union, cast

from .._agent.hooks import background_result
from .._agent.results import PAUSED_STATUSES, PendingItem, RunResult
from .._agent.state import RunRequest, RunState
from .._jsonish import is_array, is_mapping
from .._text import clip
from ..events import RunStatus
from ..exceptions import ResumeError, SnapshotError
from ..messages import AssistantMessage, Message, ToolResultsMessage, Usage
from ._codec import (
    decode_messages,
    decode_pending,
    decode_usage,
    encode_messages,
    encode_pending,
    encode_response,
    encode_results,
    encode_settings,
    encode_steps,
    restore_outputs,
    storable_json,
)

if TYPE_CHECKING:
    from ..tools import Tool
    from ._document import Decoded, Shaped

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
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass")


def _mac(body: bytes, key: bytes) -> str:
    return "hmac-sha256:" + hmac.new(key, body, hashlib.sha256).hexdigest()


def _sign(document: Mapping[str, Any], key: bytes) -> str:
    return _mac(_canonical(document), key)


_FINGERPRINTS: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def fingerprint(item: Tool[..., Any]) -> str:
    """A short hash of a tool's input and output schemas (what a stored call and output must still fit).

    Kept per tool (its schemas never change): a snapshot of a run over 1,000 tools hashes none again.
    """
    found = _FINGERPRINTS.get(item)
    if found is None:
        text = json.dumps([item.input_schema, item.output_schema], sort_keys=True, separators=(",", ":"))
        found = _FINGERPRINTS[item] = hashlib.sha256(text.encode()).hexdigest()[:16]
    return found


class RunSnapshot:
    """A paused run as a JSON document: store it anywhere, resume it anywhere, once.

    Get one from a paused result (``result.snapshot()``) or from stored text (`from_json`); hand it to
    ``agent.resume(snapshot, answers)``. The accessors (`pending`, `messages`, ...) read the document;
    tool outputs in `messages` are plain JSON values here (a resume re-validates them against the tools).
    """

    __slots__ = ("__dict__",)

    def __init__(self, document: Mapping[str, Any]) -> None:
        """Keep `document` once its envelope is one (format, version, the parts present, a paused status).

        The whole document (every part's type, the references between them) is checked when it is resumed,
        after its signature: `resume` refuses a malformed one with a `SnapshotError` before it claims the
        pause or runs anything.

        Raises:
            SnapshotError: not a snapshot, or a format newer than this agentkit reads.
        """
        _check_shape(document)
        self._document: dict[str, Any] | None = dict(document)
        # The fast paths, valid while `document` was never handed out (so nobody edited it; a document given
        # to the constructor is the caller's): the JSON text it was read from or written as, its typed parts
        # (until a restore takes them), and the signed bytes with their signature.
        self._exposed = True
        self._text: str | None = None
        self._shaped: Shaped | None = None
        self._signed: tuple[bytes, str] | None = None

    @classmethod
    def _internal(
        cls, document: dict[str, Any] | None, text: str | None, signed: tuple[bytes, str] | None
    ) -> RunSnapshot:
        """A snapshot nobody else holds the document of: one `snapshot_of` wrote or `from_json` read."""
        snapshot = cls.__new__(cls)
        snapshot._document, snapshot._exposed, snapshot._text = document, False, text
        snapshot._shaped, snapshot._signed = None, signed
        return snapshot

    @property
    def document(self) -> dict[str, Any]:
        """The JSON document (read it; editing it breaks the signature)."""
        document = self._plain()
        if not self._exposed:  # the caller may edit it: from now on everything reads the document
            self._exposed, self._text, self._shaped, self._signed = True, None, None, None
        return document

    def _plain(self) -> dict[str, Any]:
        """The document, without handing it out (the fast paths stay)."""
        document = self._document
        if document is None:
            assert self._text is not None
            document = self._document = json.loads(self._text)  # pydantic-core parsed it: valid JSON
        return document

    def _read(self) -> Mapping[str, Any]:
        """The typed parts read from text, else the document (without handing it out)."""
        if not self._exposed and self._shaped is not None:
            return self._shaped
        return self._plain()

    # ---- JSON ------------------------------------------------------------------------------------

    def to_json(self, *, indent: int | None = None) -> str:
        """The snapshot as JSON text (UTF-8 safe: a lone surrogate in a string is written as its escape).

        A signed snapshot is written as the canonical JSON its signature covers, the signature last, so a
        resume checks it without serialising the document again.
        """
        if indent is None and not self._exposed and self._text is not None:
            return self._text
        return storable_json(self._plain(), indent=indent)

    @classmethod
    def from_json(cls, text: str | bytes) -> RunSnapshot:
        """Read a snapshot written by `to_json` (the signature is checked by `resume`, with the agent's key).

        Raises:
            SnapshotError: not JSON, not a snapshot, or a format newer than this agentkit reads (the rest
                of the document is checked by `resume`; see `RunSnapshot`).
        """
        from ._document import read_text, signed_body

        shaped = read_text(text)  # parsed and typed in one pass; None sends it the standard way
        if shaped is not None and _envelope_ok(shaped):
            try:
                written = text if isinstance(text, str) else text.decode()
            except UnicodeDecodeError:
                written = None
            if written is not None:
                snapshot = cls._internal(None, written, signed_body(written) if "signature" in shaped else None)
                snapshot._shaped = shaped
                return snapshot
        try:
            document = json.loads(text)
        except ValueError as exc:
            raise SnapshotError(f"a snapshot must be JSON text: {exc}") from None
        except RecursionError:
            raise SnapshotError("the snapshot is nested too deeply to be read") from None
        return cls(document)

    def _take_shaped(self) -> Shaped | None:
        """The typed parts read from text, for one restore (which owns the objects from then on).

        None when the snapshot was not read from text, or once `document` was handed out.
        """
        from ._document import read_text

        if self._exposed or self._text is None:
            return None
        shaped, self._shaped = self._shaped, None
        return shaped if shaped is not None else read_text(self._text)

    def _deferred(self) -> bool | list[str] | None:
        """The run's own ``deferred_tools=`` as recorded: which tools a resume must check the document against.

        None where the record is no such value (the full check in `resume` then refuses the document).
        """
        state = self._read().get("state")
        control = state.get("control") if is_mapping(state) else None
        deferred = control.get("deferred") if is_mapping(control) else None
        if isinstance(deferred, bool) or (is_array(deferred) and all(isinstance(k, str) for k in deferred)):
            return deferred
        return None

    def __repr__(self) -> str:
        pending = self._read()["pending"]
        count = len(pending) if is_array(pending) else "?"
        return f"RunSnapshot(agent_id={clip(self.agent_id, 80)!r}, status={self.status!r}, pending={count})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RunSnapshot) and other.document == self.document

    __hash__ = None  # type: ignore[assignment]

    # ---- what it says ------------------------------------------------------------------------------

    @property
    def agent_id(self) -> str:
        """The id of the agent that ran it (only that agent can resume it)."""
        return str(self._read()["agent_id"])

    @property
    def run_id(self) -> str:
        """The run's id, the same across its pauses."""
        return str(self._read()["run_id"])

    @property
    def pause_id(self) -> str:
        """This pause's id: the key a run store claims on resume (one resume per pause)."""
        return str(self._read()["pause_id"])

    @property
    def status(self) -> RunStatus:
        """Why the run paused (``"awaiting_approval"``, ``"suspended"``, ``"awaiting_client"``, ...)."""
        return cast(RunStatus, self._read()["status"])

    @property
    def text(self) -> str:
        """The model's text of the last turn."""
        return str(self._read().get("text", ""))

    @property
    def signed(self) -> bool:
        """Whether the document carries a signature (checked only against a key, by `verify` or `resume`)."""
        return isinstance(self._read().get("signature"), str)

    @cached_property
    def pending(self) -> list[PendingItem]:
        """What the run waits for (approvals, suspensions, client calls, background calls)."""
        shaped = self._shaped if not self._exposed else None
        if shaped is not None:
            return list(shaped["pending"])  # frozen items, typed already
        return decode_pending(self.document["pending"])

    @cached_property
    def messages(self) -> list[Message]:
        """The neutral history (tool outputs as JSON values)."""
        return decode_messages(self.document["messages"])

    @property
    def usage(self) -> Usage:
        """Tokens and requests used so far."""
        return decode_usage(self.document["usage"])

    def verify(self, key: Any) -> None:
        """Check the signature against `key` (or any of several keys).

        Raises:
            SnapshotError: the snapshot is unsigned, or was signed with another key, or was edited.
        """
        keys = signing_keys(key)
        signed = self._signed if not self._exposed else None
        if signed is not None and any(hmac.compare_digest(signed[1], _mac(signed[0], k)) for k in keys):
            return  # the bytes the text holds are those signed: no canonical form to make again
        signature = self.document.get("signature")
        if not isinstance(signature, str) or not signature:
            raise SnapshotError(
                "the snapshot is not signed, but a snapshot key is configured: only snapshots signed with the key "
                "are resumed (an unsigned one could have been edited)"
            )
        given = signature.encode("utf-8", "surrogatepass")  # any text compares (and fails), never raises
        if not any(hmac.compare_digest(given, _sign(self.document, k).encode()) for k in keys):
            raise SnapshotError(
                "the snapshot's signature does not match: it was edited after it was signed, or signed with "
                "another key. Nothing ran."
            )


def _envelope_ok(shaped: Mapping[str, Any]) -> bool:
    try:
        _check_shape(shaped)
    except SnapshotError:
        return False  # the standard path says what is wrong
    return True


def _check_shape(document: Any) -> None:
    if not is_mapping(document) or document.get("format") != FORMAT:
        raise SnapshotError(f"not an agentkit run snapshot (expected an object with format={FORMAT!r})")
    version = document.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise SnapshotError(f"the snapshot has no valid format version (got {version!r})")
    if version > VERSION:
        raise SnapshotError(
            f"the snapshot has format version {version}, newer than this agentkit reads ({VERSION}): upgrade "
            "agentkit where it is resumed"
        )
    missing = [k for k in _REQUIRED if k not in document]
    if missing:
        raise SnapshotError(f"the snapshot lacks {missing}")
    status = document["status"]
    if not isinstance(status, str) or status not in PAUSED_STATUSES:
        raise SnapshotError(f"the snapshot's status {clip(repr(status), 80)} is not a paused one")
    if not isinstance(document["pause_id"], str):
        raise SnapshotError("the snapshot's pause_id must be a string (the key its resume claims)")


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
    if not signing:
        return RunSnapshot._internal(document, None, None)  # pyright: ignore[reportPrivateUsage]
    body = _canonical(document)
    signature = document["signature"] = _mac(body, signing[0])
    try:  # the text `to_json` gives: the signed bytes, the signature as their last member
        text: str | None = (body[:-1] + b',"signature":"' + signature.encode() + b'"}').decode()
    except UnicodeDecodeError:  # a lone surrogate (written raw in the canonical form): `storable_json` escapes it
        text = None
    return RunSnapshot._internal(document, text, (body, signature))  # pyright: ignore[reportPrivateUsage]


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


def _decode_control(data: Mapping[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """`RunRequest` and `RunState` fields from `_encode_control`'s JSON, its types already checked.

    A document without them: the defaults.
    """
    from ..limits import RunLimits

    if data is None:
        return {}, {}
    deferred = data.get("deferred")
    step_tools = data.get("step_tools")
    asked = {
        "require_approval": data.get("require_approval", False),
        "limits": RunLimits(**data.get("limits", {})),
        "deferred": frozenset(cast("list[str]", deferred)) if is_array(deferred) else deferred,
        "run_keys": frozenset(data.get("run_keys", [])),
    }
    happened = {
        "approved": frozenset(data.get("approved", [])),
        "programs": {k: {"state": dict(v["state"])} for k, v in data.get("programs", {}).items()},
        "tool_calls": dict(data.get("tool_calls", {})),
        "total_calls": data.get("total_calls", 0),
        "found": list(data.get("found", [])),
        "step_tools": tuple(step_tools) if step_tools is not None else None,
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
    from ._document import decode, shape  # pydantic: loaded by the first restore, not by `import`

    if signing_keys(key):
        snapshot.verify(key)
    shaped = snapshot._take_shaped()  # pyright: ignore[reportPrivateUsage]  # this module's own class
    read: Mapping[str, Any] = shaped if shaped is not None else snapshot.document
    if read["agent_id"] != agent_id:
        raise SnapshotError(
            f"the snapshot belongs to agent {clip(repr(read['agent_id']), 80)}, not {agent_id!r}: resume it "
            "with that agent"
        )
    return _result(decode(shaped if shaped is not None else shape(snapshot.document)), tools)


def result_from_document(document: Mapping[str, Any], tools: Mapping[str, Tool[..., Any]]) -> RunResult[Any]:
    """The `RunResult` a document of `result_document` describes, outputs re-validated against `tools`.

    Raises:
        SnapshotError: changed tools or a malformed document.
    """
    from ._document import decode_document

    return _result(decode_document(document), tools)


def _result(decoded: Decoded, tools: Mapping[str, Tool[..., Any]]) -> RunResult[Any]:
    shaped = decoded.shaped
    messages = decoded.messages
    pending: list[PendingItem] = list(shaped["pending"])
    _check_tools(shaped["tools"], messages, pending, tools)
    state = _decode_state(shaped["state"], shaped, tools)
    restore_outputs(messages, decoded.steps, tools)
    return RunResult(
        text=shaped.get("text", ""),
        status=shaped["status"],
        steps=decoded.steps,
        messages=messages,
        usage=shaped["usage"],
        _subagent_responses=decoded.subagent_responses,
        pending=pending,
        agent_id=shaped["agent_id"],
        _state=state,
    )


def _check_tools(
    recorded: Mapping[str, str],
    messages: Sequence[Message],
    pending: Iterable[PendingItem],
    tools: Mapping[str, Tool[..., Any]],
) -> None:
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


def _decode_state(
    data: Mapping[str, Any], document: Mapping[str, Any], tools: Mapping[str, Tool[..., Any]]
) -> RunState:
    """The run state of a decoded document (its types checked by `decode_document`)."""
    from ..models import ModelSettings

    settings = dict(data["settings"])
    active = settings.get("active_tools")
    settings["active_tools"] = tuple(active) if active is not None else None
    settings["deferred_tools"] = tuple(settings.get("deferred_tools", ()))  # a list in JSON; hashable here
    settings["programmatic_tools"] = tuple(settings.get("programmatic_tools", ()))
    run_active = data.get("active_tools")
    pause_id = document.get("pause_id")
    try:
        asked, happened = _decode_control(data.get("control"))
        request = RunRequest(
            max_steps=data["max_steps"],
            active_tools=tuple(run_active) if run_active is not None else None,
            settings=ModelSettings(**settings),
            structured=data.get("structured", False),
            output_fingerprint=data.get("output"),
            **asked,
        )
        return RunState(
            request,
            failures=dict(data["failures"]),
            run_retries=data["run_retries"],
            pause_token=pause_id if isinstance(pause_id, str) else None,
            run_id=str(document["run_id"]),
            background=dict(data.get("background", {})),
            registry=tools,
            **happened,
        )
    except (TypeError, ValueError) as exc:  # what the limits' own checks refuse (a concurrency of 0, ...)
        raise SnapshotError(f"the snapshot's 'state' is malformed ({type(exc).__name__}: {exc})") from None
