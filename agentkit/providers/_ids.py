"""Tool-call id rules, and the deterministic remapping for ids a vendor rejects."""

from __future__ import annotations as _annotations

import hashlib
import re
import string
from dataclasses import dataclass, field

__all__ = ["IdRule"]

_ALNUM = string.ascii_letters + string.digits


@dataclass(frozen=True)
class IdRule:
    """What call ids a vendor accepts and how to map any id onto that set, deterministically.

    The same input id always maps to the same output id, so the assistant's call and the tool
    result that answers it stay linked however many times a history is re-sent.
    """

    pattern: str
    """Full-match regex of accepted ids."""
    allowed: str = "[a-zA-Z0-9_-]"
    """Regex character class kept when repairing an id."""
    max_length: int | None = None
    exact_length: int | None = None
    """For vendors that demand a fixed length (Mistral: 9 alphanumerics): ids are hashed to it."""

    _match: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _known: dict[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # compiled once: every call id of every re-sent history is checked against it
        object.__setattr__(self, "_match", re.compile(self.pattern))
        object.__setattr__(self, "_known", {})

    def accepts(self, call_id: str) -> bool:
        """Whether the vendor accepts `call_id` as it is."""
        return self._match.fullmatch(call_id) is not None

    def apply(self, call_id: str) -> str:
        """`call_id` unchanged when accepted, else a deterministic accepted id derived from it."""
        # a history re-sends the same ids on every turn: each is checked (and repaired) once
        known = self._known
        wire = known.get(call_id)
        if wire is None:
            if len(known) >= _KNOWN_IDS:
                known.clear()
            wire = known[call_id] = call_id if self._match.fullmatch(call_id) is not None else _repaired(self, call_id)
        return wire


_KNOWN_IDS = 8192


def _repaired(rule: IdRule, call_id: str) -> str:
    """An id `rule` accepts, derived from `call_id` alone."""
    digest = hashlib.sha256(call_id.encode()).digest()
    if rule.exact_length is not None:
        number = int.from_bytes(digest, "big")
        chars: list[str] = []
        for _ in range(rule.exact_length):
            number, rem = divmod(number, len(_ALNUM))
            chars.append(_ALNUM[rem])
        return "".join(chars)
    allowed = re.compile(rule.allowed)
    repaired = "".join(ch if allowed.fullmatch(ch) else "_" for ch in call_id) or "call"
    suffix = "_" + digest.hex()[:8]
    limit = rule.max_length
    if limit is not None and len(repaired) + len(suffix) > limit:
        repaired = repaired[: limit - len(suffix)]
    return repaired + suffix
