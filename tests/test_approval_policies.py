"""`requires_approval=` is a bool or a policy, checked when the tool is defined (issue 17 §4.9)."""

from __future__ import annotations

from typing import Any

import pytest

from agentkit import tool
from agentkit.exceptions import ToolDefinitionError
from agentkit.workflows import Workflow


@pytest.mark.parametrize("given", ["no", "false", "", 0, 1, None, [], {"always": False}, bool])
def test_anything_but_a_bool_or_a_policy_is_refused_at_definition(given: Any) -> None:
    def pay(amount: int) -> str:
        """Pay."""
        return "paid"

    with pytest.raises(ToolDefinitionError, match="requires_approval= must be True, False or a function") as info:
        tool(requires_approval=given)(pay)
    assert "pay" in str(info.value)


def test_a_policy_that_answers_something_else_than_a_bool_fails_closed() -> None:
    @tool(requires_approval=lambda args: "no" if args["amount"] < 10 else None)
    def pay(amount: int) -> str:
        """Pay."""
        return "paid"

    assert pay.needs_approval_for({"amount": 1}) is True
    assert pay.needs_approval_for({"amount": 100}) is True


def test_a_workflow_tool_checks_its_own_policy_too() -> None:
    @tool
    def step(x: int) -> int:
        """A step."""
        return x

    as_tool = Workflow("wf", [step]).as_tool()
    with pytest.raises(ToolDefinitionError, match="requires_approval="):
        as_tool.requires_approval = "no"  # type: ignore[assignment]
    assert as_tool.requires_approval is False
