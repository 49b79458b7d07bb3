"""Vendor function-calling formats: `get_provider(name)`, the `Provider` contract, and one folder per vendor.

Each vendor lives in ``agentkit/providers/<vendor>/`` (its schema dialect, wire codec with its stream
decoder, and its SDK model client), re-exported from that package, e.g.
``from agentkit.providers.openai import OpenAIChatProvider, OpenAIChatModel``. The vendors are listed in one
table (``agentkit/_vendors.py``) and imported on first use, so ``import agentkit`` loads none of
them (and no SDK).
"""

from __future__ import annotations as _annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Union

from .._vendors import VENDORS, load
from ..exceptions import InvalidToolNamesError, UnknownProviderError
from ..registry import Registry
from ..tools import Tool
from ._codec import FormatOptions, Provider, StreamAccumulator, StreamDecoder, ToolCallDelta, ToolChoice, Tools, as_dict
from ._dialect import Dialect, DialectResult, Loss
from ._ids import IdRule
from ._names import InvalidToolNameError, NameMap, NameRule, alias_for

__all__ = [
    "Compatibility",
    "Dialect",
    "DialectResult",
    "FormatOptions",
    "IdRule",
    "InvalidToolNameError",
    "InvalidToolNamesError",
    "Loss",
    "NameMap",
    "NameRule",
    "Provider",
    "ProviderLike",
    "StreamAccumulator",
    "StreamDecoder",
    "ToolCallDelta",
    "ToolChoice",
    "Tools",
    "UnknownProviderError",
    "alias_for",
    "as_dict",
    "check_names",
    "compatibility",
    "get_provider",
    "provider_names",
    "register_provider",
]

# the built-in vendors that have a wire format, in table order
_BUILTIN = tuple(name for name, row in VENDORS.items() if row.provider is not None)
_registered: dict[str, Provider] = {}

ProviderLike = Union[str, Provider]
"""A provider name (``"anthropic"``) or a `Provider` instance."""


def provider_names() -> list[str]:
    """Every name `get_provider` accepts: the built-in vendors, then registered ones."""
    return [*_BUILTIN, *(n for n in _registered if n not in _BUILTIN)]


def register_provider(name: str, provider: Provider) -> None:
    """Make `provider` available as `get_provider(name)` (replacing any earlier one of that name)."""
    if not isinstance(provider, Provider):  # pyright: ignore[reportUnnecessaryIsInstance]  # untyped callers
        raise TypeError(f"register_provider({name!r}, ...) needs a Provider instance, got {provider!r}")
    _registered[name] = provider


def get_provider(name: ProviderLike) -> Provider:
    """The provider registered as `name`; an instance is returned as it is.

    Built in: ``"openai"`` (Chat Completions), ``"openai-responses"``, ``"anthropic"``, ``"gemini"``,
    ``"bedrock"``, ``"mistral"``, ``"cohere"``, ``"ollama"``. Passing a `Provider` instance works
    wherever a name is accepted, so third-party providers need no registration.

    Raises:
        UnknownProviderError: with the known names and a "did you mean".
    """
    if isinstance(name, Provider):
        return name
    found = _registered.get(name)
    if found is not None:
        return found
    row = VENDORS.get(name) if isinstance(name, str) else None  # pyright: ignore[reportUnnecessaryIsInstance]  # untyped callers
    if row is None or row.provider is None:
        raise UnknownProviderError(str(name), provider_names())
    provider: Provider = load(row.provider)()
    _registered[name] = provider
    return provider


@dataclass(frozen=True)
class Compatibility:
    """What one vendor will make of one tool (or of the output schema: `output_mode` is then set)."""

    key: str
    provider: str
    wire_name: str | None
    """The name sent (an alias when needed and allowed); None when the name is rejected."""
    strict: bool
    losses: tuple[Loss, ...]
    name_problem: str | None = None
    output_mode: str | None = None
    """For the output row: how the vendor is asked for it (``native``, ``tool``, ``prompted``)."""

    @property
    def rejected(self) -> bool:
        """Whether the vendor would reject this tool outright (its name or its schema)."""
        return self.name_problem is not None or any(loss.rejected for loss in self.losses)

    def __str__(self) -> str:
        head = f"{self.provider} / {self.key}" + (
            f" (sent as {self.wire_name!r})" if self.wire_name not in (None, self.key) else ""
        )
        if self.output_mode is not None:
            head = f"{self.provider} / output {self.key} ({self.output_mode})"
        lines = [f"{head}: {'REJECTED' if self.rejected else 'ok'}{' (strict)' if self.strict else ''}"]
        if self.name_problem:
            lines.append(f"  name: {self.name_problem}")
        lines.extend(f"  {loss}" for loss in self.losses)
        return "\n".join(lines)


def _as_registry(tools: Registry | Tool[..., Any]) -> Registry:
    return tools if isinstance(tools, Registry) else Registry({tools.id: tools})


def compatibility(
    tools: Registry | Tool[..., Any],
    providers: ProviderLike | Iterable[ProviderLike] | None = None,
    *,
    strict: bool | None = None,
    aliases: bool = False,
    per_request: bool = True,
    output: Any = None,
) -> list[Compatibility]:
    """Per tool and vendor: what the vendor will not see (lossy rewrites) and what it rejects.

    Args:
        tools: a registry or a single tool.
        providers: one provider, several, or None for all built-in vendors.
        strict: as in `Provider.format_tools`.
        aliases: whether names a vendor rejects would be aliased.
        per_request: apply per-request rules (Anthropic's strict budget, Cohere's request-wide
            ``strict_tools``) as if the whole registry were sent at once; False judges each tool alone.
        output: an output type (or `agentkit.output.Output`) the requests ask for: each vendor gets one
            more row, for its output schema, saying how it is asked for (native, or the output tool and
            why) and what that schema loses. A bare provider does not know the model, so a vendor whose
            native form depends on it (Gemini 3 with tools) is judged as the conservative case.
    """
    registry = _as_registry(tools)
    if providers is None:
        chosen = [get_provider(n) for n in _BUILTIN]
    elif isinstance(providers, (str, Provider)):
        chosen = [get_provider(providers)]
    else:
        chosen = [get_provider(p) for p in providers]
    report: list[Compatibility] = []
    for provider in chosen:
        try:
            names = provider.names(registry, aliases=aliases)
            bad: dict[str, str] = {}
        except InvalidToolNameError:
            names = provider.names(registry, aliases=True)
            bad = {
                k: f"breaks {provider.name}'s rule {provider.name_rule.pattern}"
                for k in registry
                if not provider.name_rule.accepts(k)
            }
        request_rules = provider.request_strictness(registry, strict) if per_request else {}
        for definition in registry.definitions():
            key = definition.key
            result: DialectResult = provider.schema_dialect(definition, strict)
            losses, is_strict = result.losses, result.strict
            change = request_rules.get(key)
            if change is not None:
                losses, is_strict = (*losses, change), change.rejected
            report.append(
                Compatibility(
                    key=key,
                    provider=provider.name,
                    wire_name=None if key in bad else names.name_for(key),
                    strict=is_strict,
                    losses=losses,
                    name_problem=bad.get(key),
                )
            )
        if per_request:  # what the whole request breaks (too many tools): one row for the provider
            problems = provider.request_problems(registry.definitions()[:0], strict, tool_count=len(registry))
            if problems:
                losses = tuple(Loss("", "tools", problem, rejected=True) for problem in problems)
                report.append(Compatibility("(request)", provider.name, None, False, losses))
        if output is not None:
            row = _output_row(provider, registry, output)
            if row is not None:
                report.append(row)
    return report


def _output_row(provider: Provider, registry: Registry, output: Any) -> Compatibility | None:
    """The compatibility row of the output schema on `provider` (None for a text output)."""
    from .._agent._output import output_config

    config = output_config(output, None, None, "compatibility")
    schema = config.schema()
    if schema is None:
        return None
    definition = schema.definition
    plan = provider.output_plan(definition, mode=config.mode, with_tools=len(registry) > 0)
    if plan.mode == "native":
        result = provider.output_schema(definition)
        mode = f"native {provider.native_output}"
    elif plan.mode == "tool":
        result = provider.schema_dialect(definition, definition.strict)
        mode = "tool"
    else:
        result, mode = DialectResult(schema=definition.input_schema, strict=False), "prompted"
    losses = result.losses
    if plan.reason is not None:
        losses = (Loss("", "output", f"not native: {plan.reason}"), *losses)
    return Compatibility(
        key=definition.key, provider=provider.name, wire_name=definition.key, strict=result.strict,
        losses=losses, output_mode=mode,
    )  # fmt: skip


def check_names(
    tools: Registry, providers: ProviderLike | Iterable[ProviderLike] | None = None, *, aliases: bool = False
) -> None:
    """Raise now, before any request, if any of `providers` (default: all) would reject a key.

    Every (key, vendor) failure is reported: one `InvalidToolNameError`, or an `InvalidToolNamesError`
    listing them all. With `aliases`, only keys no alias can repair fail.
    """
    if isinstance(providers, (str, Provider)):
        providers = [providers]
    problems: list[InvalidToolNameError] = []
    for name in providers if providers is not None else list(_BUILTIN):
        provider = get_provider(name)
        if aliases:
            try:
                provider.check(tools, aliases=True)
            except InvalidToolNameError as exc:
                problems.append(exc)
            continue
        rule = provider.name_rule
        problems.extend(InvalidToolNameError(k, provider.name, rule.pattern) for k in tools if not rule.accepts(k))
    if len(problems) == 1:
        raise problems[0]
    if problems:
        raise InvalidToolNamesError(problems)
