"""agentkit's pytest plugin: vendor requests recorded once into cassettes, replayed afterwards.

Enable it in the root ``conftest.py`` (``pytest_plugins = ["agentkit.pytest_plugin"]``) or with
``pytest -p agentkit.pytest_plugin``. Then a test marked ``@pytest.mark.cassette`` (or asking for the
`cassette` fixture) runs inside a `agentkit.testing.Cassette`:

```python
@pytest.mark.cassette                      # tests/cassettes/test_refunds/test_refund.json, next to the test
async def test_refund():
    result = await agent.generate("Refund order 42")
```

The first run sends the requests and records them; later runs replay them with nothing sent. The mode
is the marker's ``mode=``, else ``--cassettes=once|replay|record``, else `agentkit.testing.Cassette`'s
default: ``replay`` under CI (a missing recording fails the test instead of reaching a vendor), else
``once``. ``@pytest.mark.cassette("name.json", secrets=[...])`` names the file (relative to the test's
folder) and more values to keep out of it.
"""

from __future__ import annotations as _annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ._cassettes import Cassette, default_mode

__all__ = ["cassette", "cassette_path", "pytest_addoption", "pytest_configure"]


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add ``--cassettes=once|replay|record``."""
    parser.addoption(
        "--cassettes",
        choices=("once", "replay", "record"),
        default=None,
        help="agentkit cassettes: record missing ones (once), replay only (replay; the default under CI), "
        "or record all again (record)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``cassette`` marker."""
    config.addinivalue_line(
        "markers", "cassette(path=None, *, mode=None, secrets=()): run the test inside an agentkit Cassette"
    )


def cassette_path(node: pytest.Item, name: str | None = None) -> Path:
    """Where a test's cassette lives: `name` beside the test file, else ``cassettes/<module>/<test>.json``."""
    folder = Path(str(node.path)).parent
    if name is not None:
        return folder / name
    test = re.sub(r"[^\w.-]+", "_", node.name).strip("_")
    return folder / "cassettes" / Path(str(node.path)).stem / f"{test}.json"


@pytest.fixture
def cassette(request: pytest.FixtureRequest) -> Iterator[Cassette]:
    """The test's `agentkit.testing.Cassette`, active for the whole test (see the module's docstring)."""
    marker = request.node.get_closest_marker("cassette")
    args: tuple[Any, ...] = marker.args if marker is not None else ()
    options: dict[str, Any] = dict(marker.kwargs) if marker is not None else {}
    mode = options.get("mode") or request.config.getoption("--cassettes") or default_mode()
    path = cassette_path(request.node, args[0] if args else options.get("path"))
    with Cassette(path, mode=mode, secrets=options.get("secrets", ())) as active:
        yield active


@pytest.fixture(autouse=True)
def _cassette_marker(request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker("cassette") is not None:
        request.getfixturevalue("cassette")
