"""Unit-testing a tool offline: directly, through an agent on `TestModel`, and with a contract check.

A plain script that asserts (CI runs it with `python examples/test_with_testmodel.py`); copy the
functions into a pytest module as they are.
"""

from __future__ import annotations

import asyncio

from agentkit import ToolInputError, tool
from agentkit.agent import Agent
from agentkit.testing import TestModel, check_tool_contract, request_payload


@tool
def convert(amount: float, rate: float = 1.08) -> float:
    """Convert an amount of money with an exchange rate.

    Args:
        amount: The amount to convert.
        rate: Units of the target currency per unit of the source currency.
    """
    return round(amount * rate, 2)


agent = Agent(id="fx", instructions="Convert money.", model="openai:gpt-4o-mini", tools={"convert": convert})


def test_the_tool_directly() -> None:
    """A plain call and a validated call."""
    assert convert(10, 2) == 20  # a plain call
    assert convert.invoke({"amount": 10}) == 10.8  # validated, like a model's call
    try:
        convert.invoke({"amount": "ten"})
    except ToolInputError as exc:
        assert exc.errors[0].path == "$.amount"
    else:
        raise AssertionError("invalid arguments were accepted")


async def test_through_the_agent_with_testmodel() -> None:
    """An agent run on TestModel: schema-valid arguments, no network."""
    # no API key needed: the override replaces the OpenAI model for this block only
    with agent.override(model=TestModel(seed=42)):
        result = await agent.generate("Convert some money.")
    call = result.tool_calls[0]
    assert call.name == "convert"
    assert result.tool_results[0].is_error is False
    assert result.tool_results[0].output == round(call.arguments["amount"] * call.arguments.get("rate", 1.08), 2)  # type: ignore[index,union-attr]
    assert result.status == "complete"


def test_the_payload_offline() -> None:
    """What OpenAI would receive, without sending it."""
    body = request_payload(agent, "Convert 10 EUR.")
    assert body["model"] == "gpt-4o-mini"
    assert body["tools"][0]["function"]["name"] == "convert"


def test_the_contract() -> None:
    """Many generated arguments; every result fits the output schema."""
    report = check_tool_contract(convert, max_examples=20, shrink=False)
    assert report.returned == report.examples


if __name__ == "__main__":
    test_the_tool_directly()
    asyncio.run(test_through_the_agent_with_testmodel())
    test_the_payload_offline()
    test_the_contract()
    print("all tool tests passed")
