"""`EvalCase`: one question with its tools and expected calls; users' own case files.

A case file is JSON Lines (one case per line) or JSON (a list of cases, or ``{"cases": [...]}``):

```json
{"id": "paris", "category": "weather", "prompt": "Weather in Paris, in Fahrenheit?",
 "tools": ["get_weather", "search"],
 "expected": [{"get_weather": {"city": ["Paris", "Paris, France"], "unit": ["fahrenheit"], "days": [1, ""]}}]}
```

* ``prompt`` (a user message) or ``messages`` (``[{"role": "system" | "user", "content": ...}]``);
* ``tools``: registry keys offered to the model (default: every tool of the registry);
* ``expected``: the calls that answer the question, BFCL's form: ``{key: {argument: [acceptable
  values]}}``, where ``""`` in a list means the argument may be left out. An argument the model passes
  that is not listed is an extra argument. Several calls are matched in any order; ``[]`` means no tool
  fits and any call is wrong;
* ``id`` (default: the line or position) and ``category`` (default ``"default"``) label the report.
"""

from __future__ import annotations as _annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

from .._jsonish import is_array, is_object
from ..exceptions import EvalDataError
from ..messages import Message, SystemMessage, UserMessage
from ..registry import Registry
from ._checker import CheckMode, FunctionSpec, ParamSpec

__all__ = ["EvalCase", "EvalDataError", "ExpectedCall", "function_spec_of", "load_cases"]

ExpectedCall = Mapping[str, Mapping[str, Sequence[Any]]]
"""One expected call: ``{tool_key: {argument: [acceptable values]}}`` (``""``: may be left out)."""


@dataclass(frozen=True)
class EvalCase:
    """One question: the conversation, the tools offered, and the calls that answer it."""

    id: str
    """Unique within a dataset (BFCL's ids, or a case file's)."""
    messages: tuple[Message, ...]
    """What the model is sent (system and user messages)."""
    expected: tuple[ExpectedCall, ...]
    """The calls that answer the question (empty: no tool fits, any call is wrong)."""
    tools: Union[Registry, Callable[[], Registry]]
    """The tools offered, or a function that makes them (BFCL's are made when first needed)."""
    category: str = "default"
    """The report groups accuracy by it."""
    mode: CheckMode | None = None
    """BFCL's rule set (None: from `expected`: ``irrelevance`` for none, ``multiple`` for one,
    ``parallel`` for several)."""
    functions: tuple[FunctionSpec, ...] = ()
    """What the checker knows of the tools' parameters (empty: read from the tools' schemas)."""
    source: tuple[Mapping[str, Any], ...] = field(default=(), compare=False, repr=False)
    """The original function documents of a BFCL case (empty for users' cases)."""

    @property
    def check_mode(self) -> CheckMode:
        """The rule set that judges this case."""
        if self.mode is not None:
            return self.mode
        return "irrelevance" if not self.expected else "multiple" if len(self.expected) == 1 else "parallel"

    @property
    def expected_tools(self) -> tuple[str, ...]:
        """The tool keys the expected calls name, in order, without repeats."""
        return tuple(dict.fromkeys(str(next(iter(call))) for call in self.expected if call))

    def registry(self) -> Registry:
        """The tools offered (made on first use for a lazily built case, then reused)."""
        tools = self.tools
        if isinstance(tools, Registry):
            return tools
        built = tools()
        object.__setattr__(self, "tools", built)
        return built

    def specs(self) -> tuple[FunctionSpec, ...]:
        """`functions`, or the specs read from the offered tools' input schemas."""
        if self.functions:
            return self.functions
        registry = self.registry()
        specs = tuple(function_spec_of(key, registry[key].input_schema) for key in registry)
        object.__setattr__(self, "functions", specs)
        return specs


_BFCL_TYPES = {"string": "string", "integer": "integer", "number": "float", "boolean": "boolean", "object": "dict"}


def _bfcl_type(schema: Any) -> str | None:
    if not is_object(schema):
        return None
    kind = schema.get("type")
    if kind == "array":
        return "array"
    return _BFCL_TYPES.get(kind) if isinstance(kind, str) else None


def function_spec_of(key: str, schema: Mapping[str, Any]) -> FunctionSpec:
    """The checker's view of a tool's JSON Schema: each property's type in BFCL's terms.

    A property without one single type (a union, say) gets None: its values are compared, not type-checked.
    """
    properties = schema.get("properties")
    params: dict[str, ParamSpec] = {}
    if is_object(properties):
        for name, body in properties.items():
            kind = _bfcl_type(body)
            items = _bfcl_type(body.get("items")) if kind == "array" and is_object(body) else None
            params[str(name)] = ParamSpec(kind, items)
    required = schema.get("required")
    return FunctionSpec(key, params, tuple(str(r) for r in required) if is_array(required) else ())


# ---- users' case files ---------------------------------------------------------------------------


def load_cases(path: str | Path, registry: Registry) -> list[EvalCase]:
    """The cases of a JSON or JSON Lines file, offering tools of `registry` (format: the module docstring).

    Raises:
        EvalDataError: the file cannot be read, or a case is malformed (naming the case and field).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise EvalDataError(f"cannot read the case file {str(path)!r}: {exc.strerror or exc}") from None
    entries = list(_entries(text, path))
    cases = [_case(entry, where, registry) for where, entry in entries]
    seen: dict[str, str] = {}
    for case, (where, _) in zip(cases, entries, strict=True):
        if case.id in seen:
            raise EvalDataError(f"{where}: id {case.id!r} is already used by {seen[case.id]}; ids must be unique")
        seen[case.id] = where
    if not cases:
        raise EvalDataError(f"{str(path)!r} holds no cases")
    return cases


def _entries(text: str, path: Path) -> Iterable[tuple[str, Any]]:
    if path.suffix in (".jsonl", ".ndjson"):
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                where = f"{path.name}:{number}"
                yield where, _json(line, where)
        return
    data = _json(text, path.name)
    if is_object(data) and "cases" in data:
        data = data["cases"]
    if not is_array(data):
        raise EvalDataError(f"{path.name}: expected a list of cases or {{'cases': [...]}}, got {type(data).__name__}")
    for position, entry in enumerate(data):
        yield f"{path.name}[{position}]", entry


def _json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise EvalDataError(f"{where}: not valid JSON ({exc})") from None


def _case(entry: Any, where: str, registry: Registry) -> EvalCase:
    if not is_object(entry):
        raise EvalDataError(f"{where}: a case is a JSON object, got {type(entry).__name__}")
    case_id = str(entry.get("id", where))
    where = f"{where} (id {case_id!r})"
    unknown = set(entry) - {"id", "category", "prompt", "messages", "tools", "expected"}
    if unknown:
        raise EvalDataError(
            f"{where}: unknown field(s) {sorted(unknown)}; a case has id, category, prompt or messages, tools, expected"
        )
    keys = _tool_keys(entry.get("tools"), where, registry)
    expected = _expected(entry.get("expected"), where, keys)
    return EvalCase(
        id=case_id,
        category=str(entry.get("category", "default")),
        messages=tuple(_case_messages(entry, where)),
        expected=tuple(expected),
        tools=registry if keys == list(registry) else Registry({k: registry[k] for k in keys}),
    )


def _tool_keys(tools: Any, where: str, registry: Registry) -> list[str]:
    if tools is None:
        return list(registry)
    if not is_array(tools) or not all(isinstance(k, str) for k in tools):
        raise EvalDataError(f"{where}: 'tools' is a list of registry keys, got {tools!r}")
    for key in tools:
        if key not in registry:
            registry[key]  # raises UnknownToolError with the registered keys and a "did you mean"
    return list(tools)


def _expected(value: Any, where: str, keys: list[str]) -> list[ExpectedCall]:
    if value is None:
        raise EvalDataError(f"{where}: 'expected' is missing; use [] when no tool should be called")
    if not is_array(value):
        raise EvalDataError(f'{where}: \'expected\' is a list of calls, e.g. [{{"tool": {{"arg": ["value"]}}}}]')
    calls: list[ExpectedCall] = []
    for position, call in enumerate(value):
        at = f"{where}: expected[{position}]"
        if not is_object(call) or len(call) != 1:
            raise EvalDataError(f'{at} is one tool key mapped to its arguments, e.g. {{"get_weather": {{...}}}}')
        key, arguments = next(iter(call.items()))
        if key not in keys:
            raise EvalDataError(f"{at} calls {key!r}, which is not among the case's tools {keys}")
        if not is_object(arguments):
            raise EvalDataError(f"{at}.{key} maps each argument to its acceptable values, got {arguments!r}")
        for name, allowed in arguments.items():
            if not is_array(allowed) or not allowed:
                raise EvalDataError(
                    f"{at}.{key}.{name} must be a non-empty list of acceptable values, e.g. [{json.dumps(allowed)}] "
                    '(add "" when the argument may be left out)'
                )
        calls.append({key: {name: list(allowed) for name, allowed in arguments.items()}})
    return calls


def _case_messages(entry: Mapping[str, Any], where: str) -> list[Message]:
    prompt, messages = entry.get("prompt"), entry.get("messages")
    if (prompt is None) == (messages is None):
        raise EvalDataError(f"{where}: give either 'prompt' (text) or 'messages' (a list), not both or neither")
    if prompt is not None:
        if not isinstance(prompt, str):
            raise EvalDataError(f"{where}: 'prompt' is text, got {type(prompt).__name__}")
        return [UserMessage(prompt)]
    if not is_array(messages) or not messages:
        raise EvalDataError(f"{where}: 'messages' is a non-empty list of {{'role', 'content'}} objects")
    out: list[Message] = []
    for position, message in enumerate(messages):
        role = message.get("role") if is_object(message) else None
        content = message.get("content") if is_object(message) else None
        if role not in ("system", "user") or not isinstance(content, str):
            raise EvalDataError(
                f"{where}: messages[{position}] must be {{'role': 'system' or 'user', 'content': text}}, "
                f"got {message!r}"
            )
        out.append(SystemMessage(content) if role == "system" else UserMessage(content))
    return out
