"""``python -m agentkit``: the same as the `agentkit` command."""

import sys

from .cli import main

sys.exit(main())
