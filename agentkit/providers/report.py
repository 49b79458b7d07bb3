"""Printable multi-vendor reports over `compatibility` results (what ``agentkit lint`` prints).

```python
from agentkit.providers import compatibility
from agentkit.providers.report import format_report, name_problems

print(format_report(compatibility(tools, ["openai", "anthropic", "gemini"], aliases=True)))
```
"""

from __future__ import annotations as _annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..registry import Registry
from . import Compatibility, ProviderLike, get_provider, provider_names
from ._dialect import Loss

__all__ = [
    "NameProblem",
    "ProviderSummary",
    "format_report",
    "loss_kind",
    "name_problems",
    "summarize",
]

_QUOTED = re.compile(r"'[^']*'")


def loss_kind(loss: Loss) -> str:
    """A loss without the parts that name one schema, so equal changes count together.

    ``properties name 'Content-Type' breaks ...`` and ``... name 'User-Agent' breaks ...`` are one kind.
    """
    return _QUOTED.sub("'…'", f"{loss.keyword} {loss.change}") + (" (rejected)" if loss.rejected else "")


@dataclass
class ProviderSummary:
    """Counts over one provider's rows of a compatibility report."""

    provider: str
    tools: int = 0
    strict: int = 0
    """Tools whose schema is sent strict."""
    lossy: int = 0
    """Tools with at least one loss (rejected ones included)."""
    rejected: int = 0
    """Tools the vendor would reject (a name or a schema)."""
    kinds: Counter[str] = field(default_factory=Counter[str])
    """Loss kinds (`loss_kind`) -> the number of tools with at least one loss of that kind."""

    def top_kinds(self, n: int | None = None) -> list[tuple[str, int]]:
        """The commonest loss kinds, ties in alphabetical order (stable from run to run)."""
        return sorted(self.kinds.items(), key=lambda item: (-item[1], item[0]))[:n]


def summarize(report: Iterable[Compatibility]) -> dict[str, ProviderSummary]:
    """Per provider (in first-seen order): tools, strict, lossy and rejected counts, and loss kinds."""
    out: dict[str, ProviderSummary] = {}
    for row in report:
        summary = out.setdefault(row.provider, ProviderSummary(row.provider))
        summary.tools += 1
        summary.strict += row.strict
        summary.lossy += bool(row.losses) or row.name_problem is not None
        summary.rejected += row.rejected
        summary.kinds.update(list(dict.fromkeys(loss_kind(loss) for loss in row.losses)))  # once per tool
        if row.name_problem is not None:
            summary.kinds["name rejected"] += 1
    return out


def format_report(report: Iterable[Compatibility], *, details: bool = True, ok: bool = False) -> str:
    """A plain-text report: a table per provider, then each tool that loses something, vendor by vendor.

    Args:
        report: rows from `agentkit.providers.compatibility` (one or several providers).
        details: list each tool's losses under the table.
        ok: list the tools that lose nothing too.
    """
    rows = list(report)
    if not rows:
        return "No tools to check."
    summaries = summarize(rows)
    width = max(len("provider"), *(len(name) for name in summaries))
    lines = [
        f"{'provider':<{width}}  {'tools':>5}  {'strict':>6}  {'lossy':>5}  {'rejected':>8}",
        *(
            f"{s.provider:<{width}}  {s.tools:>5}  {s.strict:>6}  {s.lossy:>5}  {s.rejected:>8}"
            for s in summaries.values()
        ),
    ]
    if not details:
        return "\n".join(lines)
    by_key: dict[str, list[Compatibility]] = {}
    for row in rows:
        by_key.setdefault(row.key, []).append(row)
    for key, per_tool in by_key.items():
        shown = [r for r in per_tool if ok or r.losses or r.name_problem or r.wire_name not in (None, r.key)]
        if not shown:
            continue
        lines.extend(["", key])
        for row in shown:
            lines.append(f"  {row.provider:<{width}}  {_status(row)}")
            if row.name_problem:
                lines.append(f"  {'':<{width}}    name: {row.name_problem}")
            lines.extend(f"  {'':<{width}}    {loss}" for loss in row.losses)
    return "\n".join(lines)


def _status(row: Compatibility) -> str:
    parts = ["REJECTED" if row.rejected else "ok", "strict" if row.strict else "not strict"]
    if row.wire_name is not None and row.wire_name != row.key:
        parts.append(f"sent as {row.wire_name!r}")
    if row.losses:
        parts.append(f"{len(row.losses)} loss{'es' if len(row.losses) != 1 else ''}")
    return ", ".join(parts)


@dataclass(frozen=True)
class NameProblem:
    """One registry key that one vendor's name rule rejects."""

    key: str
    provider: str
    rule: str
    alias: str | None
    """The alias ``aliases=True`` would send (None when even an alias cannot be made)."""

    def __str__(self) -> str:
        fix = f"; aliases=True sends {self.alias!r}" if self.alias else ""
        return f"{self.key!r} breaks {self.provider}'s name rule {self.rule}{fix}"


def name_problems(
    registry: Registry, providers: ProviderLike | Iterable[ProviderLike] | None = None
) -> list[NameProblem]:
    """Every (key, vendor) pair whose name the vendor rejects, checked for several vendors at once.

    Unlike `check_names`, which raises, this lists every bad key for every vendor, with the alias
    ``aliases=True`` would send instead.
    """
    from ._names import InvalidToolNameError

    if providers is None:
        chosen = [get_provider(n) for n in provider_names()]
    elif isinstance(providers, str) or not isinstance(providers, Iterable):
        chosen = [get_provider(providers)]
    else:
        chosen = [get_provider(p) for p in providers]
    problems: list[NameProblem] = []
    for provider in chosen:
        bad = [key for key in registry if not provider.name_rule.accepts(key)]
        if not bad:
            continue
        try:
            names = provider.names(registry, aliases=True)
            aliases: dict[str, str | None] = {key: names.name_for(key) for key in bad}
        except InvalidToolNameError:
            aliases = dict.fromkeys(bad)
        problems.extend(NameProblem(key, provider.name, provider.name_rule.pattern, aliases[key]) for key in bad)
    return problems
