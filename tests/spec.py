"""Validate payloads against the vendors' own specs, kept in ``tests/data`` (sources: tests/data/README.md)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

DATA = Path(__file__).resolve().parent / "data"
SPECS = DATA / "specs" / "jsonschema"
SAMPLES = DATA / "samples"
CORPUS = DATA / "corpus"
LINTER = DATA / "tools" / "lint_schema.py"


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
    """A sample payload from ``tests/data/samples``."""
    return json.loads((SAMPLES / f"{name}.json").read_text())


@cache
def openapi(vendor: str) -> dict[str, Any]:
    """The part of `vendor`'s OpenAPI document the tests use (``openai`` or ``mistral``; Cohere: `cohere_sdk`).

    Only the components and paths listed in ``dev/make_test_data.py`` (and what they reference) are kept:
    a test that needs another one adds it there and reruns that script.
    """
    document: dict[str, Any] = json.loads((DATA / "specs" / f"{vendor}-openapi.subset.json").read_text())
    return document


@cache
def cohere_sdk() -> dict[str, Any]:
    """Cohere's chat request, response, messages and stream events, generated from its SDK's types.

    Made by ``dev/cohere_schemas.py`` (Cohere's OpenAPI document is proprietary; the SDK is MIT): the schemas
    under ``components/schemas``, the stream events' ``type`` -> ``$ref`` table under ``x-stream-events``.
    """
    document: dict[str, Any] = json.loads((DATA / "specs" / "cohere-sdk.schemas.json").read_text())
    return document


_OPENAPI_DOCUMENTS = {"openai": lambda: openapi("openai"), "mistral": lambda: openapi("mistral"), "cohere": cohere_sdk}


@cache
def _openapi_validator(vendor: str, component: str) -> jsonschema.Draft202012Validator:
    components = _OPENAPI_DOCUMENTS[vendor]()["components"]
    return jsonschema.Draft202012Validator({"$ref": f"#/components/schemas/{component}", "components": components})


def openapi_errors(vendor: str, component: str, payload: Any) -> list[str]:
    """Every way `payload` breaks schema `component` of `vendor`'s OpenAPI components (``openai``, ``mistral``,
    ``cohere``: `openapi` / `cohere_sdk`); a ``#/components/schemas/...`` reference works as a name too."""
    name = component.removeprefix("#/components/schemas/")
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message[:300]}"
        for e in _openapi_validator(vendor, name).iter_errors(payload)
    ]


def assert_openapi_valid(vendor: str, component: str, payload: Any) -> None:
    """Fail with every problem if `payload` breaks `vendor`'s OpenAPI schema `component`."""
    errors = openapi_errors(vendor, component, payload)
    assert not errors, f"{vendor} {component}: " + "\n".join(errors)
