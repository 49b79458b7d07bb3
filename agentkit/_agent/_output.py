"""The output side of a run: the structured answer (validated, retried), the output tool, tools ending the run.

`OutputConfig` is what a run asks (picklable, kept in `RunRequest` for `resume`); `RunOutput` is how one
run serves it on its model: the `OutputPlan` (native, tool or prompted), the registry and settings that
plan needs, reading and validating each answer, and the partial answers a stream shows. What a run does
with an answer (accept it, ask again, give up) is `agentkit._agent._answer`'s.
"""

from __future__ import annotations as _annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from .._output import DEFAULT_OUTPUT_NAME, OutputSchema, is_text_output, union_of
from ..exceptions import AgentSetupError, ErrorDetail, ModelRetry, OutputValidationError, ToolInputError
from ..messages import TextPart, ToolCall, ToolResult, UserMessage
from ..models import Model, ModelSettings, OutputMode, OutputPlan, OutputRequest
from ..registry import Registry

if TYPE_CHECKING:
    from ..hooks import ModelRequest
    from .results import RunResult

__all__ = ["OutputConfig", "RunOutput"]

OutputValidatorFn = Callable[[Any], Any]
"""A function of the validated value, sync or async; may raise `ModelRetry`; a non-None result replaces it."""


@dataclass(frozen=True)
class OutputConfig:
    """What a run asks of its answer. Plain data: it travels in a paused run's state (pickle included)."""

    target: Any = None
    """The output type; None (or `str`): the model's text, unvalidated."""
    mode: OutputMode = "auto"
    name: str = DEFAULT_OUTPUT_NAME
    description: str | None = None
    strict: bool | None = None
    validators: tuple[OutputValidatorFn, ...] = ()
    stop_at: frozenset[str] = frozenset()
    """Registry keys whose successful call ends the run with that call's result."""

    @property
    def structured(self) -> bool:
        """Whether the run asks for an output type (not just text)."""
        return not is_text_output(self.target)

    def schema(self) -> OutputSchema | None:
        """The output type as models are asked for it (built once per type and options), None for text.

        Raises:
            AgentSetupError: the type cannot be asked of a model, or the name breaks vendors' rules.
        """
        if not self.structured:
            return None
        return _schema(self.target, self.name, self.description, self.strict)

    def with_stop_at(self, keys: Sequence[str]) -> OutputConfig:
        """These options with `keys` added to the tools that end the run."""
        return dataclasses.replace(self, stop_at=self.stop_at | frozenset(keys)) if keys else self


def _schema(target: Any, name: str, description: str | None, strict: bool | None) -> OutputSchema:
    try:
        return _cached_schema(target, name, description, strict)
    except TypeError:  # an unhashable type form (metadata in Annotated): built for this run only
        return OutputSchema(target, name=name, description=description, strict=strict)


@functools.lru_cache(maxsize=256)
def _cached_schema(target: Any, name: str, description: str | None, strict: bool | None) -> OutputSchema:
    return OutputSchema(target, name=name, description=description, strict=strict)


_RETRY_HINT = "Answer again with the corrected JSON object only."


def _ending_keys(registry: Registry) -> tuple[str, ...]:
    """The keys of the tools marked ``ends_run=True`` (kept on the registry while it is unchanged)."""
    hit: tuple[int, tuple[str, ...]] | None = registry.__dict__.get("_agentkit_ending")
    if hit is not None and hit[0] == registry.version:
        return hit[1]
    keys = tuple(key for key, item in registry.items() if item.ends_run)
    registry.__dict__["_agentkit_ending"] = (registry.version, keys)
    return keys


class RunOutput:
    """How one run asks for and reads its answer (see the module docs)."""

    def __init__(self, config: OutputConfig, model: Model | Any, registry: Registry) -> None:
        self.config = config
        self.schema = config.schema()
        self.plan: OutputPlan | None = None
        self.key: str | None = None
        """The output tool's key (``tool`` mode only): its calls are answers, never run as tools."""
        self.request: OutputRequest | None = None
        self.raw: Any = None
        self.errors: list[ErrorDetail] = []
        self._streamed = ""
        self._shown: Any = None
        self._planned: tuple[Any, bool] | None = None
        if self.schema is not None:
            self._plan_for(model, registry)

    def _plan_for(self, model: Model | Any, registry: Registry) -> None:
        """Decide how `model` is asked for the output, beside the tools of `registry`."""
        assert self.schema is not None
        definition = self.schema.definition
        with_tools = len(registry) > 0
        plan: OutputPlan
        if isinstance(model, Model):
            plan = model.output_plan(definition, self.config.mode, with_tools=with_tools)
        else:  # a bare `Provider` (request_payload): no model name to decide by
            plan = model.output_plan(definition, mode=self.config.mode, with_tools=with_tools)
        self.plan = plan
        self._planned = (model, with_tools)
        mode = plan.mode
        self.key = self.schema.name if mode == "tool" else None
        if self.key is not None and self.key in registry:
            raise AgentSetupError(
                f"the output tool's name {self.key!r} is already a tool's key; name the output otherwise, "
                f"e.g. Output(..., name='{self.key}_answer')"
            )
        prompt = self.schema.prompt() if mode == "prompted" else None
        self.request = OutputRequest(definition, mode, prompt)

    def settled(self, model: Model | Any, tools: Registry) -> bool:
        """Whether the output is planned for `model` beside `tools` already (`prepared` would not plan again)."""
        planned = self._planned
        return planned is not None and planned[0] is model and planned[1] == (len(tools) > 0)

    def prepared(self, request: ModelRequest) -> ModelRequest:
        """One step's request asking for the output: planned for its model (``prepare_step`` may change it)."""
        if self.schema is None:
            return request
        if not self.settled(request.model, request.tools):
            self._plan_for(request.model, request.tools)
        # the request is this step's own (made by prepare_request): changed in place, as hooks may
        request.tools = self.registry(request.tools)
        request.settings = self.settings(request.settings)
        return request

    @classmethod
    def of(cls, config: OutputConfig | None, model: Model | Any, registry: Registry) -> RunOutput | None:
        """The run's output handling; None for a text run that no tool ends (the common case, untouched)."""
        if config is None:
            config = OutputConfig()
        ending = _ending_keys(registry)
        if ending:
            config = config.with_stop_at(ending)
        if not config.structured and not config.stop_at:
            return None
        return cls(config, model, registry)

    def fresh(self) -> RunOutput:
        """This reader for another run: the plan (made once per agent and model) shared, no answer seen yet."""
        copied = object.__new__(RunOutput)
        copied.__dict__.update(self.__dict__)
        copied.raw, copied.errors, copied._streamed, copied._shown = None, [], "", None
        return copied

    @property
    def streams_text(self) -> bool:
        """Whether the answer arrives as the model's text (``native`` and ``prompted``)."""
        return self.plan is not None and self.plan.mode != "tool"

    # ---- the run's tools and settings ----------------------------------------------------------------

    def registry(self, registry: Registry) -> Registry:
        """The tools the model is told about: `registry`, plus the output tool in ``tool`` mode."""
        if self.key is None or self.schema is None:
            return registry
        # kept on the registry (one per output tool, while it is unchanged): runs reuse it and its payloads
        hit: tuple[int, OutputSchema, Registry] | None = registry.__dict__.get("_agentkit_with_output")
        if hit is not None and hit[0] == registry.version and hit[1] is self.schema:
            return hit[2]
        combined = registry.copy()
        combined.add(self.key, self.schema.tool)
        registry.__dict__["_agentkit_with_output"] = (registry.version, self.schema, combined)
        return combined

    def settings(self, settings: ModelSettings) -> ModelSettings:
        """`settings` asking for the output: the request's output field; in ``tool`` mode a tool call is required.

        The output tool must stay callable: ``auto`` becomes ``required`` (the answer is a call), ``none``
        becomes the output tool itself, and active tools include it.
        """
        if self.request is None:
            return settings
        if self.key is None:
            return _with_fields(settings, output=self.request)
        choice = settings.tool_choice
        if choice == "auto":
            choice = "required"
        elif choice == "none":
            choice = self.key
        active = settings.active_tools
        if active is not None and self.key not in active:
            active = (*active, self.key)
        return _with_fields(settings, output=self.request, tool_choice=choice, active_tools=active)

    # ---- answers ---------------------------------------------------------------------------------------

    def check_text(self, text: str) -> Any:
        """The value of a text answer (null for an optional field means its default, as for tool arguments).

        Raises:
            ToolInputError: the text does not fit the output type.
        """
        assert self.schema is not None
        return self.schema.validate_text(text, restore=True)

    def retry_prompt(self, exc: ToolInputError | ModelRetry) -> UserMessage:
        """What the model is told after a text answer that does not fit (or that a validator refused)."""
        if isinstance(exc, ModelRetry):
            return UserMessage(f"Your answer was not accepted: {exc.message}\n{_RETRY_HINT}")
        if self.key is not None:
            return UserMessage(self._call_the_tool())
        return UserMessage(_invalid_text(exc.errors))

    async def tool_result(self, call: ToolCall) -> ToolResult:
        """The result of an output-tool call: accepted (its value is the output) or an error the model can fix."""
        assert self.schema is not None
        try:
            value = self.schema.validate_arguments(call.arguments)
            if self.config.validators:
                value = await self.accepted(value)
        except ToolInputError as exc:
            self.raw, self.errors = self.schema.raw_of(call.arguments), exc.errors
            lines = "\n".join(f"- {e}" for e in exc.errors)
            message = f"Invalid final answer for {call.name!r}:\n{lines}\nCall {call.name!r} again with the fixes."
            return ToolResult.error(call, message, "invalid_arguments")
        except ModelRetry as retry:
            self.raw = self.schema.raw_of(call.arguments)
            self.errors = [ErrorDetail("$", retry.message, self.raw, "retry")]
            return ToolResult.error(call, retry.message, "retry")
        return ToolResult(call_id=call.id, name=call.name, content=[TextPart("Final answer received.")], output=value)

    async def accepted(self, value: Any) -> Any:
        """`value` after the output validators (each may replace it, or raise `ModelRetry`)."""
        for validator in self.config.validators:
            if inspect.iscoroutinefunction(validator):
                changed = await validator(value)
            else:
                from .._threads import tool_threads

                changed = await tool_threads().run(validator, value)  # user code: never on the event loop
                if inspect.isawaitable(changed):
                    changed = await changed
            if changed is not None:
                value = changed
        return value

    def failed(self, raw: Any, errors: list[ErrorDetail]) -> None:
        """Keep the last answer that failed (and its problems), for `budget_error`."""
        self.raw, self.errors = raw, errors

    def budget_error(self, why: str, result: RunResult[Any]) -> OutputValidationError:
        """The error ending a run whose answers kept failing, with the last answer and its problems."""
        assert self.schema is not None
        target = getattr(self.schema.target, "__qualname__", None) or repr(self.schema.target)
        details = "; ".join(str(e) for e in self.errors[:5])
        message = f"The model's answer does not fit the output type {target}: {why}. Last problems: {details}"
        return OutputValidationError(message, result, self.raw, list(self.errors))

    def _call_the_tool(self) -> str:
        return f"Give your final answer by calling the tool {self.key!r}: its arguments are the answer."

    # ---- ending a run ----------------------------------------------------------------------------------

    def ended(self, calls: list[ToolCall], results: list[ToolResult]) -> tuple[str, Any] | None:
        """After a turn's tools ran: ``(text, output)`` when an answer or a stop-at tool ends the run."""
        stop_at = self.config.stop_at
        if self.key is None and not stop_at:  # a text answer ends this run: no call can
            return None
        for call, result in zip(calls, results, strict=False):
            if result.is_error:
                continue
            if call.name == self.key and self.schema is not None:
                return self.schema.raw_of(call.arguments), result.output
            if call.name in stop_at:
                return result.text, self._stop_output(call.name, result)
        return None

    def _stop_output(self, key: str, result: ToolResult) -> Any:
        if self.schema is None:
            return result.text
        try:
            return self.schema.validate_value(result.output)
        except ToolInputError as exc:
            target = getattr(self.schema.target, "__qualname__", None) or repr(self.schema.target)
            problems = "; ".join(str(e) for e in exc.errors[:5])
            raise AgentSetupError(
                f"tool {key!r} ends the run (stop_at_tools), but its result does not fit the output type {target}: "
                f"{problems}. Make the tool return a {target}, or leave it out of stop_at_tools"
            ) from None

    # ---- streaming -------------------------------------------------------------------------------------

    def partial(self, text: str) -> tuple[bool, Any]:
        """``(changed, partial)`` for the answer so far (text, or the output call's arguments)."""
        if self.schema is None:
            return False, None
        value = self.schema.partial(text)
        if value is None or value == self._shown:
            return False, None
        self._shown = value
        return True, value

    def text_delta(self, piece: str) -> tuple[bool, Any]:
        """`partial` for the text answer after `piece` arrived."""
        self._streamed += piece
        return self.partial(self._streamed)

    def turn_started(self) -> None:
        """A new model turn: partial values start again."""
        self._streamed = ""
        self._shown = None


_PLAIN_SETTINGS = not hasattr(ModelSettings, "__post_init__")


def _with_fields(settings: ModelSettings, **changes: Any) -> ModelSettings:
    """`dataclasses.replace` of every step's settings at a third of its cost (a plain frozen dataclass)."""
    if not _PLAIN_SETTINGS:  # a check on construction would be skipped: the real thing
        return dataclasses.replace(settings, **changes)
    copied = object.__new__(ModelSettings)
    copied.__dict__.update(settings.__dict__)
    copied.__dict__.update(changes)  # frozen: set through the instance dict
    return copied


def _invalid_text(errors: list[ErrorDetail]) -> str:
    lines = "\n".join(f"- {e}" for e in errors)
    return f"Your answer does not fit the required JSON schema:\n{lines}\n{_RETRY_HINT}"


def output_config(
    output_type: Any,
    validators: Sequence[OutputValidatorFn] | None,
    stop_at: Sequence[str] | None,
    where: str,
) -> OutputConfig:
    """`OutputConfig` from the ``output_type=`` forms (a type, an `Output`, a list of types), checked now.

    Raises:
        AgentSetupError: a form that cannot work (named with `where`), or a type no model can be asked for.
    """
    from ..output import Output

    # run-time checks: callers without a type checker pass anything
    if isinstance(stop_at, str) or (stop_at is not None and not all(isinstance(k, str) for k in stop_at)):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise AgentSetupError(f"{where}(stop_at_tools=...) takes a list of tool keys, got {stop_at!r}")
    checked = tuple(validators or ())
    for fn in checked:
        if not callable(fn):
            raise AgentSetupError(f"{where}(output_validators=...) takes functions of the output value, got {fn!r}")
    keys = frozenset(stop_at or ())
    if isinstance(output_type, Output):
        config = OutputConfig(
            output_type.type, output_type.mode, output_type.name, output_type.description, output_type.strict
        )
        checked = (*output_type.validators, *checked)
        keys |= frozenset(output_type.stop_at_tools)
    elif isinstance(output_type, (list, tuple)):
        config = OutputConfig(union_of(cast("Sequence[Any]", output_type), f"{where}(output_type=[])"))
    else:
        config = OutputConfig(output_type)
    if checked and not config.structured:
        raise AgentSetupError(f"{where}: validators of the answer need an output_type to validate")
    config = dataclasses.replace(config, validators=checked, stop_at=keys)
    config.schema()  # a type no model can be asked for fails here, not on the first run
    return config
