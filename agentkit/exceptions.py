"""Every error agentkit raises, and the two signals a tool may raise.

```
Exception
├── AgentkitError                       root of everything agentkit raises
│   ├── ToolDefinitionError (TypeError) a developer mistake, raised where the tool is defined
│   ├── RegistryError (ValueError)      a duplicate key, an unknown key, a key a vendor rejects
│   │   └── UnknownToolError (+KeyError)
│   ├── ToolInputError (ValueError)     arguments that do not fit a tool's input schema
│   ├── ToolOutputError (ValueError)    a result that does not fit a tool's output schema
│   ├── ToolTimeoutError (TimeoutError) a tool ran longer than its ``timeout``
│   ├── UsageError (RuntimeError)       an API used where it cannot work (e.g. invoke() in an event loop)
│   ├── ModelSetupError (ValueError)    an unknown model name, a missing API key, a blocked request
│   ├── ModelAPIError                   a vendor API failed (connection, unexpected payload, ...)
│   │   └── ModelHTTPError              ... with an HTTP status: keeps ``status_code``, ``body``, ``headers``
│   ├── UsageLimitExceeded              a run hit a retry budget
│   │   └── RetryLimitExceeded          (agentkit.agent) ... carrying the partial ``result``
│   ├── ApprovalError (ValueError)      (agentkit.agent) a resume with missing or unknown decisions
│   └── WorkflowStepError               (agentkit.workflows) a workflow step failed; names the step
├── ModelRetry                          signal: "tell the model this and let it try again"
└── ToolError                           signal: "this call failed; tell the model why"
Warning
└── AgentkitWarning (UserWarning)       e.g. a docstring that documents a missing parameter
```

`ModelRetry` and `ToolError` are raised *by tools*, not by agentkit: they are control flow, not
failures, so they stay outside `AgentkitError`.
"""

from __future__ import annotations as _annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ._text import clip, shorten

__all__ = [
    "AgentkitError",
    "AgentkitWarning",
    "ErrorDetail",
    "ModelAPIError",
    "ModelHTTPError",
    "ModelRetry",
    "ModelSetupError",
    "RegistryError",
    "ToolDefinitionError",
    "ToolError",
    "ToolInputError",
    "ToolOutputError",
    "ToolTimeoutError",
    "UnknownToolError",
    "UsageError",
    "UsageLimitExceeded",
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


class UsageError(AgentkitError, RuntimeError):
    """An API used where it cannot work, e.g. the sync `Tool.invoke` of an async tool inside a running loop."""


class ModelSetupError(AgentkitError, ValueError):
    """A model cannot be used as given: unknown vendor prefix, missing API key, requests blocked in tests."""


class ModelAPIError(AgentkitError):
    """A vendor API call failed. `model_name` names the model; the message says what happened."""

    def __init__(self, model_name: str, message: str) -> None:
        self.model_name = model_name
        self.message = message
        super().__init__(model_name, message)

    def __str__(self) -> str:
        return f"{self.model_name}: {self.message}"

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
