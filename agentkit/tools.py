"""`@tool` and `Tool`: a plain function that also carries its schemas and validated entry points."""

from __future__ import annotations as _annotations

import asyncio
import functools
import inspect
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypedDict, Union, cast, overload

from typing_extensions import ParamSpec, TypeVar, Unpack

from ._content import as_parts, is_content
from ._json_schema import JsonSchema
from ._raw_schema import pattern_budget
from ._schema import FunctionSchema, SchemaSource
from ._text import shorten
from ._threads import ToolThreads, tool_threads
from ._unicode import escaped, has_surrogate
from .cache import ToolCache
from .context import ToolContext
from .definitions import (
    ToolDefinition,
    _deferred_definition,  # pyright: ignore[reportPrivateUsage]
)
from .exceptions import (
    ErrorDetail,
    ToolDeadlineError,
    ToolDefinitionError,
    ToolInputError,
    ToolOutputError,
    ToolTimeoutError,
    UsageError,
)
from .limits import ConcurrencyLimit
from .messages import ContentPart, ImagePart, TextPart

__all__ = [
    "ApprovalPolicy",
    "Tool",
    "ToolDeadlineError",
    "ToolOptions",
    "ToolThreads",
    "ToolTransform",
    "tool",
    "tool_threads",
]

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")
P2 = ParamSpec("P2")
R2 = TypeVar("R2")
# Covariant in the result: a tool of an `async def` (whose result pyright types as `CoroutineType`)
# is a `Tool[P, Coroutine[...]]`, so `invoke`/`ainvoke` unwrap the awaited type under both checkers.
R_co = TypeVar("R_co", covariant=True)

ApprovalPolicy = Union[bool, Callable[[dict[str, Any]], bool]]
"""`requires_approval=`: always, never, or decided from the call's validated arguments with defaults applied,
as a dict of argument name -> value (`Tool.approval_arguments` builds it)."""


class ToolOptions(TypedDict, total=False):
    """The keyword options shared by `@tool`, `Tool(...)`, `Tool.from_function` and `@registry.tool`."""

    id: str | None
    """The tool's own name; defaults to the function's name. Models see the registry key instead."""
    description: str | None
    """What the model is told the tool does; defaults to the docstring's text."""
    input_schema: SchemaSource | None
    """An explicit argument schema (pydantic model, TypedDict, dataclass or JSON Schema dict); the
    function then receives one validated argument."""
    output_schema: SchemaSource | None
    """An explicit result schema, same forms as `input_schema`."""
    strict: bool | None
    """Ask vendors for strict schema adherence (None: strict where the vendor and schema allow)."""
    timeout: float | None
    """Seconds a call may run before it becomes a timeout error."""
    requires_approval: ApprovalPolicy
    """Whether a call must be approved first (a bool, or a function of the validated arguments with
    defaults applied: see `Tool.approval_arguments`)."""
    idempotent: bool | None
    """Whether running a call twice with the same `ToolContext.effect_key` is safe: after a crash, a call
    that started and recorded no result runs again (True) or becomes an "outcome unknown" error (False).
    None: idempotent unless it requires approval. A tool that requires approval or sets this is journaled
    (see the "Side effects" guide)."""
    to_model_output: Callable[[Any], Any] | None
    """Maps the result to what the model receives (text, `ImagePart`, or a list of parts)."""
    transform: ToolTransform | None
    """Shapes what displays and transcripts receive."""
    inline: bool
    """Run a sync tool on the event loop's thread (only for known-fast tools)."""
    ends_run: bool
    """A successful call ends the agent's run with its result as the output, without another model turn."""
    deferred: bool
    """Not sent to the model until a tool search finds it (see `agentkit.search`)."""
    max_calls: int | None
    """Calls allowed per run; once spent, the tool is hidden and further calls get an error result."""
    max_concurrency: int | None
    """Calls of this tool running at once, across every run of the process."""
    sequential: bool
    """A call runs alone: the turn's earlier calls finish first, its later calls start after it."""
    limits: Sequence[ConcurrencyLimit]
    """Concurrency limits shared with other tools, optionally keyed by a resource (`ConcurrencyLimit`)."""
    mask_error_details: bool | None
    """Tell the model a generic text instead of this tool's exception (None: as its registry or agent says)."""
    background: bool
    """In an agent run, return at once (the model is told the call started) and add the result to the
    conversation when it is ready."""
    cache: ToolCache | bool | float | None
    """Mark the tool pure and cache its results in agent runs: a `ToolCache`, True (per run) or a TTL in
    seconds (see `agentkit.cache`); refused with ``requires_approval``."""


@dataclass(frozen=True)
class ToolTransform:
    """What a display or transcript gets for each part of a tool call, separately from the model.

    Each field maps the raw value to what is shown; a field left `None` passes the value through,
    except `input_delta` and `input_partial`: partial argument text, and the arguments parsed so far
    (`Tool.partial_arguments`), are suppressed unless a transform for them exists. Once
    `input` (or `output`) redacts, messages and progress that could quote the hidden values are withheld
    unless an `error` (or `progress`) transform decides what to show. A transform that raises makes that
    target get nothing (never the raw value).
    """

    input: Callable[[Any], Any] | None = None
    input_delta: Callable[[str], Any] | None = None
    output: Callable[[Any], Any] | None = None
    error: Callable[[str], Any] | None = None
    approval: Callable[[Any], Any] | None = None
    suspension: Callable[[Any], Any] | None = None
    progress: Callable[[Any], Any] | None = None
    input_partial: Callable[[Any], Any] | None = None


def _check_timeout(qualname: str, timeout: float | None) -> float | None:
    # run-time checks of the options: callers without a type checker pass anything
    if timeout is not None and not (isinstance(timeout, (int, float)) and timeout > 0):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise ToolDefinitionError(qualname, [f"timeout= must be a positive number of seconds, got {timeout!r}"])
    return timeout


def _check_policy(qualname: str, policy: Any) -> ApprovalPolicy:
    # a truthy non-bool ("no", "false", 0.0) would be read as "needs approval" or "never": refuse it here
    if isinstance(policy, bool) or (callable(policy) and not isinstance(policy, type)):
        return cast(ApprovalPolicy, policy)
    raise ToolDefinitionError(
        qualname,
        [
            f"requires_approval= must be True, False or a function of the call's arguments returning a bool, got "
            f"{shorten(policy, 60)} ({type(policy).__name__})"
        ],
    )


def _check_count(qualname: str, name: str, value: Any, minimum: int) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < minimum):
        raise ToolDefinitionError(
            qualname, [f"{name}= must be a whole number of at least {minimum} (or None), got {value!r}"]
        )
    return value


def _check_cache(qualname: str, cache: Any, requires_approval: Any) -> ToolCache | None:
    """`@tool(cache=...)` checked: a `ToolCache`, True (a run-scoped one) or a TTL in seconds; never with approval."""
    if cache is None or cache is False:
        return None
    if cache is True:
        cache = ToolCache()
    elif isinstance(cache, (int, float)) and not isinstance(cache, bool):
        cache = ToolCache(ttl=cache)
    if not isinstance(cache, ToolCache):
        raise ToolDefinitionError(
            qualname, [f"cache= takes ToolCache(...), True, or a TTL in seconds; got {type(cache).__name__}"]
        )
    if requires_approval is not False:
        raise ToolDefinitionError(
            qualname,
            [
                "cache= cannot be combined with requires_approval=: every call of a tool that needs approval must "
                "be decided, and a cached result would skip that. Drop one of the two"
            ],
        )
    return cache


def _check_limits(qualname: str, limits: Sequence[ConcurrencyLimit]) -> tuple[ConcurrencyLimit, ...]:
    if isinstance(limits, ConcurrencyLimit):
        limits = [limits]
    bad = [item for item in limits if not isinstance(item, ConcurrencyLimit)]  # pyright: ignore[reportUnnecessaryIsInstance]
    if bad:
        raise ToolDefinitionError(qualname, [f"limits= takes ConcurrencyLimit objects, got {bad[0]!r}"])
    return tuple(limits)


class Tool(Generic[P, R_co]):
    """A function made into a tool. Calling it calls the function, unchanged and unvalidated.

    Beyond the call, a tool has:

    * `id`, `description`, `input_schema`, `output_schema`: what a model is told about it;
    * `invoke` / `ainvoke`: validate arguments (a mapping or JSON text) -> call -> validate the result;
    * the options that shape how the agent loop runs it (`strict`, `timeout`, `requires_approval`,
      `to_model_output`, `transform`, `inline`, `deferred`, `max_calls`, `max_concurrency`, `sequential`,
      `limits`, `ends_run`, `cache`).

    Schemas are built on first use and cached; definition mistakes are raised at construction.
    """

    def __init__(
        self,
        fn: Callable[P, R_co],
        *,
        id: str | None = None,  # noqa: A002 - the public name DESIGN.md fixes
        description: str | None = None,
        input_schema: SchemaSource | None = None,
        output_schema: SchemaSource | None = None,
        strict: bool | None = None,
        timeout: float | None = None,
        requires_approval: ApprovalPolicy = False,
        idempotent: bool | None = None,
        to_model_output: Callable[[Any], Any] | None = None,
        transform: ToolTransform | None = None,
        inline: bool = False,
        ends_run: bool = False,
        deferred: bool = False,
        max_calls: int | None = None,
        max_concurrency: int | None = None,
        sequential: bool = False,
        limits: Sequence[ConcurrencyLimit] = (),
        mask_error_details: bool | None = None,
        background: bool = False,
        cache: ToolCache | bool | float | None = None,
    ) -> None:
        target: Any = fn
        if not callable(target) and not isinstance(target, classmethod):  # a classmethod object gets its reason
            raise ToolDefinitionError(repr(fn), ["@tool needs a function (def or async def) or a callable object"])
        self.fn = fn
        self.schema = FunctionSchema(fn, input_schema=input_schema, output_schema=output_schema)
        info = self.schema.info
        # __name__, __doc__, __wrapped__ of what the tool really runs (a partial's function, an object's
        # __call__); an instance's own attributes are not copied onto the tool.
        functools.update_wrapper(self, fn, updated=() if not inspect.isfunction(fn) else functools.WRAPPER_UPDATES)
        if info.name is not None:
            self.__name__ = info.name
        self.__doc__ = getattr(info.doc_from, "__doc__", None)
        name = id if id is not None else info.name
        if not isinstance(name, str) or not name:
            raise ToolDefinitionError(self.schema.qualname, ["the tool needs a non-empty id=; pass id='my_tool'"])
        self.id: str = name
        """The tool's own name; the registry key (not this) is what models see."""
        self._description = description
        self._resolved_description: str | None = None
        self._strict = strict
        self.timeout = _check_timeout(self.schema.qualname, timeout)
        """Seconds a call may run before it becomes a timeout error (None: no limit)."""
        self.requires_approval: ApprovalPolicy = _check_policy(self.schema.qualname, requires_approval)
        """Whether a call must be approved before it runs (a bool or a function of the arguments)."""
        if idempotent is not None and not isinstance(idempotent, bool):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ToolDefinitionError(
                self.schema.qualname, [f"idempotent= must be True, False or None, got {idempotent!r}"]
            )
        self.idempotent = idempotent
        """Whether a call that started and recorded no result (a crash) may run again with the same effect key
        (None: yes, unless the tool requires approval). See `journaled`."""
        self.to_model_output = to_model_output
        """Maps the tool's result to what the model receives (text, `ImagePart`, or a list of parts)."""
        self.transform = transform
        """Shapes what displays and transcripts receive; see `ToolTransform`."""
        self.inline = inline
        """Run a sync tool on the event loop's thread instead of a worker thread (for known-fast tools).
        Ignored when a `timeout` is set: only a worker thread lets the call be abandoned at the limit."""
        self._holders: tuple[weakref.ref[Any], ...] = ()  # the registries holding this tool, told of changes
        self._ends_run = bool(ends_run)
        self._deferred = deferred
        self._max_calls = _check_count(self.schema.qualname, "max_calls", max_calls, 0)
        self.sequential = sequential
        """A call of this tool runs alone in its turn (earlier calls finish first, later ones wait)."""
        own = _check_count(self.schema.qualname, "max_concurrency", max_concurrency, 1)
        self.max_concurrency = own
        """Calls of this tool running at once, across every run of the process (None: no limit)."""
        self.limits: tuple[ConcurrencyLimit, ...] = _check_limits(self.schema.qualname, limits)
        """Concurrency limits this tool's calls hold while they run (its own `max_concurrency` among them)."""
        if own is not None:
            self.limits = (*self.limits, ConcurrencyLimit(own, name=f"{self.id}.max_concurrency"))
        self.mask_error_details = mask_error_details
        """When this tool raises, tell the model a generic text instead of the exception's type and message
        (None: as the registry, else the agent, says). `ToolError` and `ModelRetry` messages always go through."""
        self.background = background
        """In an agent run, the call returns at once (the model is told it started) and keeps running; its
        result joins the conversation before a later model turn (see the pausing guide)."""
        self.cache: ToolCache | None = _check_cache(self.schema.qualname, cache, self.requires_approval)
        """How agent runs cache this tool's results (None: never); see `agentkit.cache`."""
        if self.cache is not None:
            self.cache._bind(self)  # pyright: ignore[reportPrivateUsage]  # the cache's own bookkeeping
        self.is_async = self.schema.is_async
        # per key, while description and strict stay (one key is the rule: a dict only for a second)
        self._definitions: ToolDefinition | dict[str, ToolDefinition] | None = None
        # Nothing to wrap: the registry may await the function directly (the common async case).
        self._direct = self.is_async and not self.schema.context_params and not self.schema.positional_only

    @classmethod
    def from_function(cls, fn: Callable[P2, R2], **options: Unpack[ToolOptions]) -> Tool[P2, R2]:
        """Make a tool of `fn` without decorator syntax; same options as `@tool`."""
        made: Tool[P2, R2] = cast(Any, cls)(fn, **options)  # `cls` is bound to the class's own P, R_co
        return made

    @classmethod
    def from_json_schema(
        cls,
        id: str,  # noqa: A002
        input_schema: Mapping[str, Any],
        *,
        description: str = "",
        output_schema: Mapping[str, Any] | None = None,
        fn: Callable[[dict[str, Any]], Any] | None = None,
        strict: bool | None = None,
        timeout: float | None = None,
    ) -> Tool[[dict[str, Any]], Any]:
        """A tool defined by a raw JSON Schema (e.g. from an MCP server or another framework).

        `fn` receives the validated arguments as one dict. Without `fn` the tool can be described to
        models (payloads, compatibility reports) but calling it fails with a `ToolError`.
        """

        def missing(arguments: dict[str, Any]) -> Any:
            from .exceptions import ToolError

            raise ToolError(f"tool {id!r} has a schema but no implementation")

        async def call_async(arguments: dict[str, Any]) -> Any:
            assert fn is not None
            return await fn(arguments)

        def call_sync(arguments: dict[str, Any]) -> Any:
            assert fn is not None
            return fn(arguments)

        target = missing if fn is None else call_async if inspect.iscoroutinefunction(fn) else call_sync
        # no result schema (the return annotation would be one: Any); errors name the tool, not this helper
        del target.__annotations__["return"]
        target.__name__ = target.__qualname__ = id
        target.__module__ = getattr(fn, "__module__", None) or "<json-schema>"
        return Tool(
            target,
            id=id,
            description=description,
            input_schema=dict(input_schema),
            output_schema=dict(output_schema) if output_schema is not None else None,
            strict=strict,
            timeout=timeout,
        )

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R_co:
        """Call the function itself: same arguments, same result, no validation."""
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Tool(id={self.id!r}, fn={self.schema.qualname})"

    # ---- what the model is told ------------------------------------------------------------------

    @property
    def description(self) -> str:
        """The explicit description, else the docstring's text without its parameter/returns sections."""
        text = self._resolved_description
        if text is None:
            self.schema.warn_unknown_documented_params()  # once: the docstring is parsed here
            text = self._description if self._description is not None else self.schema.docstring.description
            self._resolved_description = text
        return text

    @description.setter
    def description(self, value: str) -> None:
        self._description = self._resolved_description = value
        self._payload_options_changed()

    @property
    def strict(self) -> bool | None:
        """Ask vendors for strict schema adherence: True, False, or None (strict where possible)."""
        return self._strict

    @strict.setter
    def strict(self, value: bool | None) -> None:
        self._strict = value
        self._payload_options_changed()

    # options a run lays its tools out by: a change moves the registries holding the tool to a new version
    @property
    def ends_run(self) -> bool:
        """A successful call ends the agent's run, its result the run's output, with no further model turn.

        Like ``stop_at_tools=[key]`` on the agent, for every agent that has this tool.
        """
        return self._ends_run

    @ends_run.setter
    def ends_run(self, value: bool) -> None:
        self._ends_run = bool(value)
        self._run_options_changed()

    @property
    def deferred(self) -> bool:
        """Not sent to the model until a tool search finds it (see `agentkit.search`)."""
        return self._deferred

    @deferred.setter
    def deferred(self, value: bool) -> None:
        self._deferred = value
        self._run_options_changed()

    @property
    def max_calls(self) -> int | None:
        """Calls allowed per run (None: no limit); see `agentkit.limits`."""
        return self._max_calls

    @max_calls.setter
    def max_calls(self, value: int | None) -> None:
        self._max_calls = _check_count(self.schema.qualname, "max_calls", value, 0)
        self._run_options_changed()

    def _run_options_changed(self) -> None:
        for ref in self._holders:
            registry = ref()
            if registry is not None:
                registry._changed()

    def definition(self, key: str | None = None) -> ToolDefinition:
        """This tool as a model sees it under `key` (default: its `id`); the same object until an option changes."""
        name = self.id if key is None else key
        cached = self._definitions
        if isinstance(cached, ToolDefinition):
            if cached.key == name:
                return cached
        elif cached is not None and name in cached:
            return cached[name]
        schema = self.schema
        found = _deferred_definition(
            name,
            self.description,  # resolved first, as `input_schema` wants it
            schema.input_schema,
            lambda: schema.output_schema,  # built when read: most payloads never do
            self._strict,
            self.to_model_output is None,
        )
        if cached is None:
            self._definitions = found
        elif isinstance(cached, ToolDefinition):
            self._definitions = {cached.key: cached, name: found}
        else:
            cached[name] = found
        return found

    def _held_by(self, registry: Any) -> None:
        """Remember `registry` (weakly), so that changing an option tells it (`_payload_options_changed`)."""
        self._holders = (*(ref for ref in self._holders if ref() is not None), weakref.ref(registry))

    def _payload_options_changed(self) -> None:
        # What models are told about this tool changed: new definitions, and every registry holding it
        # moves to a new version, so caches keyed on either are invalidated in O(holders), not per request.
        self._definitions = None
        self._run_options_changed()

    @property
    def input_schema(self) -> JsonSchema:
        """JSON Schema (draft 2020-12) of the arguments, ``type: object`` at the root."""
        if self._resolved_description is None:
            _ = self.description  # parse the docstring once, reporting stale parameter docs
        return self.schema.input_schema

    @property
    def output_schema(self) -> JsonSchema | None:
        """JSON Schema of the result, ``{"type": "null"}`` for ``-> None``, `None` when unannotated."""
        return self.schema.output_schema

    @property
    def journaled(self) -> bool:
        """Whether an agent run records this tool's calls in its effect journal (reserve, run, commit).

        Tools that require approval or declare `idempotent` are journaled: after a crash, a committed call is
        never run again (its recorded result is used), and one that started without a result runs again
        only when the tool is idempotent. Other tools simply run again.
        """
        return self.requires_approval is not False or self.idempotent is not None

    @property
    def reruns_unknown(self) -> bool:
        """Whether a call that started and recorded no result runs again (else: "outcome unknown")."""
        return self.idempotent if self.idempotent is not None else self.requires_approval is False

    def needs_approval(self, arguments: dict[str, Any]) -> bool:
        """The policy's answer for `arguments` already in its shape (see `approval_arguments`)."""
        policy = self.requires_approval
        if not callable(policy):
            return bool(policy)
        decided = policy(arguments)
        # "no", None, 0 from an untyped policy: not a decision, so fail closed
        return decided if isinstance(decided, bool) else True  # pyright: ignore[reportUnnecessaryIsInstance]

    def approval_arguments(
        self, arguments: Mapping[str, Any] | str | bytes, *, name: str | None = None
    ) -> dict[str, Any]:
        """What the approval policy sees for a call's raw `arguments`: validated, defaults applied.

        A dict of argument name -> value; for an explicit pydantic/dataclass/TypedDict ``input_schema``,
        that type's fields. See the approvals section of the agents guide.

        Raises:
            ToolInputError: the arguments do not fit the input schema (such a call never runs).
        """
        from ._approval import policy_arguments

        return policy_arguments(self.schema, self.schema.validate_arguments(name or self.id, arguments))

    def needs_approval_for(self, arguments: Mapping[str, Any] | str | bytes, *, name: str | None = None) -> bool:
        """Whether a call with these raw arguments (a mapping or JSON text) must be approved before it runs.

        The one decision every path uses (agent loop, resume, workflows, MCP server, CLI). False for
        arguments that do not validate (the call never runs: it becomes an invalid-arguments error);
        True when the policy raises, or when validation fails in any other way (fail closed).
        """
        if self.requires_approval is False:
            return False
        try:
            shaped = self.approval_arguments(arguments, name=name)
        except ToolInputError:
            return False
        except Exception:  # noqa: BLE001 - an arguments check that crashes must not let the call through
            return True
        try:
            return self.needs_approval(shaped)
        except Exception:  # noqa: BLE001 - a failing policy must not let the call through
            return True

    # ---- validated entry points ------------------------------------------------------------------

    @overload
    def invoke(
        self: Tool[P, Coroutine[Any, Any, T]],
        args: Mapping[str, Any] | str | bytes = ...,
        *,
        context: ToolContext[Any] | None = ...,
    ) -> T: ...
    @overload
    def invoke(
        self: Tool[P, T], args: Mapping[str, Any] | str | bytes = ..., *, context: ToolContext[Any] | None = ...
    ) -> T: ...
    def invoke(self, args: Mapping[str, Any] | str | bytes = "{}", *, context: ToolContext[Any] | None = None) -> Any:
        """Validate `args` (a mapping or JSON text), call the tool, validate and return its result.

        An ``async def`` tool is run to completion on a new event loop; inside a running loop use
        `ainvoke`.

        Raises:
            ToolInputError: the arguments do not fit the input schema (every problem listed).
            ToolOutputError: the result does not fit the output schema.
            ToolTimeoutError: the call ran longer than `timeout`.
        """
        if self.is_async or self.timeout is not None:
            if _running_loop():
                raise UsageError(
                    f"{self.id}.invoke() cannot run an async tool (or one with a timeout) inside a running event "
                    f"loop; use `await {self.id}.ainvoke(...)` there"
                )
            return asyncio.run(self.ainvoke(args, context=context))
        kwargs = self.schema.validate_arguments(self.id, args)
        value = self._call_sync(kwargs, context)
        return self.schema.validate_output(self.id, value)

    @overload
    async def ainvoke(
        self: Tool[P, Coroutine[Any, Any, T]],
        args: Mapping[str, Any] | str | bytes = ...,
        *,
        context: ToolContext[Any] | None = ...,
    ) -> T: ...
    @overload
    async def ainvoke(
        self: Tool[P, T], args: Mapping[str, Any] | str | bytes = ..., *, context: ToolContext[Any] | None = ...
    ) -> T: ...
    async def ainvoke(
        self, args: Mapping[str, Any] | str | bytes = "{}", *, context: ToolContext[Any] | None = None
    ) -> Any:
        """Async `invoke`: sync tools run in a worker thread unless `inline=True`."""
        kwargs = await self.avalidate_arguments(args, name=self.id)
        value = await self.run(kwargs, context, name=self.id)
        return await self.avalidate_output(value, name=self.id)

    async def avalidate_arguments(self, args: Mapping[str, Any] | str | bytes, *, name: str) -> dict[str, Any]:
        """`FunctionSchema.validate_arguments`, never blocking the event loop.

        A schema whose patterns need a backtracking engine (`FunctionSchema.needs_thread`) is
        validated on a worker thread, within the tool's `timeout`; past it, the arguments are refused.

        Raises:
            ToolInputError: the arguments do not fit (or could not be checked within the timeout).
        """
        if not self.schema.needs_thread:
            return self.schema.validate_arguments(name, args)
        try:
            return await self._off_loop(self.schema.validate_arguments, name, args)
        except _ValidationTimeout:
            message = (
                f"The arguments could not be validated within the tool's timeout of {self.timeout:g} s "
                "(a pattern in its schema backtracks on them); send simpler values"
            )
            raise ToolInputError(name, [ErrorDetail("$", message, args, "validation_timeout")]) from None

    async def avalidate_output(self, value: Any, *, name: str) -> Any:
        """`FunctionSchema.validate_output`, never blocking the event loop (see `avalidate_arguments`).

        Raises:
            ToolOutputError: the result does not fit (or could not be checked within the timeout).
        """
        if not self.schema.needs_thread:
            return self.schema.validate_output(name, value)
        try:
            return await self._off_loop(self.schema.validate_output, name, value)
        except _ValidationTimeout:
            message = f"The result could not be validated within the tool's timeout of {self.timeout:g} s"
            raise ToolOutputError(name, [ErrorDetail("$", message, value, "validation_timeout")]) from None

    async def _off_loop(self, check: Callable[[str, Any], T], name: str, value: Any) -> T:
        # the budget is copied into the worker's context: a backtracking match stops by itself as well
        with pattern_budget(self.timeout):
            if self.timeout is None:
                return await tool_threads().run(check, name, value)
            try:
                return await asyncio.wait_for(tool_threads().run(check, name, value), self.timeout)
            except asyncio.TimeoutError:
                raise _ValidationTimeout from None

    async def run(self, kwargs: dict[str, Any], context: ToolContext[Any] | None, *, name: str) -> Any:
        """Call the function with already validated `kwargs`, injecting `context`, enforcing `timeout`.

        Only agentkit's deadline is a `ToolTimeoutError` here: a `TimeoutError` the tool raises itself
        (an upstream service timing out, another tool's timeout) is passed on as the tool's exception.
        """
        if self.timeout is None:  # no deadline of ours: whatever the tool raises (a TimeoutError too) is its own
            try:
                if self._direct:
                    return await self.fn(**kwargs)  # type: ignore[call-arg,misc]
                return await self._run_unbounded(kwargs, context)
            except ToolDeadlineError as exc:  # another tool's deadline, inside this one: this tool's exception
                raise ToolTimeoutError(exc.tool, exc.timeout) from exc
        try:
            return await asyncio.wait_for(self._run_guarded(kwargs, context), self.timeout)
        except _OwnTimeout as raised:
            own = raised.error
        except ToolDeadlineError as exc:
            own = exc  # another tool's deadline, inside this one (ours is raised below, outside this `try`)
        except asyncio.TimeoutError:
            raise ToolDeadlineError(name, self.timeout) from None
        if isinstance(own, ToolDeadlineError):  # seen from here it is an exception of this tool
            raise ToolTimeoutError(own.tool, own.timeout) from own
        raise own  # outside the except block: the tool's exception keeps its own context

    async def _run_guarded(self, kwargs: dict[str, Any], context: ToolContext[Any] | None) -> Any:
        try:
            return await self._run_unbounded(kwargs, context)
        except (TimeoutError, asyncio.TimeoutError) as exc:  # the tool's own, not our deadline
            raise _OwnTimeout(exc) from None

    async def _run_unbounded(self, kwargs: dict[str, Any], context: ToolContext[Any] | None) -> Any:
        if self.is_async:
            return await self._call_async(kwargs, context)
        if self.inline and self.timeout is None:  # a timeout needs a worker thread to be enforceable
            return self._call_sync(kwargs, context)
        return await tool_threads().run(self._call_sync, kwargs, context)

    def _arguments(self, kwargs: dict[str, Any], context: ToolContext[Any] | None) -> tuple[list[Any], dict[str, Any]]:
        schema = self.schema
        if schema.context_params:
            ctx = context if context is not None else ToolContext()
            kwargs = {**kwargs, **dict.fromkeys(schema.context_params, ctx)}
        if schema.positional_only:
            kwargs = dict(kwargs)
            return [kwargs.pop(n) for n in schema.positional_only], kwargs
        return [], kwargs

    def _call_sync(self, kwargs: dict[str, Any], context: ToolContext[Any] | None) -> Any:
        args, kwargs = self._arguments(kwargs, context)
        return cast("Callable[..., Any]", self.fn)(*args, **kwargs)  # the arguments the schema validated

    def _call_async(self, kwargs: dict[str, Any], context: ToolContext[Any] | None) -> Awaitable[Any]:
        args, kwargs = self._arguments(kwargs, context)
        return self.fn(*args, **kwargs)  # type: ignore[return-value]

    def partial_arguments(self, text: str | bytes) -> Any:
        """The arguments received so far that already fit the input schema, for a display (never for the call).

        `text` is the argument JSON so far, maybe unfinished (a streamed call's ``arguments_so_far``). The
        result is JSON data: the fields that arrived, each valid where it stands (an unfinished string
        as far as it goes; missing required fields are fine; a value that breaks the schema is left
        out), or None before anything fits. See `agentkit.events.ToolCallDeltaEvent.partial`.
        """
        return self._partial_validator(text)

    @functools.cached_property
    def _partial_validator(self) -> Callable[[str | bytes], Any]:
        from ._partial import PartialValidator

        return PartialValidator(self.input_schema)

    # ---- what the model receives -----------------------------------------------------------------

    def model_content(self, value: Any) -> list[ContentPart]:
        """What the model receives for a validated result.

        `to_model_output` applied if set; else parts (an `ImagePart`, a list of parts and text) as they
        are; anything else as JSON text.
        """
        if self.to_model_output is not None:
            parts = as_parts(self.to_model_output(value))
        elif isinstance(value, _MAYBE_CONTENT) and is_content(value):  # one isinstance for plain data
            parts = as_parts(value)
        else:
            text = self.schema.dump_output_json(value)
            return [TextPart(text if text.isascii() else escaped(text))]  # ASCII, the usual JSON: nothing to escape
        # a lone surrogate (a file name read with surrogateescape, say) would fail the next request
        return [TextPart(escaped(p.text)) if isinstance(p, TextPart) and has_surrogate(p.text) else p for p in parts]


_MAYBE_CONTENT = (TextPart, ImagePart, list, tuple)


class _OwnTimeout(Exception):  # noqa: N818 - carries a tool's own TimeoutError through asyncio.wait_for
    def __init__(self, error: BaseException) -> None:
        self.error = error


class _ValidationTimeout(Exception):  # noqa: N818 - validation on a worker thread passed the tool's timeout
    pass


def _running_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


@overload
def tool(fn: Callable[P, R], /) -> Tool[P, R]: ...
@overload
def tool(**options: Unpack[ToolOptions]) -> Callable[[Callable[P, R]], Tool[P, R]]: ...
def tool(
    fn: Callable[P, R] | None = None, /, **options: Unpack[ToolOptions]
) -> Tool[P, R] | Callable[[Callable[P, R]], Tool[P, R]]:
    """Turn a function into a `Tool`, bare (``@tool``) or configured (``@tool(id=..., ...)``).

    Args:
        fn: the function (given when used bare).
        **options: keyword-only options, see `ToolOptions`: ``id``, ``description``, ``input_schema``,
            ``output_schema``, ``strict``, ``timeout``, ``requires_approval``, ``idempotent``, ``to_model_output``,
            ``transform``, ``inline``, ``background``, ``deferred``, ``max_calls``, ``max_concurrency``,
            ``sequential``, ``limits``, ``mask_error_details``, ``ends_run``, ``cache``.
    """
    if fn is not None:
        if isinstance(fn, str):
            raise ToolDefinitionError(fn, [f"use @tool(id={fn!r}) to name a tool; @tool takes the id as a keyword"])
        return Tool(fn, **options)

    def decorate(func: Callable[P, R]) -> Tool[P, R]:
        return Tool(func, **options)

    return decorate
