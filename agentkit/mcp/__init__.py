"""MCP in both directions: an MCP server's tools as a `Registry`, and a `Registry` served over MCP.

```python
from agentkit.mcp import MCPServer, serve

async with MCPServer.stdio("uvx", ["mcp-server-time"]) as time_server:
    time_server.registry          # Registry keyed by the MCP tool names

serve(tools, resources=[docs], prompts=[review])   # this registry (and @resource/@prompt functions) over stdio
serve(tools, "http", port=8765)   # ... or over streamable HTTP
```

Needs the `mcp` package (``pip install 'agentkit-tools[mcp]'``), imported only when a server is opened or
served: importing this module does not import `mcp`.
"""

from __future__ import annotations as _annotations

from ._client import MCPServer, ProtocolChoice, StructuredOutput
from ._common import MCPConnectionError, MCPLoadError, MCPRequestError
from ._definitions import Prompt, Resource, prompt, resource
from ._elicit import ApprovalFromAnnotations, MCPTool, ToolAnnotations
from ._remote import (
    MCPPrompt,
    MCPResource,
    MCPResourceTemplate,
    PromptArgument,
    ResourceContents,
)
from ._server import (
    Transport,
    create_server,
    load_registry,
    mcp_output_schema,
    mcp_tools,
    serve,
    serve_async,
    serve_command,
    serving_http,
)
from ._trust import DriftPolicy, ToolDrift

__all__ = [
    "ApprovalFromAnnotations",
    "DriftPolicy",
    "MCPConnectionError",
    "MCPLoadError",
    "MCPPrompt",
    "MCPRequestError",
    "MCPResource",
    "MCPResourceTemplate",
    "MCPServer",
    "MCPTool",
    "Prompt",
    "PromptArgument",
    "ProtocolChoice",
    "Resource",
    "ResourceContents",
    "StructuredOutput",
    "ToolAnnotations",
    "ToolDrift",
    "Transport",
    "create_server",
    "load_registry",
    "mcp_output_schema",
    "mcp_tools",
    "prompt",
    "resource",
    "serve",
    "serve_async",
    "serve_command",
    "serving_http",
]
