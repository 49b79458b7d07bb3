"""OpenTelemetry traces of agent runs, following the GenAI semantic conventions. Off unless turned on.

```python
import agentkit

agentkit.instrument()                                  # every agent, the global tracer provider
agentkit.instrument(tracer_provider=provider, include_content=True)
agent = Agent(..., instrument=True)                    # or one agent (False: never this one)
```

A run is one ``invoke_agent {agent}`` span; inside it, each model request a ``chat {model}`` span and
each tool call an ``execute_tool {key}`` span, with the ``gen_ai.*`` attributes of the conventions
(operation, provider, request and response model, response id, finish reasons, token usage with cache
and reasoning details, tool name = the registry key, call id). A subagent's run nests under the tool
call that started it. Message content (instructions, messages, tool arguments and results) is recorded
only with ``include_content=True``, and then as displays see it: through the tools' and the agent's
`ToolTransform`s, so a redacted input stays redacted in the trace.

Only ``opentelemetry-api`` is needed (``pip install 'agentkit-tools[otel]'``); which SDK and exporter
receive the spans is the application's choice. Turned off, the loop pays one attribute check per model
request and tool call (see the benchmarks page).
"""

from __future__ import annotations as _annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Union

from .exceptions import AgentSetupError

if TYPE_CHECKING:
    from ._otel import Tracing

__all__ = ["Instrument", "InstrumentationSettings", "instrument", "is_instrumented", "uninstrument"]


@dataclass(frozen=True)
class InstrumentationSettings:
    """How runs are traced: which tracer provider receives the spans, and whether content is recorded."""

    tracer_provider: Any = None
    """An OpenTelemetry ``TracerProvider``; None: the global one (``opentelemetry.trace.set_tracer_provider``)."""
    include_content: bool = False
    """Record instructions, messages, tool arguments and results (shaped by the display transforms).
    Off by default: prompts and tool data often hold what a trace backend must not keep."""


Instrument = Union[bool, InstrumentationSettings, None]
"""`Agent(instrument=...)`: None follows the enclosing run, else `instrument()`; True traces with the global
settings (or defaults); False never traces this agent's runs; settings trace with those."""

_GLOBAL: list[Tracing | None] = [None]
_OFF: Any = object()
# The tracer of the run the current task belongs to (or "off"): a subagent's run, started inside the
# application's code (a tool call), inherits it. A context variable, for no argument reaches it there.
_CURRENT: ContextVar[Any] = ContextVar("agentkit_tracing", default=None)
_BUILT: dict[InstrumentationSettings, Tracing] = {}


def instrument(
    settings: InstrumentationSettings | None = None, *, tracer_provider: Any = None, include_content: bool = False
) -> None:
    """Trace every agent run from now on (agents with ``instrument=False`` excepted).

    Args:
        settings: the settings; or give `tracer_provider` and `include_content` directly.
        tracer_provider: an OpenTelemetry ``TracerProvider`` (default: the global one).
        include_content: record instructions, messages, tool arguments and results (shaped by the
            display transforms).

    Raises:
        AgentSetupError: ``opentelemetry-api`` is not installed (the message says how to install it).
    """
    if settings is None:
        settings = InstrumentationSettings(tracer_provider=tracer_provider, include_content=include_content)
    elif tracer_provider is not None or include_content:
        raise AgentSetupError("instrument() takes settings or tracer_provider=/include_content=, not both")
    _GLOBAL[0] = _tracing(settings)


def uninstrument() -> None:
    """Stop tracing runs (agents given their own settings keep theirs)."""
    _GLOBAL[0] = None


def is_instrumented() -> bool:
    """Whether `instrument` is on."""
    return _GLOBAL[0] is not None


def _tracing(settings: InstrumentationSettings) -> Tracing:
    """The tracer for `settings` (one per settings value), importing OpenTelemetry on first use."""
    found = _BUILT.get(settings)
    if found is None:
        try:
            from ._otel import Tracing
        except ImportError as exc:
            raise AgentSetupError(
                "Tracing needs the OpenTelemetry API: pip install 'agentkit-tools[otel]' (or opentelemetry-api); "
                "then add an SDK and exporter of your choice (opentelemetry-sdk)."
            ) from exc
        found = _BUILT[settings] = Tracing(settings)
    return found


def _tracing_for(setting: Instrument) -> Tracing | None:
    """The tracer a run of an agent with ``instrument=setting`` uses now (None: not traced)."""
    if setting is None:
        current = _CURRENT.get()
        if current is None:
            return _GLOBAL[0]
        return None if current is _OFF else current
    if setting is False:
        return None
    if setting is True:
        return _GLOBAL[0] or _tracing(InstrumentationSettings())
    return _tracing(setting)


def _check_instrument(setting: Any) -> Instrument:  # pyright: ignore[reportUnusedFunction]  # used by the agent and its loop
    """`setting` if it is a valid ``instrument=`` value, else `AgentSetupError` naming what is accepted."""
    if setting is None or isinstance(setting, (bool, InstrumentationSettings)):
        if isinstance(setting, InstrumentationSettings) or setting is True:
            _tracing_for(setting)  # fails now, not at the first run, when OpenTelemetry is missing
        return setting
    raise AgentSetupError(f"instrument= takes True, False, None or InstrumentationSettings, got {setting!r}")


def _enter_run(tracer: Tracing | None) -> Any:  # pyright: ignore[reportUnusedFunction]  # used by the agent and its loop
    """Make `tracer` the one subagents of the current run inherit (None: theirs are off); a reset token."""
    return _CURRENT.set(tracer if tracer is not None else _OFF)


def _leave_run(token: Any) -> None:  # pyright: ignore[reportUnusedFunction]  # used by the agent and its loop
    """Undo `_enter_run`."""
    _CURRENT.reset(token)
