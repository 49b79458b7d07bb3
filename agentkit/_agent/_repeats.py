"""Loop detection (`agentkit.repeats`): each call and each turn checked against what the run did before.

A call's identity is its key and its canonical arguments (JSON with sorted keys); an answer's is its error
flag and content. `Memo` keeps, per call identity, the last answer and how many identical calls in a row got
it, and the same for whole turns. Canonicalising is put off until it can matter: a tool's calls are kept
as they are until a second call of that tool comes, a turn until a turn calling the same tools in the same
order comes, so a run that never repeats a tool pays a list append per call. The checks: `call_trips`
(the pipeline's step 1, before a call runs), `round_trips` (`run_calls`, before a turn runs),
`needs_repeat_approval` (the approval decision, for ``on="approve"``); the notes: `note_call` (step 7)
and `note_round` (after a turn). A "repeated" error result is never noted: it would reset the count, and
the next identical call would run again.
"""

from __future__ import annotations as _annotations

import json
from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from ..events import RepeatEvent
from ..messages import ToolCall, ToolResult
from ..repeats import DEFAULT_REPEATS, RepeatPolicy

if TYPE_CHECKING:
    from .config import RunConfig
    from .state import RunRequest, RunState

__all__ = [
    "REPEATED",
    "Memo",
    "call_identity",
    "call_trips",
    "memo",
    "needs_repeat_approval",
    "note_call",
    "note_round",
    "repeat_policy",
    "round_trips",
]

REPEATED = "repeated"
"""The ``error_kind`` of a call refused because the model repeats itself."""


class Memo:
    """What a run remembers of its calls (see the module docstring); also the key of its run-scoped cache."""

    __slots__ = ("__weakref__", "calls", "outcomes", "raw", "round", "round_names", "round_streak")

    def __init__(self) -> None:
        self.calls: dict[Hashable, tuple[int, int]] = {}
        """Call identity -> (its last answer's fingerprint, identical calls in a row that got it)."""
        self.raw: dict[str, list[tuple[ToolCall, ToolResult]] | None] = {}
        """Tool key -> its calls and answers not canonicalised yet (None: they are, in `calls`)."""
        self.round_names: tuple[str, ...] = ()
        """The last turn's tool keys, in call order (a turn with others cannot repeat it)."""
        self.round: tuple[Sequence[ToolCall], Sequence[ToolResult]] | tuple[tuple[Hashable, ...], tuple[int, ...]] = (
            (),
            (),
        )
        """The last turn: its calls and answers as they came, or (once compared) their identities and answers."""
        self.round_streak = 0
        """Identical turns in a row, the last one included."""
        self.outcomes: dict[str, Literal["hit", "miss"]] = {}
        """Call id -> ``"hit"`` or ``"miss"`` of a cached tool's call, until its event is sent."""

    def seen(self, call: ToolCall) -> tuple[int, int] | None:
        """The (answer, streak) of earlier calls identical to `call` (None: none)."""
        if call.name not in self.raw:
            return None  # the tool was never called: nothing to canonicalise
        self._settle(call.name)
        return self.calls.get(call_identity(call))

    def note(self, call: ToolCall, result: ToolResult) -> None:
        """Remember `call`'s answer."""
        raw = self.raw
        pending = raw.get(call.name, _UNSEEN)
        if pending is _UNSEEN:
            raw[call.name] = [(call, result)]  # the tool's first call: kept as it is
            return
        if pending is not None:
            self._settle(call.name)
        self._count(call_identity(call), _answer(result))

    def _settle(self, name: str) -> None:
        pending = self.raw.get(name)
        if pending:
            self.raw[name] = None
            for call, result in pending:
                self._count(call_identity(call), _answer(result))

    def _count(self, identity: Hashable, answer: int) -> None:
        seen = self.calls.get(identity)
        self.calls[identity] = (answer, seen[1] + 1 if seen is not None and seen[0] == answer else 1)

    def last_round(self) -> tuple[tuple[Hashable, ...], tuple[int, ...]]:
        """The last turn's call identities and answers (canonicalised on first use)."""
        calls, results = self.round
        if calls and isinstance(calls[0], ToolCall):
            self.round = (tuple(map(call_identity, calls)), tuple(map(_answer, results)))  # type: ignore[arg-type]
        return self.round  # type: ignore[return-value]


_UNSEEN: Any = object()


def memo(state: RunState) -> Memo:
    """The run's `Memo` (made on first use)."""
    found: Memo | None = state.memo
    if found is None:
        found = state.memo = Memo()
    return found


def repeat_policy(request: RunRequest) -> RepeatPolicy:
    """The run's policy: its limits' (the run's own over the agent's), else the default."""
    own = request.limits.repeats
    return own if own is not None else DEFAULT_REPEATS


_canonical = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=repr).encode  # made once: cheap calls


def call_identity(call: ToolCall) -> Hashable:
    """The key and canonical arguments of `call` (key order ignored; text that is not JSON kept as it is)."""
    arguments: Any = call.arguments
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes: the text as sent
            return (call.name, arguments)
    try:
        return (call.name, _canonical(arguments))
    except (TypeError, ValueError, RecursionError):
        # keys of mixed types, or a value too deep to write (validation refuses it): this call only
        return (call.name, "", call.id)


def _answer(result: ToolResult) -> int:
    return hash((result.is_error, repr(result.content)))


def call_trips(config: RunConfig, state: RunState, call: ToolCall, index: int) -> ToolResult | None:
    """Step 1 of a call: the policy's answer when `call` repeats itself once too often (None: it runs).

    ``"warn"`` reports the repeat and lets it run; ``"error"`` answers it with a ``repeated`` error.
    """
    remembered: Memo | None = state.memo
    if remembered is None:
        return None  # the run's first call
    policy = repeat_policy(config.request)
    if policy.calls is None or policy.on == "approve":
        return None
    seen = remembered.seen(call)
    if seen is None or seen[1] < policy.calls - 1:
        return None
    return _trip(config, state, call, index, policy, seen[1] + 1, "call")


def _repeats_round(remembered: Memo, calls: Sequence[ToolCall], rounds: int) -> bool:
    if remembered.round_streak < rounds - 1 or tuple(c.name for c in calls) != remembered.round_names:
        return False
    return tuple(map(call_identity, calls)) == remembered.last_round()[0]


def round_trips(config: RunConfig, state: RunState, calls: Sequence[ToolCall], index: int) -> dict[str, ToolResult]:
    """Before a turn runs: the ``repeated`` results of its calls when the turn repeats the last ones too often.

    Empty when it does not, or when the policy only warns (the stream hears of it) or asks for approval.
    """
    remembered: Memo | None = state.memo
    if remembered is None or remembered.round_streak < 1:
        return {}  # no turn before this one
    policy = repeat_policy(config.request)
    if policy.rounds is None or policy.on == "approve" or not calls:
        return {}
    if not _repeats_round(remembered, calls, policy.rounds):
        return {}
    count = remembered.round_streak + 1
    tripped = {call.id: _trip(config, state, call, index, policy, count, "round") for call in calls}
    return {key: result for key, result in tripped.items() if result is not None}


def needs_repeat_approval(config: RunConfig, state: RunState, call: ToolCall) -> bool:
    """``on="approve"``: whether `call` (or the turn it belongs to) repeats itself once too often."""
    remembered: Memo | None = state.memo
    if remembered is None:
        return False
    policy = repeat_policy(config.request)
    if policy.on != "approve":
        return False
    seen = remembered.seen(call) if policy.calls is not None else None
    if policy.calls is not None and seen is not None and seen[1] >= policy.calls - 1:
        return True
    if policy.rounds is None or not state.steps:
        return False
    turn = state.steps[-1].tool_calls
    return any(c.id == call.id for c in turn) and _repeats_round(remembered, turn, policy.rounds)


def _trip(
    config: RunConfig, state: RunState, call: ToolCall, index: int, policy: RepeatPolicy, count: int, scope: str
) -> ToolResult | None:
    if config.emit is not None:
        config.emit(RepeatEvent(call.id, call.name, count, scope, policy.on, index, caller=state.callers.get(call.id)))
    if policy.on != "error":
        return None
    what = "call" if scope == "call" else "turn (the same calls)"
    return ToolResult.error(
        call,
        f"Not run: this is the same {what} for the {_ordinal(count)} time, and each time the answer was the same. "
        "Repeating it will not change the answer: use the answers you already have, call it with different "
        "arguments, or answer the user.",
        REPEATED,
    )


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def note_call(state: RunState, call: ToolCall, result: ToolResult) -> None:
    """Step 7: remember `call`'s answer (an identical call with the same answer extends the streak)."""
    if result.error_kind == REPEATED:
        return
    remembered: Memo | None = state.memo
    if remembered is None:
        remembered = state.memo = Memo()
    raw = remembered.raw
    if call.name not in raw:  # the tool's first call (the common case): one dict op, kept as it is
        raw[call.name] = [(call, result)]
    else:
        remembered.note(call, result)


def note_round(state: RunState, calls: Sequence[ToolCall], results: Sequence[ToolResult]) -> None:
    """After a turn: remember its calls and answers (the same as the last turn's extends the streak)."""
    if len(calls) == 1:  # the usual turn, without the generator expressions
        if results[0].error_kind == REPEATED:
            return
        names: tuple[str, ...] = (calls[0].name,)
    elif not calls or any(result.error_kind == REPEATED for result in results):
        return
    else:
        names = tuple(call.name for call in calls)
    remembered = state.memo or memo(state)  # noted by the turn's calls already (unless each was "repeated")
    if names == remembered.round_names:
        last = remembered.last_round()
        now = (tuple(map(call_identity, calls)), tuple(map(_answer, results)))
        remembered.round = now
        remembered.round_streak = remembered.round_streak + 1 if now == last else 1
    else:  # other tools: not a repeat, and nothing to canonicalise yet
        remembered.round_names, remembered.round, remembered.round_streak = names, (calls, results), 1
