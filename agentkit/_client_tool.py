"""`client_tool`: a tool the model may call but the caller runs (a browser, a mobile app, another service).

It has schemas and no Python function. In an agent run, its calls are validated like any other and then
pause the run with status ``"awaiting_client"`` (the turn's other calls run first); the caller runs them
and continues with ``agent.resume(result, {call_id: output})``, each output validated against the
declared `output_schema`. Outside a run (``invoke``, an MCP server, a workflow) calling it is an error.
"""

from __future__ import annotations as _annotations

from collections.abc import Mapping
from typing import Any

from ._schema import SchemaSource
from .context import ToolContext
from .exceptions import ClientCallRequested, ToolDefinitionError, ToolError
from .tools import Tool, ToolTransform

__all__ = ["ClientCallRequested", "ClientTool", "client_tool"]


class ClientTool(Tool[..., Any]):
    """A `Tool` with schemas only, run by the caller; see `client_tool`."""

    executed_by_client = True


def client_tool(
    id: str,  # noqa: A002 - the tool's id, as everywhere
    *,
    input_schema: SchemaSource,
    output_schema: SchemaSource | None = None,
    description: str = "",
    strict: bool | None = None,
    requires_approval: bool = False,
    transform: ToolTransform | None = None,
) -> ClientTool:
    """A tool declared to the model and executed by the caller.

    Args:
        id: the tool's id (its registry key by default).
        input_schema: the arguments: a pydantic model, dataclass, TypedDict or JSON Schema dict (object).
        output_schema: what the caller's output must fit (same forms); ``None`` accepts any JSON value.
        description: what the model is told the tool does.
        strict: ask vendors for strict schema adherence.
        requires_approval: ask for approval before the call is handed to the caller.
        transform: shapes what displays receive (``input`` also shapes `PendingClientCall.payload`).

    ```python
    pick_file = client_tool("pick_file", input_schema={"type": "object", "properties": {}},
                            output_schema={"type": "string"}, description="Let the user pick a file.")
    result = await agent.generate("Summarise a file of mine.")      # status "awaiting_client"
    result = await agent.resume(result, {result.pending[0].call_id: "notes.txt"})
    ```
    """
    if not isinstance(input_schema, (type, Mapping)):  # pyright: ignore[reportUnnecessaryIsInstance]  # None, untyped
        raise ToolDefinitionError(id, ["client_tool(input_schema=...) is required: the model must know the arguments"])

    def run_on_client(ctx: ToolContext[Any], arguments: Any) -> Any:
        if ctx.agent is None:
            raise ToolError(f"{id!r} is a client tool: the caller runs it, agentkit cannot call it here.")
        raise ClientCallRequested()

    run_on_client.__name__ = id
    run_on_client.__qualname__ = f"client_tool({id!r})"
    del run_on_client.__annotations__["return"]
    return ClientTool(
        run_on_client,
        id=id,
        description=description,
        input_schema=input_schema,
        output_schema=output_schema,
        strict=strict,
        requires_approval=requires_approval,
        transform=transform,
        inline=True,
    )
