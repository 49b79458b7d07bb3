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

from ._client_tool import client_tool
from ._schema import FunctionSchema
from .agent import Agent, Approval, ApprovalError, RetryLimitExceeded, RunResult
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
from .output import Output
from .registry import Registry
from .runs import RunSnapshot
from .tools import ApprovalPolicy, Tool, ToolOptions, ToolTransform, tool
from .workflows import Workflow

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
