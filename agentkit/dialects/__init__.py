"""One canonical JSON Schema per tool, rewritten per vendor by pure, cached functions.

Each vendor dialect is a `Dialect` whose `rewrite` returns the vendor's schema and every lossy change
it made (`Loss`), so a compatibility report can be printed before anything is sent.
"""

from __future__ import annotations as _annotations

from ._base import Dialect, DialectResult, Loss, rewrite_for_tool

__all__ = ["Dialect", "DialectResult", "Loss", "rewrite_for_tool"]
