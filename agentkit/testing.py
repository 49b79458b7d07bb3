"""Test doubles and helpers: run agents and tools offline, deterministically, without an API key.

* `TestModel` calls every (or the chosen) tool with arguments generated from its schema, then answers
  with a summary of the results. Deterministic for a given `seed`.
* `FunctionModel` lets a function of yours decide each model turn (and, optionally, stream it).
* `request_payload` returns exactly what a provider would send for an agent's next request, for
  snapshot tests (e.g. with inline-snapshot).
* `check_tool_contract` calls a tool with many schema-valid arguments (hypothesis) and checks every
  result against its output schema.
* `generate_arguments` makes one schema-valid argument object from a JSON Schema (no hypothesis needed).
* `Cassette` records every vendor request of a block at the official SDK's transport into a readable
  file, and replays them with nothing sent (`CassetteMiss` when a request has no recording); the
  pytest plugin `agentkit.pytest_plugin` gives it as a fixture and a marker.
"""

from __future__ import annotations as _annotations

import asyncio
import inspect
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Union, cast

from ._cassettes import Cassette, CassetteMiss, CassetteMode
from ._generate import example_arguments, generate_arguments
from ._jsonish import is_array, is_object
from ._text import closest, json_text
from ._vendors import VENDORS, load
from .context import ToolContext
from .definitions import ToolDefinition
from .exceptions import ModelRetry, ToolError, ToolOutputError, UnknownToolError
from .messages import (
    AssistantMessage,
    Message,
    ModelResponse,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    ToolResultsMessage,
    Usage,
    UserMessage,
)
from .models import Model, ModelSettings, OutputRequest
from .models._base import ModelStreamEvent, ResponseDone, TextDelta, ToolCallArgsDelta, ToolCallStart
from .registry import Registry
from .tools import Tool

if TYPE_CHECKING:
    from .agent import Agent, Prompt, RunResult
    from .providers import ProviderLike

__all__ = [
    "Cassette",
    "CassetteMiss",
    "CassetteMode",
    "ContractReport",
    "FunctionInfo",
    "FunctionModel",
    "TestModel",
    "ToolCallChunk",
    "ToolDefinition",
    "check_tool_contract",
    "generate_arguments",
    "generator_schema",
    "request_payload",
]


# ---- what a scripted model is told ---------------------------------------------------------------


@dataclass(frozen=True)
class FunctionInfo:
    """What a `FunctionModel` function receives besides the messages.

    `tools` are the tools the model may call this turn (the active ones), `settings` the request's
    settings (`settings.tool_choice`, ...).
    """

    tools: list[ToolDefinition]
    settings: ModelSettings

    @classmethod
    def _of(cls, registry: Registry, settings: ModelSettings, previous: FunctionInfo | None = None) -> FunctionInfo:
        """The info of a request; with every tool active, its `tools` list made when first read.

        The registry's definitions are taken now (a tuple, the same while the registry is unchanged), so a
        function that keeps the info reads what this request was sent, whatever the registry becomes.
        `previous` (the model's last info) is given again when it says the same and nobody read its
        `tools` yet (a list read is the reader's own).
        """
        if settings.active_tools is not None:
            return cls(_definitions(registry, settings.active_tools), settings)
        sent = registry.definitions()
        if previous is not None:
            kept = previous.__dict__
            if kept.get("_sent") is sent and kept["settings"] is settings and "tools" not in kept:
                return previous
        info = object.__new__(cls)
        fields = info.__dict__  # frozen: set in the instance's dict, as the dataclass's __init__ does
        fields["settings"], fields["_sent"] = settings, sent
        return info

    if not TYPE_CHECKING:  # for the type checkers `tools` is a plain field

        def __getattr__(self, name: str) -> Any:
            # only for what an instance lacks: the `tools` of an info made by `_of`, listed on first read
            sent = self.__dict__.get("_sent")
            if name != "tools" or sent is None:
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            tools = self.__dict__["tools"] = list(sent)
            return tools

    @property
    def tool_keys(self) -> list[str]:
        """The keys of `tools`."""
        return [t.key for t in self.tools]

    @property
    def output(self) -> OutputRequest | None:
        """The structured output this turn asks for (None: a text answer).

        ``output.mode`` says how to answer: ``"native"`` or ``"prompted"`` with the JSON value as text,
        ``"tool"`` by calling the tool ``output.definition.key`` with the value as its arguments (it is
        among `tools`). ``output.definition.input_schema`` is the value's schema.
        """
        return self.settings.output


def _definitions(tools: Registry, active: tuple[str, ...] | None) -> list[ToolDefinition]:
    """The definitions of the active tools (all without `active`), in the order `active` gives."""
    if active is None:
        return list(tools.definitions())
    return [tools[k].definition(k) for k in active]


def _response(value: ModelResponse | AssistantMessage | str, model_name: str) -> ModelResponse:
    if isinstance(value, ModelResponse):
        return value
    if isinstance(value, str):
        value = AssistantMessage(text=value)
    if not isinstance(value, AssistantMessage):  # pyright: ignore[reportUnnecessaryIsInstance]  # untyped functions
        raise TypeError(f"a model function returns a str, AssistantMessage or ModelResponse, got {value!r}")
    return ModelResponse(
        message=value,
        usage=Usage(requests=1),
        finish_reason="tool_calls" if value.tool_calls else "stop",
        model_name=model_name,
    )


# ---- FunctionModel -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolCallChunk:
    """A piece of a streamed tool call, for `FunctionModel(stream_fn=...)`.

    The first chunk of a call (by `index`) carries `name` (the tool key) and may carry `call_id`;
    later chunks add argument text.
    """

    index: int
    args: str = ""
    name: str | None = None
    call_id: str | None = None


TurnFunction = Callable[
    [list[Message], FunctionInfo],
    Union[ModelResponse, AssistantMessage, str, Awaitable[Union[ModelResponse, AssistantMessage, str]]],
]
"""``fn(messages, info)``: the next model turn (sync or async)."""

StreamPiece = Union[str, ToolCall, ToolCallChunk]
StreamFunction = Callable[[list[Message], FunctionInfo], AsyncIterator[StreamPiece]]
"""``stream_fn(messages, info)``: an async iterator of text pieces, whole `ToolCall`s or `ToolCallChunk`s."""


class FunctionModel(Model):
    """A model whose turns a function decides: ``fn(messages, info)`` returns the next turn.

    The turn is an `AssistantMessage` (text and/or tool calls), a `ModelResponse`, or a plain string
    (a final answer). `info` carries the tool definitions (`FunctionInfo`). With `stream_fn`, streaming
    runs yield what it yields; without it, streams replay `fn`'s turn. Either function alone is enough.

    ```python
    def turn(messages, info):
        if isinstance(messages[-1], ToolResultsMessage):
            return "done: " + messages[-1].results[0].text
        return AssistantMessage(tool_calls=[ToolCall("c1", "add", {"a": 1, "b": 2})])

    agent = Agent(model=FunctionModel(turn), tools=[add])
    ```
    """

    def __init__(
        self, fn: TurnFunction | None = None, *, stream_fn: StreamFunction | None = None, name: str | None = None
    ) -> None:
        if fn is None and stream_fn is None:
            raise TypeError("FunctionModel needs fn=, stream_fn=, or both")
        self.fn = fn
        self.stream_fn = stream_fn
        label = getattr(fn if fn is not None else stream_fn, "__name__", "fn")
        self._name = name or f"function:{label}"
        self._info: FunctionInfo | None = None
        """The last request's info, given again while it says the same (`FunctionInfo._of`)."""

    @property
    def name(self) -> str:
        """The model's name as agents and results report it."""
        return self._name

    def info(self, tools: Registry, settings: ModelSettings) -> FunctionInfo:
        """The `FunctionInfo` for a request with these tools and settings."""
        return FunctionInfo._of(tools, settings)  # pyright: ignore[reportPrivateUsage]  # the class's own lazy constructor

    async def request(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> ModelResponse:
        """The next turn, decided offline (no network, no API key)."""
        if self.fn is None:
            response: ModelResponse | None = None
            async for event in self.stream(messages, tools, settings):
                if isinstance(event, ResponseDone):
                    response = event.response
            assert response is not None
            return response
        info = self._info = FunctionInfo._of(tools, settings, self._info)  # pyright: ignore[reportPrivateUsage]
        value = self.fn(list(messages), info)
        # the usual turns first: `isawaitable` on anything else is an ABC check
        if isinstance(value, str):
            value = AssistantMessage(text=value)
        elif not isinstance(value, (AssistantMessage, ModelResponse)) and inspect.isawaitable(value):
            value = await value
        if isinstance(value, AssistantMessage):  # as `_response` makes it, without the call
            reason = "tool_calls" if value.tool_calls else "stop"
            return ModelResponse(value, Usage(0, 0, 1), reason, self._name)  # one request
        return _response(value, self._name)

    async def stream(
        self, messages: Sequence[Message], tools: Registry, settings: ModelSettings
    ) -> AsyncIterator[ModelStreamEvent]:
        """The next turn as stream events, ending with the whole response."""
        if self.stream_fn is None:
            async for event in super().stream(messages, tools, settings):
                yield event
            return
        text: list[str] = []
        calls: dict[int, ToolCallChunk] = {}
        arguments: dict[int, str] = {}
        whole: dict[int, ToolCall] = {}
        async for piece in self.stream_fn(list(messages), self.info(tools, settings)):
            if isinstance(piece, str):
                text.append(piece)
                yield TextDelta(piece)
            elif isinstance(piece, ToolCall):
                index = len(calls) + len(whole)
                whole[index] = piece
                yield ToolCallStart(index, piece.id, piece.name)
                args = piece.arguments if isinstance(piece.arguments, str) else json_text(piece.arguments)
                yield ToolCallArgsDelta(index, args, args)
            else:
                if piece.index not in calls:
                    if piece.name is None:
                        raise ValueError(f"the first chunk of tool call {piece.index} must carry name=")
                    calls[piece.index] = piece
                    arguments[piece.index] = ""
                    yield ToolCallStart(piece.index, piece.call_id or f"call_{piece.index}", piece.name)
                if piece.args:
                    arguments[piece.index] += piece.args
                    yield ToolCallArgsDelta(piece.index, piece.args, arguments[piece.index])
        tool_calls = [
            ToolCall(first.call_id or f"call_{index}", first.name or "", arguments[index])
            for index, first in sorted(calls.items())
        ]
        tool_calls += [call for _, call in sorted(whole.items())]
        yield ResponseDone(_response(AssistantMessage(text="".join(text), tool_calls=tool_calls), self._name))


# ---- TestModel -----------------------------------------------------------------------------------


class TestModel(Model):
    """A model that calls tools with schema-valid generated arguments, then answers.

    On a turn that follows the user, it calls every tool (or those in `call_tools`, among the active
    ones; ``tool_choice="none"`` calls none, a named `tool_choice` only that one), with arguments
    generated from each input schema (a parameter that documents an example, ``e.g. "Paris"`` in its
    description or ``examples``, gets it). On the turn after the results, it answers `text`, or by
    default a line per called key, ``key: result`` (JSON results shown as JSON). Same `seed`, same
    arguments.

    A run with an output type gets an answer generated from the output schema instead (as JSON text,
    or as a call of the output tool in ``tool`` mode), unless `text` is given: then `text` is the answer,
    to be validated (a way to test retries).

    Args:
        seed: seeds argument generation (per tool key, so adding a tool changes no other tool's arguments).
        call_tools: ``"all"`` or the keys to call, in order. A key the registry does not have raises
            `UnknownToolError` (naming the registered keys) on the first request; a registered key that
            is not active for a turn is skipped.
        text: the final answer; by default a summary of the tool results, a line per call.
    """

    __test__ = False  # not a pytest test class, despite its name

    def __init__(
        self, *, seed: int = 0, call_tools: Literal["all"] | Sequence[str] = "all", text: str | None = None
    ) -> None:
        if isinstance(call_tools, str) and call_tools != "all":
            raise TypeError(
                f"TestModel(call_tools={call_tools!r}): pass 'all' or a list of registry keys, "
                f"e.g. call_tools=[{call_tools!r}]"
            )
        # a runtime check: callers without a type checker pass anything
        if not isinstance(call_tools, str) and not all(isinstance(k, str) for k in call_tools):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f"TestModel(call_tools=...) takes registry keys (strings), got {list(call_tools)!r}")
        self.seed = seed
        self.call_tools = call_tools
        self.text = text

    @property
    def name(self) -> str:
        """The model's name as agents and results report it."""
        return "test"

    def _keys(self, tools: Registry, settings: ModelSettings) -> list[str]:
        output = settings.output
        answer = output.definition.key if output is not None and output.mode == "tool" else None
        if settings.tool_choice in ("none", answer):
            return []
        keys = settings.active_tools if settings.active_tools is not None else tools
        available = [k for k in keys if k != answer]
        if settings.tool_choice not in ("auto", "required"):
            return [settings.tool_choice]
        if self.call_tools == "all":
            return available
        for key in self.call_tools:
            if key not in tools:  # a typo must not make a test silently test nothing
                raise UnknownToolError(key, list(tools), closest(key, tools))
        return [k for k in self.call_tools if k in available]  # registered but not active this turn: skipped

    async def request(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> ModelResponse:
        """The next turn, decided offline (no network, no API key)."""
        last = messages[-1] if messages else None
        keys = [] if isinstance(last, ToolResultsMessage) else self._keys(tools, settings)
        if keys:
            calls: list[ToolCall] = []
            for position, key in enumerate(keys):
                arguments = example_arguments(tools[key].input_schema, seed=f"{self.seed}:{key}")
                # ids from the turn, not a counter: the same run on the same model gives the same history
                calls.append(ToolCall(f"test_call_{len(messages)}_{position}", key, arguments))
            message = AssistantMessage(tool_calls=calls)
            reason = "tool_calls"
        elif settings.output is not None and self.text is None:
            message, reason = self._output_answer(settings.output, len(messages))
        else:
            message = AssistantMessage(text=self._answer(last))
            reason = "stop"
        usage = Usage(input_tokens=_tokens(messages), output_tokens=_tokens([message]), requests=1)
        return ModelResponse(message=message, usage=usage, finish_reason=reason, model_name="test")

    def _output_answer(self, output: OutputRequest, turn: int) -> tuple[AssistantMessage, str]:
        """A schema-valid answer for the output: JSON text, or a call of the output tool."""
        definition = output.definition
        value = example_arguments(definition.input_schema, seed=f"{self.seed}:{definition.key}")
        if output.mode == "tool":
            return AssistantMessage(tool_calls=[ToolCall(f"test_call_{turn}_0", definition.key, value)]), "tool_calls"
        return AssistantMessage(text=json_text(value, compact=True, ensure_ascii=False)), "stop"

    def _answer(self, last: Message | None) -> str:
        if self.text is not None:
            return self.text
        if isinstance(last, ToolResultsMessage):
            return "\n".join(_summary(r) for r in last.results)
        return "success (no tool calls)"


def _summary(result: ToolResult) -> str:
    """``key: result`` for the test model's answer; a JSON result as JSON, not as escaped JSON text."""
    text = result.text
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        value = text
    shown = text if isinstance(value, str) else json_text(value, ensure_ascii=False)
    return f"{result.name}: {'error: ' if result.is_error else ''}{shown}"


def _tokens(messages: Iterable[Message]) -> int:
    # A rough, deterministic stand-in for token counts: words of text.
    count = 0
    for message in messages:
        if isinstance(message, SystemMessage):
            count += len(message.text.split())
        elif isinstance(message, UserMessage):
            count += sum(len(p.text.split()) for p in message.parts if isinstance(p, TextPart))
        elif isinstance(message, AssistantMessage):
            count += len(message.text.split()) + 5 * len(message.tool_calls)
        else:
            count += sum(len(r.text.split()) for r in message.results)
    return count


# ---- payload snapshots ---------------------------------------------------------------------------


def request_payload(
    agent: Agent[Any, Any],
    prompt: Prompt | RunResult[Any] | None = None,
    *,
    provider: ProviderLike | None = None,
    model_name: str | None = None,
    tool_choice: str | None = None,
    active_tools: Iterable[str] | None = None,
    output_type: Any = None,
) -> dict[str, Any]:
    """Exactly what would be sent for `agent`'s next request on `prompt`, as plain JSON-ready data.

    For a ``"vendor:model-name"`` agent model (or `provider=` naming a built-in vendor), the vendor's
    own model client builds the body offline — settings, defaults such as Anthropic's ``max_tokens``,
    the model name where the vendor puts it in the body — exactly as `Model.payload` would before
    sending. For a `Model` instance (or an `agent.override`), its own `Model.payload`; for a third-party
    `Provider` instance, that provider's `build_request` body. No network, no API key.

    The output part is there too: the vendor's native structured-output field, or the output tool and
    the tool choice that requires it, for the agent's output type (or `output_type`, as a run would
    take it), exactly as the run's first request.

    ```python
    assert request_payload(agent, "Weather in Paris?") == snapshot({...})
    ```
    """
    from ._agent import _setup
    from ._agent._output import RunOutput
    from ._agent.runs import spec_of
    from .agent import RunResult
    from .providers import get_provider

    spec = spec_of(agent)  # the testing kit builds the first request as a run would
    if isinstance(prompt, RunResult):
        history: list[Message] = list(prompt.messages)
    else:
        history = _setup.as_messages(prompt) if prompt is not None else []
    config = _setup.output_for(spec, output_type, None, None)

    def first_request(model: Any = None) -> tuple[list[Message], Registry, ModelSettings]:
        # the first step as a run takes it: instructions rendered, deferred tools in the form the model gets
        # (its vendor's native one, or held back for the search tool), the output asked for; prepare_step
        # and hooks do not run
        messages, tools, first = _setup.first_request(spec, history, tool_choice, active_tools, model)
        output = RunOutput.of(config, model if model is not None else resolved, tools)
        if output is not None:
            tools, first = output.registry(tools), output.settings(first)
        return messages, tools, first

    resolved: Any = None
    if spec.override() is not None:
        model = agent.resolve_model()
        return model.payload(*first_request(model))
    if provider is None:
        agent_model = agent.model
        if isinstance(agent_model, str) and agent_model != "test":
            vendor, _, name = agent_model.partition(":")
            provider, model_name = vendor, model_name or name
        else:
            model = agent.resolve_model()
            return model.payload(*first_request(model))
    row = VENDORS.get(provider) if isinstance(provider, str) else None
    if row is not None and row.provider is not None:
        # The vendor's own model client builds the body (settings, defaults and all); nothing is sent.
        offline = _offline_model(row.name, model_name or "model")
        return offline.payload(*first_request(offline))
    resolved = get_provider(provider) if isinstance(provider, str) else provider
    messages, tools, first = first_request()
    body = resolved.build_request(
        messages,
        tools,
        tool_choice=first.tool_choice,
        active_tools=first.active_tools,
        strict=first.strict,
        parallel_tool_calls=first.parallel_tool_calls,
        aliases=first.aliases,
        output=first.output,
    )
    return {"model": model_name, **body} if model_name else body


def _offline_model(vendor: str, model_name: str) -> Model:
    """The vendor's model client built with the table's offline options, for building request bodies only."""
    row = VENDORS[vendor]
    model: Model = load(row.model)(model_name, **row.offline)
    return model


# ---- contract tests (hypothesis) -----------------------------------------------------------------


def generator_schema(schema: Any, defs: dict[str, Any] | None = None, depth: int = 0) -> Any:
    """A draft 2020-12 schema rewritten for hypothesis-jsonschema, which reads draft 7.

    Tuple ``prefixItems`` become an ``items`` list, the pydantic-only ``path`` format is dropped, and
    ``$ref``s are inlined (recursion cut after two levels with an unsatisfiable branch, so recursive
    lists stay empty there).
    """
    if defs is None and is_object(schema):
        defs = schema.get("$defs", {})
    if is_array(schema):
        return [generator_schema(s, defs, depth) for s in schema]
    if not is_object(schema):
        return schema
    if "$ref" in schema and defs is not None:
        if depth > 2:
            return {"not": {}}
        target = defs[schema["$ref"].rsplit("/", 1)[-1]]
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        return generator_schema({**target, **rest}, defs, depth + 1)
    out = {k: generator_schema(v, defs, depth) for k, v in schema.items() if k not in ("discriminator", "$defs")}
    if "prefixItems" in out:
        out["items"] = out.pop("prefixItems")
        out["additionalItems"] = False
        out.pop("maxItems", None)
        out.pop("minItems", None)
    if out.get("format") == "path":
        out.pop("format")
    return out


@dataclass
class ContractReport:
    """What `check_tool_contract` did: examples tried, calls that returned, calls the tool refused."""

    tool: str
    examples: int = 0
    returned: int = 0
    refused: list[str] = field(default_factory=lambda: [])
    """Messages of `ModelRetry`/`ToolError` the tool raised for valid arguments (allowed, but listed)."""


def check_tool_contract(
    item: Tool[..., Any],
    *,
    max_examples: int = 25,
    deps: Any = None,
    allow: tuple[type[BaseException], ...] = (ModelRetry, ToolError),
    shrink: bool = True,
) -> ContractReport:
    """Call `item` with schema-valid arguments generated by hypothesis; check each result's schema.

    For every example: the arguments must pass the tool's own validation, the call must return or
    raise one of `allow` (a tool's own refusal), and the result must fit the output schema (both the
    tool's validator and the JSON Schema, on the JSON form of the result). Deterministic
    (``derandomize=True``). Call it from a plain (sync) test; async tools run on a private loop.

    Args:
        item: the tool.
        max_examples: how many argument objects to try.
        deps: dependencies for a tool that takes a `ToolContext`.
        allow: exceptions that count as the tool's own refusal, not a break.
        shrink: let hypothesis reduce a failing example to a minimal one (slower on failure).

    Raises:
        AssertionError: a result breaks the output schema (the failing arguments are reported).
        Exception: any other exception the tool raised for valid arguments, with the failing arguments.
        ImportError: hypothesis or hypothesis-jsonschema is not installed (with the command to install).
    """
    try:
        from hypothesis import HealthCheck, Phase, given, settings
        from hypothesis import strategies as st
        from hypothesis_jsonschema import from_schema  # pyright: ignore[reportUnknownVariableType]  # a bare list in its types
    except ImportError as exc:  # pragma: no cover - exercised only without the dev extras
        raise ImportError(
            "check_tool_contract needs hypothesis and hypothesis-jsonschema: pip install 'agentkit-tools[testing]'"
        ) from exc
    from jsonschema import Draft202012Validator

    from ._raw_schema import linear_validator_class

    report = ContractReport(item.id)
    # an object schema: the strategy draws argument objects
    strategy = cast(
        "st.SearchStrategy[dict[str, Any]]",
        from_schema(
            generator_schema(item.input_schema),
            custom_formats={"uuid": st.uuids().map(str), "path": st.just("/tmp/x")},
        ),
    )
    output_schema = item.output_schema
    checker = Draft202012Validator.FORMAT_CHECKER
    # patterns matched by the bounded engine, as everywhere a schema is checked (never Python's backtracking `re`)
    validator = linear_validator_class()(output_schema, format_checker=checker) if output_schema else None
    context = ToolContext(deps=deps) if item.schema.context_params else None

    def check_all() -> None:
        loop = asyncio.new_event_loop()
        try:

            @settings(
                max_examples=max_examples,
                deadline=None,
                derandomize=True,
                database=None,
                # hypothesis types iterating its HealthCheck enum as its metaclass
                suppress_health_check=list(HealthCheck),  # pyright: ignore[reportArgumentType]
                phases=list(Phase) if shrink else [p for p in Phase if p is not Phase.shrink],
            )
            @given(strategy)
            def check(arguments: dict[str, Any]) -> None:
                report.examples += 1
                kwargs = item.schema.validate_arguments(item.id, arguments)
                try:
                    value = loop.run_until_complete(item.run(kwargs, context, name=item.id))
                except allow as exc:
                    report.refused.append(str(exc))
                    return
                try:
                    value = item.schema.validate_output(item.id, value)
                except ToolOutputError as exc:
                    raise AssertionError(f"{item.id}({arguments!r}) broke its output schema: {exc}") from None
                if validator is not None:
                    found = validator.iter_errors(item.schema.dump_output_python(value))
                    errors = [e.message for e in found]
                    if errors:
                        raise AssertionError(f"{item.id}({arguments!r}) returned {value!r}, not fitting: {errors}")
                report.returned += 1

            check()
        finally:
            loop.close()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        check_all()
    else:  # inside async code: a loop cannot be nested, so run on a worker thread
        import concurrent.futures

        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            pool.submit(check_all).result()
    return report
