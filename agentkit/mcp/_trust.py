"""Trust in a remote server's tools: fingerprints taken when the app approved them, and drift from them.

A server may change a tool after the app approved it ("rug pull"): a new description that instructs
the model, a schema that asks for more. `MCPServer.fingerprints` are hashes of what the model and the
call depend on (name, title, description, input and output schema, annotations), in canonical JSON.
Store them when the app approves the server; pass them back as ``pinned=`` and every session compares
what the server lists with them, by the app's policy:

* ``"refuse"`` (the default with ``pinned``): a changed or new tool is left out of the registry (the
  model never sees its new definition, so cannot call it), with an `AgentkitWarning` and a `ToolDrift`;
* ``"report"``: it is offered as listed, with the warning and the record;
* a callable deciding per `ToolDrift`, returning one of those.
"""

from __future__ import annotations as _annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Union

__all__ = ["DriftPolicy", "ToolDrift", "fingerprint", "tool_drift"]

DriftPolicy = Union[Literal["refuse", "report"], Callable[["ToolDrift"], Literal["refuse", "report"]]]
"""What `MCPServer(pinned=...)` does with a tool that changed since it was pinned."""

_FIELDS = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")


@dataclass(frozen=True)
class ToolDrift:
    """A tool whose definition differs from the one pinned (``kind``: ``"changed"``, ``"added"`` or ``"removed"``)."""

    tool: str
    kind: Literal["changed", "added", "removed"]
    fields: tuple[str, ...] = ()
    """For ``"changed"``: which parts differ (``description``, ``inputSchema``, ...)."""
    refused: bool = False
    """Whether the tool was left out of the registry."""

    def __str__(self) -> str:
        what = f" ({', '.join(self.fields)})" if self.fields else ""
        action = "; left out of the registry" if self.refused else "; offered anyway (policy 'report')"
        return f"tool {self.tool!r} {self.kind} since it was pinned{what}{action if self.kind != 'removed' else ''}"


def _parts(listed: Any) -> dict[str, Any]:
    wire = listed.model_dump(mode="json", by_alias=True, exclude_none=True)
    return {field: wire.get(field) for field in _FIELDS}


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


def fingerprint(listed: Any) -> str:
    """The fingerprint of one listed tool (an mcp ``Tool``): ``sha256:`` and per-field digests.

    The per-field part lets a later comparison say which part changed.
    """
    parts = _parts(listed)
    return "sha256:" + ".".join(_digest(parts[field])[:16] for field in _FIELDS)


def tool_drift(
    listed: Mapping[str, Any], pinned: Mapping[str, str], policy: DriftPolicy
) -> tuple[list[ToolDrift], set[str]]:
    """Compare listed tools (name -> mcp ``Tool``) with the pinned fingerprints.

    Returns the drift found and the names of the tools to leave out.
    """
    found: list[ToolDrift] = []
    refused: set[str] = set()
    for name, item in listed.items():
        now = fingerprint(item)
        before = pinned.get(name)
        if before == now:
            continue
        if before is None:
            drift = ToolDrift(name, "added")
        else:
            old = before.removeprefix("sha256:").split(".")
            new = now.removeprefix("sha256:").split(".")
            fields = (
                tuple(f for f, a, b in zip(_FIELDS, old, new, strict=True) if a != b)
                if len(old) == len(new)
                else _FIELDS
            )
            drift = ToolDrift(name, "changed", fields)
        decision = policy(drift) if callable(policy) else policy
        if decision not in ("refuse", "report"):
            raise ValueError(f"a drift policy returns 'refuse' or 'report', got {decision!r}")
        if decision == "refuse":
            refused.add(name)
            drift = ToolDrift(drift.tool, drift.kind, drift.fields, refused=True)
        found.append(drift)
    found.extend(ToolDrift(name, "removed") for name in pinned if name not in listed)
    return found, refused
