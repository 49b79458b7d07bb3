"""`Agent`: the loop model turn -> tool calls (concurrently) -> results -> next turn, until the model answers.

```python
agent = Agent(id="weather", instructions="Answer briefly.", model="openai:gpt-4o-mini", tools=[get_weather])
result = await agent.generate("Weather in Paris?")
result.text, result.steps, result.messages, result.usage, result.status
```

A run ends with one of three statuses:

* ``"complete"``: the model answered without calling a tool;
* ``"max_steps"``: `max_steps` model turns were used up (the last turn's tool results are in `messages`);
* ``"awaiting_approval"``: a call needs approval; nothing of that turn ran. Continue with `Agent.resume`.

Retry budgets (invalid arguments, `ModelRetry`, unknown tool names) end a run by raising
`RetryLimitExceeded` (a `UsageLimitExceeded`) that carries the partial `RunResult`.
"""

from __future__ import annotations as _annotations

import asyncio
import contextlib
import dataclasses
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, Union

from .context import ToolContext
from .events import (
    AgentEvent,
    ApprovalRequestedEvent,
    FinishEvent,
    StepFinishEvent,
    SubagentEvent,
    TextDeltaEvent,
    ToolCallDeltaEvent,
    ToolCallEvent,
    ToolCallStartEvent,
    ToolErrorEvent,
    ToolProgressEvent,
    ToolResultEvent,
)
from .exceptions import AgentkitError, ModelAPIError, ModelSetupError, ToolError, ToolInputError, UsageLimitExceeded
from .messages import (
    AssistantMessage,
    Message,
    ModelResponse,
    SystemMessage,
    ToolCall,
    ToolResult,
    ToolResultsMessage,
    Usage,
    UserMessage,
)
from .models import KNOWN_VENDORS, Model, ModelLike, ModelSettings, infer_model
from .models._base import ResponseDone, TextDelta, ToolCallArgsDelta, ToolCallStart
from .registry import Registry
from .tools import Tool, ToolTransform
from .workflows import Workflow

__all__ = [
    "Agent",
    "AgentStream",
    "Approval",
    "ApprovalError",
    "MCPServerLike",
    "PendingApproval",
    "RetryLimitExceeded",
    "RunResult",
    "RunStatus",
    "Step",
    "TranscriptEntry",
]

RunStatus = Literal["complete", "max_steps", "awaiting_approval"]
"""How a run ended: the model answered, `max_steps` ran out, or a call waits for approval."""

Prompt = Union[str, UserMessage, Sequence[Message]]
"""A prompt text, one user message, or a whole neutral history (e.g. a previous `RunResult.messages` plus a
new `UserMessage`)."""

_Emit = Callable[[AgentEvent], None]

# error kinds that spend retry budget: the model can fix these by calling again differently
_RETRYABLE = frozenset({"invalid_arguments", "retry"})
_TRANSFORM_FIELDS = tuple(f.name for f in dataclasses.fields(ToolTransform))


class ApprovalError(AgentkitError, ValueError):
    """`Agent.resume` was given decisions that do not settle the pending calls (missing or unknown ids)."""


class RetryLimitExceeded(UsageLimitExceeded):
    """A run used up a retry budget (per tool, or for the whole run); `result` is the run so far."""

    def __init__(self, message: str, result: RunResult) -> None:
        super().__init__(message)
        self.result = result


@dataclass
class Step:
    """One model turn and the tool calls it made, with their results (in call order).

    `results` is empty when the turn made no calls, or while its calls wait for approval.
    """

    index: int
    response: ModelResponse
    tool_calls: list[ToolCall]
    results: list[ToolResult]

    @property
    def text(self) -> str:
        """The model's text in this turn."""
        return self.response.message.text


@dataclass(frozen=True)
class PendingApproval:
    """A tool call waiting for a decision.

    `arguments` are the model's arguments as received (for the application deciding); `payload` is what
    a display should show, shaped by ``transform.approval`` (else ``transform.input``); ``None`` with
    `transform_error` set when that transform failed.
    """

    call_id: str
    tool_name: str
    arguments: Any
    payload: Any
    transform_error: str | None = None


@dataclass(frozen=True)
class Approval:
    """A decision on a pending call; a denial's `reason` is passed on to the model."""

    approved: bool
    reason: str | None = None


@dataclass
class _RunState:
    """What `resume` needs to continue a run exactly as it would have gone on."""

    max_steps: int
    active_tools: tuple[str, ...] | None
    settings: ModelSettings
    failures: dict[str, int]
    run_retries: int
    resumed: bool = False
    """Set once the run was resumed: a paused result continues at most once."""


@dataclass
class RunResult:
    """The outcome of `Agent.generate` (or a finished stream).

    `messages` is the whole provider-neutral conversation (without the agent's instructions, which are
    added to every request): pass it, plus a new `UserMessage`, to the next `generate`, on any vendor.
    Tool results in `steps` carry `output` (the tool's value, for the application) and `content` (what
    the model received).
    """

    text: str
    status: RunStatus
    steps: list[Step]
    messages: list[Message]
    usage: Usage
    pending: list[PendingApproval] = field(default_factory=list)
    agent_id: str = ""
    _state: _RunState | None = field(default=None, repr=False, compare=False)

    @property
    def tool_calls(self) -> list[ToolCall]:
        """Every tool call of the run, in order."""
        return [call for step in self.steps for call in step.tool_calls]

    @property
    def tool_results(self) -> list[ToolResult]:
        """Every tool result of the run, in order."""
        return [result for step in self.steps for result in step.results]


class MCPServerLike(Protocol):
    """What `Agent(mcp_servers=[...])` accepts: an async context manager exposing its tools as `registry`."""

    @property
    def registry(self) -> Mapping[str, Tool[..., Any]]:
        """The server's tools under their keys (read after entering)."""
        ...

    async def __aenter__(self) -> Any: ...

    async def __aexit__(self, *exc: Any) -> Any: ...


def _merge_transforms(own: ToolTransform | None, policy: ToolTransform | None) -> ToolTransform | None:
    # Per field: the tool's transform wins where it sets one, the agent's policy fills the rest.
    if own is None or policy is None:
        return own if own is not None else policy
    fields = {name: getattr(own, name) or getattr(policy, name) for name in _TRANSFORM_FIELDS}
    return ToolTransform(**fields)


def _shape(fn: Callable[[Any], Any] | None, value: Any, target: str) -> tuple[Any, str | None]:
    """Apply one transform, failing closed: on error the payload is None and the failure is named.

    Only the exception's type is reported: its message could quote the very value being hidden.
    """
    if fn is None:
        return value, None
    try:
        return fn(value), None
    except Exception as exc:  # noqa: BLE001 - a failing transform must never leak the raw value
        return None, f"transform {target!r} failed ({type(exc).__name__}); payload withheld"


def _error_text(result: ToolResult, input_redacted: bool) -> str:
    """The error text a display shows.

    Validation messages quote the offending values: when the tool's input is redacted (an `input`
    transform) and no `error` transform decides, they are not shown.
    """
    if input_redacted and result.error_kind == "invalid_arguments":
        return f"Invalid arguments for tool {result.name!r} (details withheld: the tool's input is redacted)."
    return result.text


def _display_arguments(call: ToolCall) -> Any:
    try:
        return call.arguments_dict()
    except ValueError:
        return call.arguments  # malformed JSON: the text as the model sent it


@dataclass(frozen=True)
class TranscriptEntry:
    """One tool call as a transcript or display may show it: every payload shaped by the transforms.

    A payload whose transform failed is ``None`` (never the raw value) and the failure is named in
    `transform_errors`.
    """

    step: int
    call_id: str
    tool_name: str
    """The registry key."""
    input: Any
    output: Any = None
    error: Any = None
    """The error text shown for a failed call (``None`` when the call succeeded)."""
    transform_errors: tuple[str, ...] = ()


@dataclass(frozen=True)
class _SubagentUsage:
    """A subagent run's usage, reported to the parent run through `ToolContext.emit`."""

    usage: Usage


@dataclass(frozen=True)
class _ProgressSink:
    """`ToolContext.on_progress` for a call made by a run; `streaming` tells subagents to stream too."""

    deliver: Callable[[Any], None]
    streaming: bool

    def __call__(self, value: Any) -> None:
        self.deliver(value)


@dataclass(frozen=True)
class _Forwarded:
    """A subagent's event on its way up through `ToolContext.emit`."""

    agent_id: str
    event: AgentEvent


def _slug(text: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_-]+", "-", text).strip("-").lower() or "agent"


class AgentStream:
    """The async iterator `Agent.stream` returns: typed events, then `result`.

    ```python
    stream = agent.stream("Weather in Paris?")
    async for event in stream:
        ...
    stream.result.text
    ```

    Leaving the loop early cancels the run (tools still running are cancelled too).
    """

    def __init__(self, start: Callable[[_Emit], Awaitable[RunResult]]) -> None:
        self._start = start
        self._result: RunResult | None = None
        self._iterator: AsyncIterator[AgentEvent] | None = None

    def __aiter__(self) -> AsyncIterator[AgentEvent]:
        if self._iterator is None:
            self._iterator = self._events()
        return self._iterator

    @property
    def result(self) -> RunResult:
        """The run's result, once every event has been consumed."""
        if self._result is None:
            raise RuntimeError("the stream has not finished: iterate it to the end (or await get_result())")
        return self._result

    async def get_result(self) -> RunResult:
        """Consume the remaining events and return the result."""
        async for _ in self:
            pass
        return self.result

    async def _events(self) -> AsyncIterator[AgentEvent]:
        queue: asyncio.Queue[Any] = asyncio.Queue()
        done = object()
        task = asyncio.ensure_future(self._start(queue.put_nowait))
        # Fires after the run's last event is queued, so "done" is always the last item.
        task.add_done_callback(lambda _: queue.put_nowait(done))
        try:
            while True:
                item = await queue.get()
                if item is done:
                    break
                yield item
            self._result = task.result()  # re-raises what ended the run
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task


class _Run:
    """One run (or one resumed run) of an agent: the loop and its bookkeeping."""

    def __init__(
        self,
        agent: Agent,
        model: Model,
        registry: Registry,
        executor: Registry,
        convo: list[Message],
        prefix: int,
        first: ModelSettings,
        later: ModelSettings,
        state: _RunState,
        deps: Any,
        context: ToolContext[Any] | None,
        emit: _Emit | None,
        steps: list[Step],
        usage: Usage,
    ) -> None:
        self.agent = agent
        self.model = model
        self.registry = registry  # what the model is told about
        self.executor = executor  # what may run: the active subset
        self.convo = convo
        self.prefix = prefix  # leading instruction messages, not part of the result's history
        self.first = first
        self.later = later
        self.first_step = len(steps)
        self.state = state
        self.deps = deps
        self.cancelled = context.cancelled if context is not None else None
        self.emit = emit
        self.steps = steps
        self.usage = usage
        self._transforms: dict[str, ToolTransform | None] = {}

    # ---- the loop --------------------------------------------------------------------------------

    async def run(self) -> RunResult:
        while len(self.steps) < self.state.max_steps:
            index = len(self.steps)
            # A required or named tool_choice holds for the first turn only, else the loop never ends.
            settings = self.first if index == self.first_step else self.later
            if self.emit is None:
                response = await self.model.request(self.convo, self.registry, settings)
            else:
                response = await self._stream_turn(settings, index)
            self.usage = self.usage + response.usage
            message = response.message
            self.convo.append(message)
            calls = message.tool_calls
            if not calls:
                self.steps.append(Step(index, response, [], []))
                self._step_finish(index, response, 0)
                return self._finish("complete", message.text)
            if self.emit is not None:
                for call in calls:
                    shaped, error = _shape(self._transform(call.name, "input"), _display_arguments(call), "input")
                    self.emit(ToolCallEvent(call.id, call.name, shaped, index, error))
            pending = [call for call in calls if self.needs_approval(call)]
            if pending:
                self.steps.append(Step(index, response, calls, []))
                approvals = [self._pending(call) for call in pending]
                if self.emit is not None:
                    for item in approvals:
                        self.emit(
                            ApprovalRequestedEvent(
                                item.call_id, item.tool_name, item.payload, index, item.transform_error
                            )
                        )
                self._step_finish(index, response, len(calls))
                return self._finish("awaiting_approval", message.text, approvals)
            results = await self.execute(calls, {}, index)
            self.steps.append(Step(index, response, calls, results))
            self.record(index, response, calls, results)
        last = self.steps[-1].text if self.steps else ""
        return self._finish("max_steps", last)

    async def _stream_turn(self, settings: ModelSettings, index: int) -> ModelResponse:
        emit = self.emit
        assert emit is not None
        names: dict[int, str] = {}
        ids: dict[int, str | None] = {}
        response: ModelResponse | None = None
        async for event in self.model.stream(self.convo, self.registry, settings):
            if isinstance(event, TextDelta):
                emit(TextDeltaEvent(event.text, index))
            elif isinstance(event, ToolCallStart):
                names[event.index] = event.tool_name
                ids[event.index] = event.call_id
                emit(ToolCallStartEvent(event.call_id, event.tool_name, event.index, index))
            elif isinstance(event, ToolCallArgsDelta):
                name = names.get(event.index, "")
                # Partial JSON cannot be redacted by an `input` transform: deltas are shown only through
                # an explicit `input_delta` transform.
                delta_fn = self._transform(name, "input_delta")
                if delta_fn is not None:
                    shaped, error = _shape(delta_fn, event.delta, "input_delta")
                    emit(ToolCallDeltaEvent(ids.get(event.index), name, event.index, shaped, index, error))
            elif isinstance(event, ResponseDone):
                response = event.response
        if response is None:
            raise ModelAPIError(self.model.name, "the stream ended without a complete response")
        return response

    def record(self, index: int, response: ModelResponse, calls: list[ToolCall], results: list[ToolResult]) -> None:
        """Append the results to the conversation, report the step, and enforce the retry budgets."""
        self.convo.append(ToolResultsMessage(results))
        self._step_finish(index, response, len(calls))
        state = self.state
        failures = state.failures
        over: str | None = None
        for result in results:
            kind = result.error_kind
            if kind is None:
                if failures:
                    failures.pop(result.name, None)  # the budget is for consecutive failures of a tool
                continue
            if kind in _RETRYABLE:
                count = failures[result.name] = failures.get(result.name, 0) + 1
                state.run_retries += 1
                if count > self.agent.retries:
                    over = (
                        f"Tool {result.name!r} failed {count} times in a row ({kind}); "
                        f"the agent allows {self.agent.retries} retries per tool (Agent(retries=...))."
                    )
            elif kind == "unknown_tool":
                state.run_retries += 1
        if over is None and state.run_retries > self.agent.max_retries:
            over = (
                f"The run used {state.run_retries} retries; the agent allows {self.agent.max_retries} per run "
                "(Agent(max_retries=...))."
            )
        if over is not None:
            raise RetryLimitExceeded(over, self._result("max_steps", ""))

    def _step_finish(self, index: int, response: ModelResponse, calls: int) -> None:
        if self.emit is not None:
            self.emit(StepFinishEvent(index, response.finish_reason, calls, dataclasses.replace(response.usage)))

    def _result(self, status: RunStatus, text: str, pending: list[PendingApproval] | None = None) -> RunResult:
        return RunResult(
            text=text,
            status=status,
            steps=self.steps,
            messages=self.convo[self.prefix :],
            usage=self.usage,
            pending=pending or [],
            agent_id=self.agent.id,
            _state=self.state,
        )

    def _finish(self, status: RunStatus, text: str, pending: list[PendingApproval] | None = None) -> RunResult:
        if self.emit is not None:
            self.emit(FinishEvent(text, status, self.usage))
        return self._result(status, text, pending)

    # ---- approvals -------------------------------------------------------------------------------

    def needs_approval(self, call: ToolCall) -> bool:
        """Whether `call` must be approved before it runs (recomputed, never read from a stored result)."""
        if call.name not in self.executor:
            return False  # nothing would run: the call becomes an unknown-tool error
        item = self.executor[call.name]
        if item.requires_approval is False:
            return False
        try:
            kwargs = item.schema.validate_arguments(call.name, call.arguments)
        except ToolInputError:
            return False  # nothing would run: the call becomes an invalid-arguments error
        try:
            return item.needs_approval(kwargs)
        except Exception:  # noqa: BLE001 - a failing policy must not let the call through
            return True

    def _pending(self, call: ToolCall) -> PendingApproval:
        arguments = _display_arguments(call)
        shape = self._transform(call.name, "approval") or self._transform(call.name, "input")
        payload, error = _shape(shape, arguments, "approval")
        return PendingApproval(call.id, call.name, arguments, payload, error)

    # ---- running tools ---------------------------------------------------------------------------

    async def execute(self, calls: list[ToolCall], denied: Mapping[str, Approval], index: int) -> list[ToolResult]:
        """Run the calls concurrently (denied ones become ``denied`` error results); results in call order."""
        if len(calls) == 1 and not denied:
            return [await self._call(calls[0], index)]
        runs: list[Awaitable[ToolResult]] = []
        for call in calls:
            decision = denied.get(call.id)
            if decision is None:
                runs.append(self._call(call, index))
            else:
                runs.append(self._deny(call, decision, index))
        return list(await asyncio.gather(*runs))

    async def _deny(self, call: ToolCall, decision: Approval, index: int) -> ToolResult:
        reason = f" Reason: {decision.reason.rstrip('.')}." if decision.reason else ""
        result = ToolResult.error(
            call, f"The user denied this call to {call.name!r}.{reason} Do not call it again unless asked.", "denied"
        )
        if self.emit is not None:
            self._emit_result(result, index)
        return result

    async def _call(self, call: ToolCall, index: int) -> ToolResult:
        executor = self.executor
        ctx: ToolContext[Any] | None = None
        if call.name in executor and executor[call.name].schema.context_params:
            ctx = ToolContext(
                deps=self.deps,
                agent=self.agent,
                retry=self.state.failures.get(call.name, 0),
                on_progress=self._progress(call),
            )
            if self.cancelled is not None:
                ctx.cancelled = self.cancelled
        result = await executor.call(call, deps=self.deps, context=ctx)
        if self.emit is not None:
            self._emit_result(result, index)
        return result

    def _progress(self, call: ToolCall) -> _ProgressSink:
        emit = self.emit

        def on_progress(value: Any) -> None:
            if isinstance(value, _SubagentUsage):
                self.usage = self.usage + value.usage  # a subagent's tokens count in the parent's run
            elif emit is None:
                return
            elif isinstance(value, _Forwarded):
                emit(SubagentEvent(call.name, value.agent_id, call.id, value.event))
            else:
                emit(ToolProgressEvent(call.id, call.name, value))

        return _ProgressSink(on_progress, streaming=emit is not None)

    def _emit_result(self, result: ToolResult, index: int) -> None:
        assert self.emit is not None
        if result.is_error:
            error_fn = self._transform(result.name, "error")
            text = _error_text(result, error_fn is None and self._transform(result.name, "input") is not None)
            shaped, error = _shape(error_fn, text, "error")
            self.emit(ToolErrorEvent(result.call_id, result.name, shaped, result.error_kind, index, error))
        else:
            shaped, error = _shape(self._transform(result.name, "output"), result.output, "output")
            self.emit(ToolResultEvent(result.call_id, result.name, shaped, index, error))

    def _transform(self, key: str, target: str) -> Callable[[Any], Any] | None:
        if key not in self._transforms:
            own = self.registry[key].transform if key in self.registry else None
            self._transforms[key] = _merge_transforms(own, self.agent.transform)
        merged = self._transforms[key]
        return getattr(merged, target) if merged is not None else None


class Agent:
    """A model with instructions and tools, run in a loop until it answers.

    Args:
        id: the agent's identifier (events of a subagent carry it); defaults to a slug of `name`.
        name: a display name; defaults to `id`.
        instructions: the system instructions, sent first in every request (not stored in the history).
        model: ``"vendor:model-name"``, ``"test"``, or a `Model` instance (which may wrap your own SDK
            client). Resolved on first use, so tests can `override` it without an API key.
        tools: a `Registry`, a dict ``{key: tool_or_function}`` or a list of tools (key = tool id).
        agents: subagents, each exposed as the tool ``agent-<key>`` (input ``{"prompt": str}``, output
            its text).
        workflows: workflows, each exposed as ``workflow-<key>`` with its own input and output schemas.
        description: what this agent does, told to a supervisor that uses it as a subagent.
        transform: a `ToolTransform` policy for every tool's display payloads; a tool's own transform
            wins field by field.
        max_steps: model turns per run (a run that uses them all ends with status ``"max_steps"``).
        retries: consecutive retryable failures (invalid arguments, `ModelRetry`) allowed per tool.
        max_retries: retryable failures (including unknown tool names) allowed per run.
        model_settings: default `ModelSettings` (temperature, strict, parallel_tool_calls, ...).
        deps: default dependencies given to tools through `ToolContext.deps`.
        mcp_servers: MCP sessions (async context managers with a `registry`); their tools join this
            agent's tools while ``async with agent:`` is open (or for the duration of each run).
    """

    def __init__(
        self,
        *,
        id: str | None = None,  # noqa: A002 - the public name DESIGN.md fixes
        name: str | None = None,
        instructions: str | None = None,
        model: ModelLike | None = None,
        tools: Registry | Mapping[str, Any] | Iterable[Any] | None = None,
        agents: Mapping[str, Agent] | None = None,
        workflows: Mapping[str, Workflow[..., Any]] | None = None,
        description: str | None = None,
        transform: ToolTransform | None = None,
        max_steps: int = 10,
        retries: int = 2,
        max_retries: int = 10,
        model_settings: ModelSettings | None = None,
        deps: Any = None,
        mcp_servers: Sequence[MCPServerLike] = (),
    ) -> None:
        if max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, got {max_steps}")
        if retries < 0 or max_retries < 0:
            raise ValueError("retries and max_retries must not be negative")
        self.id: str = id if id is not None else _slug(name or "agent")
        self.name: str = name if name is not None else self.id
        self.instructions = instructions
        self.description = description
        self.transform = transform
        self.max_steps = max_steps
        self.retries = retries
        self.max_retries = max_retries
        self.model_settings = model_settings or ModelSettings()
        self.deps = deps
        self.mcp_servers = list(mcp_servers)
        _check_model(model)
        self.model: ModelLike | None = model
        """The model as given; see `resolve_model` for the instance a run uses."""
        self._model: Model | None = model if isinstance(model, Model) else None
        self._override: ContextVar[Model | None] = ContextVar(f"agentkit_override_{self.id}", default=None)
        self.agents: dict[str, Agent] = dict(agents or {})
        self.workflows: dict[str, Workflow[..., Any]] = dict(workflows or {})
        self._base = self._build_registry(tools)
        self._registry = self._base
        self._entered = 0
        self._stack: contextlib.AsyncExitStack | None = None
        self._session_lock: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None

    def __repr__(self) -> str:
        return f"Agent(id={self.id!r}, model={self.model!r}, tools={list(self.tools)!r})"

    # ---- configuration ---------------------------------------------------------------------------

    def _build_registry(self, tools: Registry | Mapping[str, Any] | Iterable[Any] | None) -> Registry:
        base = tools if isinstance(tools, Registry) else Registry(tools)
        if not self.agents and not self.workflows:
            return base  # the caller's own registry: later additions stay visible
        registry = Registry(dict(base.items()))
        for key, sub in self.agents.items():
            registry.add(f"agent-{key}", sub.as_tool())
        for key, workflow in self.workflows.items():
            registry.add(f"workflow-{key}", workflow.as_tool())
        return registry

    @property
    def tools(self) -> Registry:
        """Every tool the model may call: own tools, ``agent-*``, ``workflow-*`` and entered MCP servers'."""
        return self._registry

    def as_tool(self) -> Tool[..., Any]:
        """This agent as a tool taking ``{"prompt": str}`` and returning its final text.

        Inside a streaming parent, the subagent streams too and its events reach the parent's stream as
        `SubagentEvent`s. A subagent run that stops for approval fails the call (approvals cannot be
        granted from inside another run): give the supervisor's tool `requires_approval` instead.
        """
        sub = self

        async def run_subagent(ctx: ToolContext[Any], prompt: str) -> str:  # noqa: D417 - ctx is injected
            """Delegate a task to another agent and get its answer.

            Args:
                prompt: The complete task for the agent, with every detail it needs.
            """
            if isinstance(ctx.on_progress, _ProgressSink) and ctx.on_progress.streaming:
                stream = sub.stream(prompt, deps=ctx.deps)
                async for event in stream:
                    ctx.emit(_Forwarded(sub.id, event))
                result = stream.result
            else:
                result = await sub.generate(prompt, deps=ctx.deps)
            ctx.emit(_SubagentUsage(result.usage))
            if result.status == "awaiting_approval":
                names = ", ".join(repr(p.tool_name) for p in result.pending)
                raise ToolError(f"Agent {sub.id!r} stopped: its call(s) to {names} need approval, not available here.")
            return result.text

        description = self.description or self.instructions or f"Ask the agent {self.name!r} to do a task."
        return Tool(run_subagent, id=self.id, description=description)

    def resolve_model(self) -> Model:
        """The model a run uses now: an `override`, else the agent's own (built on first use).

        Raises:
            ModelSetupError: no model was given, or it cannot be built (e.g. a missing API key).
        """
        override = self._override.get()
        if override is not None:
            return override
        if self._model is None:
            if self.model is None:
                raise ModelSetupError(
                    f"Agent {self.id!r} has no model: pass model='vendor:model-name' (or 'test'), or use "
                    "agent.override(model=...)."
                )
            self._model = infer_model(self.model)
        return self._model

    def transcript(self, result: RunResult) -> list[TranscriptEntry]:
        """Every tool call of `result` shaped for a transcript by the tools' and this agent's transforms.

        The same fail-closed rules as the stream events: a transform that raises withholds that payload.
        Calls still waiting for approval are listed with their (shaped) input only.
        """
        entries: list[TranscriptEntry] = []
        for step in result.steps:
            answered = {r.call_id: r for r in step.results}
            for call in step.tool_calls:
                own = self.tools[call.name].transform if call.name in self.tools else None
                rules = _merge_transforms(own, self.transform) or ToolTransform()
                shown_input, input_error = _shape(rules.input, _display_arguments(call), "input")
                outcome = answered.get(call.id)
                shown_output = shown_error = output_error = None
                if outcome is not None and outcome.is_error:
                    text = _error_text(outcome, rules.error is None and rules.input is not None)
                    shown_error, output_error = _shape(rules.error, text, "error")
                elif outcome is not None:
                    shown_output, output_error = _shape(rules.output, outcome.output, "output")
                failures = tuple(e for e in (input_error, output_error) if e is not None)
                entries.append(
                    TranscriptEntry(step.index, call.id, call.name, shown_input, shown_output, shown_error, failures)
                )
        return entries

    @contextlib.contextmanager
    def override(self, *, model: ModelLike) -> Iterator[None]:
        """Use `model` instead of the agent's own within the ``with`` block (in this task and its children).

        ```python
        with agent.override(model=TestModel()):
            result = await agent.generate("hi")
        ```
        """
        token = self._override.set(infer_model(model))
        try:
            yield
        finally:
            self._override.reset(token)

    # ---- MCP sessions ----------------------------------------------------------------------------

    def _lock(self) -> asyncio.Lock:
        # One lock per event loop: an agent may serve several `asyncio.run`s (e.g. `generate_sync`).
        loop = asyncio.get_running_loop()
        if self._session_lock is None or self._session_lock[0] is not loop:
            self._session_lock = (loop, asyncio.Lock())
        return self._session_lock[1]

    async def __aenter__(self) -> Agent:
        async with self._lock():  # concurrent runs must not open the sessions twice
            if self._entered == 0 and self.mcp_servers:
                stack = contextlib.AsyncExitStack()
                try:
                    registry = Registry(dict(self._base.items()))
                    for server in self.mcp_servers:
                        await stack.enter_async_context(server)
                        for key, item in server.registry.items():
                            registry.add(key, item)
                except BaseException:
                    await stack.aclose()
                    raise
                self._stack = stack
                self._registry = registry
            self._entered += 1
        return self

    async def __aexit__(self, *exc: object) -> None:
        async with self._lock():
            self._entered -= 1
            if self._entered == 0 and self._stack is not None:
                stack, self._stack = self._stack, None
                self._registry = self._base
                await stack.aclose()

    @contextlib.asynccontextmanager
    async def _session(self) -> AsyncIterator[None]:
        # A run holds the MCP sessions open for its own duration (re-entrant: inside `async with agent:`
        # or beside concurrent runs, they stay open until the last one leaves).
        if self.mcp_servers:
            async with self:
                yield
        else:
            yield

    # ---- running ---------------------------------------------------------------------------------

    def _settings(
        self, tool_choice: str | None, active_tools: Iterable[str] | None, model_settings: ModelSettings | None
    ) -> tuple[ModelSettings, ModelSettings, tuple[str, ...] | None]:
        base = model_settings or self.model_settings
        if tool_choice is None and active_tools is None:
            active = base.active_tools
            first = base
        else:
            active = tuple(active_tools) if active_tools is not None else base.active_tools
            first = dataclasses.replace(base, tool_choice=tool_choice or base.tool_choice, active_tools=active)
        registry = self._registry
        for key in active or ():
            registry[key]  # raises UnknownToolError with a "did you mean"
        choice = first.tool_choice
        if choice not in ("auto", "none", "required"):
            registry[choice]
            if active is not None and choice not in active:
                raise ValueError(f"tool_choice={choice!r} is not among active_tools={list(active)!r}")
        later = first if choice in ("auto", "none") else dataclasses.replace(first, tool_choice="auto")
        return first, later, active

    def _new_run(
        self,
        messages: list[Message],
        state: _RunState,
        first: ModelSettings,
        later: ModelSettings,
        *,
        deps: Any,
        context: ToolContext[Any] | None,
        emit: _Emit | None,
        steps: list[Step],
        usage: Usage,
    ) -> _Run:
        registry = self._registry
        executor = registry.select(state.active_tools) if state.active_tools is not None else registry
        convo: list[Message] = [SystemMessage(self.instructions)] if self.instructions else []
        prefix = len(convo)
        convo.extend(messages)
        if deps is None and context is not None:
            deps = context.deps
        return _Run(
            self,
            self.resolve_model(),
            registry,
            executor,
            convo,
            prefix,
            first,
            later,
            state,
            deps if deps is not None else self.deps,
            context,
            emit,
            steps,
            usage,
        )

    async def _start(
        self,
        prompt: Prompt,
        tool_choice: str | None,
        active_tools: Iterable[str] | None,
        max_steps: int | None,
        deps: Any,
        context: ToolContext[Any] | None,
        model_settings: ModelSettings | None,
        emit: _Emit | None,
    ) -> RunResult:
        first, later, active = self._settings(tool_choice, active_tools, model_settings)
        if max_steps is not None and max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, got {max_steps}")
        state = _RunState(max_steps if max_steps is not None else self.max_steps, active, first, {}, 0)
        run = self._new_run(
            _as_messages(prompt), state, first, later, deps=deps, context=context, emit=emit, steps=[], usage=Usage()
        )
        return await run.run()

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
    ) -> RunResult:
        """Run the loop on `prompt` until the model answers, `max_steps` ends, or a call needs approval.

        Args:
            prompt: a text, a `UserMessage`, or a whole neutral history to continue.
            tool_choice: ``"auto"``, ``"none"``, ``"required"`` or a tool key. ``"required"`` and a key
                apply to the first model turn only (then ``"auto"``), or the model could never answer.
            active_tools: the keys the model may call in this run (others are neither shown nor run).
            max_steps: model turns for this run (default: the agent's `max_steps`).
            deps: dependencies for `ToolContext.deps` (default: the agent's `deps`, else `context.deps`).
            context: a `ToolContext` whose deps and cancellation event the run's tools share.
            model_settings: settings for this run instead of the agent's `model_settings`.

        Raises:
            RetryLimitExceeded: a retry budget ran out (the partial result is on the exception).
            UnknownToolError: `active_tools` or `tool_choice` names no registered tool.
        """
        if self.mcp_servers:
            async with self._session():
                return await self._start(
                    prompt, tool_choice, active_tools, max_steps, deps, context, model_settings, None
                )
        return await self._start(prompt, tool_choice, active_tools, max_steps, deps, context, model_settings, None)

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
    ) -> RunResult:
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
            )
        )

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
    ) -> AgentStream:
        """Like `generate`, as an async iterator of typed events (see `agentkit.events`).

        The run starts when iteration starts; the `RunResult` is `AgentStream.result` afterwards.
        """

        async def start(emit: _Emit) -> RunResult:
            async with self._session():
                return await self._start(
                    prompt, tool_choice, active_tools, max_steps, deps, context, model_settings, emit
                )

        return AgentStream(start)

    # ---- approvals -------------------------------------------------------------------------------

    async def resume(
        self,
        result: RunResult,
        approvals: Mapping[str, bool | Approval],
        *,
        deps: Any = None,
        context: ToolContext[Any] | None = None,
    ) -> RunResult:
        """Continue a run that stopped with status ``"awaiting_approval"``.

        `approvals` maps each pending call id to True/False or an `Approval` (a denial's reason reaches the
        model). Approved calls run (with the rest of that turn's calls); denied ones become ``denied``
        error results; then the loop goes on. Whether a call needs approval is decided again here, from
        the calls in `result.messages`, so an edited `result.pending` cannot let a call through.

        Raises:
            ApprovalError: the result is not awaiting approval, a pending call has no decision, or a
                decision names a call that is not pending.
        """
        async with self._session():
            return await self._resume(result, approvals, deps, context, None)

    def resume_stream(
        self,
        result: RunResult,
        approvals: Mapping[str, bool | Approval],
        *,
        deps: Any = None,
        context: ToolContext[Any] | None = None,
    ) -> AgentStream:
        """`resume` as a stream of events (the resumed turn's tool results first)."""

        async def start(emit: _Emit) -> RunResult:
            async with self._session():
                return await self._resume(result, approvals, deps, context, emit)

        return AgentStream(start)

    async def _resume(
        self,
        result: RunResult,
        approvals: Mapping[str, bool | Approval],
        deps: Any,
        context: ToolContext[Any] | None,
        emit: _Emit | None,
    ) -> RunResult:
        state = result._state
        last = result.messages[-1] if result.messages else None
        if result.status != "awaiting_approval" or state is None or not isinstance(last, AssistantMessage):
            raise ApprovalError(f"only a run with status 'awaiting_approval' can be resumed (got {result.status!r})")
        if not result.steps:
            raise ApprovalError("the result has no step to resume")
        decisions = {k: v if isinstance(v, Approval) else Approval(bool(v)) for k, v in approvals.items()}
        calls = last.tool_calls
        unknown = sorted(set(decisions) - {c.id for c in calls})
        if unknown:
            raise ApprovalError(f"no pending call has the id(s) {unknown}; pending: {[c.id for c in calls]}")
        state = dataclasses.replace(state, failures=dict(state.failures))
        later = state.settings if state.settings.tool_choice in ("auto", "none") else None
        later = later or dataclasses.replace(state.settings, tool_choice="auto")
        steps = list(result.steps)
        run = self._new_run(
            list(result.messages),
            state,
            later,
            later,
            deps=deps,
            context=context,
            emit=emit,
            steps=steps,
            usage=result.usage,
        )
        missing = [c.id for c in calls if run.needs_approval(c) and c.id not in decisions]
        if missing:
            raise ApprovalError(f"no decision for the pending call(s) {missing}: approve or deny each")
        if result._state is not None and result._state.resumed:
            raise ApprovalError("this result was already resumed; continue from the result that resume returned")
        if result._state is not None:
            result._state.resumed = True  # a second resume could re-run calls or overturn a denial
        denied = {call_id: d for call_id, d in decisions.items() if not d.approved}
        step = steps[-1]
        results = await run.execute(calls, denied, step.index)
        steps[-1] = dataclasses.replace(step, results=results)
        run.record(step.index, step.response, calls, results)
        return await run.run()


def _check_model(model: ModelLike | None) -> None:
    # Fail at construction for a bad vendor prefix, but build the client on first use only.
    if isinstance(model, str) and model != "test" and model.partition(":")[0] not in KNOWN_VENDORS:
        infer_model(model)  # raises the "did you mean" error
    elif model is not None and not isinstance(model, (str, Model)):
        raise ModelSetupError(f"model must be a 'vendor:model-name' string or a Model instance, got {model!r}")


def _as_messages(prompt: Prompt) -> list[Message]:
    if isinstance(prompt, str):
        return [UserMessage(prompt)]
    if isinstance(prompt, UserMessage):
        return [prompt]
    messages = list(prompt)
    for message in messages:
        if not isinstance(message, (SystemMessage, UserMessage, AssistantMessage, ToolResultsMessage)):
            raise TypeError(f"a history holds agentkit messages, got {message!r}")
    return messages
