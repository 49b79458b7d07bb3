"""A typed answer after tool calls: one output type, every vendor's form for it, a retry, and a stream.

Runs offline (CI runs it with `python examples/structured_output.py`): a scripted model plays the vendor,
and `request_payload` shows what each vendor would be sent for the same output type.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Literal

from pydantic import BaseModel, Field

from agentkit import Agent, ModelRetry, Output, ToolCall, tool
from agentkit.events import OutputDeltaEvent, OutputEvent
from agentkit.messages import AssistantMessage, Message, ToolResultsMessage
from agentkit.providers import provider_names
from agentkit.testing import FunctionInfo, FunctionModel, request_payload


class Forecast(BaseModel):
    """Tomorrow's weather in one city."""

    city: str
    high: float = Field(description="Highest temperature")
    sky: Literal["sunny", "cloudy", "rain"]


@tool
def get_forecast(city: str) -> dict[str, Any]:
    """The forecast for a city.

    Args:
        city: City name, e.g. "Lisbon".
    """
    return {"city": city, "high_c": 24.5, "sky": "sunny"}


def plausible(value: Forecast) -> None:
    """An output validator: runs on the validated value; ModelRetry sends the model back."""
    if value.high > 60:
        raise ModelRetry(f"{value.high} °C is not plausible for {value.city}; give the forecast's value.")


def scripted(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
    """A stand-in for the model: call the tool, answer badly once, then answer right."""
    last = messages[-1]
    if not isinstance(last, ToolResultsMessage) and len(messages) == 1:
        return AssistantMessage(tool_calls=[ToolCall("c1", "get_forecast", {"city": "Lisbon"})])
    if isinstance(last, ToolResultsMessage):
        return json.dumps({"city": "Lisbon", "high": 99, "sky": "sunny"})  # fails the validator
    return json.dumps({"city": "Lisbon", "high": 24.5, "sky": "sunny"})


async def streamed(messages: list[Message], info: FunctionInfo) -> Any:
    """The same answer, streamed in pieces."""
    if len(messages) == 1:
        yield ToolCall("c1", "get_forecast", {"city": "Lisbon"})
        return
    for piece in ['{"city": "Lis', 'bon", "high": 24.', '5, "sky": "sun', 'ny"}']:
        yield piece


agent = Agent(
    id="forecaster",
    model=FunctionModel(scripted),
    tools=[get_forecast],
    output_type=Output(Forecast, validators=[plausible]),
)


async def main() -> None:
    """A run, a stream, and the vendors' request bodies."""
    result = await agent.generate("Tomorrow in Lisbon?")
    forecast = result.output  # a Forecast (RunResult[Forecast] for the type checker)
    print(f"output: {forecast!r}")
    retry = str(getattr(result.messages[-2], "content", ""))
    print(f"after the validator's retry ({len(result.steps)} model turns): {retry[:70]}...")

    print("\nstreamed, the answer as it arrives:")
    with agent.override(model=FunctionModel(stream_fn=streamed)):
        stream = agent.stream("Tomorrow in Lisbon?")
        async for event in stream:
            if isinstance(event, OutputDeltaEvent):
                print(f"  partial {event.partial}")
            elif isinstance(event, OutputEvent):
                print(f"  output  {event.output!r}")

    print("\nthe same output type, as each vendor is asked for it (beside the tool):")
    for vendor in provider_names():
        offline = Agent(id="forecaster", model=f"{vendor}:model", tools=[get_forecast], output_type=Forecast)
        body = request_payload(offline, "Tomorrow in Lisbon?")
        fields = {"response_format": "response_format", "text": "text.format", "output_config": "output_config"}
        fields.update({"outputConfig": "outputConfig.textFormat", "format": "format"})
        native = [name for key, name in fields.items() if key in body]
        if "responseJsonSchema" in json.dumps(body.get("generationConfig", {})):
            native.append("generationConfig.responseJsonSchema")
        print(f"  {vendor:17} {'native: ' + native[0] if native else 'the output tool final_result'}")


if __name__ == "__main__":
    asyncio.run(main())
