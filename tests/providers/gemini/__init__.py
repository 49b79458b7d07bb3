"""Tests of agentkit.providers.gemini; `CASES` feeds the cross-vendor suites (tests/providers/cases.py)."""

from collections.abc import Iterator
from typing import Any

from tests.providers.cases import VendorCases


def _gemini_parts(payload: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    yield "gemini.tool_config", payload["toolConfig"]
    for entry in payload["tools"]:
        for declaration in entry["functionDeclarations"]:
            yield "gemini.function_declaration", declaration
            if "parameters" in declaration:
                yield "gemini.schema_openapi_subset", declaration["parameters"]


def _check_generation_config(fragment: dict[str, Any]) -> None:
    from google.genai import types

    config = types.GenerationConfig.model_validate(fragment)  # the SDK's type: camelCase wire names
    assert config.response_mime_type == "application/json"
    assert config.response_json_schema["properties"]["temperature"] == {"type": "integer"}


CASES = {
    "gemini": VendorCases(
        first_event=("text/event-stream", b""),
        text_turn=("gemini/fixtures/client/text.json", ("candidates", 0, "content", "parts", 0, "text")),
        native=(("generationConfig",), None),
        native_schema=lambda f: f["responseJsonSchema"],
        output_mode="tool",
        spec_parts=_gemini_parts,
        entries=lambda payload: [d for e in payload["tools"] for d in e["functionDeclarations"]],
        native_type=_check_generation_config,
    ),
}
