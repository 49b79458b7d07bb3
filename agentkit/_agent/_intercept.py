"""Running the `RunHooks` of a run: around each model request, and around each tool call.

A tool-call hook that raises, or returns something it may not, turns into an error result for that call
(``error_kind="hook_error"``): the model sees that the call did not go through, the run goes on. A
model-request hook that fails raises `HookError`: its check could not be made, so nothing is sent.
"""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from .._describe import describe_exception
from .._jsonish import is_array, is_mapping
from .._text import type_name
from .._tool_errors import described
from .._tool_results import result_of
from ..context import RunContext, ToolContext
from ..exceptions import HookError
from ..hooks import Answer, Deny, Hooks, ModelRequest, PrepareStep, ReplaceArguments, RunHooks
from ..messages import (
    AssistantMessage,
    ModelResponse,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    ToolResultsMessage,
    UserMessage,
)
from ..models import Model, ModelSettings
from ..registry import Registry
from ._approvals import needs_approval
from ._usercode import call_user

if TYPE_CHECKING:
    from .config import RunConfig
    from .state import RunState

__all__ = ["after_model_response", "before_model_request", "call_with_hooks", "implements", "prepare_functions"]

_MESSAGE_TYPES = (SystemMessage, UserMessage, AssistantMessage, ToolResultsMessage)


def implements(hooks: RunHooks[Any], name: str) -> bool:
    """Whether `hooks` does anything for the hook method `name` (so the loop can skip the rest)."""
    if isinstance(hooks, Hooks):
        return hooks.implements(name) or getattr(type(hooks), name) is not getattr(Hooks, name)
    return getattr(type(hooks), name) is not getattr(RunHooks, name)


def prepare_functions(hooks: Sequence[RunHooks[Any]]) -> list[PrepareStep]:
    """The ``prepare_step`` hooks of `hooks`, in order."""
    return [hook.prepare_step for hook in hooks if implements(hook, "prepare_step")]


async def before_model_request(
    hooks: Sequence[RunHooks[Any]], ctx: RunContext[Any], request: ModelRequest
) -> ModelRequest:
    """`request` after every ``before_model_request`` hook, in order; raises `HookError` for a failing one."""
    for hook in hooks:
        if not implements(hook, "before_model_request"):
            continue
        value, exc = await call_user(hook.before_model_request, ctx, request)
        if exc is not None:
            raise HookError(hook, "before_model_request", f"raised {describe_exception(exc)}") from exc
        if value is not None and not isinstance(value, ModelRequest):
            raise HookError(hook, "before_model_request", f"returned {type_name(value)}; return a ModelRequest or None")
        request = value if value is not None else request
        _check_request(hook, request)
    return request


def _check_request(hook: RunHooks[Any], changed: ModelRequest) -> None:
    request: Any = changed  # a hook may have put anything in it
    wrong = None
    if not isinstance(request.model, Model):
        wrong = f"model ({type_name(request.model)}, not a Model)"
    elif not is_array(request.messages) or not all(isinstance(m, _MESSAGE_TYPES) for m in request.messages):
        wrong = "messages (a list of agentkit messages)"
    elif not isinstance(request.tools, Registry):
        wrong = f"tools ({type_name(request.tools)}, not a Registry)"
    elif not isinstance(request.settings, ModelSettings):
        wrong = f"settings ({type_name(request.settings)}, not a ModelSettings)"
    if wrong is not None:
        raise HookError(hook, "before_model_request", f"left the request with an unusable {wrong}")


async def after_model_response(
    hooks: Sequence[RunHooks[Any]], ctx: RunContext[Any], request: ModelRequest, response: ModelResponse
) -> None:
    """Every ``after_model_response`` hook, in order; raises `HookError` for a failing one."""
    for hook in hooks:
        if not implements(hook, "after_model_response"):
            continue
        _, exc = await call_user(hook.after_model_response, ctx, request, response)
        if exc is not None:
            raise HookError(hook, "after_model_response", f"raised {describe_exception(exc)}") from exc


def _tool(executor: Registry, call: ToolCall) -> Any:
    return executor.get(call.name) if call.name in executor else None


def _hook_error(
    call: ToolCall, hook: RunHooks[Any], method: str, what: str, exc: BaseException | None = None
) -> ToolResult:
    return ToolResult.error(
        call,
        f"The call to {call.name!r} did not go through: the application's {method} hook {what}.",
        "hook_error",
        type(exc).__name__ if exc is not None else None,
    )


async def _answer(config: RunConfig, executor: Registry, call: ToolCall, output: Any) -> ToolResult:
    """The result of `call` answered with `output`, as if its tool had returned it."""
    item = _tool(executor, call)
    if item is not None:
        own = item.mask_error_details
        mask = own if own is not None else bool(config.errors.mask)
        redacted = config.errors.redact_input or (item.transform is not None and item.transform.input is not None)
        return await result_of(item, call, output, mask=mask, redacted=redacted)
    from pydantic_core import to_json

    text = output if isinstance(output, str) else to_json(output, fallback=repr).decode()
    return ToolResult(call_id=call.id, name=call.name, content=[TextPart(text)], output=output)


async def call_with_hooks(
    config: RunConfig,
    state: RunState,
    executor: Registry,
    call: ToolCall,
    ctx: ToolContext[Any],
    run: Callable[[ToolCall], Awaitable[ToolResult]],
) -> ToolResult:
    """`run(call)` between the before and after hooks (which may change, answer, deny or replace it)."""
    hooks = config.hooks
    changed, result = await _before(config, executor, hooks, ctx, call)
    if result is None:
        if changed.arguments != call.arguments and needs_approval(config, state, executor, changed):
            result = ToolResult.error(
                changed,
                f"This call to {call.name!r} did not run: the application changed its arguments to ones that need "
                "approval, and nobody approved them.",
                "denied",
            )
        else:
            result = await run(changed)
    result = await _after(config, executor, hooks, ctx, changed, result)
    if result.call_id != call.id or result.name != call.name:
        result = dataclasses.replace(result, call_id=call.id, name=call.name)  # linked to the model's call
    return result


async def _before(
    config: RunConfig, executor: Registry, hooks: Sequence[RunHooks[Any]], ctx: ToolContext[Any], call: ToolCall
) -> tuple[ToolCall, ToolResult | None]:
    """The call as the ``before_tool_call`` hooks leave it, and the result when one of them settled it."""
    for hook in hooks:
        if not implements(hook, "before_tool_call"):
            continue
        decision, exc = await call_user(hook.before_tool_call, ctx, call)
        if exc is not None:  # a failing hook fails this call, never the run
            what = f"failed ({described(call, 'hook_error', exc, _tool(executor, call), config.errors)})"
            return call, _hook_error(call, hook, "before_tool_call", what, exc)
        if decision is None:
            continue
        if isinstance(decision, Deny):
            reason = str(decision.reason).rstrip(".")
            return call, ToolResult.error(call, f"This call to {call.name!r} was denied: {reason}.", "denied")
        if isinstance(decision, Answer):
            return call, await _answer(config, executor, call, decision.output)
        if isinstance(decision, ReplaceArguments) and is_mapping(decision.arguments):
            call = dataclasses.replace(call, arguments=dict(decision.arguments))
            continue
        what = f"returned {type_name(decision)}, not None, ReplaceArguments, Answer or Deny"
        return call, _hook_error(call, hook, "before_tool_call", what)
    return call, None


async def _after(
    config: RunConfig,
    executor: Registry,
    hooks: Sequence[RunHooks[Any]],
    ctx: ToolContext[Any],
    call: ToolCall,
    result: ToolResult,
) -> ToolResult:
    """`result` as the ``after_tool_call`` hooks leave it (each sees what the previous one left)."""
    for hook in hooks:
        if not implements(hook, "after_tool_call"):
            continue
        value, exc = await call_user(hook.after_tool_call, ctx, call, result)
        if exc is not None:  # a failing hook fails this call, never the run
            what = f"failed ({described(call, 'hook_error', exc, _tool(executor, call), config.errors)})"
            result = _hook_error(call, hook, "after_tool_call", what, exc)
            continue
        if isinstance(value, ToolResult):
            result = value
        elif isinstance(value, Answer):
            result = await _answer(config, executor, call, value.output)
        elif value is not None:
            what = f"returned {type_name(value)}, not None, a ToolResult or Answer"
            result = _hook_error(call, hook, "after_tool_call", what)
    return result
