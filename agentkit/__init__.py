"""agentkit: a decorator-first, typed SDK for LLM tool calling.

```python
from agentkit import tool, Registry

@tool
def add(a: int, b: int) -> int:
    \"\"\"Add two numbers.\"\"\"
    return a + b

tools = Registry([add])
tools["add"].input_schema   # JSON Schema of the arguments
add.invoke({"a": 1, "b": 2})  # validated call -> 3
```
"""

from __future__ import annotations as _annotations

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

from ._client_tool import client_tool
from ._schema import FunctionSchema
from .context import RunContext, ToolContext
from .definitions import ToolDefinition
from .exceptions import (
    AgentkitError,
    AgentkitWarning,
    ErrorDetail,
    ModelAPIError,
    ModelHTTPError,
    ModelRetry,
    ModelSetupError,
    OutputValidationError,
    RegistryError,
    ToolDefinitionError,
    ToolError,
    ToolInputError,
    ToolOutputError,
    ToolTimeoutError,
    UnknownToolError,
    UsageError,
    UsageLimitExceeded,
)
from .hooks import Hooks, RunHooks, StepChanges
from .instrumentation import InstrumentationSettings, instrument, is_instrumented, uninstrument
from .limits import ConcurrencyLimit, RunLimits
from .messages import (
    AssistantMessage,
    ContentPart,
    ImagePart,
    Message,
    ModelResponse,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    ToolResultsMessage,
    Usage,
    UserMessage,
)
from .registry import Registry
from .tools import ApprovalPolicy, Tool, ToolOptions, ToolTransform, tool
from .workflows import Workflow

if _TYPE_CHECKING:
    from .agent import Agent, Approval, ApprovalError, RetryLimitExceeded, RunResult
    from .output import Output
    from .runs import RunSnapshot

# The agent layer (the loop, durable runs, typed output: asyncio and most of the package) is imported on
# first use, so a program that only defines and calls tools starts in about the time pydantic takes.
_LAZY = {
    "Agent": "agent",
    "Approval": "agent",
    "ApprovalError": "agent",
    "RetryLimitExceeded": "agent",
    "RunResult": "agent",
    "Output": "output",
    "RunSnapshot": "runs",
}


def __getattr__(name: str) -> _Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agentkit' has no attribute {name!r}")
    value = getattr(_importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later reads find it without this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__version__ = "0.1.0"
"""The installed agentkit version."""

__all__ = [
    "Agent",
    "AgentkitError",
    "AgentkitWarning",
    "Approval",
    "ApprovalError",
    "ApprovalPolicy",
    "AssistantMessage",
    "ConcurrencyLimit",
    "ContentPart",
    "ErrorDetail",
    "FunctionSchema",
    "Hooks",
    "ImagePart",
    "InstrumentationSettings",
    "Message",
    "ModelAPIError",
    "ModelHTTPError",
    "ModelResponse",
    "ModelRetry",
    "ModelSetupError",
    "Output",
    "OutputValidationError",
    "Registry",
    "RegistryError",
    "RetryLimitExceeded",
    "RunContext",
    "RunHooks",
    "RunLimits",
    "RunResult",
    "RunSnapshot",
    "StepChanges",
    "SystemMessage",
    "TextPart",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolDefinition",
    "ToolDefinitionError",
    "ToolError",
    "ToolInputError",
    "ToolOptions",
    "ToolOutputError",
    "ToolResult",
    "ToolResultsMessage",
    "ToolTimeoutError",
    "ToolTransform",
    "UnknownToolError",
    "Usage",
    "UsageError",
    "UsageLimitExceeded",
    "UserMessage",
    "Workflow",
    "__version__",
    "client_tool",
    "instrument",
    "is_instrumented",
    "tool",
    "uninstrument",
]
