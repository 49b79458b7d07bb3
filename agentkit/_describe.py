"""How an exception reads to a model, a log line or a hook error: ``Type: message``, vendor errors summarised."""

from __future__ import annotations as _annotations

from .exceptions import ModelAPIError

__all__ = ["describe_exception"]


def describe_exception(exc: BaseException) -> str:
    """``Type: message`` of `exc` as a model may read it; a vendor error gives its `summary` instead."""
    if isinstance(exc, ModelAPIError):
        return exc.summary
    return f"{type(exc).__name__}: {exc}"
