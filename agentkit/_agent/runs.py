"""`AgentRuns`: the entry points of `Agent` (`generate`, `generate_sync`, `stream`, `resume`), typed.

They live apart from the agent's configuration because each is overloaded for the type checkers: a run
without ``output_type=`` returns the agent's ``RunResult[Output]``, one with a type (an `Output`, a list of
types) a ``RunResult`` of that type, and any other form (``Literal[...]``, ``Cat | Dog``) ``RunResult[Any]``.
``deps=`` and ``context=`` are typed by the agent's ``Deps``.
"""

from __future__ import annotations as _annotations

import asyncio
import contextlib
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, Union, overload

from typing_extensions import TypeVar

from ..context import ToolContext
from ..messages import Message, UserMessage
from ..models import ModelSettings
from ..output import OutputSpec
from ._output import OutputConfig, OutputValidatorFn
from .results import OutputT, RunResult
from .stream import AgentStream, Emit

if TYPE_CHECKING:
    from ..runs import RunSnapshot
    from ..tools import ToolTransform
    from .sessions import MCPServerLike

__all__ = ["AgentRuns", "DepsT", "Prompt"]

Prompt = Union[str, UserMessage, Sequence[Message]]
"""A prompt text, one user message, or a whole neutral history (e.g. a previous `RunResult.messages` plus a
new `UserMessage`)."""

DepsT = TypeVar("DepsT", default=Any)
"""The type of an agent's dependencies (`ToolContext.deps`): inferred from ``deps=`` or ``deps_type=``."""
T = TypeVar("T")


class AgentRuns(Generic[DepsT, OutputT]):
    """The run entry points `Agent` inherits (the machinery they call is the agent's own)."""

    if TYPE_CHECKING:
        mcp_servers: list[MCPServerLike]

        def _output_for(
            self, output_type: Any, validators: Sequence[OutputValidatorFn] | None, stop_at: Sequence[str] | None
        ) -> OutputConfig: ...

        async def _start(
            self,
            prompt: Prompt,
            tool_choice: str | None,
            active_tools: Iterable[str] | None,
            max_steps: int | None,
            deps: Any,
            context: ToolContext[Any] | None,
            model_settings: ModelSettings | None,
            emit: Emit | None,
            inherited: ToolTransform | None = None,
            cancel: asyncio.Event | None = None,
            output: OutputConfig | None = None,
        ) -> RunResult[Any]: ...

        def _session(self) -> contextlib.AbstractAsyncContextManager[None]: ...

    @overload
    async def generate(
        self,
        prompt: Prompt,
        *,
        tool_choice: str | None = None,
        active_tools: Iterable[str] | None = None,
        max_steps: int | None = None,
        deps: DepsT | None = None,
        context: ToolContext[DepsT] | None = None,
        model_settings: ModelSettings | None = None,
        output_type: None = None,
        output_validators: Sequence[OutputValidatorFn] | None = None,
        stop_at_tools: Sequence[str] | None = None,
        cancel: asyncio.Event | None = None,
    ) -> RunResult[OutputT]: ...
    @overload
    async def generate(
        self,
        prompt: Prompt,
        *,
        tool_choice: str | None = None,
        active_tools: Iterable[str] | None = None,
        max_steps: int | None = None,
        deps: DepsT | None = None,
        context: ToolContext[DepsT] | None = None,
        model_settings: ModelSettings | None = None,
        output_type: OutputSpec[T],
        output_validators: Sequence[OutputValidatorFn] | None = None,
        stop_at_tools: Sequence[str] | None = None,
        cancel: asyncio.Event | None = None,
    ) -> RunResult[T]: ...
    @overload
    async def generate(
        self,
        prompt: Prompt,
        *,
        tool_choice: str | None = None,
        active_tools: Iterable[str] | None = None,
        max_steps: int | None = None,
        deps: DepsT | None = None,
        context: ToolContext[DepsT] | None = None,
        model_settings: ModelSettings | None = None,
        output_type: Any,
        output_validators: Sequence[OutputValidatorFn] | None = None,
        stop_at_tools: Sequence[str] | None = None,
        cancel: asyncio.Event | None = None,
    ) -> RunResult[Any]: ...
    async def generate(
        self,
        prompt: Prompt,
        *,
        tool_choice: str | None = None,
        active_tools: Iterable[str] | None = None,
        max_steps: int | None = None,
        deps: Any = None,
        context: ToolContext[Any] | None = None,
        model_settings: ModelSettings | None = None,
        output_type: Any = None,
        output_validators: Sequence[OutputValidatorFn] | None = None,
        stop_at_tools: Sequence[str] | None = None,
        cancel: asyncio.Event | None = None,
    ) -> RunResult[Any]:
        """Run the loop on `prompt` until the model answers, `max_steps` ends, or the run pauses.

        Args:
            prompt: a text, a `UserMessage`, or a whole neutral history to continue.
            tool_choice: ``"auto"``, ``"none"``, ``"required"`` or a tool key. ``"required"`` and a key
                apply to the first model turn only (then ``"auto"``), or the model could never answer.
            active_tools: the keys the model may call in this run (others are neither shown nor run).
            max_steps: model turns for this run (default: the agent's `max_steps`).
            deps: dependencies for `ToolContext.deps` (default: the agent's `deps`, else `context.deps`).
            context: a `ToolContext` whose deps and cancellation event the run's tools share (setting
                ``context.cancelled`` cancels the run, like `cancel`).
            model_settings: settings for this run instead of the agent's `model_settings`.
            output_type: this run's output type instead of the agent's (the result is typed by it).
            output_validators: validators for this run's answer (with a per-call `output_type`, instead
                of the agent's; else in addition to them).
            stop_at_tools: keys of tools that end this run (besides the agent's).
            cancel: an event that cancels the run when set: it stops at the next safe point (before a model
                turn, abandoning a pending model request; running tools see ``ctx.cancelled`` and are
                awaited) with status ``"cancelled"``, resumable.

        Raises:
            RetryLimitExceeded: a retry budget ran out (the partial result is on the exception);
                `OutputValidationError` when answers kept failing the output type.
            UnknownToolError: `active_tools`, `tool_choice` or `stop_at_tools` names no registered tool.
            ToolChoiceError: `tool_choice` names a tool outside `active_tools`, or is ``"required"`` with
                ``active_tools=[]``.
            AgentSetupError: `max_steps` is below 1; the deps do not fit a tool's ``ToolContext[...]``; an
                output type no model can be asked for, or ``mode="native"`` where the vendor cannot serve it.
        """
        output = self._output_for(output_type, output_validators, stop_at_tools)
        options = (prompt, tool_choice, active_tools, max_steps, deps, context, model_settings, None)
        if self.mcp_servers:
            async with self._session():
                return await self._start(*options, cancel=cancel, output=output)
        return await self._start(*options, cancel=cancel, output=output)

    @overload
    def generate_sync(
        self,
        prompt: Prompt,
        *,
        tool_choice: str | None = None,
        active_tools: Iterable[str] | None = None,
        max_steps: int | None = None,
        deps: DepsT | None = None,
        context: ToolContext[DepsT] | None = None,
        model_settings: ModelSettings | None = None,
        output_type: None = None,
        output_validators: Sequence[OutputValidatorFn] | None = None,
        stop_at_tools: Sequence[str] | None = None,
        cancel: asyncio.Event | None = None,
    ) -> RunResult[OutputT]: ...
    @overload
    def generate_sync(
        self,
        prompt: Prompt,
        *,
        tool_choice: str | None = None,
        active_tools: Iterable[str] | None = None,
        max_steps: int | None = None,
        deps: DepsT | None = None,
        context: ToolContext[DepsT] | None = None,
        model_settings: ModelSettings | None = None,
        output_type: OutputSpec[T],
        output_validators: Sequence[OutputValidatorFn] | None = None,
        stop_at_tools: Sequence[str] | None = None,
        cancel: asyncio.Event | None = None,
    ) -> RunResult[T]: ...
    @overload
    def generate_sync(
        self,
        prompt: Prompt,
        *,
        tool_choice: str | None = None,
        active_tools: Iterable[str] | None = None,
        max_steps: int | None = None,
        deps: DepsT | None = None,
        context: ToolContext[DepsT] | None = None,
        model_settings: ModelSettings | None = None,
        output_type: Any,
        output_validators: Sequence[OutputValidatorFn] | None = None,
        stop_at_tools: Sequence[str] | None = None,
        cancel: asyncio.Event | None = None,
    ) -> RunResult[Any]: ...
    def generate_sync(
        self,
        prompt: Prompt,
        *,
        tool_choice: str | None = None,
        active_tools: Iterable[str] | None = None,
        max_steps: int | None = None,
        deps: Any = None,
        context: ToolContext[Any] | None = None,
        model_settings: ModelSettings | None = None,
        output_type: Any = None,
        output_validators: Sequence[OutputValidatorFn] | None = None,
        stop_at_tools: Sequence[str] | None = None,
        cancel: asyncio.Event | None = None,
    ) -> RunResult[Any]:
        """`generate` for scripts: runs its own event loop (inside async code, await `generate`)."""
        return asyncio.run(
            self.generate(
                prompt,
                tool_choice=tool_choice,
                active_tools=active_tools,
                max_steps=max_steps,
                deps=deps,
                context=context,
                model_settings=model_settings,
                output_type=output_type,
                output_validators=output_validators,
                stop_at_tools=stop_at_tools,
                cancel=cancel,
            )
        )

    @overload
    def stream(
        self,
        prompt: Prompt,
        *,
        tool_choice: str | None = None,
        active_tools: Iterable[str] | None = None,
        max_steps: int | None = None,
        deps: DepsT | None = None,
        context: ToolContext[DepsT] | None = None,
        model_settings: ModelSettings | None = None,
        output_type: None = None,
        output_validators: Sequence[OutputValidatorFn] | None = None,
        stop_at_tools: Sequence[str] | None = None,
        cancel: asyncio.Event | None = None,
    ) -> AgentStream[OutputT]: ...
    @overload
    def stream(
        self,
        prompt: Prompt,
        *,
        tool_choice: str | None = None,
        active_tools: Iterable[str] | None = None,
        max_steps: int | None = None,
        deps: DepsT | None = None,
        context: ToolContext[DepsT] | None = None,
        model_settings: ModelSettings | None = None,
        output_type: OutputSpec[T],
        output_validators: Sequence[OutputValidatorFn] | None = None,
        stop_at_tools: Sequence[str] | None = None,
        cancel: asyncio.Event | None = None,
    ) -> AgentStream[T]: ...
    @overload
    def stream(
        self,
        prompt: Prompt,
        *,
        tool_choice: str | None = None,
        active_tools: Iterable[str] | None = None,
        max_steps: int | None = None,
        deps: DepsT | None = None,
        context: ToolContext[DepsT] | None = None,
        model_settings: ModelSettings | None = None,
        output_type: Any,
        output_validators: Sequence[OutputValidatorFn] | None = None,
        stop_at_tools: Sequence[str] | None = None,
        cancel: asyncio.Event | None = None,
    ) -> AgentStream[Any]: ...
    def stream(
        self,
        prompt: Prompt,
        *,
        tool_choice: str | None = None,
        active_tools: Iterable[str] | None = None,
        max_steps: int | None = None,
        deps: Any = None,
        context: ToolContext[Any] | None = None,
        model_settings: ModelSettings | None = None,
        output_type: Any = None,
        output_validators: Sequence[OutputValidatorFn] | None = None,
        stop_at_tools: Sequence[str] | None = None,
        cancel: asyncio.Event | None = None,
    ) -> AgentStream[Any]:
        """Like `generate`, as an async iterator of typed events (see `agentkit.events`).

        The run starts when iteration starts; the `RunResult` is `AgentStream.result` afterwards. A run
        with an output type also streams `OutputDeltaEvent`s (the answer so far) and an `OutputEvent`.
        """
        output = self._output_for(output_type, output_validators, stop_at_tools)

        async def start(emit: Emit) -> RunResult[Any]:
            async with self._session():
                return await self._start(
                    prompt, tool_choice, active_tools, max_steps, deps, context, model_settings, emit,
                    cancel=cancel, output=output,
                )  # fmt: skip

        return AgentStream(start)

    # ---- approvals -------------------------------------------------------------------------------

    @overload
    async def resume(
        self,
        paused: RunResult[T],
        answers: Mapping[str, Any] | None = None,
        *,
        deps: DepsT | None = None,
        context: ToolContext[DepsT] | None = None,
        cancel: asyncio.Event | None = None,
    ) -> RunResult[T]: ...
    @overload
    async def resume(
        self,
        paused: RunSnapshot,
        answers: Mapping[str, Any] | None = None,
        *,
        deps: DepsT | None = None,
        context: ToolContext[DepsT] | None = None,
        cancel: asyncio.Event | None = None,
    ) -> RunResult[OutputT]: ...
    async def resume(
        self,
        paused: RunResult[Any] | RunSnapshot,
        answers: Mapping[str, Any] | None = None,
        *,
        deps: Any = None,
        context: ToolContext[Any] | None = None,
        cancel: asyncio.Event | None = None,
    ) -> RunResult[Any]:
        """Continue a paused run, from its `RunResult` or its `RunSnapshot` (in any process), exactly once.

        `answers` maps each pending call id to what its pause waits for:

        * ``awaiting_approval``: True/False or an `Approval` (a denial's reason reaches the model) for every
          call needing approval. Approved calls run with the rest of that turn's calls; denied ones become
          ``denied`` error results. Whether a call needs approval is decided again here, from the calls in
          the history, so an edited pending list cannot let a call through;
        * ``suspended``: the data each suspended call asked for (validated against its schema); the tool
          runs again with `ToolContext.resume_data`;
        * ``awaiting_client``: each client call's output (validated against the tool's output schema), or
          a `ToolError` whose message the model gets as the call's error;
        * ``cancelled`` and ``awaiting_background``: nothing (the latter waits for the background calls).

        Then the loop goes on, with the output type the run was started with (a snapshot resumes with the
        agent's). Before anything runs, the pause is claimed in the agent's `store`: a second resume of
        it, from any copy (``deepcopy``, ``pickle``, the same snapshot JSON in another process sharing the
        store), raises `AlreadyResumedError`. A resume rejected for its answers does not use the pause up.

        Raises:
            ResumeError: the run is not paused, or an answer is missing, names no pending call, or does not
                fit (`ApprovalError` for approval decisions). Nothing runs then.
            AlreadyResumedError: the pause was resumed before. Nothing runs.
            SnapshotError: the snapshot is malformed, too new, another agent's, for tools that changed, for
                another output type, or (with a snapshot key) unsigned or edited.
        """
        from .resume import resume_run

        async with self._session():
            return await resume_run(self, paused, answers, deps=deps, context=context, emit=None, cancel=cancel)  # type: ignore[arg-type]

    @overload
    def resume_stream(
        self,
        paused: RunResult[T],
        answers: Mapping[str, Any] | None = None,
        *,
        deps: DepsT | None = None,
        context: ToolContext[DepsT] | None = None,
        cancel: asyncio.Event | None = None,
    ) -> AgentStream[T]: ...
    @overload
    def resume_stream(
        self,
        paused: RunSnapshot,
        answers: Mapping[str, Any] | None = None,
        *,
        deps: DepsT | None = None,
        context: ToolContext[DepsT] | None = None,
        cancel: asyncio.Event | None = None,
    ) -> AgentStream[OutputT]: ...
    def resume_stream(
        self,
        paused: RunResult[Any] | RunSnapshot,
        answers: Mapping[str, Any] | None = None,
        *,
        deps: Any = None,
        context: ToolContext[Any] | None = None,
        cancel: asyncio.Event | None = None,
    ) -> AgentStream[Any]:
        """`resume` as a stream of events (the resumed turn's tool results first)."""
        from .resume import resume_run

        async def start(emit: Emit) -> RunResult[Any]:
            async with self._session():
                return await resume_run(self, paused, answers, deps=deps, context=context, emit=emit, cancel=cancel)  # type: ignore[arg-type]

        return AgentStream(start)
