"""MCP servers on Temporal: their tools listed by an activity, stand-ins in the workflow, calls as activities.

A workflow may not open connections, so it cannot list an MCP server's tools itself. At the start of a
run the ``agentkit.list_mcp_tools`` activity opens the agent's servers in the worker and returns their
tools as JSON definitions (written once to the run's history, so a replay sees the same tools); the
workflow makes a stand-in `Tool` of each (same key, description, schemas and approval rule) and runs
the loop with them. A call of a stand-in is an ``agentkit.call_tool`` activity like any other, where
the worker's open session calls the server. The worker keeps its sessions open until it stops.
"""

from __future__ import annotations as _annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from ..mcp._elicit import ToolAnnotations
from ..registry import Registry
from ..tools import Tool

if TYPE_CHECKING:
    from ..agent import Agent
    from ._agent import TemporalAgent

__all__ = ["definitions", "mcp_tools"]


def definitions(agent: Agent[Any, Any]) -> list[dict[str, Any]]:
    """The tools of `agent`'s open MCP servers as JSON definitions (server index, key, schemas, hints)."""
    out: list[dict[str, Any]] = []
    for index, server in enumerate(agent.mcp_servers):
        for key, item in server.registry.items():
            annotations = getattr(item, "annotations", None)  # an MCPTool's ToolAnnotations
            out.append(
                {
                    "server": index,
                    "key": key,
                    "description": item.description,
                    "input_schema": item.input_schema,
                    "output_schema": item.output_schema,
                    "timeout": item.timeout,
                    "annotations": _hints(annotations),
                }
            )
    return out


def _hints(annotations: Any) -> dict[str, Any] | None:
    if not isinstance(annotations, ToolAnnotations):
        return None
    return dataclasses.asdict(annotations)


def mcp_tools(durable: TemporalAgent, listed: list[dict[str, Any]]) -> Registry:
    """Stand-ins for the listed MCP tools: what the workflow's loop sends to the model and approves."""
    registry = Registry()
    servers = durable.agent.mcp_servers
    for entry in listed:
        server = servers[int(entry["server"])]
        registry.add(entry["key"], _stand_in(entry, getattr(server, "requires_approval", False)))
    return registry


def _stand_in(entry: dict[str, Any], policy: Any) -> Tool[..., Any]:
    requires: Any = policy
    if callable(policy):
        hints: dict[str, Any] = entry.get("annotations") or {}
        requires = policy(ToolAnnotations(**hints))
    key = str(entry["key"])

    def unreachable(arguments: dict[str, Any]) -> Any:  # the workflow runs every call as an activity
        raise AssertionError(f"the stand-in of MCP tool {key!r} is never called in the workflow")

    del unreachable.__annotations__["return"]
    unreachable.__name__ = unreachable.__qualname__ = key
    return Tool(
        unreachable,
        id=key,
        description=str(entry.get("description") or ""),
        input_schema=dict(entry["input_schema"]),
        output_schema=dict(entry["output_schema"]) if entry.get("output_schema") is not None else None,
        timeout=entry.get("timeout"),
        requires_approval=requires,
    )
