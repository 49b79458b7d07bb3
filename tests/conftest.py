"""Suite-wide fixtures: no test may reach a real vendor endpoint, or write the user's run store."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator

import pytest

from agentkit.models import allow_model_requests

pytest_plugins = ["agentkit.pytest_plugin"]  # the cassette fixture and marker (tests/cassettes)

# Resumes claim their pause in the default run store (an SQLite file): the suite's own, never the user's.
os.environ["AGENTKIT_RUN_STORE"] = os.path.join(tempfile.mkdtemp(prefix="agentkit-runs-"), "runs.sqlite3")


@pytest.fixture(autouse=True)
def _block_real_model_requests() -> Iterator[None]:
    """Model clients refuse non-local base URLs in tests (127.0.0.1 and in-process transports stay fine)."""
    with allow_model_requests(False):
        yield
