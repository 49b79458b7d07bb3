"""Tests of agentkit.providers.cohere; `CASES` feeds the cross-vendor suites (tests/providers/cases.py)."""

from tests.providers.cases import VendorCases, each_entry

CASES = {
    "cohere": VendorCases(
        first_event=("text/event-stream", b""),
        text_turn=("cohere/fixtures/client/text.json", ("message", "content", 0, "text")),
        native=(("response_format",), "cohere.v2.response_format#JsonObjectResponseFormatV2"),
        native_schema=lambda f: f["json_schema"],
        output_mode="tool",
        spec_parts=each_entry("cohere.v2.tool"),
    ),
}
