"""Reading a vendor's stream once: the accumulator every provider offers, and the decoder clients use.

Each vendor's ``_codec.py`` has ONE stream decoder (a `StreamDecoder`). Its `StreamAccumulator.feed` is
the public view (argument deltas, for code that reads a stream itself); its `StreamDecoder.decode` turns
each event into neutral `ModelStreamEvent`s for the model client; and `StreamDecoder.response` rebuilds the
whole vendor response the stream described and parses it with the vendor's own `parse_response`, so a
streamed turn and a non-streamed one cannot come out different. A stream that ends before the vendor's
last event is never a finished turn: `response` raises `ModelAPIError`.
"""

from __future__ import annotations as _annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from ..exceptions import ModelAPIError
from ..messages import ModelResponse, ToolCall
from ..models._base import ModelStreamEvent, ToolCallArgsDelta
from ._malformed import guarded

if TYPE_CHECKING:
    from ..definitions import ToolDefinition
    from ._codec import Provider, Tools
    from ._names import NameMap

__all__ = ["StreamAccumulator", "StreamDecoder", "ToolCallDelta"]

_READERS = ("feed", "decode", "flush", "response", "tool_calls")


def _model(decoder: StreamAccumulator) -> str:
    return getattr(decoder, "model_name", None) or decoder._provider.name


@dataclass
class ToolCallDelta:
    """A streamed tool call growing: what arrived now and everything so far."""

    index: int
    id: str | None
    name: str | None
    """The registry key (aliases already mapped back), once the vendor has sent the name."""
    arguments_delta: str
    arguments_so_far: str


@dataclass
class _PartialCall:
    id: str | None = None
    name: str | None = None
    arguments: str = ""
    parsed: Mapping[str, Any] | None = None  # vendors that stream whole argument objects
    extra: dict[str, Any] = field(default_factory=dict)


class StreamAccumulator:
    """Turns one vendor's stream events/chunks into `ToolCall`s, reporting argument deltas.

    Vendor modules subclass this and implement `feed`, calling `_start`, `_append` and `_set_args`.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in _READERS:  # an event of the wrong shape is a ModelAPIError, in every vendor's decoder
            method = cls.__dict__.get(name)
            if method is not None:
                setattr(cls, name, guarded(method, _model))

    def __init__(self, provider: Provider, names: NameMap | None, tools: Mapping[str, ToolDefinition] | None) -> None:
        self._provider = provider
        self._names = names
        self._tools = tools
        self._calls: dict[int, _PartialCall] = {}

    def feed(self, event: Any) -> list[ToolCallDelta]:
        """Consume one stream event/chunk (dict or SDK object); return the argument deltas it carried."""
        raise NotImplementedError

    def _key(self, name: str | None) -> str | None:
        if name is None or self._names is None:
            return name
        return self._names.key_for(name)

    def _start(self, index: int, id: str | None, name: str | None, **extra: Any) -> _PartialCall:  # noqa: A002
        call = self._calls.setdefault(index, _PartialCall())
        call.id = id or call.id
        call.name = name or call.name
        call.extra.update(extra)
        return call

    def _append(self, index: int, fragment: str) -> ToolCallDelta:
        call = self._calls.setdefault(index, _PartialCall())
        call.arguments += fragment
        return ToolCallDelta(index, call.id, self._key(call.name), fragment, call.arguments)

    def _set_args(self, index: int, arguments: Mapping[str, Any]) -> None:
        self._calls.setdefault(index, _PartialCall()).parsed = arguments

    def _parse_arguments(self, index: int) -> None:
        """At the end of a call's block, parse its argument text into the object a non-streamed call carries.

        No text keeps the object the block started with (else ``{}``); text that is no JSON object is
        kept as text, so validation reports it to the model.
        """
        call = self._calls[index]
        if not call.arguments.strip():
            self._set_args(index, call.parsed or {})
            return
        try:
            parsed = json.loads(call.arguments)
        except ValueError:
            return
        if isinstance(parsed, dict):
            self._set_args(index, parsed)

    @property
    def partial(self) -> dict[int, str]:
        """Argument text received so far, per call index."""
        return {i: c.arguments for i, c in sorted(self._calls.items())}

    def tool_calls(self) -> list[ToolCall]:
        """The calls assembled so far (complete once the stream has ended), in index order."""
        out = []
        for index, call in sorted(self._calls.items()):
            if call.name is None:
                continue
            arguments: str | Mapping[str, Any] = call.parsed if call.parsed is not None else call.arguments
            out.append(
                self._provider._finish_call(
                    ToolCall(
                        id=call.id or f"call_{index}",
                        name=call.name,
                        arguments=arguments,
                        provider_details=call.extra or None,
                    ),
                    self._names,
                    self._tools,
                )
            )
        return out


class StreamDecoder(StreamAccumulator):
    """One vendor's stream, read once: neutral events as they arrive, then the whole turn.

    Vendors implement `_decode` (one event in, the events it carries out, updating what `_snapshot`
    rebuilds) and set `finished` on the vendor's last event; `terminal` names that event in errors.
    """

    terminal: ClassVar[str] = "its last event"
    model_name: str | None = None
    """The model's name for errors (set by the model client)."""

    def __init__(self, provider: Provider, names: NameMap | None, tools: Mapping[str, ToolDefinition] | None) -> None:
        super().__init__(provider, names, tools)
        self.source: tuple[Tools | None, bool] = (None, False)
        """The tools and aliases the stream answers (what `response` parses with)."""
        self.finished = False
        """Whether the vendor's last event has arrived (only then is the turn complete)."""
        self.events = 0
        """How many events were decoded."""

    def decode(self, event: Any) -> list[ModelStreamEvent]:
        """Consume one raw stream event (dict or SDK object); return the neutral events it carries."""
        self.events += 1
        return self._decode(event)

    def _decode(self, event: Any) -> list[ModelStreamEvent]:
        raise NotImplementedError

    def flush(self) -> list[ModelStreamEvent]:
        """Events owed once the stream has ended (e.g. a call that never streamed an argument)."""
        return []

    def response(self) -> ModelResponse:
        """The whole turn, as `Provider.parse_response` reads the response the stream described.

        Raises:
            ModelAPIError: the stream ended before the vendor's last event (a cut connection, a
                server that gave up, or a plain JSON body sent for a stream request).
        """
        if not self.finished:
            if not self.events:
                why = "the server sent no stream events (a JSON body for a stream request?)"
            else:
                why = f"the stream ended before {self.terminal}: the turn is incomplete"
            raise ModelAPIError(self.model_name or self._provider.name, why)
        registry, aliases = self.source
        return self._provider.parse_response(self._snapshot(), registry=registry, aliases=aliases)

    def _snapshot(self) -> Any:
        """The vendor's whole response, as the non-streamed API would have returned it."""
        raise NotImplementedError

    def _args_events(self, data: Any) -> list[ModelStreamEvent]:
        """`feed` as neutral events."""
        return [ToolCallArgsDelta(d.index, d.arguments_delta, d.arguments_so_far) for d in self.feed(data)]

    def _call_dicts(self) -> list[tuple[int, _PartialCall]]:
        """The calls so far, in index order, with a name (what a rebuilt response lists)."""
        return [(index, call) for index, call in sorted(self._calls.items()) if call.name is not None]


for _cls in (StreamAccumulator, StreamDecoder):
    for _name in _READERS:
        if _name in _cls.__dict__:
            setattr(_cls, _name, guarded(_cls.__dict__[_name], _model))
