"""What a run does with what the model says: a typed text answer accepted or asked again, the retry budgets.

Each function takes the run's configuration and state and returns an outcome the loop acts on:
`Finished` (the run's answer), `Retry` (tell the model this and take another turn), `Exhausted` (a retry
budget ran out: the loop raises, with the partial result).
"""

from __future__ import annotations as _annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Union

from ..exceptions import ErrorDetail, ModelRetry, ToolInputError
from ..messages import ModelResponse, ToolResult, UserMessage
from . import observe

if TYPE_CHECKING:
    from .config import RunConfig
    from .state import RunState

__all__ = ["Exhausted", "Finished", "Retry", "spend_retries", "text_answer"]

# error kinds that spend retry budget: the model can fix these by calling again differently
_RETRYABLE = frozenset({"invalid_arguments", "retry"})


@dataclass(frozen=True)
class Finished:
    """The run's answer: the model's text, and the output (the validated value of a typed run)."""

    text: str
    output: Any


@dataclass(frozen=True)
class Retry:
    """The answer was not accepted: the model is told `message` and answers again."""

    message: UserMessage


@dataclass(frozen=True)
class Exhausted:
    """A retry budget ran out (`why`); `answer`: the typed answer kept failing (`OutputValidationError`)."""

    why: str
    text: str = ""
    answer: bool = False


async def text_answer(config: RunConfig, state: RunState, response: ModelResponse) -> Finished | Retry | Exhausted:
    """A typed run's turn without tool calls: its answer, or the model asked again (within the budget).

    In ``tool`` mode a text answer that is valid JSON for the output is taken as well (some models
    answer in text although a call was required); otherwise the model is told to call the tool.
    """
    output = config.output
    assert output is not None and output.schema is not None
    text = response.message.text
    try:
        value = output.check_text(text)
        if output.config.validators:
            value = await output.accepted(value)
    except ToolInputError as exc:
        return _failed(config, state, text, exc.errors) or Retry(output.retry_prompt(exc))
    except ModelRetry as retry:
        problem = [ErrorDetail("$", retry.message, text, "retry")]
        return _failed(config, state, text, problem) or Retry(output.retry_prompt(retry))
    state.failures.pop(output.schema.name, None)
    return Finished(text, value)


def _failed(config: RunConfig, state: RunState, raw: Any, errors: list[ErrorDetail]) -> Exhausted | None:
    """Spend one retry on an invalid answer; past the budget, what ran out."""
    output = config.output
    assert output is not None and output.schema is not None
    output.failed(raw, errors)
    key = output.schema.name
    count = state.failures[key] = state.failures.get(key, 0) + 1
    state.run_retries += 1
    observe.log_answer_retry(config, key, len(errors), count)
    if count > config.retries:
        why = f"failed {count} times in a row; the agent allows {config.retries} retries (RunLimits(retries=...))"
    elif state.run_retries > config.max_retries:
        allowed = f"the agent allows {config.max_retries} (RunLimits(max_retries=...))"
        why = f"the run used {state.run_retries} retries; {allowed}"
    else:
        return None
    return Exhausted(why, raw if isinstance(raw, str) else "", answer=True)


def spend_retries(config: RunConfig, state: RunState, results: list[ToolResult]) -> Exhausted | None:
    """Count a turn's retryable failures against the budgets (per tool, consecutive; per run); what ran out."""
    failures = state.failures
    over: str | None = None
    culprit: ToolResult | None = None
    for result in results:
        kind = result.error_kind
        if kind is None:
            if failures:
                failures.pop(result.name, None)  # the budget is for consecutive failures of a tool
            continue
        if kind in _RETRYABLE:
            count = failures[result.name] = failures.get(result.name, 0) + 1
            state.run_retries += 1
            observe.log_retry(config, result, count)
            if count > config.retries:
                culprit = result
                over = (
                    f"Tool {result.name!r} failed {count} times in a row ({kind}); "
                    f"the agent allows {config.retries} retries per tool (RunLimits(retries=...))."
                )
        elif kind == "unknown_tool":
            state.run_retries += 1
    if over is None and state.run_retries and state.run_retries > config.max_retries:  # max_retries >= 0
        over = (
            f"The run used {state.run_retries} retries; the agent allows {config.max_retries} per run "
            "(RunLimits(max_retries=...))."
        )
    if over is None:
        return None
    output = config.output
    answer = output is not None and output.key is not None and culprit is not None and culprit.name == output.key
    return Exhausted(over, answer=answer)


Outcome = Union[Finished, Retry, Exhausted]
