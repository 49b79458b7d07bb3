"""Suite-wide fixtures: no test may reach a real vendor endpoint."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentkit.models import allow_model_requests


@pytest.fixture(autouse=True)
def _block_real_model_requests() -> Iterator[None]:
    """Model clients refuse non-local base URLs in tests (127.0.0.1 and in-process transports stay fine)."""
    with allow_model_requests(False):
        yield
