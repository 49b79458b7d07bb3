"""Validate payloads against the vendors' own specs in ../shared/vendors/specs (read-only, beside the clone)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
SPECS = SHARED / "vendors" / "specs" / "jsonschema"
SAMPLES = SHARED / "vendors" / "samples"
CORPUS = SHARED / "corpus"


@cache
def _validator(name: str) -> jsonschema.Draft202012Validator:
    schema = json.loads((SPECS / f"{name}.schema.json").read_text())
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())


def spec_errors(name: str, payload: Any) -> list[str]:
    """Every way `payload` breaks the spec schema `name` (e.g. ``openai.chat.tool``)."""
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message[:300]}"
        for e in _validator(name).iter_errors(payload)
    ]


def assert_spec_valid(name: str, payload: Any) -> None:
    """Fail with every problem if `payload` breaks the vendor spec schema `name`."""
    errors = spec_errors(name, payload)
    assert not errors, f"{name}: " + "\n".join(errors)


def sample(name: str) -> Any:
    """A sample payload from ../shared/vendors/samples."""
    return json.loads((SAMPLES / f"{name}.json").read_text())
