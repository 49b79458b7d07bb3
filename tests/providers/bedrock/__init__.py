"""Tests of agentkit.providers.bedrock; `CASES` feeds the cross-vendor suites (tests/providers/cases.py)."""

import json
from collections.abc import Iterable
from typing import Any

from tests.providers.cases import VendorCases


def _bedrock_parts(payload: dict[str, Any]) -> Iterable[tuple[str, Any]]:
    return [("bedrock.converse.tool_configuration", payload["toolConfig"])]


CASES = {
    "bedrock": VendorCases(
        first_event=None,  # an AWS event stream: the stalled-stream case does not apply
        text_turn=("bedrock/fixtures/client/converse_text.json", ("output", "message", "content", 0, "text")),
        native=(("outputConfig",), "bedrock.converse.output_config"),
        native_schema=lambda f: json.loads(f["textFormat"]["structure"]["jsonSchema"]["schema"]),
        output_mode="native outputConfig.textFormat",
        spec_parts=_bedrock_parts,
        entries=lambda payload: payload["toolConfig"]["tools"],
        client_options={"region_name": "us-east-1"},
    ),
}
