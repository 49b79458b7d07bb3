"""The acceptance case's agent, importable by a second process: three tools, the second needs approval.

Each tool appends its name to the file named by ``AGENTKIT_CM_LEDGER``, so calls are counted across
processes. The ``transfer`` tool's display transform hides the account number.
"""

from __future__ import annotations

import os
from typing import Any

from agentkit import Agent, ToolTransform, tool
from agentkit.codemode import CodeMode
from agentkit.messages import AssistantMessage, Message, ToolCall, ToolResultsMessage
from agentkit.runs import SQLiteRunStore, default_store_path
from agentkit.testing import FunctionInfo, FunctionModel

KEY = b"codemode-acceptance-key-0123456789"


def _ledger(name: str) -> None:
    with open(os.environ["AGENTKIT_CM_LEDGER"], "a", encoding="utf-8") as out:
        out.write(name + "\n")


@tool
def lookup(account: str) -> dict[str, Any]:
    """Look an account up."""
    _ledger("lookup")
    return {"account": account, "balance": 120}


@tool(
    requires_approval=True,
    transform=ToolTransform(
        input=lambda args: {**args, "account": "****"},
        output=lambda out: {"status": out["status"]},
    ),
)
def transfer(account: str, amount: int) -> dict[str, Any]:
    """Move money out of an account."""
    _ledger("transfer")
    return {"status": "sent", "account": account, "amount": amount}


@tool
def notify(text: str) -> str:
    """Tell the owner."""
    _ledger("notify")
    return f"notified: {text}"


PROGRAM = """
acct = await lookup("DE89370400440532013000")
try:
    receipt = await transfer(acct["account"], 50)
    status = receipt["status"]
except PermissionError as e:
    status = "denied: " + str(e)[:40]
note = await notify(status)
print("balance was", acct["balance"])
{"status": status, "note": note}
"""


def turn(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
    last = messages[-1]
    if isinstance(last, ToolResultsMessage):
        return "done: " + last.results[0].text
    return AssistantMessage(tool_calls=[ToolCall("prog1", "run_python", {"code": PROGRAM})])


def make_agent() -> Agent[Any, str]:
    return Agent(
        id="bank",
        model=FunctionModel(turn),
        tools=[lookup, transfer, notify],
        code_mode=CodeMode(),
        store=SQLiteRunStore(default_store_path(), key=KEY),
    )
