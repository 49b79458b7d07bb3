"""Tests of agentkit.providers.mistral; `CASES` feeds the cross-vendor suites (tests/providers/cases.py)."""

from tests.providers.cases import VendorCases, each_entry

CASES = {
    "mistral": VendorCases(
        first_event=("text/event-stream", b""),
        text_turn=("mistral/fixtures/client/text.json", ("choices", 0, "message", "content")),
        native=(("response_format",), "mistral.chat.response_format"),
        native_schema=lambda f: f["json_schema"]["schema"],
        output_mode="native response_format",
        spec_parts=each_entry("mistral.chat.tool"),
    ),
}
