"""The playground in a real browser: Debian's Chromium, headless, driven by Playwright.

A prompt goes in, the tool calls appear (display-shaped), the approval buttons resume the run, the
answer and the step timeline appear. Screenshots are kept in tests/artifacts/ (the docs use one).
Waits are Playwright's: on conditions, with generous deadlines for a slow machine, never fixed sleeps.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from agentkit import Usage
from agentkit.costs import estimate_cost

from .conftest import ARTIFACTS, CHROMIUM

# the demo agent's three turns (80, 160, 240 input tokens, 32 of them cached each; 12 output), as the table prices them
DEMO_COST = sum(
    estimate_cost(Usage(input_tokens=n, output_tokens=12, cache_read_tokens=32), "openai:gpt-4o-mini") or 0
    for n in (80, 160, 240)
)

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WAIT_MS = 60_000


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.fail("the browser test needs Debian's Chromium: apt-get install -y chromium (the set-up does as root)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    opened = context.new_page()
    problems: list[str] = []
    opened.on("pageerror", lambda error: problems.append(str(error)))
    yield opened
    context.close()
    assert problems == [], problems  # no uncaught script error on the page


def test_a_run_with_an_approval_in_the_browser(page: Any, playground_url: str) -> None:
    from playwright.sync_api import expect

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.goto(playground_url)
    expect(page.get_by_test_id("agent")).to_contain_text("Support desk", timeout=WAIT_MS)
    page.get_by_test_id("prompt").fill("Please refund order 42")
    page.get_by_test_id("send").click()

    expect(page.get_by_test_id("user-message")).to_have_text("Please refund order 42", timeout=WAIT_MS)
    lookup = page.locator('[data-testid="tool-call"][data-tool="lookup_order"]')
    expect(lookup).to_have_attribute("data-state", "output-available", timeout=WAIT_MS)
    expect(lookup.get_by_test_id("tool-output")).to_contain_text('"card": "****1111"')  # the output transform
    refund = page.locator('[data-testid="tool-call"][data-tool="refund"]')
    expect(refund).to_have_attribute("data-state", "approval-requested", timeout=WAIT_MS)
    expect(refund.get_by_test_id("tool-input")).to_contain_text("****1111")
    expect(refund.get_by_test_id("tool-input")).not_to_contain_text("4111-1111")
    expect(page.get_by_test_id("status")).to_have_text("ready", timeout=WAIT_MS)
    # why the run stopped, said (issue 22 §5.5)
    expect(page.get_by_test_id("run-status")).to_have_text(
        "last run: awaiting_approval (a tool call waits for approval)", timeout=WAIT_MS
    )
    expect(page.get_by_test_id("step")).to_have_count(2, timeout=WAIT_MS)
    page.screenshot(path=str(ARTIFACTS / "playground-approval.png"))

    refund.get_by_test_id("approve").click()
    expect(refund).to_have_attribute("data-state", "output-available", timeout=WAIT_MS)
    expect(refund.get_by_test_id("tool-output")).to_have_text("refunded 19.99 on order 42")
    expect(page.get_by_test_id("assistant-text").last).to_have_text(
        "Done: refunded 19.99 on order 42.", timeout=WAIT_MS
    )
    expect(page.get_by_test_id("step")).to_have_count(3, timeout=WAIT_MS)
    expect(page.get_by_test_id("usage-total")).to_have_text("Total: 480 input + 36 output tokens")
    expect(page.get_by_test_id("usage-details")).to_have_text(
        "Details: 480 in (96 cached) / 36 out (12 reasoning) tokens"
    )
    expect(page.get_by_test_id("step").first).to_contain_text("80 in (32 cached) / 12 out (4 reasoning) tokens")
    expect(page.get_by_test_id("run-cost")).to_have_text(f"estimated cost ${DEMO_COST}")
    expect(page.get_by_test_id("run-status")).to_have_text("last run: complete (the model answered)")
    page.screenshot(path=str(ARTIFACTS / "playground-answer.png"))


def test_deny_and_the_inspectors_in_the_browser(page: Any, playground_url: str) -> None:
    from playwright.sync_api import expect

    page.goto(playground_url)
    page.get_by_test_id("prompt").fill("Refund order 42")
    page.get_by_test_id("send").click()
    refund = page.locator('[data-testid="tool-call"][data-tool="refund"]')
    expect(refund.get_by_test_id("deny")).to_be_visible(timeout=WAIT_MS)
    refund.get_by_test_id("deny").click()
    expect(refund).to_have_attribute("data-state", "output-denied", timeout=WAIT_MS)
    expect(page.get_by_test_id("assistant-text").last).to_have_text("Understood: no refund was made.", timeout=WAIT_MS)

    page.get_by_role("button", name="Payloads").click()
    page.get_by_test_id("vendor").select_option("openai")
    payload = page.get_by_test_id("payload")
    expect(payload).to_contain_text('"tools"', timeout=WAIT_MS)
    expect(payload).to_contain_text('"name": "refund"')
    expect(payload).to_contain_text("Refund order 42")  # the conversation so far is in the request
    # the recorded history, with what the page masks masked the same way (issue 17 §4.7)
    expect(payload).to_contain_text("****1111")
    expect(payload).not_to_contain_text("4111-1111")
    expect(page.get_by_test_id("payload-note")).to_contain_text("as the page shows them")
    page.get_by_test_id("vendor").select_option("gemini")
    expect(payload).to_contain_text("functionDeclarations", timeout=WAIT_MS)
    page.screenshot(path=str(ARTIFACTS / "playground-payload.png"))

    page.get_by_role("button", name="Compatibility").click()
    report = page.get_by_test_id("compatibility")
    expect(report).to_contain_text("anthropic", timeout=WAIT_MS)
    expect(report).to_contain_text("lookup_order")


def test_a_turn_mixing_an_approval_and_a_free_call_in_the_browser(page: Any, playground_url: str) -> None:
    """Issue 17 §3.4: approving the refund resumes the turn; the note (no approval needed) never blocks it."""
    from playwright.sync_api import expect

    page.goto(playground_url)
    page.get_by_test_id("prompt").fill("Please refund order 42 and add a note")
    page.get_by_test_id("send").click()
    refund = page.locator('[data-testid="tool-call"][data-tool="refund"]')
    note = page.locator('[data-testid="tool-call"][data-tool="add_note"]')
    expect(refund).to_have_attribute("data-state", "approval-requested", timeout=WAIT_MS)
    expect(note.get_by_test_id("waits")).to_contain_text("no approval needed", timeout=WAIT_MS)
    expect(note.get_by_test_id("approve")).to_have_count(0)  # nothing for the user to decide there
    expect(page.get_by_test_id("status")).to_have_text("ready", timeout=WAIT_MS)
    refund.get_by_test_id("approve").click()
    expect(refund).to_have_attribute("data-state", "output-available", timeout=WAIT_MS)
    expect(note).to_have_attribute("data-state", "output-available", timeout=WAIT_MS)
    expect(note.get_by_test_id("tool-output")).to_have_text("noted on order 42")
    expect(page.get_by_test_id("assistant-text").last).to_have_text(
        "Done: refunded 19.99 on order 42.", timeout=WAIT_MS
    )
    page.screenshot(path=str(ARTIFACTS / "playground-mixed-turn.png"))


def test_a_typed_answer_and_a_run_cut_at_max_steps_in_the_browser(page: Any, output_playground_url: str) -> None:
    """Issue 22 §5.4, §5.5: the typed answer (output-tool mode) is shown; a run cut at max_steps says so."""
    from playwright.sync_api import expect

    page.goto(output_playground_url)
    expect(page.get_by_test_id("agent")).to_contain_text("Trip planner", timeout=WAIT_MS)
    page.get_by_test_id("prompt").fill("Plan a trip")
    page.get_by_test_id("send").click()
    output = page.get_by_test_id("output")
    expect(output).to_have_attribute("data-state", "done", timeout=WAIT_MS)
    expect(output).to_contain_text('"destination": "Lisbon"')
    expect(output).to_contain_text('"sunscreen"')
    expect(page.get_by_test_id("run-status")).to_have_text("last run: complete (the model answered)", timeout=WAIT_MS)
    expect(page.get_by_test_id("run-end")).to_have_attribute("data-status", "complete")
    page.screenshot(path=str(ARTIFACTS / "playground-typed-output.png"))

    page.get_by_test_id("prompt").fill("keep going")
    page.get_by_test_id("send").click()
    expect(page.get_by_test_id("run-status")).to_contain_text("last run: max_steps (", timeout=WAIT_MS)
    expect(page.get_by_test_id("run-end").last).to_have_attribute("data-status", "max_steps")
    expect(page.get_by_test_id("run-end").last).to_contain_text("before the model answered")
    expect(page.get_by_test_id("output")).to_have_count(1)  # the cut run has no answer to show

    page.get_by_test_id("prompt").fill("break")
    page.get_by_test_id("send").click()
    expect(page.get_by_test_id("run-status")).to_have_text("error: RuntimeError: the model is down", timeout=WAIT_MS)
    expect(page.get_by_test_id("run-status")).to_have_attribute("data-status", "error")

    page.get_by_role("button", name="Compatibility").click()
    expect(page.get_by_test_id("compatibility")).to_contain_text("weather", timeout=WAIT_MS)
