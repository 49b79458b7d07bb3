"""Run control through the official ``openai`` and ``anthropic`` SDKs, against recorded responses.

Each test runs an agent whose model wraps the real SDK client over an in-process transport that answers
with recorded API responses (shaped as in the vendors' API references) and keeps every request body, so
what prepare_step, hooks, budgets, limits and tool search did is read off the wire.
"""

from __future__ import annotations

import importlib
import json
from typing import Any

import httpx
import httpx2
import pytest

from agentkit import Registry, ToolCall, ToolContext, tool
from agentkit.agent import Agent, RunContext
from agentkit.exceptions import ModelSetupError
from agentkit.hooks import Deny, Hooks, ModelRequest
from agentkit.limits import RunLimits
from agentkit.search import ToolSearch


def model_class(vendor: str, name: str) -> Any:
    """A vendor's model client class, wherever the vendor layer keeps it (one folder per vendor, or models/)."""
    for module in (f"agentkit.providers.{vendor}", f"agentkit.models.{vendor}"):
        try:
            found = getattr(importlib.import_module(module), name, None)
        except ImportError:
            continue
        if found is not None:
            return found
    raise ImportError(name)


# ---- recorded responses ------------------------------------------------------------------------------


def chat_calls(*calls: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    """A Chat Completions response making tool calls (id, name, arguments)."""
    tool_calls = [
        {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        for cid, name, args in calls
    ]
    message = {"role": "assistant", "content": None, "refusal": None, "annotations": [], "tool_calls": tool_calls}
    return _chat(message, "tool_calls")


def chat_text(text: str) -> dict[str, Any]:
    return _chat({"role": "assistant", "content": text, "refusal": None, "annotations": []}, "stop")


def _chat(message: dict[str, Any], finish: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-rc01",
        "object": "chat.completion",
        "created": 1764494400,
        "model": "gpt-4.1-2025-04-14",
        "system_fingerprint": "fp_a1b2c3d4e5",
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 21, "total_tokens": 141},
    }


def claude_calls(*calls: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    """A Messages API response with tool_use blocks (id, name, input)."""
    blocks = [{"type": "tool_use", "id": cid, "name": name, "input": args} for cid, name, args in calls]
    return _claude(blocks, "tool_use")


def claude_text(text: str) -> dict[str, Any]:
    return _claude([{"type": "text", "text": text}], "end_turn")


def _claude(content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    return {
        "id": "msg_01RunControl",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 410, "output_tokens": 95},
    }


def responses_reply(output: list[dict[str, Any]]) -> dict[str, Any]:
    """A Responses API response with these output items."""
    return {
        "id": "resp_rc01",
        "object": "response",
        "created_at": 1764494400,
        "model": "gpt-5.4-2026-03-05",
        "status": "completed",
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "output": output,
        "usage": {"input_tokens": 90, "output_tokens": 30, "total_tokens": 120},
    }


def responses_text(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": "msg_rc01",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


class Wire:
    """An in-process vendor endpoint: answers with the recorded responses in order, keeps the bodies."""

    def __init__(self, *replies: dict[str, Any]) -> None:
        self.replies = list(replies)
        self.bodies: list[dict[str, Any]] = []

    def _answer(self, request: Any, http: Any) -> Any:
        self.bodies.append(json.loads(request.content))
        return http.Response(200, json=self.replies.pop(0))

    def openai(self) -> Any:
        return model_class("openai", "OpenAIChatModel")("gpt-4.1", client=self.openai_client())

    def openai_client(self) -> Any:
        import openai

        return openai.AsyncOpenAI(
            api_key="sk-test",
            base_url="http://127.0.0.1:8080/v1",
            max_retries=0,
            http_client=httpx.AsyncClient(transport=httpx.MockTransport(lambda r: self._answer(r, httpx))),
        )

    def anthropic(self) -> Any:
        return model_class("anthropic", "AnthropicModel")("claude-sonnet-4-6", client=self.anthropic_client())

    def anthropic_client(self) -> Any:
        import anthropic

        return anthropic.AsyncAnthropic(
            api_key="test-key",
            base_url="http://127.0.0.1:8080",
            max_retries=0,
            http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(lambda r: self._answer(r, httpx2))),
        )


def names(body: dict[str, Any]) -> list[str]:
    """The tool names a request body sends (either vendor)."""
    return [t["function"]["name"] if "function" in t else t["name"] for t in body.get("tools", [])]


@tool
def get_weather(city: str) -> str:
    """Get the current weather for a city.

    Args:
        city: City name.
    """
    return f"sunny in {city}"


@tool
def delete_account(user: str) -> str:
    """Delete a user's account."""
    return f"deleted {user}"


# ---- OpenAI -------------------------------------------------------------------------------------------


async def test_openai_prepare_step_and_dynamic_instructions_shape_each_request() -> None:
    wire = Wire(chat_calls(("call_1", "get_weather", {"city": "Oslo"})), chat_text("Sunny in Oslo."))

    def instructions(ctx: RunContext[str]) -> str:
        return f"You help {ctx.deps}. Step {ctx.step}."

    def prepare(ctx: RunContext[str]) -> Any:
        return {"tool_choice": "get_weather"} if ctx.step == 0 else {"active_tools": []}

    agent = Agent(
        model=wire.openai(),
        tools=[get_weather, delete_account],
        instructions=instructions,
        hooks=[Hooks(prepare_step=prepare)],
    )
    result = await agent.generate("Weather in Oslo?", deps="Ada")
    assert result.text == "Sunny in Oslo."
    first, second = wire.bodies
    assert first["messages"][0] == {"role": "system", "content": "You help Ada. Step 0."}
    assert first["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert second["messages"][0] == {"role": "system", "content": "You help Ada. Step 1."}
    assert second["tool_choice"] == "none"  # no active tool in step 1
    assert second["messages"][-1] == {"role": "tool", "tool_call_id": "call_1", "content": "sunny in Oslo"}


async def test_openai_hooks_deny_and_rewrite_requests_and_run_tools_stay_in_their_run() -> None:
    wire = Wire(chat_calls(("call_1", "delete_account", {"user": "bob"})), chat_text("I may not."), chat_text("Hi."))

    def tag(ctx: RunContext[Any], request: ModelRequest) -> None:
        request.settings = type(request.settings)(temperature=0.0)

    hooks = Hooks(
        before_tool_call=lambda ctx, call: Deny("accounts are deleted by support only"),
        before_model_request=tag,
    )
    agent = Agent(model=wire.openai(), tools=[get_weather], hooks=[hooks])
    result = await agent.generate("Delete bob.", tools=[delete_account])
    assert result.text == "I may not."
    assert names(wire.bodies[0]) == ["get_weather", "delete_account"] and wire.bodies[0]["temperature"] == 0.0
    denied = wire.bodies[1]["messages"][-1]
    assert denied["tool_call_id"] == "call_1" and "accounts are deleted by support only" in denied["content"]
    await agent.generate("Hello.")
    assert names(wire.bodies[2]) == ["get_weather"]  # the run's own tool left with its run


async def test_openai_a_spent_budget_leaves_the_allowed_tools_and_errors_further_calls() -> None:
    wire = Wire(
        chat_calls(("call_1", "get_weather", {"city": "Oslo"}), ("call_2", "get_weather", {"city": "Rome"})),
        chat_text("Oslo is sunny; Rome I could not check."),
    )
    budgeted = Registry({"get_weather": get_weather, "delete_account": delete_account})
    agent = Agent(model=wire.openai(), tools=budgeted, limits=RunLimits(max_turn_concurrency=1))
    result = await agent.generate("Oslo and Rome?", limits=RunLimits(max_tool_calls=1))
    assert [r.error_kind for r in result.tool_results] == [None, "budget"]
    second = wire.bodies[1]
    assert second["tool_choice"] == "none"  # the run's budget is spent: nothing may be called
    assert names(second) == ["get_weather", "delete_account"]  # the tool list itself stays (prompt caching)


async def test_openai_tool_search_sends_found_tools_only() -> None:
    @tool(deferred=True)
    def convert_currency(amount: float, to: str) -> str:
        """Convert an amount of money into another currency."""
        return f"{amount * 2} {to}"

    wire = Wire(
        chat_calls(("call_s", "search_tools", {"query": "convert money currency"})),
        chat_calls(("call_c", "convert_currency", {"amount": 10, "to": "EUR"})),
        chat_text("20 EUR."),
    )
    agent = Agent(
        model=wire.openai(), tools=[get_weather, convert_currency], tool_search=ToolSearch(deferred=["get_weather"])
    )
    result = await agent.generate("10 USD in EUR?")
    assert result.text == "20 EUR."
    assert names(wire.bodies[0]) == ["search_tools"]
    assert names(wire.bodies[1]) == ["search_tools", "convert_currency"]
    listed = json.loads(wire.bodies[1]["messages"][-1]["content"])
    assert listed[0]["name"] == "convert_currency"


# ---- Anthropic ----------------------------------------------------------------------------------------


async def test_anthropic_tool_search_hooks_and_require_approval() -> None:
    @tool(deferred=True)
    def book_flight(origin: str, destination: str) -> str:
        """Book a plane ticket between two airports."""
        return f"booked {origin}-{destination}"

    seen: list[tuple[str | None, str]] = []

    def audit(ctx: ToolContext[Any], call: ToolCall) -> None:
        seen.append((ctx.tool_name, call.name))

    wire = Wire(
        claude_calls(("toolu_s", "search_tools", {"query": "book a plane ticket"})),
        claude_calls(("toolu_b", "book_flight", {"origin": "OSL", "destination": "FCO"})),
        claude_text("Booked."),
    )
    agent = Agent(
        model=wire.anthropic(),
        tools=[book_flight],
        hooks=[Hooks(before_tool_call=audit)],
        tool_search=ToolSearch(native=False),  # agentkit's own search, though Claude 4.6 has the native one
    )
    paused = await agent.generate("Fly me from Oslo to Rome.", require_approval=True)
    assert paused.status == "awaiting_approval" and paused.pending[0].tool_name == "search_tools"
    paused = await agent.resume(paused, {"toolu_s": True})
    assert paused.pending[0].tool_name == "book_flight"
    done = await agent.resume(paused, {"toolu_b": True})
    assert done.text == "Booked." and done.tool_results[-1].output == "booked OSL-FCO"
    assert names(wire.bodies[0]) == ["search_tools"] and names(wire.bodies[1]) == ["search_tools", "book_flight"]
    assert seen == [("search_tools", "search_tools"), ("book_flight", "book_flight")]
    result_block = wire.bodies[1]["messages"][-1]["content"][0]
    assert result_block["type"] == "tool_result" and result_block["tool_use_id"] == "toolu_s"


async def test_anthropic_prepare_step_budgets_and_run_mcp_style_tools() -> None:
    @tool(max_calls=1)
    def lookup(q: str) -> str:
        """Look something up."""
        return f"found {q}"

    wire = Wire(
        claude_calls(("toolu_1", "lookup", {"q": "a"}), ("toolu_2", "lookup", {"q": "b"})),
        claude_text("Only a."),
    )
    agent = Agent(
        model=wire.anthropic(),
        tools=[lookup],
        hooks=[Hooks(prepare_step=lambda ctx: {"instructions": f"Turn {ctx.step}."})],
    )
    result = await agent.generate("Look up a and b.", tools=[get_weather])
    assert [r.error_kind for r in result.tool_results] == [None, "budget"]
    first, second = wire.bodies
    assert (first["system"], second["system"]) == ("Turn 0.", "Turn 1.")
    assert names(first) == ["lookup", "get_weather"]
    assert names(second) == ["get_weather"]  # Anthropic has no allowed-tools form: the spent tool is not sent
    errors = [b for b in second["messages"][-1]["content"] if b.get("is_error")]
    assert len(errors) == 1 and "at most 1 time(s) per run" in json.dumps(errors[0])


# ---- the vendors' native tool search ------------------------------------------------------------------


@tool(deferred=True)
def book_flight(origin: str, destination: str) -> str:
    """Book a plane ticket between two airports."""
    return f"booked {origin}-{destination}"


def claude_search(block_id: str) -> list[dict[str, Any]]:
    """The blocks of one server-side tool search that found ``book_flight`` (Messages API shapes)."""
    return [
        {"type": "server_tool_use", "id": block_id, "name": "tool_search_tool_bm25", "input": {"query": "flight"}},
        {
            "type": "tool_search_tool_result",
            "tool_use_id": block_id,
            "content": {
                "type": "tool_search_tool_search_result",
                "tool_references": [{"type": "tool_reference", "tool_name": "book_flight"}],
            },
        },
    ]


async def test_anthropic_native_tool_search_defers_loading_and_replays_the_server_blocks() -> None:
    from tests.spec import spec_errors

    search_blocks = claude_search("srvtoolu_01")
    first = _claude(
        [
            *search_blocks,
            {"type": "text", "text": "Booking it."},
            {
                "type": "tool_use",
                "id": "toolu_01",
                "name": "book_flight",
                "input": {"origin": "OSL", "destination": "FCO"},
            },
        ],
        "tool_use",
    )
    wire = Wire(first, claude_text("Booked."))
    model = model_class("anthropic", "AnthropicModel")("claude-sonnet-4-6", client=wire.anthropic_client())
    agent = Agent(model=model, tools=[get_weather, book_flight])
    result = await agent.generate("Fly me from Oslo to Rome.")
    assert result.text == "Booked." and result.tool_results[0].output == "booked OSL-FCO"

    sent, again = wire.bodies
    assert sent["tools"][0] == {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
    by_name = {t["name"]: t for t in sent["tools"][1:]}
    assert by_name["book_flight"]["defer_loading"] is True and "defer_loading" not in by_name["get_weather"]
    assert "search_tools" not in by_name  # the vendor searches: agentkit's own search tool is not sent
    assert all(spec_errors("anthropic.messages.tool", t) == [] for t in sent["tools"][1:])
    assistant = again["messages"][1]
    assert assistant["content"][:2] == search_blocks  # the server's search travels back, first
    assert [b["type"] for b in assistant["content"][2:]] == ["text", "tool_use"]
    assert again["tools"] == sent["tools"]  # deferred tools stay in the list: references resolve against it


async def test_openai_responses_native_tool_search_uses_the_hosted_tool_and_replays_its_items() -> None:
    from tests.spec import spec_errors

    search_items = [
        {
            "type": "tool_search_call",
            "id": "tsc_01",
            "call_id": None,
            "arguments": {"query": "flight"},
            "execution": "server",
            "status": "completed",
        },
        {
            "type": "tool_search_output",
            "id": "tso_01",
            "call_id": None,
            "execution": "server",
            "status": "completed",
            "tools": [
                {
                    "type": "function",
                    "name": "book_flight",
                    "parameters": {"type": "object", "properties": {}},
                    "strict": True,
                    "defer_loading": True,
                }
            ],
        },
    ]
    first = responses_reply(
        [
            *search_items,
            {
                "type": "function_call",
                "id": "fc_01",
                "call_id": "call_01",
                "name": "book_flight",
                "arguments": json.dumps({"origin": "OSL", "destination": "FCO"}),
                "status": "completed",
            },
        ]
    )
    wire = Wire(first, responses_reply([responses_text("Booked.")]))
    model = model_class("openai", "OpenAIResponsesModel")("gpt-5.4", client=wire.openai_client())
    agent = Agent(model=model, tools=[get_weather, book_flight])
    result = await agent.generate("Fly me from Oslo to Rome.")
    assert result.text == "Booked." and result.tool_results[0].output == "booked OSL-FCO"

    sent, again = wire.bodies
    assert sent["tools"][0] == {"type": "tool_search"}
    assert spec_errors("openai.responses.tool", sent["tools"][0]) == []
    by_name = {t["name"]: t for t in sent["tools"][1:]}
    assert by_name["book_flight"]["defer_loading"] is True and "defer_loading" not in by_name["get_weather"]
    assert all(spec_errors("openai.responses.function_tool_param", t) == [] for t in sent["tools"][1:])
    replayed = [i.get("type", i.get("role")) for i in again["input"]]
    assert replayed == ["user", "tool_search_call", "tool_search_output", "function_call", "function_call_output"]
    # the hosted search travels back as it came (the SDK leaves out null fields), in its place
    assert again["input"][1:3] == [{k: v for k, v in item.items() if v is not None} for item in search_items]


async def test_native_tool_search_follows_the_model_and_the_settings() -> None:
    from agentkit.testing import request_payload

    def tools_of(agent: Agent) -> list[str]:
        return [t.get("name") or t["type"] for t in request_payload(agent, "hi")["tools"]]

    library = [get_weather, book_flight]
    assert tools_of(Agent(model="anthropic:claude-opus-4-6", tools=library)) == [
        "tool_search_tool_bm25", "get_weather", "book_flight",
    ]  # fmt: skip
    # a model the vendor does not document it for, or native=False: agentkit's own search
    assert tools_of(Agent(model="anthropic:claude-3-7-sonnet-latest", tools=library)) == ["get_weather", "search_tools"]
    off = ToolSearch(native=False)
    assert tools_of(Agent(model="anthropic:claude-opus-4-6", tools=library, tool_search=off)) == [
        "get_weather", "search_tools",
    ]  # fmt: skip
    forced = ToolSearch(native=True)
    assert (
        tools_of(Agent(model="openai-responses:my-proxy-model", tools=library, tool_search=forced))[0] == "tool_search"
    )
    with pytest.raises(ModelSetupError, match="has no native tool search"):
        request_payload(Agent(model="openai:gpt-5.4", tools=library, tool_search=forced), "hi")


def claude_sse(blocks: list[dict[str, Any]], stop: str) -> bytes:
    """A Messages API stream of these content blocks (inputs streamed as JSON deltas)."""
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {**_claude([], stop), "stop_reason": None}},
    ]
    for index, block in enumerate(blocks):
        streamed = block.get("type") in ("tool_use", "server_tool_use")
        start = {**block, "input": {}} if streamed else block
        events.append({"type": "content_block_start", "index": index, "content_block": start})
        if streamed:
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            events.append({"type": "content_block_delta", "index": index, "delta": delta})
        events.append({"type": "content_block_stop", "index": index})
    events.append({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 9}})
    events.append({"type": "message_stop"})
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


async def test_anthropic_native_tool_search_streams_too() -> None:
    blocks = [
        *claude_search("srvtoolu_02"),
        {"type": "tool_use", "id": "toolu_02", "name": "book_flight", "input": {"origin": "OSL", "destination": "FCO"}},
    ]
    replies = [claude_sse(blocks, "tool_use"), claude_sse([{"type": "text", "text": "Booked."}], "end_turn")]
    bodies: list[dict[str, Any]] = []

    def answer(request: Any) -> Any:
        bodies.append(json.loads(request.content))
        return httpx2.Response(200, content=replies.pop(0), headers={"content-type": "text/event-stream"})

    import anthropic

    client = anthropic.AsyncAnthropic(
        api_key="k", base_url="http://127.0.0.1:8080", max_retries=0,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(answer)),
    )  # fmt: skip
    agent = Agent(
        model=model_class("anthropic", "AnthropicModel")("claude-opus-4-6", client=client), tools=[book_flight]
    )
    stream = agent.stream("Fly me from Oslo to Rome.")
    result = await stream.get_result()
    assert result.text == "Booked." and result.tool_calls[0].name == "book_flight"  # the server's search is no call
    assert result.tool_results[0].output == "booked OSL-FCO"
    replayed = bodies[1]["messages"][1]["content"]
    assert [b["type"] for b in replayed] == ["server_tool_use", "tool_search_tool_result", "tool_use"]
    assert replayed[0]["input"] == {"query": "flight"}  # rebuilt from the streamed deltas
