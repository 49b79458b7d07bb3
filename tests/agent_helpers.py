"""Shared helpers for the agent tests: a scripted model that records what it was sent."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentkit import ToolCall
from agentkit.messages import AssistantMessage, Message
from agentkit.testing import FunctionInfo, FunctionModel


def call(name: str, arguments: Any = None, id: str | None = None) -> ToolCall:
    return ToolCall(id or f"c_{name}", name, arguments if arguments is not None else {})


def calls(*items: ToolCall, text: str = "") -> AssistantMessage:
    return AssistantMessage(text=text, tool_calls=list(items))


@dataclass
class Script:
    """Plays the given turns in order (then answers "done"); records every request it receives."""

    turns: list[AssistantMessage | str]
    seen: list[list[Message]] = field(default_factory=list)
    infos: list[FunctionInfo] = field(default_factory=list)

    def __call__(self, messages: list[Message], info: FunctionInfo) -> AssistantMessage | str:
        self.seen.append(messages)
        self.infos.append(info)
        index = len(self.seen) - 1
        return self.turns[index] if index < len(self.turns) else "done"

    @property
    def model(self) -> FunctionModel:
        return FunctionModel(self)


def scripted(*turns: AssistantMessage | str) -> tuple[FunctionModel, Script]:
    script = Script(list(turns))
    return FunctionModel(script), script
