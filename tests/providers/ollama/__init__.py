"""Tests of agentkit.providers.ollama; `CASES` feeds the cross-vendor suites (tests/providers/cases.py)."""

from typing import Any

from tests.providers.cases import VendorCases, each_entry


def _check_format(fragment: dict[str, Any]) -> None:
    from ollama._types import ChatRequest

    ChatRequest.model_validate({"model": "m", "format": fragment})
    assert fragment["required"] == ["city", "temperature"]


CASES = {
    "ollama": VendorCases(
        first_event=(
            "application/x-ndjson",
            b'{"model":"m","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":"Hi"},'
            b'"done":false}\n',
        ),
        text_turn=("ollama/fixtures/client/text.json", ("message", "content")),
        native=(("format",), None),
        native_schema=lambda f: f,
        output_mode="tool",
        spec_parts=each_entry("ollama.chat.tool"),
        native_type=_check_format,
    ),
}
