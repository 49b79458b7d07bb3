"""An agent served to a browser UI over the Vercel AI SDK's UI message stream, read back with httpx.

`agentkit.ui.asgi.app(agent)` is a Starlette app: POST a ``useChat`` body, get server-sent events that
``useChat`` (``@ai-sdk/react``, ``ai`` v5+) renders. Here httpx plays the browser, in process and offline:
it sends a message, sees the tool call and its approval request, then approves it the way
``addToolApprovalResponse`` does (the same assistant message, its tool part ``approval-responded``),
and the run resumes on the server, where the paused run waited. Needs ``pip install 'agentkit-tools[ui]'``.

Serve it for real with ``uvicorn examples.ui_stream:api`` and point ``useChat`` at ``/api/chat``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx

from agentkit import Agent, AssistantMessage, ToolCall, ToolResultsMessage, ToolTransform, tool
from agentkit.messages import Message
from agentkit.testing import FunctionInfo, FunctionModel
from agentkit.ui.asgi import app


@tool(requires_approval=True, transform=ToolTransform(input=lambda a: {**a, "iban": "****" + a["iban"][-4:]}))
def transfer(iban: str, amount: int) -> str:
    """Transfer money.

    Args:
        iban: The account to pay.
        amount: The amount, in euros.
    """
    return f"sent {amount} EUR"


def model(messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
    """Plays the model: one transfer, then the answer."""
    last = messages[-1]
    if isinstance(last, ToolResultsMessage):
        return f"Done: {last.results[0].text}." if not last.results[0].is_error else "OK, nothing was sent."
    arguments = {"iban": "DE89370400440532013000", "amount": 50}
    return AssistantMessage(tool_calls=[ToolCall("call_1", "transfer", arguments)])


agent = Agent(name="bank", model=FunctionModel(model), tools=[transfer])
api = app(agent, path="/api/chat")


def chunks(response: httpx.Response) -> list[dict[str, Any]]:
    """The UI message chunks of a streamed response (the server-sent events, ``[DONE]`` last)."""
    frames = [frame for frame in response.text.split("\n\n") if frame.startswith("data: ")]
    assert frames[-1] == "data: [DONE]"
    return [json.loads(frame[len("data: ") :]) for frame in frames[:-1]]


async def main() -> None:
    """A turn that pauses for approval, the approval, and a replay that is refused."""
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=api), base_url="http://127.0.0.1") as browser:
        user = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Pay 50 EUR to my landlord"}]}
        first = chunks(await browser.post("/api/chat", json={"id": "chat-1", "messages": [user]}))
        for chunk in first:
            print(chunk)
        message_id = first[0]["messageId"]
        call = next(c for c in first if c["type"] == "tool-input-available")
        assert call["input"]["iban"] == "****3000"  # the display transform: the browser never sees the IBAN
        request = next(c for c in first if c["type"] == "tool-approval-request")

        # what useChat sends after addToolApprovalResponse({id, approved: true})
        decided = {
            "id": message_id,
            "role": "assistant",
            "parts": [
                {"type": "step-start"},
                {
                    "type": "tool-transfer",
                    "toolCallId": request["toolCallId"],
                    "state": "approval-responded",
                    "input": call["input"],
                    "approval": {"id": request["approvalId"], "approved": True},
                },
            ],
        }
        second = chunks(await browser.post("/api/chat", json={"id": "chat-1", "messages": [user, decided]}))
        for chunk in second:
            print(chunk)
        assert second[-1]["messageMetadata"]["agentkit"]["status"] == "complete"
        answer = "".join(c["delta"] for c in second if c["type"] == "text-delta")
        assert answer == "Done: sent 50 EUR.", answer

        replay = await browser.post("/api/chat", json={"id": "chat-1", "messages": [user, decided]})
        assert replay.status_code == 409  # a paused run resumes once: the transfer cannot run twice
        print(replay.status_code, replay.json()["error"])


if __name__ == "__main__":
    asyncio.run(main())
