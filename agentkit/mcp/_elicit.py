"""MCP tool annotations kept on the tool, and a server's elicitation requests turned into suspensions.

**Annotations.** A server's ``annotations`` (``readOnlyHint``, ``destructiveHint``, ``idempotentHint``,
``openWorldHint``, ``title``) become `ToolAnnotations` on the `MCPTool`, and ``MCPServer(requires_approval=
...)`` may decide approval from them (e.g. ``lambda a: a.destructive``).

**Elicitation.** A server that asks for input during a tool call (``elicitation/create``) pauses the run:
agentkit answers the server ``cancel`` for now, the call's outcome is set aside, and the run stops with
status ``"suspended"`` and a `PendingSuspension` whose `schema` is the server's ``requestedSchema`` and
whose request is ``{"message", "mode", "server", "url"?}``. ``agent.resume(result, {call_id: data})``
checks `data` against that schema and calls the tool again; when the server asks again, it gets ``accept``
with `data`; a `ToolError` as the data declines (the call fails with its message, the tool is not called
again). An answer that does not fit the question the server asks on that second call is not sent: the
run pauses again on the new question. The server's tool therefore runs twice up to its question: like
`ToolContext.suspend`, keep side effects after the question. Each call answers one elicitation; with
several calls to one server in flight at once, a request cannot be told apart and is refused (the server
sees an error).
"""

from __future__ import annotations as _annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Union

from ..runs._answers import check_answer_async
from ..tools import ApprovalPolicy, Tool

if TYPE_CHECKING:
    from mcp import types as mcp_types

__all__ = ["ApprovalFromAnnotations", "CallSlot", "Elicitations", "MCPTool", "ToolAnnotations"]


@dataclass(frozen=True)
class ToolAnnotations:
    """What an MCP server says about a tool's behaviour (hints, not guarantees; ``None``: not said)."""

    title: str | None = None
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    idempotent_hint: bool | None = None
    open_world_hint: bool | None = None

    @property
    def read_only(self) -> bool:
        """The tool does not change its environment (``readOnlyHint``, default False)."""
        return bool(self.read_only_hint)

    @property
    def destructive(self) -> bool:
        """The tool may change things irreversibly: not read-only, and ``destructiveHint`` not False.

        These are MCP's defaults: a tool without annotations counts as destructive.
        """
        return not self.read_only and self.destructive_hint is not False

    @classmethod
    def from_mcp(cls, annotations: mcp_types.ToolAnnotations | None) -> ToolAnnotations:
        """From the server's listing (absent annotations: every hint unsaid)."""
        if annotations is None:
            return cls()
        return cls(
            annotations.title,
            annotations.read_only_hint,
            annotations.destructive_hint,
            annotations.idempotent_hint,
            annotations.open_world_hint,
        )


ApprovalFromAnnotations = Union[bool, Callable[[ToolAnnotations], ApprovalPolicy]]
"""`MCPServer(requires_approval=...)`: for every tool, or decided per tool from its `ToolAnnotations`
(returning a bool, or a policy of the call's arguments)."""


class MCPTool(Tool[..., Any]):
    """A tool forwarded to an MCP server; `annotations` are the server's hints about it."""

    annotations: ToolAnnotations = ToolAnnotations()
    server: str = ""
    """The server's name."""


_UNANSWERED: Any = object()


@dataclass
class CallSlot:
    """One tool call in flight: the answer it brings (after a resume) and the question it was asked."""

    answer: Any = _UNANSWERED
    asked: dict[str, Any] | None = None
    schema: dict[str, Any] | None = field(default=None)


class Elicitations:
    """The in-flight calls of one server, and the ``elicitation_callback`` of its session."""

    def __init__(self, server_name: Callable[[], str]) -> None:
        self._server_name = server_name
        self._slots: list[CallSlot] = []

    def open(self, answer: Any = _UNANSWERED) -> CallSlot:
        """Register a call (with the resume data it brings, if any)."""
        slot = CallSlot(answer)
        self._slots.append(slot)
        return slot

    def close(self, slot: CallSlot) -> None:
        """The call ended."""
        self._slots.remove(slot)

    async def __call__(self, context: Any, params: Any) -> Any:
        """Answer an elicitation request: with the call's resume data, or ``cancel`` to pause the run."""
        from mcp import types

        if len(self._slots) != 1:
            return types.ErrorData(
                code=types.INVALID_REQUEST,
                message="agentkit cannot tell which of several concurrent tool calls asks; elicitation refused",
            )
        slot = self._slots[0]
        url = getattr(params, "url", None)
        message = params.message
        if slot.answer is not _UNANSWERED:
            answer, slot.answer = slot.answer, _UNANSWERED
            if url is not None:
                return types.ElicitResult(action="accept")
            # The answer was checked against the question the run paused on; the server may ask differently
            # now. An answer that does not fit this question is never sent: the run pauses on it instead.
            problems = await check_answer_async(dict(params.requested_schema), answer)
            if not problems:
                return types.ElicitResult(action="accept", content=answer)
            message = f"{message}\n\n(The answer given before does not fit this question: {'; '.join(problems)})"
        asked: dict[str, Any] = {"message": message, "mode": "url" if url is not None else "form"}
        asked["server"] = self._server_name()
        if url is not None:
            asked["url"] = url
        slot.asked = asked
        slot.schema = dict(params.requested_schema) if url is None else None
        return types.ElicitResult(action="cancel")  # for now: the run pauses and asks the user
