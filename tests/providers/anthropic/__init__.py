"""Tests of agentkit.providers.anthropic; `CASES` feeds the cross-vendor suites (tests/providers/cases.py)."""

from tests.providers.cases import VendorCases, each_entry

CASES = {
    "anthropic": VendorCases(
        first_event=(
            "text/event-stream",
            b'event: message_start\ndata: {"type":"message_start","message":{"id":"m1","type":"message",'
            b'"role":"assistant","model":"m","content":[],"stop_reason":null,"usage":{"input_tokens":1,'
            b'"output_tokens":1}}}\n\n',
        ),
        text_turn=("anthropic/fixtures/client/text.json", ("content", 0, "text")),
        native=(("output_config",), "anthropic.messages.output_config"),
        native_schema=lambda f: f["format"]["schema"],
        output_mode="native output_config.format",
        spec_parts=each_entry("anthropic.messages.tool"),
    ),
}
