"""Structured output: `Output` (an output type with options) and the forms `output_type=` takes.

```python
class Weather(BaseModel):
    city: str
    temperature: float

agent = Agent(model="openai:gpt-4.1", tools=[get_weather], output_type=Weather)
result = await agent.generate("Weather in Paris?")
result.output            # a validated Weather (result.text is the raw answer)

agent.generate("...", output_type=Output(list[str], mode="tool"))   # per call, forcing the output tool
```

An output type is anything a tool parameter may be: a pydantic model, dataclass, TypedDict, ``list[...]``,
a scalar, a ``Literal``, a union of models (``[Cat, Dog]`` or ``Cat | Dog``: the model picks one). `str`
(the default) keeps the plain text answer. How the model is asked (`OutputMode`):

* ``"auto"`` (default): the vendor's native structured-output form where it has one that works in this
  request, else an output tool (see each vendor's page for its form and when it falls back);
* ``"native"``: the native form, or an error where the vendor cannot serve it;
* ``"tool"``: an output tool (named `Output.name`) whose arguments are the answer;
* ``"prompted"``: the schema in the instructions, the answer parsed from the text.

See the structured-output guide (``docs/output.md``) for retries, validators and streaming.
"""

from __future__ import annotations as _annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, Union, cast, overload

from typing_extensions import TypeVar

from ._output import DEFAULT_OUTPUT_NAME, union_of
from .models import OutputMode

__all__ = ["DEFAULT_OUTPUT_NAME", "Output", "OutputMode", "OutputSpec"]

T = TypeVar("T")

_MODES = ("auto", "native", "tool", "prompted")


class Output(Generic[T]):
    """An output type and how to ask for it; pass it as ``output_type=`` (agent or per call).

    Args:
        type: the output type (see the module docs).
        mode: ``"auto"``, ``"native"``, ``"tool"`` or ``"prompted"`` (see `OutputMode`).
        name: the output tool's name, and the schema's name in native forms that have one.
        description: what the model is told about the answer (default: a generic line plus the type's
            docstring).
        strict: ask the vendor to enforce the schema (True/False); None: where the vendor and the schema
            allow, as for tools.
        validators: functions of the validated answer (sync or async) run before it is accepted; they may
            raise `ModelRetry` (the model is asked again) and a non-None result replaces it.
        stop_at_tools: keys of tools whose successful call ends the run, with the call's result as its
            output and no further model turn (a tool's own ``ends_run=True`` does the same).
    """

    @overload
    def __init__(
        self,
        type: type[T],
        *,
        mode: OutputMode = "auto",
        name: str = DEFAULT_OUTPUT_NAME,
        description: str | None = None,
        strict: bool | None = None,
        validators: Sequence[Callable[[Any], Any]] = (),
        stop_at_tools: Sequence[str] = (),
    ) -> None: ...
    @overload
    def __init__(
        self: Output[Any],
        type: Any,
        *,
        mode: OutputMode = "auto",
        name: str = DEFAULT_OUTPUT_NAME,
        description: str | None = None,
        strict: bool | None = None,
        validators: Sequence[Callable[[Any], Any]] = (),
        stop_at_tools: Sequence[str] = (),
    ) -> None: ...
    def __init__(
        self,
        type: Any,  # noqa: A002
        *,
        mode: OutputMode = "auto",
        name: str = DEFAULT_OUTPUT_NAME,
        description: str | None = None,
        strict: bool | None = None,
        validators: Sequence[Callable[[Any], Any]] = (),
        stop_at_tools: Sequence[str] = (),
    ) -> None:
        from .exceptions import AgentSetupError

        if mode not in _MODES:
            raise AgentSetupError(f"Output(mode={mode!r}): the mode is one of {', '.join(map(repr, _MODES))}")
        if isinstance(type, Output):
            raise AgentSetupError("Output(Output(...)): pass the output type itself")
        given: Any = type  # a list of types is their union, as for output_type=[...]
        if isinstance(given, (list, tuple)):
            given = union_of(cast("Sequence[Any]", given), "Output([])")
        self.type: Any = given
        self.mode: OutputMode = mode
        self.name = name
        self.description = description
        self.strict = strict
        # run-time checks: callers without a type checker pass anything
        if isinstance(stop_at_tools, str) or not all(isinstance(k, str) for k in stop_at_tools):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise AgentSetupError(f"Output(stop_at_tools=...) takes a list of tool keys, got {stop_at_tools!r}")
        if not all(callable(fn) for fn in validators):
            raise AgentSetupError("Output(validators=...) takes functions of the output value")
        self.validators: tuple[Callable[[Any], Any], ...] = tuple(validators)
        """Functions of the validated answer, run before it is accepted (see `agentkit.output`)."""
        self.stop_at_tools: tuple[str, ...] = tuple(stop_at_tools)
        """Keys of tools whose successful call ends the run with the call's result."""

    def __repr__(self) -> str:
        return f"Output({getattr(self.type, '__qualname__', self.type)!r}, mode={self.mode!r}, name={self.name!r})"


OutputSpec = Union[type[T], Output[T], Sequence[type[T]]]
"""What ``output_type=`` takes (for the type checker): a type, an `Output`, or a list of types (a union).

Other forms (``Literal[...]``, ``Cat | Dog``) work at run time too; checkers type such a run's output as
``Any`` unless the variable is annotated (``agent: Agent[None, Literal["a", "b"]] = Agent(...)``)."""
