"""A real MCP server (the `mcp` SDK's own server API) whose tool asks the user for input mid-call.

``python -m tests.mcp_fixtures.elicit_server LEDGER`` serves over stdio. `book_table` elicits the party
size (a form), then records the booking in the ledger file; `list_tables` is read-only, `cancel_all`
destructive, `ping` unannotated (MCP counts it as destructive too).
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

server = MCPServer("bistro")
LEDGER = sys.argv[1] if len(sys.argv) > 1 else "/dev/null"


class Party(BaseModel):
    size: int = Field(description="How many guests")
    name: str = Field(description="Whose name the table is in")


def _record(line: str) -> None:
    with open(LEDGER, "a", encoding="utf-8") as handle:
        handle.write(line + "\n")


@server.tool(annotations=ToolAnnotations(destructive_hint=False, idempotent_hint=False))
async def book_table(restaurant: str, ctx: Context) -> str:
    """Book a table (asks how many guests)."""
    _record(f"asked {restaurant}")
    answer = await ctx.elicit(f"How many guests at {restaurant}, and in whose name?", schema=Party)
    if answer.action != "accept":
        return f"no booking ({answer.action})"
    _record(f"booked {restaurant} {answer.data.size} {answer.data.name}")
    return f"booked {restaurant} for {answer.data.size} ({answer.data.name})"


@server.tool(annotations=ToolAnnotations(read_only_hint=True, title="List tables"))
def list_tables() -> list[str]:
    """The free tables."""
    return ["t1", "t2"]


@server.tool(annotations=ToolAnnotations(destructive_hint=True))
def cancel_all() -> str:
    """Cancel every booking."""
    _record("cancelled all")
    return "cancelled"


@server.tool()
def ping() -> str:
    """Answer pong."""
    return "pong"


if __name__ == "__main__":
    server.run("stdio")
