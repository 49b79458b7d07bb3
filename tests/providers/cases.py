"""What the cross-vendor suites need to know of each vendor, kept in the vendor's own test package.

Each ``tests/providers/<folder>/__init__.py`` defines ``CASES``, a `VendorCases` per vendor of its folder
(``openai`` holds both OpenAI APIs); `cases` finds them through the vendor table, so a new vendor brings
its cases with its tests, in its own folder (docs/contributing/vendors.md).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentkit._vendors import VENDORS


@dataclass(frozen=True)
class VendorCases:
    """One vendor's entries in the cross-vendor suites (test_clients.py, test_output.py, test_corpus.py)."""

    first_event: tuple[str, bytes] | None
    """A streamed answer's content type and first event (``b""``: the stalled stream sends none; None: the
    vendor's stream is no plain HTTP stream, and the stalled-stream case does not apply)."""
    text_turn: tuple[str, tuple[Any, ...]]
    """The recorded text turn (a fixture under tests/providers/) and the path to its text."""
    native: tuple[tuple[str, ...], str | None]
    """The native structured-output field of a request body, and the spec schema it fits (None: `native_type`)."""
    native_schema: Callable[[dict[str, Any]], Any]
    """The JSON Schema inside that field."""
    output_mode: str
    """How `compatibility` says an output type is asked of the vendor beside tools (``"tool"``, ``"native ..."``)."""
    spec_parts: Callable[[dict[str, Any]], Iterable[tuple[str, Any]]]
    """(spec schema, part) pairs covering a `format_tools` payload (tests/providers/test_corpus.py)."""
    native_type: Callable[[dict[str, Any]], None] | None = None
    """Checks the field against the vendor SDK's own type, where no spec schema covers it."""
    entries: Callable[[dict[str, Any]], Sequence[Any]] = lambda payload: payload["tools"]
    """The payload's entries, one per tool."""
    base_path: str = ""
    """What the SDK expects after a server's URL (OpenAI's: ``/v1``)."""
    client_options: Mapping[str, Any] = field(default_factory=lambda: {})
    """Constructor options of the model client besides the key, the URL and the limits."""


def cases(vendor: str) -> VendorCases:
    """The cases of `vendor`, from the test package of its provider's folder."""
    provider = VENDORS[vendor].provider
    assert provider is not None, vendor
    folder = provider.partition(":")[0].rsplit(".", 1)[-1]
    found: Mapping[str, VendorCases] = getattr(importlib.import_module(f"tests.providers.{folder}"), "CASES", {})
    if vendor not in found:
        raise AssertionError(
            f"tests/providers/{folder}/__init__.py has no CASES[{vendor!r}]: see tests/providers/cases.py"
        )
    return found[vendor]


def each_entry(*specs: str) -> Callable[[dict[str, Any]], Iterable[tuple[str, Any]]]:
    """`VendorCases.spec_parts` of a payload whose ``tools`` are one entry per tool, each fitting `specs`."""

    def parts(payload: dict[str, Any]) -> Iterable[tuple[str, Any]]:
        return [(spec, entry) for entry in payload["tools"] for spec in specs]

    return parts
