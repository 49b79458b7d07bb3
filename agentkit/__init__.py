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

from ._schema import FunctionSchema
from .context import ToolContext
from .exceptions import (
    AgentkitError,
    AgentkitWarning,
    ErrorDetail,
    ModelRetry,
    RegistryError,
    ToolDefinitionError,
    ToolError,
    ToolInputError,
    ToolOutputError,
    ToolTimeoutError,
    UnknownToolError,
)
from .messages import ContentPart, ImagePart, TextPart, ToolCall, ToolResult
from .registry import Registry
from .tools import ApprovalPolicy, Tool, ToolOptions, ToolTransform, tool

__version__ = "0.1.0"

__all__ = [
    "AgentkitError",
    "AgentkitWarning",
    "ApprovalPolicy",
    "ContentPart",
    "ErrorDetail",
    "FunctionSchema",
    "ImagePart",
    "ModelRetry",
    "Registry",
    "RegistryError",
    "TextPart",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolDefinitionError",
    "ToolError",
    "ToolInputError",
    "ToolOptions",
    "ToolOutputError",
    "ToolResult",
    "ToolTimeoutError",
    "ToolTransform",
    "UnknownToolError",
    "__version__",
    "tool",
]
