"""One model step through the real ``openai`` SDK at 1,000 and 10,000 tools, turn 1 and turn 100.

    python benchmarks/bench_openai_step.py            # a minute or so
    python benchmarks/bench_openai_step.py --quick    # fewer repetitions

A step is `OpenAIChatModel.request` (and `OpenAIResponsesModel.request`): build the body from a neutral
history and a registry, send it through ``AsyncOpenAI`` (auth, retries, response parsing), and parse the
recorded tool-call answer into a `ModelResponse`. The HTTP transport is in-process (``MockTransport``), so
only client-side work is measured. At turn 100 the history holds 99 earlier tool calls and their results,
each turn with the output items a Responses answer leaves on it (a reasoning item and the call).

Beside each step, measured in the same run, the floor it is judged against: the SDK's own ``post`` of the
very bytes the step sent (captured from the transport), through the same client with the same request
options (what the SDK does for any body: auth, headers, the transport, parsing the answer). So the gap is
exactly agentkit's part: formatting the history, joining the cached tools JSON into the body, parsing the
answer into a `ModelResponse`. The SDK's ``post`` of the body as a dict (the SDK encodes it) and its
``chat.completions.create`` with the same tools (which also walks the parameters) are printed for
comparison. Targets: a step flat in history length, and <= 3x the floor at 10,000 tools.

Machines here are shared and noisy: each figure is the best of several repeats, as CPU time of this
process (everything here, the transport included, runs in it). Nothing here fails on timing; the exit
code is 0 unless the step itself is wrong.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

TARGET_RATIO = 3.0
SIZES = (1000, 10_000)
TURNS = (1, 100)

CHAT_REPLY = {  # a recorded tool-call answer (the shape of the API reference's ChatCompletion)
    "id": "chatcmpl-bench01",
    "object": "chat.completion",
    "created": 1764494400,
    "model": "gpt-4.1-2025-04-14",
    "system_fingerprint": "fp_a1b2c3d4e5",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": None,
                "refusal": None,
                "annotations": [],
                "tool_calls": [
                    {
                        "id": "call_bench01",
                        "type": "function",
                        "function": {"name": "tool_417", "arguments": '{"q":"invoices 2025","n":5}'},
                    }
                ],
            },
            "logprobs": None,
            "finish_reason": "tool_calls",
        }
    ],
    "usage": {"prompt_tokens": 48210, "completion_tokens": 19, "total_tokens": 48229},
}

RESPONSES_REPLY = {  # the same call as a Responses answer, with the reasoning item reasoning models add
    "id": "resp_bench01",
    "object": "response",
    "created_at": 1764494400,
    "model": "gpt-5-2025-08-07",
    "status": "completed",
    "parallel_tool_calls": True,
    "tool_choice": "auto",
    "tools": [],
    "output": [
        {"type": "reasoning", "id": "rs_bench01", "summary": []},
        {
            "type": "function_call",
            "id": "fc_bench01",
            "call_id": "call_bench01",
            "name": "tool_417",
            "arguments": '{"q":"invoices 2025","n":5}',
            "status": "completed",
        },
    ],
    "usage": {"input_tokens": 48210, "output_tokens": 40, "total_tokens": 48250},
}


def big_registry(size: int) -> Any:
    from agentkit import Registry, Tool

    registry = Registry()
    for i in range(size):
        schema = {
            "type": "object",
            "properties": {"q": {"type": "string", "description": f"query {i}"}, "n": {"type": "integer"}},
            "required": ["q"],
        }
        registry.add(f"tool_{i}", Tool.from_json_schema(f"tool_{i}", schema, description=f"Tool number {i}."))
    return registry


SENT: list[bytes] = []
"""The body of the last request each in-process transport received."""


def client_answering(reply: dict[str, Any]) -> Any:
    import openai

    try:
        import httpx2 as httpx  # what the installed openai SDK is built on
    except ImportError:  # older SDKs
        import httpx  # type: ignore[no-redef]

    raw = json.dumps(reply).encode()

    def answer(request: Any) -> Any:
        SENT[:] = [request.content]
        return httpx.Response(200, content=raw, headers={"content-type": "application/json"})

    return openai.AsyncOpenAI(
        api_key="sk-bench",
        base_url="http://127.0.0.1:8080/v1",
        max_retries=0,
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(answer)),
    )


async def best_per_call(fn: Callable[[], Awaitable[Any]], number: int, repeats: int) -> float:
    await fn()  # warm: first-use caches (tool payloads, pydantic validators) are not a step's cost
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        for _ in range(number):
            await fn()
        best = min(best, (time.process_time() - start) / number)
    return best


def history_at(turn: int) -> list[Any]:
    """A neutral history at `turn`: a system prompt, the question, and turn - 1 earlier calls with results."""
    from agentkit import TextPart, ToolCall, ToolResult
    from agentkit.messages import AssistantMessage, SystemMessage, ToolResultsMessage, UserMessage

    history: list[Any] = [SystemMessage("You find documents."), UserMessage("Find the 2025 invoices, five of them.")]
    for i in range(turn - 1):
        call = ToolCall(id=f"call_{i:04d}", name=f"tool_{i % 50}", arguments='{"q":"invoices","n":5}')
        # what parsing a Responses answer keeps on the turn (replayed on that API, ignored by Chat)
        output = [
            {"type": "reasoning", "id": f"rs_{i:04d}", "summary": []},
            {
                "type": "function_call",
                "id": f"fc_{i:04d}",
                "call_id": call.id,
                "name": call.name,
                "arguments": call.arguments,
                "status": "completed",
            },
        ]
        details = {"openai-responses": {"output": output}}
        history.append(AssistantMessage(text="", tool_calls=[call], provider_details=details))
        history.append(ToolResultsMessage([ToolResult(call.id, call.name, [TextPart(f"result {i}")])]))
    return history


def line(label: str, seconds: float, floor: float, *, target: bool = False) -> None:
    ms = seconds * 1e3
    ratio = seconds / floor
    verdict = f"   target <= {TARGET_RATIO:g}x  [{'ok' if ratio <= TARGET_RATIO else 'OVER TARGET'}]" if target else ""
    print(f"  {label:<62} {ms:9.2f} ms   {ratio:6.2f}x floor{verdict}")


async def main(quick: bool) -> None:
    from openai.types.chat import ChatCompletion
    from openai.types.responses import Response

    from agentkit.models import ModelSettings
    from agentkit.providers.openai import OpenAIChatModel, OpenAIResponsesModel
    from agentkit.providers.openai._client import _sdk_support  # what the step passes beside the bytes

    repeats = 3 if quick else 5
    settings = ModelSettings()
    print(f"python {sys.version.split()[0]}; best of {repeats}; in-process transport")
    for size in SIZES:
        registry = big_registry(size)
        number = 10 if size <= 1000 else 3
        chat = OpenAIChatModel("gpt-4.1", client=client_answering(CHAT_REPLY))
        responses = OpenAIResponsesModel("gpt-5", client=client_answering(RESPONSES_REPLY))
        sdk = client_answering(CHAT_REPLY)
        for turn in TURNS:
            history = history_at(turn)
            for model in (chat, responses):  # the step must be right before its time means anything
                answer = await model.request(history, registry, settings)
                assert [c.name for c in answer.message.tool_calls] == ["tool_417"], answer
            print(f"{size:,} tools, turn {turn}")
            apis = ((chat, ChatCompletion, "/chat/completions"), (responses, Response, "/responses"))
            for model, cast_to, path in apis:
                body = model.payload(history, registry, settings)
                await model.request(history, registry, settings)
                [raw] = SENT  # the very bytes the step sends
                options = _sdk_support(type(model.client))[1]  # the request options the step passes
                client = model.client
                floor = await best_per_call(
                    lambda c=client, r=raw, t=cast_to, p=path, o=options: c.post(p, cast_to=t, content=r, options=o),
                    number,
                    repeats,
                )
                as_dict = await best_per_call(
                    lambda c=client, b=body, t=cast_to, p=path: c.post(p, cast_to=t, body=b), number, repeats
                )
                step = await best_per_call(
                    lambda m=model, h=history, r=registry: m.request(h, r, settings), number, repeats
                )
                kind = type(model).__name__
                line(f"floor: SDK post of the same bytes, same client ({path})", floor, floor)
                line(f"{kind}.request (build + send + parse)", step, floor, target=size == SIZES[-1])
                line("for comparison: SDK post of the body as a dict (SDK encodes)", as_dict, floor)
                if turn == TURNS[0]:  # what use_sdk_create=True (for instrumentation patching create()) costs
                    created = type(model)(model.model_name, client=client, use_sdk_create=True)
                    via_create = await best_per_call(
                        lambda m=created, h=history, r=registry: m.request(h, r, settings),
                        number if size <= 1000 else 1,
                        repeats if size <= 1000 else 2,
                    )
                    line(f"{kind}(use_sdk_create=True).request (the SDK's create)", via_create, floor)
            if turn == TURNS[0]:
                messages = [{"role": "system", "content": "You find documents."}, {"role": "user", "content": "Find."}]
                tools = chat.provider.format_tools(registry)
                create = await best_per_call(
                    lambda s=sdk, m=messages, t=tools: s.chat.completions.create(model="gpt-4.1", messages=m, **t), 1, 2
                )
                print(f"  for comparison: SDK chat.completions.create with the same tools {create * 1e3:9.2f} ms")
        for model in (chat, responses):
            await model.client.close()
        await sdk.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    asyncio.run(main(parser.parse_args().quick))
