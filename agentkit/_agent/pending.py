"""What a paused run waits for, besides approvals: suspended calls, client-tool calls, background calls.

Each record names the call (`call_id`, unique in the run) and the tool (`tool_name`, the registry key),
keeps the model's `arguments` as received, and a display `payload` shaped by the tool's transforms (the
``suspension`` transform for a suspension, ``input`` for a client call), ``None`` with `transform_error`
set when that transform failed. `kind` tells them apart (``"approval"``, ``"suspension"``, ``"client"``,
``"background"``).
"""

from __future__ import annotations as _annotations

from dataclasses import dataclass
from typing import Any, Literal

from .._json_schema import JsonSchema

__all__ = ["PendingBackground", "PendingClientCall", "PendingSuspension"]


@dataclass(frozen=True)
class PendingSuspension:
    """A call that suspended (`ToolContext.suspend`) and waits for data.

    `request` is what the tool suspended with, for the application; `payload` the same shaped by the
    ``suspension`` transform, for displays; `schema` the JSON Schema the data must fit (``None``: anything).
    Resume with ``{call_id: data}``: the tool runs again with `ToolContext.resume_data`.
    """

    call_id: str
    tool_name: str
    arguments: Any
    request: Any
    payload: Any
    schema: JsonSchema | None = None
    transform_error: str | None = None
    kind: Literal["suspension"] = "suspension"


@dataclass(frozen=True)
class PendingClientCall:
    """A call of a client tool (`client_tool`): the caller runs it and resumes with its output.

    `payload` is the arguments shaped by the ``input`` transform; `output_schema` what the output must fit.
    Resume with ``{call_id: output}``, or ``{call_id: ToolError("why")}`` when it failed.
    """

    call_id: str
    tool_name: str
    arguments: Any
    payload: Any
    output_schema: JsonSchema | None = None
    transform_error: str | None = None
    kind: Literal["client"] = "client"


@dataclass(frozen=True)
class PendingBackground:
    """A background call still running when the run ended (`Tool.background`).

    `resume` (no answer needed) waits for it in the process that runs it, adds its result to the
    conversation and goes on. `done` is True once its result is known (it then travels in the snapshot).
    """

    call_id: str
    tool_name: str
    arguments: Any
    done: bool = False
    kind: Literal["background"] = "background"
