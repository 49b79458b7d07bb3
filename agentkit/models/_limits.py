"""`RequestLimits`: agentkit's own bounds on one vendor request, whatever the SDK's defaults are."""

from __future__ import annotations as _annotations

from dataclasses import dataclass

from ..exceptions import ModelSetupError

__all__ = ["DEFAULT_LIMITS", "RequestLimits"]


@dataclass(frozen=True)
class RequestLimits:
    """How long one model request may take, and how often and how long an SDK may retry it.

    Every SDK model client takes ``limits=``. For a client agentkit builds, all of these apply (the SDK
    is configured with them). For a client you pass in, your client keeps its own timeouts, retries and
    back-off; agentkit still enforces `stream_idle` (and `request` when you pass ``limits=`` yourself).
    None turns a bound off.

    The defaults leave room for reasoning models, which may think for minutes before they answer (or,
    streaming, before their next event), while a server that accepts and never answers, or stalls, ends
    the request in bounded time instead of after the SDKs' 600 s x 3 attempts.
    """

    request: float | None = 600.0
    """Seconds for one non-streamed request from start to parsed answer, all retries and their waits
    included; for a stream, until it opens. Past it: `ModelAPIError` (``request timed out``)."""
    stream_idle: float | None = 300.0
    """Longest silence, in seconds, between two events of a stream. Past it: `ModelAPIError`."""
    connect: float | None = 10.0
    """Seconds to connect (clients built here)."""
    max_retries: int = 2
    """Retries the SDK makes after a failed attempt (clients built here; the SDK decides what it retries)."""
    max_retry_wait: float | None = 30.0
    """Cap on a server's ``retry-after`` (seconds), which some SDKs otherwise sleep whole (clients built
    here that honour the header: OpenAI, Anthropic, Cohere)."""

    def __post_init__(self) -> None:
        # run-time checks of the fields: callers without a type checker pass anything
        for name in ("request", "stream_idle", "connect", "max_retry_wait"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, (int, float)) and value > 0):
                raise ModelSetupError(
                    f"RequestLimits({name}=...) needs a positive number of seconds or None, got {value!r}"
                )
        if not isinstance(self.max_retries, int) or self.max_retries < 0:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ModelSetupError(f"RequestLimits(max_retries=...) needs a whole number >= 0, got {self.max_retries!r}")


DEFAULT_LIMITS = RequestLimits()
"""The limits a model client uses when given none."""
