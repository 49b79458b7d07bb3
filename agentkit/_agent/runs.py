"""`AgentRuns`: the entry points of `Agent` (`generate`, `generate_sync`, `stream`, `resume`), typed.

They live apart from the agent's configuration because each is overloaded for the type checkers: a run
without ``output_type=`` returns the agent's ``RunResult[Output]``, one with a type (an `Output`, a list of
types) a ``RunResult`` of that type, and any other form (``Literal[...]``, ``Cat | Dog``) ``RunResult[Any]``.
``deps=`` and ``context=`` are typed by the agent's ``Deps``.
"""

from __future__ import annotations as _annotations

import asyncio
import inspect
from abc import ABC, abstractmethod
from collections.abc import Coroutine, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, Literal, Union, overload

from typing_extensions import TypeVar, Unpack

from ..messages import Message, UserMessage
from ..output import OutputSpec
from ._options import (
    DEFAULT_OPTIONS,
    RESUME_KEYWORDS,
    RUN_KEYWORDS,
    DepsT,
    FinishCallback,
    ResumeKwargs,
    RunKwargs,
    RunOptions,
    run_options,
)
from ._output import OutputConfig
from ._setup import output_for, start
from .config import AgentSpec
from .results import OutputT, RunResult
from .stream import AgentStream, Emit

if TYPE_CHECKING:
    from ..runs import RunSnapshot

__all__ = ["AgentRuns", "DepsT", "Prompt", "spec_of"]

Prompt = Union[str, UserMessage, Sequence[Message]]
"""A prompt text, one user message, or a whole neutral history (e.g. a previous `RunResult.messages` plus a
new `UserMessage`)."""

T = TypeVar("T")


class AgentRuns(ABC, Generic[DepsT, OutputT]):
    """The run entry points `Agent` inherits; a run reads the agent only through its `AgentSpec`."""

    @abstractmethod
    def _spec(self) -> AgentSpec:
        """The agent's configuration as its runs read it (see `agentkit._agent.config.AgentSpec`)."""

    def _run_setup(
        self, where: str, output_type: Any, options: RunKwargs[Any]
    ) -> tuple[AgentSpec, RunOptions, OutputConfig]:
        """The spec, the checked options and the output of a `generate`/`generate_sync`/`stream` call."""
        spec = self._spec()
        checked = run_options(where, options, RUN_KEYWORDS)
        if output_type is None and checked.output_validators is None and checked.stop_at_tools is None:
            return spec, checked, spec.output
        return spec, checked, output_for(spec, output_type, checked.output_validators, checked.stop_at_tools)

    @overload
    async def generate(
        self, prompt: Prompt, *, output_type: None = None, **options: Unpack[RunKwargs[DepsT]]
    ) -> RunResult[OutputT]: ...
    @overload
    async def generate(
        self, prompt: Prompt, *, output_type: OutputSpec[T], **options: Unpack[RunKwargs[DepsT]]
    ) -> RunResult[T]: ...
    @overload
    async def generate(
        self, prompt: Prompt, *, output_type: Any, **options: Unpack[RunKwargs[DepsT]]
    ) -> RunResult[Any]: ...
    async def generate(
        self, prompt: Prompt, *, output_type: Any = None, **options: Unpack[RunKwargs[Any]]
    ) -> RunResult[Any]:
        """Run the loop on `prompt` until the model answers, `max_steps` ends, or the run pauses.

        Args:
            prompt: a text, a `UserMessage`, or a whole neutral history to continue.
            output_type: this run's output type instead of the agent's (the result is typed by it).

        Keyword Args:
            tool_choice: ``"auto"``, ``"none"``, ``"required"`` or a tool key. ``"required"`` and a key
                apply to the first model turn only (then ``"auto"``), or the model could never answer.
            active_tools: the keys the model may call in this run (others are neither shown nor run).
            max_steps: model turns for this run (default: the agent's `max_steps`).
            deps: dependencies for `ToolContext.deps` (default: the agent's `deps`, else `context.deps`).
            context: a `ToolContext` whose deps and cancellation event the run's tools share (setting
                ``context.cancelled`` cancels the run, like `cancel`).
            model_settings: settings for this run instead of the agent's `model_settings`.
            cancel: an event that cancels the run when set: it stops at the next safe point (before a model
                turn, abandoning a pending model request; running tools see ``ctx.cancelled`` and are
                awaited) with status ``"cancelled"``, resumable.
            tools: tools for this run only (a `Registry`, a dict or a list), beside the agent's; a key
                both have is an error naming both tools. No other run sees them.
            mcp_servers: MCP sessions for this run only (e.g. with one user's credentials): opened when
                the run starts, closed when it ends; their tools join this run's.
            prepare_step: runs before each model turn (after the agent's own) and may change that turn
                (see `agentkit.hooks.StepChanges`).
            hooks: `RunHooks` for this run, after the agent's own.
            limits: `RunLimits` for this run; fields left None keep the agent's.
            require_approval: every tool call of this run needs approval (besides the tools' own policies).
            deferred_tools: keys to defer in this run (or True for all), besides the agent's and the
                tools' own ``deferred=True`` (see `agentkit.search`).
            output_validators: validators for this run's answer (with a per-call `output_type`, instead
                of the agent's; else in addition to them).
            stop_at_tools: keys of tools that end this run (besides the agent's).
            session_id: the conversation (thread) this run belongs to: tools cached with
                ``scope="session"`` share their entries across the runs given the same id (see
                `agentkit.cache`).
            on_step_finish: called with each `Step` once it is recorded (a turn's answer, or its calls with
                their results), before the next turn; a plain or an async function. A step that pauses is
                reported when the resumed run finishes it.
            on_finish: called with the run's `RunResult` (any status, pauses included) before this call
                returns it; a plain or an async function. Neither runs when the run raises; what they
                raise propagates to the caller.

        Raises:
            RetryLimitExceeded: a retry budget ran out (the partial result is on the exception);
                `OutputValidationError` when the answers kept failing the output type.
            UnknownToolError: `active_tools`, `tool_choice` or `stop_at_tools` names no registered tool.
            ToolChoiceError: `tool_choice` names a tool outside `active_tools`, or is ``"required"`` with
                ``active_tools=[]``.
            RegistryError: a tool of this run (or of its MCP servers) has a key the agent already uses.
            AgentSetupError: `max_steps` is below 1, or a run option cannot work (the deps do not fit a
                tool's ``ToolContext[...]``, an output type no model can be asked for, ``mode="native"``
                where the vendor cannot serve it, ...).
            HookError: a model-request hook failed (tool-call hooks never raise).
        """
        if not options and output_type is None:  # most calls: the agent's own run, nothing to check
            return await start(self._spec(), prompt, DEFAULT_OPTIONS, None)
        spec, checked, output = self._run_setup("generate", output_type, options)
        return await _ending(checked, start(spec, prompt, checked, None, output=output))

    @overload
    def generate_sync(
        self, prompt: Prompt, *, output_type: None = None, **options: Unpack[RunKwargs[DepsT]]
    ) -> RunResult[OutputT]: ...
    @overload
    def generate_sync(
        self, prompt: Prompt, *, output_type: OutputSpec[T], **options: Unpack[RunKwargs[DepsT]]
    ) -> RunResult[T]: ...
    @overload
    def generate_sync(
        self, prompt: Prompt, *, output_type: Any, **options: Unpack[RunKwargs[DepsT]]
    ) -> RunResult[Any]: ...
    def generate_sync(
        self, prompt: Prompt, *, output_type: Any = None, **options: Unpack[RunKwargs[Any]]
    ) -> RunResult[Any]:
        """`generate` for scripts: runs its own event loop (inside async code, await `generate`).

        The event loop ends with the call, so the run waits for its background calls (`Tool.background`)
        and lets the model go on with their results, instead of ending ``"awaiting_background"``.
        """
        spec, checked, output = self._run_setup("generate_sync", output_type, options)
        return asyncio.run(_ending(checked, _started(spec, prompt, checked, output)))

    @overload
    def stream(
        self, prompt: Prompt, *, output_type: None = None, **options: Unpack[RunKwargs[DepsT]]
    ) -> AgentStream[OutputT]: ...
    @overload
    def stream(
        self, prompt: Prompt, *, output_type: OutputSpec[T], **options: Unpack[RunKwargs[DepsT]]
    ) -> AgentStream[T]: ...
    @overload
    def stream(self, prompt: Prompt, *, output_type: Any, **options: Unpack[RunKwargs[DepsT]]) -> AgentStream[Any]: ...
    def stream(self, prompt: Prompt, *, output_type: Any = None, **options: Unpack[RunKwargs[Any]]) -> AgentStream[Any]:
        """Like `generate` (same options), as an async iterator of typed events (see `agentkit.events`).

        The run starts when iteration starts; the `RunResult` is `AgentStream.result` afterwards. A run
        with an output type also streams `OutputDeltaEvent`s (the answer so far) and an `OutputEvent`.
        """
        spec, checked, output = self._run_setup("stream", output_type, options)

        async def run(emit: Emit) -> RunResult[Any]:
            return await _ending(checked, start(spec, prompt, checked, emit, output=output))

        return AgentStream(run)

    # ---- pauses -----------------------------------------------------------------------------------

    @overload
    async def resume(
        self,
        paused: RunResult[T],
        answers: Mapping[str, Any] | None = None,
        **options: Unpack[ResumeKwargs[DepsT]],
    ) -> RunResult[T]: ...
    @overload
    async def resume(
        self,
        paused: RunSnapshot,
        answers: Mapping[str, Any] | None = None,
        **options: Unpack[ResumeKwargs[DepsT]],
    ) -> RunResult[OutputT]: ...
    async def resume(
        self,
        paused: RunResult[Any] | RunSnapshot,
        answers: Mapping[str, Any] | None = None,
        **options: Unpack[ResumeKwargs[Any]],
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
        agent's, and is refused if the run asked for another). Before anything runs, the pause is claimed
        in the agent's `store`: a second resume of it, from any copy (``deepcopy``, ``pickle``, the same
        snapshot JSON in another process sharing the store), raises `AlreadyResumedError`. A resume
        rejected for its answers does not use the pause up.

        The run's budgets, limits, ``require_approval`` and the tools its searches found carry over (in
        snapshots too); functions and sessions do not travel with a result, so give the run's own `tools`,
        `mcp_servers`, `prepare_step`, `hooks`, `on_step_finish` and `on_finish` again (as `generate` took them).

        Raises:
            ResumeError: the run is not paused, or an answer is missing, names no pending call, or does not
                fit (`ApprovalError` for approval decisions). Nothing runs then.
            AlreadyResumedError: the pause was resumed before. Nothing runs.
            SnapshotError: the snapshot is malformed, too new, another agent's, for tools that changed, for
                another output type, or (with a snapshot key) unsigned or edited.
        """
        from .resume import resume_run

        spec = self._spec()
        checked = run_options("resume", options, RESUME_KEYWORDS)
        async with spec.session():
            return await _ending(checked, resume_run(spec, paused, answers, options=checked, emit=None))

    async def recover(
        self,
        paused: RunResult[Any] | RunSnapshot,
        answers: Mapping[str, Any] | None = None,
        *,
        on_unknown: Literal["error", "pause"] = "error",
        **options: Unpack[ResumeKwargs[Any]],
    ) -> RunResult[Any]:
        """Continue a resume of `paused` whose process was lost after it claimed the pause (a crash).

        Call it with the same snapshot and answers as the lost resume, once that process is gone: its
        `ResumeRecord` says ``started`` (or ``failed``). The pause's calls run again through the effect journal:
        a call that committed a result is not run again (its recorded result is used); one that started and
        recorded none runs again under the same `ToolContext.effect_key` if its tool is idempotent, else the
        model gets an ``outcome_unknown`` error result; one that never started runs. A pause never resumed is
        simply resumed. See the "Side effects" guide.

        `on_unknown="pause"`: a call whose outcome is unknown pauses the run instead (status ``suspended``, a
        `PendingSuspension` whose request names the tool, its effect key and why), for a person to look the
        effect up and `resume` with ``{"output": value}`` (it ran: its result, recorded and never run),
        ``{"retry": True}`` (run it again under the same effect key) or a `ToolError` (it failed).

        Raises:
            AlreadyResumedError: the pause's resume ended (paused again or finished): continue from its result.
            ResumeError: the agent's store keeps no resume records or effect journal, or as `resume`.
        """
        from .resume import resume_run

        spec = self._spec()
        checked = run_options("recover", options, RESUME_KEYWORDS)
        if on_unknown not in ("error", "pause"):  # untyped callers
            raise ValueError(f'recover(on_unknown=...) takes "error" or "pause", got {on_unknown!r}')
        async with spec.session():
            return await resume_run(
                spec, paused, answers, options=checked, emit=None, recover=True, on_unknown=on_unknown
            )

    @overload
    def resume_stream(
        self,
        paused: RunResult[T],
        answers: Mapping[str, Any] | None = None,
        **options: Unpack[ResumeKwargs[DepsT]],
    ) -> AgentStream[T]: ...
    @overload
    def resume_stream(
        self,
        paused: RunSnapshot,
        answers: Mapping[str, Any] | None = None,
        **options: Unpack[ResumeKwargs[DepsT]],
    ) -> AgentStream[OutputT]: ...
    def resume_stream(
        self,
        paused: RunResult[Any] | RunSnapshot,
        answers: Mapping[str, Any] | None = None,
        **options: Unpack[ResumeKwargs[Any]],
    ) -> AgentStream[Any]:
        """`resume` as a stream of events (the resumed turn's tool results first)."""
        from .resume import resume_run

        spec = self._spec()
        checked = run_options("resume_stream", options, RESUME_KEYWORDS)

        async def run(emit: Emit) -> RunResult[Any]:
            async with spec.session():
                return await _ending(checked, resume_run(spec, paused, answers, options=checked, emit=emit))

        return AgentStream(run)


def _ending(options: RunOptions, run: Coroutine[Any, Any, RunResult[Any]]) -> Coroutine[Any, Any, RunResult[Any]]:
    """`run`, or (with an ``on_finish`` callback) `run` followed by the callback seeing its result."""
    callback = options.on_finish
    return run if callback is None else _finishing(callback, run)


async def _finishing(callback: FinishCallback, run: Coroutine[Any, Any, RunResult[Any]]) -> RunResult[Any]:
    result = await run
    done = callback(result)
    if inspect.isawaitable(done):
        await done
    return result


async def _started(spec: AgentSpec, prompt: Prompt, options: RunOptions, output: OutputConfig) -> RunResult[Any]:
    """`generate_sync`'s run: set up inside its event loop (`start` sets a plain run up when called)."""
    return await start(spec, prompt, options, None, output=output, settles_background=True)


def spec_of(agent: AgentRuns[Any, Any]) -> AgentSpec:
    """The `AgentSpec` of `agent`, for agentkit's own integrations (a durable engine, the UI, the testing kit).

    The one place outside the agent that asks for it: everything else receives the spec.
    """
    return agent._spec()  # pyright: ignore[reportPrivateUsage]  # the spec's one door, next to where it is declared
