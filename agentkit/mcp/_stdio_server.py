"""The stdio server's answers to lines that are not MCP messages (JSON-RPC 2.0 §5.1).

The `mcp` SDK's stdio server hands a line it cannot parse to the session as an exception, and nothing
answers it: a client whose request was malformed waits for its timeout. Over HTTP the same body gets an
HTTP 400 with a JSON-RPC error at once. Here the stdio server answers as JSON-RPC says: ``-32700`` (parse
error, id null) for a line that is not JSON, ``-32600`` (invalid request) for JSON that is no valid
message, with the request's id where it has a usable one. A malformed *response* (no ``method``: the
client answering one of the server's requests) is not answered: a response never gets one.
"""

from __future__ import annotations as _annotations

from typing import Any, cast

__all__ = ["answering_bad_lines"]


class _Answering:
    """The session's read stream, answering each unparsable line on the write stream before passing it on."""

    def __init__(self, inner: Any, write: Any) -> None:
        self._inner = inner
        self._write = write

    def __getattr__(self, name: str) -> Any:  # the rest of the stream's interface (last_context, close ...)
        return getattr(self._inner, name)

    async def receive(self) -> Any:
        item = await self._inner.receive()
        if isinstance(item, Exception):
            answer = error_for(item)
            if answer is not None:
                await self._write.send(answer)
        return item

    def __aiter__(self) -> _Answering:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _Answering:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._inner.__aexit__(*exc)


def answering_bad_lines(read: Any, write: Any) -> Any:
    """`read` (the stdio server's read stream), answering on `write` each line that is not an MCP message."""
    return _Answering(read, write)


def error_for(problem: Exception) -> Any:
    """The JSON-RPC error answering the line `problem` was raised for, or None (a response, or not a parse)."""
    from mcp.shared.message import SessionMessage
    from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
    from pydantic import ValidationError

    if not isinstance(problem, ValidationError):
        return None
    errors = problem.errors(include_url=False)
    if any(error["type"] == "json_invalid" for error in errors):
        code, text, request_id = PARSE_ERROR, "Parse error: the line is not JSON", None
    else:
        objects: list[dict[str, Any]] = [
            cast("dict[str, Any]", e["input"]) for e in errors if isinstance(e.get("input"), dict)
        ]
        sent = objects[0] if objects else {}
        if "method" not in sent and ("result" in sent or "error" in sent):
            return None  # a malformed response: nothing answers a response
        found = sent.get("id")
        request_id = found if isinstance(found, (int, str)) and not isinstance(found, bool) else None
        text = 'Invalid Request: not a valid JSON-RPC 2.0 message (an object with jsonrpc "2.0", a method, an id)'
        code = INVALID_REQUEST
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=text)))
