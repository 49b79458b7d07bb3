"""``python -m agentkit.mcp serve package.module:registry [--transport stdio|http]``."""

from __future__ import annotations as _annotations

import sys

from ._server import main

if __name__ == "__main__":
    sys.exit(main())
