"""Steering a run from the outside: hooks before each model turn, around each model request and tool call.

`RunHooks` (subclass it, or use `Hooks` with plain functions):

* ``prepare_step(ctx) -> StepChanges | None`` runs before each model turn and may change that turn's
  model, active tools, tool choice, instructions and model settings (`StepChanges`); a run's own
  ``prepare_step=`` function does the same;
* the other hooks run before and after each model request and each tool call. Before a call, a hook
  lets it run (``None``), replaces its arguments (`ReplaceArguments`, validated again), answers it
  without running it (`Answer`) or denies it with a reason the model receives (`Deny`); after a call it
  may replace the result. Before a model request it may inspect or change the `ModelRequest`; after, it
  sees the response.

Every hook may be sync or async; several run in order (the agent's first, then the run's), each seeing
what the previous one decided. Hooks see registry keys (the names the model uses), never tool ids.
A tool-call hook that raises becomes an error result for that call (``error_kind="hook_error"``); a
model-request hook that raises ends the run with `HookError` (its check could not be made, so the
request is not sent).
"""

from __future__ import annotations as _annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypedDict, Union

from typing_extensions import TypeVar

from .context import RunContext, ToolContext
from .messages import Message, ModelResponse, ToolCall, ToolResult

if TYPE_CHECKING:
    from .models import Model, ModelLike, ModelSettings
    from .registry import Registry

__all__ = [
    "Answer",
    "Deny",
    "Hooks",
    "ModelRequest",
    "PrepareStep",
    "ReplaceArguments",
    "RunHooks",
    "StepChanges",
    "ToolCallDecision",
]

DepsT = TypeVar("DepsT", default=Any)
T = TypeVar("T")
MaybeAwaitable = Union[T, Awaitable[T]]


class StepChanges(TypedDict, total=False):
    """What ``prepare_step`` may change for one model turn; a key left out keeps the run's value.

    Any other key is an error naming it (checked when the step runs, as well as by type checkers).
    """

    model: ModelLike
    """Another model for this turn: ``"vendor:model-name"`` or a `Model`."""
    active_tools: Sequence[str] | None
    """The keys the model may call in this turn (``None``: every tool the run shows). A deferred tool
    named here is sent for this turn even if no search found it."""
    tool_choice: str
    """``"auto"``, ``"none"``, ``"required"`` or a key (among this turn's active tools)."""
    instructions: str | None
    """The system instructions for this turn instead of the agent's (``None`` or ``""``: none)."""
    model_settings: ModelSettings
    """Settings for this turn instead of the run's; its ``tool_choice`` and ``active_tools`` must be left
    at their defaults (use the keys of the same names)."""


PrepareStep = Callable[[RunContext[Any]], MaybeAwaitable[Union[StepChanges, Mapping[str, Any], None]]]
"""``prepare_step=``: a function of the run so far returning the changes for the coming turn (or None).

Return a `StepChanges` (checked by type checkers); any mapping is accepted and checked when the step runs."""


@dataclass
class ModelRequest:
    """One model request as it is about to be sent; a ``before_model_request`` hook may change it.

    Change it in place or return a copy (`dataclasses.replace`); the tools sent are what the model
    may call in this turn.
    """

    model: Model
    """The model the request goes to."""
    messages: list[Message]
    """The whole conversation sent, instructions (a leading `SystemMessage`) included."""
    tools: Registry
    """The tools sent, under their keys."""
    settings: ModelSettings
    """Tool choice, active tools, sampling settings."""


@dataclass(frozen=True)
class ReplaceArguments:
    """Run the call with these arguments instead of the model's (validated again against the schema).

    Arguments that the tool's approval policy would want approved never run this way: the call gets a
    ``denied`` error result instead, since nobody approved them.
    """

    arguments: Mapping[str, Any]


@dataclass(frozen=True)
class Answer:
    """Answer the call with `output` without running the tool (after a call: replace its result).

    The model receives `output` exactly as if the tool had returned it (`to_model_output` applied).
    """

    output: Any


@dataclass(frozen=True)
class Deny:
    """Do not run the call; the model receives `reason` as a ``denied`` error result."""

    reason: str


ToolCallDecision = Union[ReplaceArguments, Answer, Deny]
"""What ``before_tool_call`` may return besides ``None`` (let the call run as it is)."""


class RunHooks(Generic[DepsT]):
    """Hooks around every model request and tool call of a run; override the ones you need.

    Each method may be sync or async. `ctx` is the context the tool itself gets (a `ToolContext`:
    deps, the call id, the key it was called by, the agent) or, around model requests, the run's
    `RunContext`.

    ```python
    class Audit(RunHooks[Session]):
        async def before_tool_call(self, ctx, call):
            if call.name == "transfer" and not ctx.deps.may_transfer:
                return Deny("transfers are disabled for this user")
            return None
    ```
    """

    def prepare_step(self, ctx: RunContext[DepsT]) -> MaybeAwaitable[StepChanges | Mapping[str, Any] | None]:
        """Before each model turn: the changes for that turn (`StepChanges`), or None for none."""
        return None

    def before_model_request(
        self, ctx: RunContext[DepsT], request: ModelRequest
    ) -> MaybeAwaitable[ModelRequest | None]:
        """Inspect or change the request (in place, or return a new one); None keeps it."""
        return None

    def after_model_response(
        self, ctx: RunContext[DepsT], request: ModelRequest, response: ModelResponse
    ) -> MaybeAwaitable[None]:
        """Inspect the model's response to `request`."""
        return None

    def before_tool_call(self, ctx: ToolContext[DepsT], call: ToolCall) -> MaybeAwaitable[ToolCallDecision | None]:
        """Decide about `call` (named by key) before it runs; None lets it run."""
        return None

    def after_tool_call(
        self, ctx: ToolContext[DepsT], call: ToolCall, result: ToolResult
    ) -> MaybeAwaitable[ToolResult | Answer | None]:
        """See (or replace) the result of `call`: a new `ToolResult`, an `Answer` (a new output), or None."""
        return None


BeforeModelRequest = Callable[[RunContext[DepsT], ModelRequest], MaybeAwaitable[Union[ModelRequest, None]]]
AfterModelResponse = Callable[[RunContext[DepsT], ModelRequest, ModelResponse], MaybeAwaitable[None]]
BeforeToolCall = Callable[[ToolContext[DepsT], ToolCall], MaybeAwaitable[Union[ToolCallDecision, None]]]
AfterToolCall = Callable[[ToolContext[DepsT], ToolCall, ToolResult], MaybeAwaitable[Union[ToolResult, Answer, None]]]


def _check_takes_context(fn: Callable[..., Any]) -> None:
    """Raise `AgentSetupError` unless `fn` can be called with the run context alone."""
    import inspect

    try:
        inspect.signature(fn).bind(None)
    except TypeError:
        from .exceptions import AgentSetupError

        name = getattr(fn, "__qualname__", None) or repr(fn)
        raise AgentSetupError(
            f"Hooks(prepare_step=...): {name} must take the run context as its only argument"
        ) from None
    except ValueError:
        return  # a builtin without a signature: assume it takes the context


class Hooks(RunHooks[DepsT]):
    """`RunHooks` made of plain functions (sync or async), for hooks that need no class.

    ```python
    read_only = Hooks(before_tool_call=lambda ctx, call: Deny("read-only session") if call.name == "rm" else None)
    agent = Agent(..., hooks=[read_only])
    ```
    """

    def __init__(
        self,
        *,
        prepare_step: PrepareStep | None = None,
        before_model_request: BeforeModelRequest[DepsT] | None = None,
        after_model_response: AfterModelResponse[DepsT] | None = None,
        before_tool_call: BeforeToolCall[DepsT] | None = None,
        after_tool_call: AfterToolCall[DepsT] | None = None,
    ) -> None:
        given: dict[str, Any] = {
            "prepare_step": prepare_step,
            "before_model_request": before_model_request,
            "after_model_response": after_model_response,
            "before_tool_call": before_tool_call,
            "after_tool_call": after_tool_call,
        }
        for name, fn in given.items():
            if fn is not None and not callable(fn):
                from .exceptions import AgentSetupError

                raise AgentSetupError(f"Hooks({name}=...) must be a function, got {fn!r}")
        if prepare_step is not None:
            _check_takes_context(prepare_step)
        self._prepare_step = prepare_step
        self._before_model_request = before_model_request
        self._after_model_response = after_model_response
        self._before_tool_call = before_tool_call
        self._after_tool_call = after_tool_call
        self._given = frozenset(name for name, fn in given.items() if fn is not None)

    def __repr__(self) -> str:
        return f"Hooks({', '.join(sorted(self._given))})"

    def prepare_step(self, ctx: RunContext[DepsT]) -> MaybeAwaitable[StepChanges | Mapping[str, Any] | None]:
        """Call the function given as ``prepare_step`` (None when none was given)."""
        fn = self._prepare_step
        return fn(ctx) if fn is not None else None

    def before_model_request(
        self, ctx: RunContext[DepsT], request: ModelRequest
    ) -> MaybeAwaitable[ModelRequest | None]:
        """Call the function given as ``before_model_request`` (None when none was given)."""
        fn = self._before_model_request
        return fn(ctx, request) if fn is not None else None

    def after_model_response(
        self, ctx: RunContext[DepsT], request: ModelRequest, response: ModelResponse
    ) -> MaybeAwaitable[None]:
        """Call the function given as ``after_model_response`` (None when none was given)."""
        fn = self._after_model_response
        return fn(ctx, request, response) if fn is not None else None

    def before_tool_call(self, ctx: ToolContext[DepsT], call: ToolCall) -> MaybeAwaitable[ToolCallDecision | None]:
        """Call the function given as ``before_tool_call`` (None when none was given)."""
        fn = self._before_tool_call
        return fn(ctx, call) if fn is not None else None

    def after_tool_call(
        self, ctx: ToolContext[DepsT], call: ToolCall, result: ToolResult
    ) -> MaybeAwaitable[ToolResult | Answer | None]:
        """Call the function given as ``after_tool_call`` (None when none was given)."""
        fn = self._after_tool_call
        return fn(ctx, call, result) if fn is not None else None

    def implements(self, name: str) -> bool:
        """Whether a function was given for the hook `name`."""
        return name in self._given
