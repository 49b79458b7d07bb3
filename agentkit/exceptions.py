"""Every error agentkit raises, and the two signals a tool may raise.

```
Exception
├── AgentkitError                           root of everything agentkit raises
│   ├── ToolDefinitionError (TypeError)     a developer mistake, raised where the tool is defined
│   ├── RegistryError (ValueError)          a registry cannot hold, find or send what it was given
│   │   ├── UnknownToolError (KeyError)     no tool under that key; the closest keys are suggested
│   │   ├── ToolChoiceError                 a tool_choice the tools cannot honour (outside active_tools)
│   │   ├── StrictSchemaError               a tool forced strict whose schema the vendor's strict mode refuses
│   │   ├── PayloadRejectedError            a request the vendor documents it refuses (too many tools, ...)
│   │   └── InvalidToolNameError            a key a vendor's name rule rejects (aliases not asked for)
│   │       └── InvalidToolNamesError       ... several at once, one per key and vendor in `problems`
│   ├── ToolInputError (ValueError)         arguments that do not fit a tool's input schema
│   ├── ToolOutputError (ValueError)        a result that does not fit a tool's output schema
│   ├── ToolTimeoutError (TimeoutError)     a tool ran longer than its ``timeout``
│   │   └── ToolDeadlineError               ... agentkit's own deadline (not a TimeoutError the tool raised)
│   ├── UsageError (RuntimeError)           an API used where it cannot work (invoke() in an event loop, ...)
│   ├── AgentSetupError (ValueError)        an agent or run option that cannot work (max_steps < 1, ...)
│   ├── ModelSetupError (ValueError)        an unknown model name, a missing API key, a blocked request
│   ├── UnknownProviderError (LookupError)  a provider name neither built in nor registered
│   ├── ModelAPIError                       a vendor API failed (connection, unexpected payload, ...)
│   │   └── ModelHTTPError                  ... with an HTTP status: keeps ``status_code``, ``body``, ``headers``
│   ├── UsageLimitExceeded                  a run hit a limit
│   │   └── RetryLimitExceeded              ... a retry budget; carries the partial ``result``
│   │       └── OutputValidationError       ... spent on answers that do not fit the output type (``raw``, ``errors``)
│   ├── ResumeError (ValueError)            a paused run cannot go on as asked; nothing ran
│   │   ├── ApprovalError                   ... approval decisions missing, or naming no pending call
│   │   │   └── AlreadyResumedError         ... the pause (or a copy of its result or snapshot) was resumed before
│   │   └── SnapshotError                   ... a snapshot that is malformed, edited, too new, or for changed tools
│   ├── HookError                           a model-request hook raised or returned what cannot be sent
│   ├── WorkflowStepError                   a workflow step failed; names the step
│   ├── MCPConnectionError (ConnectionError) an MCP server could not be started, initialized or listed
│   ├── MCPLoadError (ValueError)           a ``module:attr`` / ``file.py:attr`` target that cannot be loaded
│   ├── MCPRequestError                     an MCP server answered a request (a resource, a prompt) with an error
│   ├── UIInputError (ValueError)           a UI request that cannot be mapped to a run; keeps the HTTP status
│   ├── TemporalLimitError                  a durable run cannot go on within Temporal's limits; names the limit
│   ├── CassetteMiss (LookupError)          a request a replaying cassette has no recording of; shows the difference
│   ├── EvalDataError (ValueError)          an eval dataset or case file that cannot be read (names case and field)
│   └── CLIError                            a command-line failure: one line on stderr and an exit status
├── ModelRetry                              signal: "tell the model this and let it try again"
└── ToolError                               signal: "this call failed; tell the model why"
Warning
└── AgentkitWarning (UserWarning)           e.g. a docstring that documents a missing parameter
BaseException
├── ToolSuspended                           signal: "pause the run until this call gets its data" (ctx.suspend)
├── ClientCallRequested                     signal: a client tool's call, for the caller to run (inside a run)
└── ProgramPaused                           signal: a code-mode program waits on calls that paused the run
```

A name in parentheses is a built-in exception the class also derives from, so ``except ValueError``
(say) catches it too. `ModelRetry` and `ToolError` are raised *by tools*, not by agentkit: they are
control flow, not failures, so they stay outside `AgentkitError`. `ToolSuspended` (raised by
`ToolContext.suspend`) derives from `BaseException`, like `asyncio.CancelledError`, so a tool's own
``except Exception`` cannot swallow the pause. Each class is importable from here
(and from the module that raises it, where it was defined before).
"""

from __future__ import annotations as _annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._agent.results import RunResult

from ._text import clip, shorten

__all__ = [
    "AgentSetupError",
    "AgentkitError",
    "AgentkitWarning",
    "AlreadyResumedError",
    "ApprovalError",
    "CLIError",
    "CassetteMiss",
    "ClientCallRequested",
    "ErrorDetail",
    "EvalDataError",
    "HookError",
    "InvalidToolNameError",
    "InvalidToolNamesError",
    "MCPConnectionError",
    "MCPLoadError",
    "MCPRequestError",
    "ModelAPIError",
    "ModelHTTPError",
    "ModelRetry",
    "ModelSetupError",
    "OutputValidationError",
    "PayloadRejectedError",
    "ProgramPaused",
    "RegistryError",
    "ResumeError",
    "RetryLimitExceeded",
    "SnapshotError",
    "StrictSchemaError",
    "TemporalLimitError",
    "ToolChoiceError",
    "ToolDeadlineError",
    "ToolDefinitionError",
    "ToolError",
    "ToolInputError",
    "ToolOutputError",
    "ToolSuspended",
    "ToolTimeoutError",
    "UIInputError",
    "UnknownProviderError",
    "UnknownToolError",
    "UsageError",
    "UsageLimitExceeded",
    "WorkflowStepError",
]


class AgentkitError(Exception):
    """Root of every error agentkit raises."""


class AgentkitWarning(UserWarning):
    """A likely mistake that does not stop anything (e.g. a docstring documenting a missing parameter)."""


class ToolDefinitionError(AgentkitError, TypeError):
    """A tool cannot be built from what the developer wrote.

    Raised when `@tool` runs, so the traceback points at the definition. The message names the
    function's qualified name, every problem found, and how to fix each.
    """

    def __init__(self, qualname: str, problems: Sequence[str]) -> None:
        self.qualname = qualname
        self.problems = list(problems)
        super().__init__(qualname, self.problems)

    def __str__(self) -> str:
        if len(self.problems) == 1:
            return f"Cannot make a tool of {self.qualname}: {self.problems[0]}"
        lines = "\n".join(f"  - {p}" for p in self.problems)
        return f"Cannot make a tool of {self.qualname}:\n{lines}"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.qualname, self.problems))


class RegistryError(AgentkitError, ValueError):
    """A registry cannot hold what it was given (a duplicate key, an empty key, ...)."""


class UnknownToolError(RegistryError, KeyError):
    """A key that no tool in the registry has. The message suggests the closest keys."""

    def __init__(self, key: str, known: Sequence[str], suggestions: Sequence[str] = ()) -> None:
        self.key = key
        self.known = list(known)
        self.suggestions = list(suggestions)
        super().__init__(key, self.known, self.suggestions)

    def __str__(self) -> str:
        hint = f" Did you mean {' or '.join(repr(s) for s in self.suggestions)}?" if self.suggestions else ""
        listing = ", ".join(repr(k) for k in self.known) or "none"
        return f"No tool is registered under {shorten(self.key, 100)}.{hint} Registered keys: {listing}."

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.key, self.known, self.suggestions))


class ToolChoiceError(RegistryError):
    """A ``tool_choice`` the tools cannot honour: a key outside ``active_tools``, or ``"required"`` with none.

    Raised by `Agent.generate` (and its siblings) before the run starts, and by a provider building a
    payload, for the same mistake.
    """


class StrictSchemaError(RegistryError):
    """A tool forced strict (``strict=True``) whose schema the vendor's strict mode refuses.

    Raised by `Provider.format_tools` (and so before a model request is sent) instead of sending a
    payload the vendor answers with HTTP 400. `problems` lists each subschema strict mode cannot express;
    with ``strict=None`` the same tool is sent non-strict and the problems are reported by
    `agentkit.providers.compatibility`.
    """

    def __init__(self, key: str, vendor: str, problems: Sequence[str]) -> None:
        self.key = key
        self.vendor = vendor
        self.problems = tuple(problems)
        super().__init__(key, vendor, self.problems)

    def __str__(self) -> str:
        shown = "\n".join(f"  - {p}" for p in self.problems[:10])
        more = f"\n  ... and {len(self.problems) - 10} more" if len(self.problems) > 10 else ""
        return (
            f"Tool {self.key!r} is forced strict, but {self.vendor}'s strict mode refuses its schema:\n{shown}{more}\n"
            "Pass strict=None (the default) to send it non-strict, or change the schema."
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.key, self.vendor, self.problems))


class PayloadRejectedError(RegistryError):
    """A request the vendor documents it refuses, caught before it is sent.

    Too many tools for the vendor's limit, a schema outside what it accepts (Gemini's ``parameters``
    property names): `Provider.format_tools` and the model clients raise this instead of sending a payload
    the vendor answers with HTTP 400. `problems` says what breaks which documented rule; `fix` what to do.
    """

    def __init__(self, vendor: str, problems: Sequence[str], fix: str) -> None:
        self.vendor = vendor
        self.problems = tuple(problems)
        self.fix = fix
        super().__init__(vendor, self.problems, fix)

    def __str__(self) -> str:
        shown = "\n".join(f"  - {p}" for p in self.problems[:10])
        more = f"\n  ... and {len(self.problems) - 10} more" if len(self.problems) > 10 else ""
        return f"{self.vendor} refuses this request:\n{shown}{more}\n{self.fix}"

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.vendor, self.problems, self.fix))


class InvalidToolNameError(RegistryError):
    """A registry key that a vendor's name rule rejects (and aliases were not asked for)."""

    def __init__(self, key: str, vendor: str, rule: str) -> None:
        self.key = key
        self.vendor = vendor
        self.rule = rule
        super().__init__(key, vendor, rule)

    def __str__(self) -> str:
        return (
            f"Tool key {self.key!r} breaks {self.vendor}'s name rule {self.rule}. Rename it in the registry, "
            f"or pass aliases=True to send a deterministic alias and map it back on the way in."
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.key, self.vendor, self.rule))


class InvalidToolNamesError(InvalidToolNameError):
    """Several keys and/or vendors fail at once; `problems` holds one `InvalidToolNameError` per pair."""

    def __init__(self, problems: list[InvalidToolNameError]) -> None:
        self.problems = problems
        first = problems[0]
        super().__init__(first.key, first.vendor, first.rule)

    def __str__(self) -> str:
        lines = "\n".join(f"  - {p.key!r} breaks {p.vendor}'s rule {p.rule}" for p in self.problems)
        return (
            f"{len(self.problems)} tool keys break vendor name rules:\n{lines}\n"
            "Rename them in the registry, or pass aliases=True to send deterministic aliases."
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.problems,))


@dataclass(frozen=True)
class ErrorDetail:
    """One validation problem: where it is, what is wrong, and the value found there."""

    path: str
    """JSON path of the offending value, e.g. ``$.items[0].name`` (``$`` is the whole input)."""
    message: str
    """What is wrong, in pydantic's or the JSON Schema validator's words."""
    value: Any
    """The offending value as it was received."""
    kind: str = "invalid"
    """A short machine-readable error type, e.g. ``missing`` or ``int_parsing``."""

    def __str__(self) -> str:
        # bounded: the value may be huge or nested thousands of levels deep
        return f"{clip(self.path, 120)}: {clip(self.message, 2000)} (got {shorten(self.value)})"


class _ValidationError(AgentkitError, ValueError):
    """Shared shape of input and output validation errors."""

    _what = "values"

    def __init__(self, tool: str, errors: Sequence[ErrorDetail]) -> None:
        self.tool = tool
        self.errors = list(errors)
        super().__init__(tool, self.errors)

    def __str__(self) -> str:
        lines = "\n".join(f"  {e}" for e in self.errors)
        n = len(self.errors)
        return f"{n} problem{'s' if n != 1 else ''} in the {self._what} of tool {self.tool!r}:\n{lines}"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.tool, self.errors))


class ToolInputError(_ValidationError):
    """The arguments given to a tool do not fit its input schema (or are not valid JSON).

    Attributes:
        tool: the tool's name (its registry key when called through a registry).
        errors: every problem found, each with its JSON path and offending value.
    """

    _what = "arguments"


class ToolOutputError(_ValidationError):
    """A tool returned a value that does not fit its output schema.

    Attributes:
        tool: the tool's name.
        errors: every problem found, each with its JSON path and offending value.
    """

    _what = "result"


class ToolTimeoutError(AgentkitError, TimeoutError):
    """A tool call ran longer than the tool's ``timeout``."""

    def __init__(self, tool: str, timeout: float) -> None:
        self.tool = tool
        self.timeout = timeout
        super().__init__(tool, timeout)

    def __str__(self) -> str:
        return f"Tool {self.tool!r} did not finish within its timeout of {self.timeout:g} s."


class ToolDeadlineError(ToolTimeoutError):
    """agentkit's own deadline for a call passed.

    `Tool.run` raises it; a `TimeoutError` (or another tool's `ToolTimeoutError`) that the tool raises
    itself is passed on as the tool's exception, and only this one becomes a ``timeout`` result.
    """


class UsageError(AgentkitError, RuntimeError):
    """An API used where it cannot work, e.g. the sync `Tool.invoke` of an async tool inside a running loop."""


class AgentSetupError(AgentkitError, ValueError):
    """An `Agent` option, or an option of one run, that cannot work: ``max_steps < 1``, a negative retry budget."""


class ModelSetupError(AgentkitError, ValueError):
    """A model cannot be used as given: unknown vendor prefix, missing API key, requests blocked in tests."""


class UnknownProviderError(AgentkitError, LookupError):
    """A provider name that is neither built in nor registered."""

    def __init__(self, name: str, known: list[str]) -> None:
        self.name = name
        self.known = known
        super().__init__(name, known)

    def __str__(self) -> str:
        from ._text import closest  # bounded: a huge name gets no fuzzy search

        close = closest(self.name, self.known, n=2, cutoff=0.7)
        hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        return f"Unknown provider {shorten(self.name, 80)}.{hint} Known providers: {', '.join(self.known)}."

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.name, self.known))


class ModelAPIError(AgentkitError):
    """A vendor API call failed. `model_name` names the model; the message says what happened."""

    def __init__(self, model_name: str, message: str) -> None:
        self.model_name = model_name
        self.message = message
        super().__init__(model_name, message)

    def __str__(self) -> str:
        return f"{self.model_name}: {self.message}"

    @property
    def summary(self) -> str:
        """What failed, without the vendor's words (which may quote a key or a prompt): class and model.

        What agentkit tells a model when a vendor error happens inside a tool, a workflow step or a
        subagent; the full message stays on the exception for the application.
        """
        return f"{type(self).__name__} from model {self.model_name!r}"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.model_name, self.message))


class ModelHTTPError(ModelAPIError):
    """A vendor API answered with an HTTP error status (auth, rate limit, bad request, server error)."""

    def __init__(
        self,
        model_name: str,
        status_code: int,
        body: Any = None,
        headers: dict[str, str] | None = None,
        kind: str | None = None,
    ) -> None:
        self.status_code = status_code
        self.body = body
        self.headers = dict(headers or {})
        self.kind = kind or _http_kind(status_code)
        """One of ``auth``, ``permission``, ``not_found``, ``bad_request``, ``rate_limit``, ``server_error``,
        ``http_error``."""
        super().__init__(model_name, f"HTTP {status_code} ({self.kind}): {str(body)[:500]}")

    @property
    def summary(self) -> str:
        """Class, model and status, without the body (which may quote a key): see `ModelAPIError.summary`."""
        return f"{type(self).__name__} from model {self.model_name!r}: HTTP {self.status_code} ({self.kind})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.model_name, self.status_code, self.body, self.headers, self.kind))


def _http_kind(status: int) -> str:
    if status == 401:
        return "auth"
    if status == 403:
        return "permission"
    if status == 404:
        return "not_found"
    if status == 429:
        return "rate_limit"
    if 400 <= status < 500:
        return "bad_request"
    if status >= 500:
        return "server_error"
    return "http_error"


class UsageLimitExceeded(AgentkitError):  # noqa: N818 - the name peers use (pydantic-ai)
    """A run stopped because it hit a limit (``max_steps``, a retry budget)."""


class RetryLimitExceeded(UsageLimitExceeded):
    """A run used up a retry budget (per tool, or for the whole run); `result` is the run so far."""

    def __init__(self, message: str, result: RunResult[Any]) -> None:
        super().__init__(message)
        self.result = result


class OutputValidationError(RetryLimitExceeded):
    """The model's answers kept failing the output type (or its validators) until the retry budget ran out.

    Attributes:
        result: the run so far (its last step holds the last answer).
        raw: the last answer as the model gave it (the text, or the output tool's arguments as JSON text).
        errors: what was wrong with it, each with its JSON path (a validator's `ModelRetry` at ``$``).
    """

    def __init__(self, message: str, result: RunResult[Any], raw: Any, errors: Sequence[ErrorDetail]) -> None:
        super().__init__(message, result)
        self.raw = raw
        self.errors = list(errors)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (str(self), self.result, self.raw, self.errors))


class ResumeError(AgentkitError, ValueError):
    """`Agent.resume` cannot continue as asked; nothing ran.

    The run is not paused, or an answer is missing, names no pending call, or does not fit what the call
    asked for. Fix the answers and resume again: the pause was not used up.
    """


class ApprovalError(ResumeError):
    """`Agent.resume` cannot continue: approval decisions missing or naming no pending call."""


class AlreadyResumedError(ApprovalError):
    """The pause was already resumed; nothing ran.

    This result or snapshot, or a copy of it (``deepcopy``, ``pickle``, the same JSON in another process),
    was claimed in the run store by an earlier `resume`.

    Continue from the result that first `resume` returned. (Under `ApprovalError`, which was raised for this
    before snapshots existed.)
    """


class SnapshotError(ResumeError):
    """A `RunSnapshot` cannot be restored; nothing ran.

    Not a snapshot, a newer format, an edited or unsigned document where a key is configured, another
    agent's, or tools that changed since the pause (`keys` names them).
    """

    def __init__(self, message: str, keys: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.keys = list(keys)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message, self.keys))


class HookError(AgentkitError):
    """A ``before_model_request`` / ``after_model_response`` hook raised, or left a request that cannot be sent.

    The run stops there (a check that could not be made must not let the request through); the
    original exception, if any, is the ``__cause__``. Tool-call hooks never raise this: their failures
    become error results for the call.
    """

    def __init__(self, hook: object, method: str, problem: str) -> None:
        self.hook = hook if isinstance(hook, str) else repr(hook)
        """The hook object's repr (a string, so the error pickles)."""
        self.method = method
        self.problem = problem
        super().__init__(self.hook, method, problem)

    def __str__(self) -> str:
        return f"The {self.method} hook {self.hook} {self.problem}."

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.hook, self.method, self.problem))


class WorkflowStepError(AgentkitError):
    """A step of a workflow failed; `step` names it and the original error is the ``__cause__``."""

    def __init__(self, workflow: str, step: str, index: int, message: str) -> None:
        self.workflow = workflow
        self.step = step
        self.index = index
        self.message = message
        super().__init__(workflow, step, index, message)

    def __str__(self) -> str:
        return f"Workflow {self.workflow!r}, step {self.index + 1} ({self.step!r}): {self.message}"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.workflow, self.step, self.index, self.message))


class MCPConnectionError(AgentkitError, ConnectionError):
    """An MCP server could not be started, initialized or listed, or the session is not open."""


class MCPLoadError(AgentkitError, ValueError):
    """A command-line target (``module:attr`` or ``file.py:attr``) could not be loaded or names nothing usable.

    Raised by the one loader every ``agentkit`` command and `agentkit.mcp.load_registry` use.
    """


class MCPRequestError(AgentkitError):
    """An MCP server answered a request (``resources/read``, ``prompts/get``, ...) with an error.

    `code` is the JSON-RPC error code (``-32002``: no such resource, ``-32602``: bad arguments).
    """

    def __init__(self, server: str, request: str, code: int, message: str) -> None:
        self.server = server
        self.request = request
        self.code = code
        self.message = message
        super().__init__(server, request, code, message)

    def __str__(self) -> str:
        return f"MCP server {self.server!r} refused {self.request} ({self.code}): {self.message}"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.server, self.request, self.code, self.message))


class UIInputError(AgentkitError, ValueError):
    """A request from a UI that cannot be mapped to a run; `status` is the HTTP status to answer with."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message, self.status))


class TemporalLimitError(AgentkitError):
    """A durable run cannot go on within Temporal's limits: the message names the limit and what passed it."""


class CassetteMiss(AgentkitError, LookupError):  # noqa: N818 - a miss, as the docs call it
    """A request a cassette has no recording of (in replay), or a cassette file that is missing or broken.

    The message names the request and shows how it differs from the nearest recording, path by path.
    """


class EvalDataError(AgentkitError, ValueError):
    """An eval dataset or case file that cannot be read: the message names the file, case, field and fix."""


class CLIError(AgentkitError):
    """A failure of the `agentkit` command, reported as one line and exit status 1 (or 2 for usage)."""

    def __init__(self, message: str, status: int = 1) -> None:
        self.message = message
        self.status = status
        super().__init__(message)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message, self.status))


class ModelRetry(Exception):  # noqa: N818 - a signal, named like pydantic-ai's for familiarity
    """Raise inside a tool to send ``message`` back to the model and let it try again."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


class ToolError(Exception):
    """Raise inside a tool to fail the call with ``message`` as the error the model sees."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


class ClientCallRequested(BaseException):
    """Raised by a client tool (`client_tool`) inside a run: the loop hands the call to the caller.

    Outside a run the tool raises `ToolError` instead (nobody could run the call).
    """


class ProgramPaused(BaseException):
    """Raised by code mode's tool (`agentkit.codemode`) inside a run: its program waits on calls that paused.

    Those calls need an approval, data (a suspension) or a client's output; the loop pauses the run with their
    pending records, and keeps `paused` (the program's state) for the resume. `caller_id` is the code tool's
    call. A `BaseException`, like `ToolSuspended`.
    """

    def __init__(self, caller_id: str, paused: Any) -> None:
        self.caller_id = caller_id
        self.paused = paused
        super().__init__(caller_id)


class ToolSuspended(BaseException):
    """Raised by `ToolContext.suspend`: the run stops with status ``"suspended"`` until `resume` brings data.

    `payload` is what the tool asked with (JSON-ready); `schema` the JSON Schema the data must fit (or
    ``None``). A `BaseException`, so a tool's ``except Exception`` does not swallow it. Outside a run (a
    plain `Tool.invoke`) it reaches the caller as it is.
    """

    def __init__(self, payload: Any = None, schema: Mapping[str, Any] | None = None) -> None:
        self.payload = payload
        self.schema = dict(schema) if schema is not None else None
        super().__init__(payload, self.schema)
