"""Running cases on a model: one request per question (and one retry with feedback, when asked).

Each question is one request with ``tool_choice="auto"`` and the case's tools, as BFCL's FC mode
sends it. The calls are judged as the model made them, after the provider's own reading (names mapped
back from aliases, a strict dialect's ``null`` read as "left out"), before validation, so a score is
BFCL's score. Options add what agentkit itself does in a run:

* ``retry``: when a call fails the tool's validation (or names no tool), the error result that an
  agent run would send (the path and the fix) goes back to the model with one more request; the calls
  that passed validation stay, and the new turn's calls join them;
* ``repair``: arguments that are not valid JSON, or valid JSON of the wrong shape, are repaired where a
  known slip explains them (`agentkit.evals.repair_arguments`), and only when the repaired arguments
  pass validation; every repair is listed in the case's result.

Requests run `concurrency` at a time; a request that fails (the server's error, a timeout) is a
``model_error`` for that question and the run goes on.
"""

from __future__ import annotations as _annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .. import _tool_errors as failures
from ..exceptions import ToolInputError
from ..messages import AssistantMessage, Message, TextPart, ToolCall, ToolResult, ToolResultsMessage
from ..models import Model, ModelSettings
from ..registry import Registry
from ._cases import EvalCase
from ._checker import ErrorClass, Verdict, check_calls
from ._repair import Repair, repair_arguments

__all__ = ["CaseResult", "Progress", "run_case", "run_cases"]

Progress = Callable[[int, int, "CaseResult"], None]
"""``progress(done, total, result)``, called as each question finishes."""

DEFAULT_SETTINGS = ModelSettings(tool_choice="auto", temperature=0.0, aliases=True)
"""What each question is sent with unless the caller says otherwise: BFCL's FC mode, greedy decoding,
and aliases for tool names a vendor rejects (BFCL's dotted names)."""


@dataclass(frozen=True)
class CaseResult:
    """What happened to one question."""

    id: str
    category: str
    passed: bool
    error: ErrorClass | None = None
    bfcl_error: str | None = None
    detail: str = ""
    calls: tuple[tuple[str, Any], ...] = ()
    """The judged calls: ``(tool key, arguments)``, arguments as the model sent them (JSON text, or the
    parsed object)."""
    expected_tools: tuple[str, ...] = ()
    first_passed: bool | None = None
    """With ``retry``: whether the first attempt alone passed (None: no retry asked)."""
    retried: bool = False
    """Whether a second request was made (some call failed validation)."""
    repairs: tuple[str, ...] = ()
    """Each repair made to the arguments, in words (``repair=True`` only)."""
    seconds: float = 0.0
    text: str = ""
    """The model's text, clipped (what it said instead of, or beside, its calls)."""
    wrong_tools: tuple[str, ...] = field(default=())
    """The tools called instead, for ``wrong_tool``."""


def _judge(case: EvalCase, calls: Sequence[tuple[str, Any]]) -> Verdict:
    return check_calls(case.specs(), list(calls), case.expected, case.check_mode)


def _pairs(calls: Sequence[ToolCall]) -> list[tuple[str, Any]]:
    return [(call.name, call.arguments) for call in calls]


async def _feedback(registry: Registry, calls: Sequence[ToolCall]) -> tuple[list[ToolCall], list[ToolResult]]:
    """The calls that pass validation, and a result for every call.

    A call that fails gets the error result an agent run would send (its path and fix); the others a
    neutral "ok" (no tool runs in an eval).
    """
    kept: list[ToolCall] = []
    results: list[ToolResult] = []
    for call in calls:
        if call.name not in registry:
            results.append(await registry.call(call))  # the unknown-tool error, with its "did you mean"
            continue
        try:
            registry[call.name].schema.validate_arguments(call.name, call.arguments)
        except ToolInputError as exc:
            results.append(failures.invalid_arguments(call, exc, redacted=False))
            continue
        except ValueError as exc:  # not a JSON object at all
            results.append(
                ToolResult.error(call, f"Invalid arguments for tool {call.name!r}: {exc}", "invalid_arguments")
            )
            continue
        kept.append(call)
        results.append(ToolResult(call.id, call.name, (TextPart("ok"),)))
    return kept, results


def _repaired(registry: Registry, calls: Sequence[ToolCall]) -> tuple[list[ToolCall], list[str]]:
    out: list[ToolCall] = []
    notes: list[str] = []
    for call in calls:
        if call.name not in registry:
            out.append(call)
            continue
        fixed: Repair | None = repair_arguments(call.arguments, registry[call.name])
        if fixed is None:
            out.append(call)
            continue
        out.append(replace(call, arguments=fixed.arguments))
        notes.append(f"{call.name}: {', '.join(fixed.fixes)}")
    return out, notes


async def run_case(
    model: Model,
    case: EvalCase,
    *,
    settings: ModelSettings | None = None,
    retry: bool = False,
    repair: bool = False,
) -> CaseResult:
    """Ask `model` one question and judge its calls (see the module docstring for `retry` and `repair`)."""
    started = time.monotonic()
    registry = case.registry()
    settings = settings or DEFAULT_SETTINGS
    messages: list[Message] = list(case.messages)
    base = _Base(case.id, case.category, case.expected_tools)
    try:
        response = await model.request(messages, registry, settings)
    except Exception as exc:  # noqa: BLE001 - one question's failed request is its result, not the run's end
        return _failed(base, exc, started)
    calls = list(response.message.tool_calls)
    repairs: list[str] = []
    if repair:
        calls, repairs = _repaired(registry, calls)
    first = _judge(case, _pairs(calls))
    retried = False
    if retry and calls:
        kept, results = await _feedback(registry, calls)
        if len(kept) < len(calls):
            retried = True
            history = [*messages, AssistantMessage(text=response.message.text, tool_calls=calls)]
            history.append(ToolResultsMessage(results))
            try:
                second = await model.request(history, registry, settings)
            except Exception as exc:  # noqa: BLE001 - as above
                return replace(_failed(base, exc, started), first_passed=first.passed, retried=True)
            more = list(second.message.tool_calls)
            if repair:
                more, notes = _repaired(registry, more)
                repairs += notes
            calls = kept + more
    verdict = _judge(case, _pairs(calls)) if retried else first
    return CaseResult(
        base.id,
        base.category,
        passed=verdict.passed,
        error=verdict.error,
        bfcl_error=verdict.bfcl_error,
        detail=verdict.detail,
        calls=tuple(_pairs(calls)),
        expected_tools=base.expected_tools,
        first_passed=first.passed if retry else None,
        retried=retried,
        repairs=tuple(repairs),
        seconds=time.monotonic() - started,
        text=response.message.text[:300],
        wrong_tools=verdict.tools,
    )


@dataclass(frozen=True)
class _Base:
    id: str
    category: str
    expected_tools: tuple[str, ...]


def _failed(base: _Base, exc: BaseException, started: float) -> CaseResult:
    first_line = (str(exc).splitlines() or [""])[0][:300]
    return CaseResult(
        base.id,
        base.category,
        expected_tools=base.expected_tools,
        passed=False,
        error="model_error",
        detail=f"{type(exc).__name__}: {first_line}",
        seconds=time.monotonic() - started,
    )


async def run_cases(
    model: Model,
    cases: Sequence[EvalCase],
    *,
    concurrency: int = 4,
    settings: ModelSettings | None = None,
    retry: bool = False,
    repair: bool = False,
    progress: Progress | None = None,
) -> list[CaseResult]:
    """Run every case, at most `concurrency` requests at a time; the results in the order of `cases`."""
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    gate = asyncio.Semaphore(concurrency)
    done = 0

    async def one(case: EvalCase) -> CaseResult:
        nonlocal done
        async with gate:
            result = await run_case(model, case, settings=settings, retry=retry, repair=repair)
        done += 1
        if progress is not None:
            progress(done, len(cases), result)
        return result

    return list(await asyncio.gather(*(one(case) for case in cases)))
