"""What a run reports while it runs: DEBUG log records (logger ``agentkit.agent``) and, when tracing is on, spans.

The loop calls in here only when someone is looking (tracing on, or DEBUG enabled for ``agentkit.agent``),
so a run nobody observes pays one check per model request and tool call.

Records at DEBUG: each model request (the model, how many messages and tools, the tool choice) and its
answer (finish reason, calls, tokens, request id, duration) or failure, and each retry the run grants
(a tool call the model must make again: invalid arguments, `ModelRetry`; an answer that does not fit
the run's output type). The SDKs' own HTTP retries are
logged by the SDKs (e.g. the ``openai`` logger), not here.
"""

from __future__ import annotations as _annotations

import logging
import time
from collections.abc import Awaitable, Coroutine
from typing import TYPE_CHECKING, Any

from ..instrumentation import _enter_run, _leave_run  # pyright: ignore[reportPrivateUsage]  # agentkit's own run plumbing, kept out of the public module's API
from ..messages import ModelResponse, ToolResult

if TYPE_CHECKING:
    from ..hooks import ModelRequest
    from .config import RunConfig
    from .results import RunResult

__all__ = ["agent_run", "debugging", "log_answer_retry", "log_retry", "logger", "model_turn"]

logger = logging.getLogger("agentkit.agent")


def debugging() -> bool:
    """Whether DEBUG records of runs are wanted (the logging module caches this per logger)."""
    return logger.isEnabledFor(logging.DEBUG)


def agent_run(config: RunConfig, body: Awaitable[RunResult]) -> Coroutine[Any, Any, RunResult]:
    """Run `body` as the run of `config`: its tracer is what its subagents inherit, and its span wraps it."""
    if config.tracing is not None:
        return config.tracing.agent(config, body)  # it makes itself the tracer subagents inherit
    return _untraced(body)


async def _untraced(body: Awaitable[RunResult]) -> RunResult:
    token = _enter_run(None)  # subagents of this run are not traced either (unless they ask for it)
    try:
        return await body
    finally:
        _leave_run(token)


def model_turn(
    config: RunConfig, request: ModelRequest, index: int, turn: Awaitable[ModelResponse]
) -> Awaitable[ModelResponse]:
    """One model request, logged at DEBUG and traced as a ``chat`` span when tracing is on.

    `request` is the request as the step's hooks left it (its model, messages, tools and settings).
    """
    if not debugging():  # traced only: the span's coroutine, none around it
        return turn if config.tracing is None else config.tracing.chat(config, request, turn)
    return _logged_turn(config, request, index, turn)


async def _logged_turn(
    config: RunConfig, request: ModelRequest, index: int, turn: Awaitable[ModelResponse]
) -> ModelResponse:
    model = request.model.name
    settings = request.settings
    extra = {"agent_id": config.agent.id, "step": index, "model": model}
    logger.debug(
        "agent %r step %d: request to %s (%d messages, %d tools, tool_choice=%r)",
        config.agent.id,
        index,
        model,
        len(request.messages),
        len(settings.active_tools) if settings.active_tools is not None else len(request.tools),
        settings.tool_choice,
        extra=extra,
    )
    start = time.perf_counter()
    try:
        response = await (turn if config.tracing is None else config.tracing.chat(config, request, turn))
    except BaseException as exc:
        logger.debug(
            "agent %r step %d: request to %s failed after %.0f ms: %s",
            config.agent.id,
            index,
            model,
            (time.perf_counter() - start) * 1000,
            type(exc).__name__,
            extra=extra,
        )
        raise
    usage = response.usage
    logger.debug(
        "agent %r step %d: %s answered in %.0f ms: finish_reason=%r, %d tool calls, tokens in=%d "
        "(cache read %d, written %d) out=%d (reasoning %d), request id %s",
        config.agent.id,
        index,
        response.model_name or model,
        (time.perf_counter() - start) * 1000,
        response.finish_reason,
        len(response.message.tool_calls),
        usage.input_tokens,
        usage.cache_read_tokens,
        usage.cache_write_tokens,
        usage.output_tokens,
        usage.reasoning_tokens,
        response.request_id,
        extra={**extra, "request_id": response.request_id},
    )
    return response


def log_retry(config: RunConfig, result: ToolResult, count: int) -> None:
    """A retryable failure of `result`'s tool, counted: the model is asked to call it again."""
    if debugging():
        logger.debug(
            "agent %r: tool %r (call %r) failed (%s); retry %d of %d for this tool",
            config.agent.id,
            result.name,
            result.call_id,
            result.error_kind,
            count,
            config.retries,
            extra={"agent_id": config.agent.id, "tool_name": result.name, "tool_call_id": result.call_id},
        )


def log_answer_retry(config: RunConfig, output_name: str, errors: int, count: int) -> None:
    """A text answer that does not fit the output type (`errors` problems), counted: the model answers again."""
    if debugging():
        logger.debug(
            "agent %r: the answer does not fit the output %r (%d %s); retry %d of %d for the answer",
            config.agent.id,
            output_name,
            errors,
            "problem" if errors == 1 else "problems",
            count,
            config.retries,
            extra={"agent_id": config.agent.id, "tool_name": output_name},
        )
