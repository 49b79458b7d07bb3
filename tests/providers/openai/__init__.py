"""Tests of agentkit.providers.openai; `CASES` feeds the cross-vendor suites (tests/providers/cases.py)."""

from tests.providers.cases import VendorCases, each_entry

CASES = {
    "openai": VendorCases(
        first_event=(
            "text/event-stream",
            b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m",'
            b'"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}\n\n',
        ),
        text_turn=("openai/fixtures/client/chat_text.json", ("choices", 0, "message", "content")),
        native=(("response_format",), "openai.chat.response_format_json_schema"),
        native_schema=lambda f: f["json_schema"]["schema"],
        output_mode="native response_format",
        spec_parts=each_entry("openai.chat.tool"),
        base_path="/v1",
    ),
    "openai-responses": VendorCases(
        first_event=("text/event-stream", b""),
        text_turn=("openai/fixtures/client/responses_text.json", ("output", -1, "content", 0, "text")),
        native=(("text", "format"), "openai.responses.text_format_json_schema"),
        native_schema=lambda f: f["schema"],
        output_mode="native text.format",
        spec_parts=each_entry("openai.responses.function_tool"),
        base_path="/v1",
    ),
}
