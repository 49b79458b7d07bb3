"""Our Mistral histories through mistral-common's own request validators, one per tokenizer version (issue 17 §5.4).

mistral-common is what Mistral's servers, and vLLM serving Mistral's open-weight models, check a request with
before tokenizing it. Its v1-v3 validators refuse an assistant turn that has both text and tool calls (and
merge two assistant messages back into one, so splitting cannot help); `MistralProvider(text_with_tool_calls=
False)` leaves that text out for those models. Every other version takes the turn as it is.
"""

from __future__ import annotations

from typing import Any

import pytest
from mistral_common.exceptions import InvalidAssistantMessageException  # a dev dependency: Mistral's own checks
from mistral_common.protocol.instruct.request import ChatCompletionRequest
from mistral_common.protocol.instruct.validator import ValidationMode, get_validator
from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy, TokenizerVersion
from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

from agentkit import Registry, tool
from agentkit.messages import AssistantMessage, Message, TextPart, ToolCall, ToolResult, ToolResultsMessage, UserMessage
from agentkit.providers.mistral import MistralProvider

OLD = [TokenizerVersion.v2, TokenizerVersion.v3]
NEW = [TokenizerVersion.v7, TokenizerVersion.v11, TokenizerVersion.v13, TokenizerVersion.v15]


@tool
def get_weather(city: str) -> str:
    """Current weather.

    Args:
        city: City name.
    """
    return "sunny"


REGISTRY = Registry([get_weather])
CALL = ToolCall("call_0001", "get_weather", {"city": "Paris"})
HISTORY: list[Message] = [
    UserMessage("Weather in Paris?"),
    AssistantMessage(text="Let me check.", tool_calls=[CALL]),  # text and calls in one turn
    ToolResultsMessage([ToolResult(CALL.id, CALL.name, [TextPart("sunny")])]),
    AssistantMessage(text="It is sunny."),
    UserMessage("Thanks. And in Oslo?"),
]


def request(provider: MistralProvider) -> ChatCompletionRequest:  # type: ignore[type-arg]
    body = provider.build_request(HISTORY, REGISTRY)
    made: Any = ChatCompletionRequest.from_openai(body["messages"], tools=body["tools"])
    made.model = "served-model"  # serving mode asks for one
    return made  # type: ignore[no-any-return]


@pytest.mark.parametrize("version", OLD + NEW, ids=str)
def test_without_text_beside_calls_every_validator_accepts_the_history(version: TokenizerVersion) -> None:
    get_validator(version, ValidationMode.serving).validate_request(
        request(MistralProvider(text_with_tool_calls=False))
    )


@pytest.mark.parametrize("version", NEW, ids=str)
def test_v7_and_later_take_text_beside_calls(version: TokenizerVersion) -> None:
    get_validator(version, ValidationMode.serving).validate_request(request(MistralProvider()))


@pytest.mark.parametrize("version", OLD, ids=str)
def test_v1_to_v3_refuse_text_beside_calls(version: TokenizerVersion) -> None:
    """What the option is for: the default payload is refused by these validators."""
    with pytest.raises(InvalidAssistantMessageException, match="either content or tool_calls, but not both"):
        get_validator(version, ValidationMode.serving).validate_request(request(MistralProvider()))


def test_the_v3_tokenizer_encodes_it_and_the_history_keeps_the_text() -> None:
    tokenizer = MistralTokenizer.v3()
    provider = MistralProvider(text_with_tool_calls=False)
    tokens = tokenizer.encode_chat_completion(request(provider)).tokens
    text = tokenizer.decode(tokens, special_token_policy=SpecialTokenPolicy.KEEP).replace("\u2581", " ")
    assert "[TOOL_CALLS]" in text and "Let me check." not in text and "It is sunny." in text
    assert isinstance(HISTORY[1], AssistantMessage) and HISTORY[1].text == "Let me check."  # left out of the wire only
