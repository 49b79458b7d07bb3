"""`ToolContext` and `RunContext`: what tools, and the functions that steer a run, receive.

`ToolContext` is what a tool can ask to receive besides the model's arguments; `RunContext` is what
dynamic instructions, ``prepare_step`` and model-request hooks receive.

A parameter annotated with `ToolContext` (or `ToolContext[MyDeps]`) is filled by the caller — the
registry, the agent loop, or `Tool.invoke(..., context=...)` — and never appears in the tool's schema.
"""

from __future__ import annotations as _annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Union, overload

from typing_extensions import TypeVar

if TYPE_CHECKING:
    from .messages import Message, Usage
    from .tools import Tool

__all__ = ["RunContext", "ToolContext"]

DepsT = TypeVar("DepsT", default=Any)
T = TypeVar("T")

_NOT_RESUMED: Any = object()


@dataclass
class ToolContext(Generic[DepsT]):
    """Run-time information injected into a tool.

    Example:
        ```python
        @tool
        def lookup(ctx: ToolContext[Database], user_id: int) -> str:
            return ctx.deps.name_of(user_id)
        ```
    """

    deps: DepsT = None  # type: ignore[assignment]  # None when the caller has no dependencies
    """The caller's dependencies (a database handle, an HTTP client, settings, ...)."""
    call_id: str | None = None
    """The id of the tool call being answered, when called for a model."""
    tool_name: str | None = None
    """The registry key the tool was called by (the name the model used)."""
    agent: Any = None
    """The agent running the tool, if any."""
    retry: int = 0
    """How many times this tool has already been retried in the current run."""
    effect_key: str | None = None
    """The stable key of this logical call (``ak-`` and 32 hex digits), for side effects: pass it to the
    services you call as their idempotency key (an ``Idempotency-Key`` header). It is the same every time
    this call runs (a resumed suspension, a recovery after a crash, a copy of the run's snapshot, a Temporal
    retry or replay) and different for every other call. ``None`` outside an agent run."""
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when the run is being cancelled; long tools may poll it and stop early."""
    on_progress: Callable[[Any], None] | None = None
    """Receives progress events emitted with `emit`; set by the agent loop."""
    resume_data: Any = field(default=_NOT_RESUMED, repr=False)
    """The data a resumed run brought for this call after it suspended (see `suspend`), as validated
    against the suspension's schema; `resumed` says whether there is any (it may be ``None`` itself)."""

    @property
    def resumed(self) -> bool:
        """Whether this call is being re-entered after `suspend`, with `resume_data`."""
        return self.resume_data is not _NOT_RESUMED

    @overload
    def suspend(self, payload: Any = None, *, schema: type[T]) -> T: ...
    @overload
    def suspend(self, payload: Any = None, *, schema: Mapping[str, Any] | None = None) -> Any: ...
    def suspend(self, payload: Any = None, *, schema: Union[type[Any], Mapping[str, Any], None] = None) -> Any:
        """Pause the run until someone answers `payload`; on the resumed call, return the answer.

        The first time, this raises `ToolSuspended`: the run stops with status ``"suspended"`` and a
        `PendingSuspension` carrying `payload` (shaped for displays by the ``suspension`` transform) and
        the JSON Schema of `schema` (a pydantic model, dataclass, TypedDict or JSON Schema dict). A
        ``resume(result, {call_id: data})`` validates `data` against that schema and calls the tool again
        from the start, with `resume_data` set: then this returns the data (an instance of `schema` when
        it is a Python type), so the tool reads on past this line.

        ```python
        @tool
        def book(ctx: ToolContext, flight: str) -> str:
            seat = ctx.suspend({"question": f"Which seat on {flight}?"}, schema=Seat)
            return f"booked {seat.row}{seat.letter}"
        ```

        Everything before the call runs again on resume, so keep side effects after it. One suspension
        per call: the answer belongs to the suspension that paused the run.
        """
        if self.resumed:
            if isinstance(schema, type):
                from pydantic import TypeAdapter

                return TypeAdapter(schema).validate_python(self.resume_data)
            return self.resume_data
        from .exceptions import ToolSuspended
        from .runs._answers import json_schema_of

        raise ToolSuspended(payload, json_schema_of(schema) if schema is not None else None)

    def emit(self, event: Any) -> None:
        """Report progress (any JSON-ready value) to whoever runs the tool; a no-op when nobody listens."""
        if self.on_progress is not None:
            self.on_progress(event)

    def for_call(self, call_id: str | None, tool_name: str | None) -> ToolContext[DepsT]:
        """A copy of this context for one tool call, sharing deps, agent and cancellation.

        The effect key stays only for the same call (another call has its own).
        """
        return ToolContext(
            deps=self.deps,
            call_id=call_id,
            tool_name=tool_name,
            agent=self.agent,
            retry=self.retry,
            effect_key=self.effect_key if call_id == self.call_id else None,
            cancelled=self.cancelled,
            on_progress=self.on_progress,
            resume_data=self.resume_data,
        )


@dataclass(frozen=True)
class RunContext(Generic[DepsT]):
    """What dynamic instructions, ``prepare_step`` and model-request hooks receive: the run so far.

    Example:
        ```python
        def instructions(ctx: RunContext[User]) -> str:
            return f"The user is {ctx.deps.name}; answer in {ctx.deps.language}."
        ```
    """

    deps: DepsT
    """The run's dependencies (the same object tools get as `ToolContext.deps`)."""
    agent: Any
    """The `Agent` running."""
    step: int
    """The index of the model turn about to be taken (0 for the first)."""
    messages: Sequence[Message]
    """The conversation so far, without the instructions (read-only: a copy of the run's history)."""
    usage: Usage
    """Tokens and requests used so far in this run."""
    tools: Mapping[str, Tool[..., Any]]
    """Every tool of this run under its key: the agent's, this run's own, MCP servers', deferred ones."""
