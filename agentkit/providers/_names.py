"""Vendor tool-name rules, and deterministic aliases for keys a vendor rejects."""

from __future__ import annotations as _annotations

import hashlib
import re
from dataclasses import dataclass, field
from functools import lru_cache

from ..exceptions import InvalidToolNameError, RegistryError

__all__ = ["InvalidToolNameError", "NameMap", "NameRule", "alias_for", "resolve_names"]


@dataclass(frozen=True)
class NameRule:
    """What names a vendor accepts: a full-match regex, and how to repair a name that breaks it."""

    pattern: str
    """Full-match regex, e.g. ``^[a-zA-Z0-9_-]{1,64}$``."""
    allowed: str
    """Regex character class of allowed characters, e.g. ``[a-zA-Z0-9_-]``."""
    max_length: int | None = None
    first: str | None = None
    """Regex character class the first character must match, if the vendor restricts it."""

    def accepts(self, name: str) -> bool:
        """Whether the vendor accepts `name` as it is."""
        return _compiled(self.pattern).fullmatch(name) is not None


@lru_cache(maxsize=64)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def alias_for(key: str, rule: NameRule, *, force_hash: bool = False) -> str:
    """A name `rule` accepts, derived from `key`.

    Invalid characters become ``_``, a bad first character gets a ``_``/``t`` prefix, and an over-long
    name is cut and ends in a short hash of `key` (so two long keys never share an alias).
    """
    allowed = _compiled(rule.allowed)
    name = "".join(ch if allowed.fullmatch(ch) else "_" for ch in key) or "tool"
    if rule.first is not None and not _compiled(rule.first).fullmatch(name[0]):
        name = ("_" if _compiled(rule.first).fullmatch("_") else "t") + name
    suffix = "_" + _short_hash(key)
    if force_hash:
        name += suffix
    if rule.max_length is not None and len(name) > rule.max_length:
        name = name[: rule.max_length - len(suffix)] + suffix
    return name


@dataclass(frozen=True)
class NameMap:
    """Registry key <-> the name a vendor sees."""

    to_wire: dict[str, str]
    to_key: dict[str, str]
    renames: bool = field(init=False)
    """Whether any key has another wire name (False: every name is its key, nothing to map)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "renames", any(key != wire for key, wire in self.to_wire.items()))

    def name_for(self, key: str) -> str:
        """The wire name of `key`."""
        return self.to_wire.get(key, key)

    def key_for(self, wire_name: str) -> str:
        """The registry key of a wire name; unknown names pass through (the registry reports them)."""
        return self.to_key.get(wire_name, wire_name)


@lru_cache(maxsize=256)
def resolve_names(keys: tuple[str, ...], vendor: str, rule: NameRule, *, aliases: bool) -> NameMap:
    """Names for `keys` under `rule`; raises `InvalidToolNameError` for a bad key unless `aliases`."""
    to_wire: dict[str, str] = {}
    taken = {k for k in keys if rule.accepts(k)}
    for key in keys:
        if key in taken:
            to_wire[key] = key
            continue
        if not aliases:
            raise InvalidToolNameError(key, vendor, rule.pattern)
        alias = alias_for(key, rule)
        if alias in taken:
            alias = alias_for(key, rule, force_hash=True)
        if alias in taken:
            other = next((k for k, wire in to_wire.items() if wire == alias), alias)
            raise RegistryError(
                f"Tool key {key!r} cannot be aliased for {vendor}: its alias {alias!r} is already the name of "
                f"{other!r}. Rename one of the two keys."
            )
        if not rule.accepts(alias):
            raise InvalidToolNameError(key, vendor, rule.pattern)
        taken.add(alias)
        to_wire[key] = alias
    return NameMap(to_wire=to_wire, to_key={wire: key for key, wire in to_wire.items()})
