"""Typing tests of the SDK model clients: mypy --strict and pyright (strict) check this file; pytest runs it too.

Each client is an `SDKModel[<its Provider>]`, so ``provider=`` and ``.provider`` are typed by the vendor's
provider class without a constructor override: another vendor's provider is a type error (and a run-time
`ModelSetupError`).
"""

from __future__ import annotations

import pytest
from typing_extensions import assert_type

from agentkit.exceptions import ModelSetupError
from agentkit.providers.anthropic import AnthropicModel, AnthropicProvider
from agentkit.providers.openai import OpenAIChatModel, OpenAIChatProvider, OpenAIResponsesModel, OpenAIResponsesProvider


def test_each_client_is_typed_by_its_provider() -> None:
    chat = OpenAIChatModel("gpt-4.1", api_key="sk-test", provider=OpenAIChatProvider())
    assert_type(chat.provider, OpenAIChatProvider)
    responses = OpenAIResponsesModel("gpt-4.1", api_key="sk-test")
    assert_type(responses.provider, OpenAIResponsesProvider)
    assert isinstance(responses.provider, OpenAIResponsesProvider)
    claude = AnthropicModel("claude-sonnet-4-5", api_key="sk-test")
    assert_type(claude.provider, AnthropicProvider)


def test_another_vendors_provider_is_a_type_error_and_a_run_time_error() -> None:
    with pytest.raises(
        ModelSetupError, match=r"OpenAIChatModel needs a OpenAIChatProvider, got OpenAIResponsesProvider"
    ):
        OpenAIChatModel("gpt-4.1", api_key="sk-test", provider=OpenAIResponsesProvider())  # type: ignore[arg-type]
    with pytest.raises(ModelSetupError, match=r"OpenAIResponsesModel needs a OpenAIResponsesProvider"):
        OpenAIResponsesModel("gpt-4.1", api_key="sk-test", provider=OpenAIChatProvider())  # type: ignore[arg-type]
