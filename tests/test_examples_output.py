"""What the shipped examples print: their own output only, and the quickstart's first impression."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_example(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "examples" / name), *args], capture_output=True, text=True, timeout=180, cwd=ROOT
    )


def test_a_child_servers_log_never_reaches_the_examples_output() -> None:
    """Regression: mcp-server-time's INFO log lines interleaved with the example's output."""
    done = run_example("mcp_time.py")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert "structured output:" in done.stdout


def test_the_quickstart_shows_a_conversation_and_what_differs_between_vendors() -> None:
    """Regression: a random city, an irrelevant tool, then eight long JSON payloads without a comparison."""
    done = run_example("quickstart.py", "--scripted")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    out = done.stdout
    assert "a scripted model (--scripted): its turns are written in this file" in out  # honest about the model
    assert 'model  ->  weather({"city": "Lisbon", "unit": "f"})' in out
    assert 'model  ->  convert-currency({"amount": 250, "rate": 1.08})' in out
    assert "model      Lisbon is at 57.2 °F tonight, and 250 EUR are 270.00 USD at 1.08." in out
    # the vendors side by side: one block per aspect, vendors sharing a value on one line
    assert 'tool_choice="required" is sent as' in out
    assert 'tool_choice: "REQUIRED"' in out and 'toolConfig.functionCallingConfig.mode: "ANY"' in out
    assert '"convert_currency"  cohere' in out  # the alias a vendor's name rule forces, pointed out
    assert '{"type": "function"' not in out  # no whole payloads unless --full


def test_the_structured_output_example_shows_the_typed_answer_the_stream_and_each_vendors_form() -> None:
    done = run_example("structured_output.py")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    out = done.stdout
    assert "output: Forecast(city='Lisbon', high=24.5, sky='sunny')" in out
    assert "after the validator's retry (3 model turns): Your answer was not accepted: 99.0 °C" in out
    assert "  partial {'city': 'Lis'}" in out and "  output  Forecast(" in out
    assert "  anthropic         native: output_config" in out
    assert "  cohere            the output tool final_result" in out


def test_the_mcp_library_example_reads_resources_runs_a_task_and_refuses_a_changed_tool() -> None:
    done = run_example("mcp_library.py")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert "protocol 2026-07-28; resources ['library://catalogue']" in done.stdout
    assert "answer: Try Dune: reserved Dune." in done.stdout
    assert "after the change: tools []; drift: tool 'reserve' changed since it was pinned (description)" in done.stdout
