"""The public modules of agentkit (no ``_`` in their dotted path), for the export and reference tests."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from types import ModuleType

import agentkit


@cache
def public_modules() -> tuple[ModuleType, ...]:
    """``agentkit`` and every module or package under it whose dotted path has no ``_``-prefixed part."""
    names = ["agentkit"]
    for info in pkgutil.walk_packages(agentkit.__path__, "agentkit."):
        if not any(part.startswith("_") for part in info.name.split(".")[1:]):  # also skips __main__
            names.append(info.name)
    return tuple(importlib.import_module(name) for name in names)


def exported(module: ModuleType) -> list[str]:
    """The module's ``__all__`` (empty if it has none, which the export tests reject)."""
    return list(getattr(module, "__all__", []))
