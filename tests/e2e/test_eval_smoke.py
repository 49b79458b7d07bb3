"""`agentkit eval` against the real local server: 20 BFCL questions, one at a time (the CI smoke of issue 21).

Small models judge poorly, so what is asserted is what the run guarantees: every question was asked and
judged, the report's shape, and a floor far under this model's measured accuracy (docs/evals.md) that a
broken pipeline (names not mapped back, arguments misread) would not reach. The questions are asked with
``tool_choice="required"``: llama-server then constrains the answer to its tool-call grammar from the
first token; with ``auto`` this model often writes its call in a fenced block, which the server's own
parser refuses with HTTP 500 (measured in the lab), so questions that expect no call are left out. One
call per answer (``parallel_tool_calls=False``): asked for several, this model writes calls until the
token limit cuts one in half, which the server also answers with HTTP 500.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentkit.evals import ERROR_CLASSES, bfcl_cases, evaluate, sample
from agentkit.models import ModelSettings

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]  # 20 requests on one busy CPU thread


async def test_twenty_bfcl_questions_on_the_local_model(openai_model: Any) -> None:
    cases = sample([c for c in bfcl_cases() if c.expected], 20, seed=0)
    settings = ModelSettings(
        tool_choice="required", parallel_tool_calls=False, temperature=0.0, aliases=True, max_tokens=200
    )
    report = await evaluate(openai_model, cases, concurrency=1, settings=settings, retry=True)
    data = report.to_json()
    assert data["total"] == 20 and len(data["cases"]) == 20
    assert set(data["categories"]) == {c.category for c in cases}
    assert set(data["errors"]) == set(ERROR_CLASSES)
    assert data["errors"]["model_error"] <= 2, [c["detail"] for c in data["cases"] if c["error"] == "model_error"]
    assert data["passed"] >= 3, report.text(failures=20)
    assert data["first_attempt"] is not None and data["first_attempt"]["passed"] <= data["passed"]
    for case, row in zip(cases, data["cases"], strict=True):  # calls come back under BFCL's dotted keys
        aliases = {key.replace(".", "_") for key in case.registry() if "." in key}
        assert not aliases & {call["name"] for call in row["calls"]}, row
