"""The journal step of a call (step 6 of `agentkit._agent._calls`): reserve, run, commit.

A call that started and recorded no result (a crash) becomes an ``outcome_unknown`` error result, or, in a
run `Agent.recover` continues with ``on_unknown="pause"``, a pause a person answers (`UNKNOWN_ANSWER`).

Only calls of journaled tools (`Tool.journaled`: they require approval or declare ``idempotent=``) run
through it, in process, when the agent's store is an `EffectJournal`; a durable engine's own history is
its journal. See `agentkit.runs._journal` for what a run continued after a crash makes of each record.
"""

from __future__ import annotations as _annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from .._tool_results import result_of
from ..exceptions import ClientCallRequested, ProgramPaused, ToolSuspended
from ..messages import ToolCall, ToolResult
from ..runs._journal import UNKNOWN_ANSWER, EffectJournal, JournalEntry, effect_key, unknown_request
from ._background import run_id

if TYPE_CHECKING:
    from ..tools import Tool
    from .config import RunConfig
    from .state import RunState

__all__ = ["UNKNOWN_ANSWERED", "call_key", "journal_of", "journaled"]

UNKNOWN_ANSWERED: Any = object()
"""A resume's data for a call a person answered after its outcome was unknown: the answer itself is in
`RunState.unknown`, and the tool, if it runs again, gets no resume data."""


def call_key(config: RunConfig, state: RunState, call: ToolCall) -> str:
    """The effect key of `call` in this run (its run id made now if the run had none yet)."""
    return effect_key(run_id(config, state), call.id)


def journal_of(config: RunConfig) -> EffectJournal | None:
    """The run's effect journal: the agent's store, when it is one."""
    store = config.agent.store()
    return store if isinstance(store, EffectJournal) else None


async def journaled(
    config: RunConfig,
    state: RunState,
    item: Tool[..., Any],
    call: ToolCall,
    key: str,
    run: Callable[[], Awaitable[ToolResult]],
) -> ToolResult:
    """Run `call` through the journal: a committed call's recorded result, an unknown outcome, or `run()`."""
    journal = journal_of(config)
    if journal is None:
        return await run()
    found = await journal.reserve(key, run_id=state.run_id, call_id=call.id, tool=call.name)
    if found is not None:
        if found.state == "committed":
            return _recorded(item, call, found)
        if not item.reruns_unknown:
            unknown = state.unknown
            answer = unknown.answers.pop(call.id, None) if unknown is not None else None
            if answer is None:
                if unknown is not None and unknown.pause:  # a person decides: it ran (and returned...), or again
                    raise ToolSuspended(unknown_request(call.name, key, _INTERRUPTED), UNKNOWN_ANSWER)
                return unknown_outcome(call, key)
            if "output" in answer:  # a person says it ran, and what it returned: recorded, never run
                result = await result_of(item, call, answer["output"])
                await _commit(journal, key, item, result)
                return result
        # idempotent, or a person said run it again: the call runs again under the same key (its reservation stands)
    try:
        result = await run()
    except (ToolSuspended, ClientCallRequested, ProgramPaused):
        # a pause before any effect (side effects belong after `suspend`): answered, the call runs afresh
        await _finish(journal.release(key))
        raise
    await _commit(journal, key, item, result)
    return result


async def _commit(journal: EffectJournal, key: str, item: Tool[..., Any], result: ToolResult) -> None:
    from ..runs._codec import encode_results

    await _finish(journal.commit(key, encode_results([result], {result.name: item})[0]))


_INTERRUPTED = "it started before the run was interrupted and recorded no result"


def unknown_outcome(call: ToolCall, key: str) -> ToolResult:
    """The error result of a call that started, recorded no result, and may not run twice."""
    message = (
        f"The outcome of this call to {call.name!r} is unknown: {_INTERRUPTED}, so it may or may not have "
        f"taken effect (effect key {key}). Do not assume either; check before calling it again."
    )
    return ToolResult.error(call, message, "outcome_unknown")


def _recorded(item: Tool[..., Any], call: ToolCall, entry: JournalEntry) -> ToolResult:
    """The committed result, its output validated again (a typed value, as the call returned it)."""
    from ..runs._codec import decode_results

    result = decode_results([entry.result], "the effect journal's result")[0]
    if not result.is_error and result.output is not None:
        result.output = item.schema.validate_output(call.name, result.output)
    return result


async def _finish(write: Awaitable[None]) -> None:
    """A journal write finishes even while the run is being cancelled (a shielded task)."""
    await asyncio.shield(asyncio.ensure_future(write))
