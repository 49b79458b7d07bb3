"""§2.3 / §3.2: compatibility, check_names and the printable report, over all eight vendors at once."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pytest
from pydantic import Field

from agentkit import Registry, tool
from agentkit.interop import tool_from_definition
from agentkit.providers import InvalidToolNameError, check_names, compatibility, get_provider
from agentkit.providers.gemini import GeminiProvider
from agentkit.providers.report import format_report, loss_kind, name_problems, summarize
from benchmarks.corpus_report import BUILTIN


@tool
def search_docs(query: str, limit: Annotated[int, Field(gt=0, le=50)] = 10, level: Literal[1, 2, 3] = 1) -> list[str]:
    """Search the documentation.

    Args:
        query: What to look for.
        limit: How many hits at most.
        level: Heading level to search.
    """
    return []


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return "sunny"


def free_form() -> Any:
    parameters = {
        "type": "object",
        "properties": {"labels": {"type": "object", "additionalProperties": {"type": "string"}}},
        "required": ["labels"],
    }
    return tool_from_definition({"name": "tag", "parameters": parameters})


def registry() -> Registry:
    return Registry({"docs.search": search_docs, "get_weather": get_weather})


def by(rows: list[Any], provider: str, key: str) -> Any:
    [row] = [r for r in rows if r.provider == provider and r.key == key]
    return row


# ---- several vendors at once ---------------------------------------------------------------------------


def test_all_eight_vendors_at_once() -> None:
    rows = compatibility(registry())  # None: every built-in vendor
    assert [r.provider for r in rows[::2]] == list(BUILTIN)
    assert len(rows) == 2 * len(BUILTIN)
    assert all(r.key in ("docs.search", "get_weather") for r in rows)
    assert compatibility(registry(), "openai") == [r for r in rows if r.provider == "openai"]
    assert compatibility(get_weather, ["gemini", get_provider("mistral")])[1].provider == "mistral"


def test_a_key_some_vendors_reject() -> None:
    tools = Registry({"docs.search": search_docs, "9lives": get_weather})
    rows = compatibility(tools)
    rejected = {(r.provider, r.key) for r in rows if r.name_problem}
    assert rejected == {
        *((p, "docs.search") for p in ("openai", "openai-responses", "anthropic", "bedrock", "mistral", "cohere")),
        ("gemini", "9lives"),
        ("cohere", "9lives"),
    }
    for provider, key in rejected:
        row = by(rows, provider, key)
        assert row.rejected and row.wire_name is None
        assert provider in row.name_problem and get_provider(provider).name_rule.pattern in row.name_problem
    assert by(rows, "gemini", "docs.search").wire_name == "docs.search"  # Gemini allows dots
    assert by(rows, "ollama", "9lives").wire_name == "9lives"

    aliased = compatibility(tools, aliases=True)
    assert not any(r.name_problem for r in aliased)
    assert by(aliased, "openai", "docs.search").wire_name == "docs_search"
    assert by(aliased, "cohere", "9lives").wire_name == "_9lives"


def test_check_names_before_any_request() -> None:
    tools = Registry({"docs.search": search_docs, "get_weather": get_weather})
    check_names(tools, ["gemini", "ollama"])  # both accept dots
    check_names(tools, aliases=True)
    with pytest.raises(InvalidToolNameError) as caught:
        check_names(tools, ["openai", "gemini"])
    assert caught.value.key == "docs.search" and caught.value.vendor == "openai"
    with pytest.raises(InvalidToolNameError) as caught:
        check_names(tools)
    for vendor in ("openai", "anthropic", "bedrock", "mistral", "cohere"):
        assert vendor in str(caught.value)


def test_check_names_accepts_one_name() -> None:
    with pytest.raises(InvalidToolNameError):
        check_names(registry(), "openai")  # type: ignore[arg-type]


def test_check_names_names_each_bad_key() -> None:
    tools = Registry({"docs.search": search_docs, "9lives": get_weather})
    with pytest.raises(InvalidToolNameError) as caught:
        check_names(tools, ["openai", "gemini"])  # openai rejects docs.search, gemini rejects 9lives
    assert "9lives" in str(caught.value)


def test_name_problems_lists_every_key_and_vendor() -> None:
    tools = Registry({"docs.search": search_docs, "9lives": get_weather, "x" * 70: get_weather})
    problems = name_problems(tools)
    found = {(p.key, p.provider) for p in problems}
    assert ("9lives", "gemini") in found and ("9lives", "cohere") in found
    assert ("x" * 70, "openai") in found and ("x" * 70, "gemini") not in found
    long_alias = next(p.alias for p in problems if p.key == "x" * 70 and p.provider == "anthropic")
    assert long_alias is not None and len(long_alias) == 64
    assert str(problems[0]).startswith("'docs.search' breaks openai's name rule")
    assert name_problems(tools, "ollama") == []
    assert {p.provider for p in name_problems(tools, ["cohere"])} == {"cohere"}


# ---- lossy keywords ------------------------------------------------------------------------------------


def test_exclusive_minimum_and_int_enum_in_geminis_openapi_form() -> None:
    rows = compatibility(search_docs, GeminiProvider(schema_format="openapi"))
    losses = {(loss.path, loss.keyword, loss.change) for loss in rows[0].losses}
    assert ("/properties/limit", "exclusiveMinimum", "moved into the description") in losses
    assert ("/properties/level", "enum", "values turned into strings (Gemini enums hold strings only)") in losses
    assert not rows[0].rejected
    # the default JSON Schema form sends both, and says Gemini may ignore exclusiveMinimum
    [plain] = compatibility(search_docs, "gemini")
    assert [(loss.keyword, loss.path) for loss in plain.losses] == [("exclusiveMinimum", "/properties/limit")]


def test_defaults_move_into_the_description_in_strict_mode() -> None:
    for vendor in ("openai", "openai-responses", "anthropic", "mistral", "cohere"):
        [row] = compatibility(search_docs, vendor)
        assert row.strict, vendor
        moved = {loss.path for loss in row.losses if loss.keyword == "default"}
        assert moved == {"/properties/limit", "/properties/level"}, vendor
    [loose] = compatibility(search_docs, "openai", strict=False)
    assert not loose.strict and loose.losses == ()
    [bedrock] = compatibility(search_docs, "bedrock")
    assert not bedrock.strict and bedrock.losses == ()  # strict only when asked for
    [forced] = compatibility(search_docs, "bedrock", strict=True)
    assert forced.strict and any(loss.keyword == "default" for loss in forced.losses)


def test_strict_true_reports_what_a_vendor_rejects() -> None:
    item = free_form()
    for vendor in ("openai", "anthropic", "bedrock", "mistral", "cohere"):
        [fallback] = compatibility(item, vendor)
        assert not fallback.rejected, vendor  # strict=None falls back to a non-strict schema
        [forced] = compatibility(item, vendor, strict=True)
        assert forced.rejected and "REJECTED" in str(forced), vendor
    [ollama] = compatibility(item, "ollama", strict=True)
    assert not ollama.rejected and any(loss.keyword == "strict" for loss in ollama.losses)


def test_a_tool_over_anthropics_strict_budget_on_its_own() -> None:
    properties = {f"p{i}": {"type": "string", "default": "x"} for i in range(17)}  # 17 optional -> 17 unions
    item = tool_from_definition({"name": "wide", "parameters": {"type": "object", "properties": properties}})
    anthropic = get_provider("anthropic")
    assert anthropic.strict_budget(Registry([item])).fallbacks  # type: ignore[attr-defined]
    [row] = compatibility(item, "anthropic")
    assert not row.strict  # format_tools sends it non-strict


# ---- the printable report ------------------------------------------------------------------------------


def test_format_report() -> None:
    text = format_report(compatibility(registry(), ["openai", "anthropic", "gemini", "cohere"], aliases=True))
    lines = text.splitlines()
    assert lines[0].split() == ["provider", "tools", "strict", "lossy", "rejected"]
    assert lines[1].split() == ["openai", "2", "2", "1", "0"]
    assert "docs.search" in lines and "get_weather" not in lines  # nothing lost: not listed
    assert "  openai     ok, strict, sent as 'docs_search', 2 losses" in lines
    assert "               /properties/limit: default moved into the description" in lines
    assert "get_weather" in format_report(compatibility(registry(), "openai"), ok=True).splitlines()
    assert format_report(compatibility(registry(), "openai"), details=False).count("\n") == 1
    assert format_report([]) == "No tools to check."


def test_format_report_shows_rejections() -> None:
    text = format_report(
        compatibility(Registry({"docs.search": search_docs, "tag": free_form()}), "openai", strict=True)
    )
    assert "  openai    REJECTED, strict" in text
    assert "name: breaks openai's rule ^[a-zA-Z0-9_-]{1,64}$" in text
    assert "(rejected by the vendor)" in text


def test_summarize_and_loss_kinds() -> None:
    rows = compatibility(registry(), ["openai", "ollama"], aliases=True)
    summary = summarize(rows)
    assert list(summary) == ["openai", "ollama"]
    assert summary["openai"].tools == 2 and summary["openai"].strict == 2 and summary["openai"].lossy == 1
    assert summary["openai"].kinds == {"default moved into the description": 1}
    assert summary["ollama"].kinds["additionalProperties dropped"] == 2
    gemini = compatibility(
        Registry([tool_from_definition({"name": "h", "parameters": HEADERS})]), GeminiProvider(schema_format="openapi")
    )
    assert {loss_kind(loss) for loss in gemini[0].losses} == {
        "properties name '…' breaks ^[A-Za-z_][A-Za-z0-9_]{0,63}$ (rejected)"
    }


HEADERS = {"type": "object", "properties": {"Content-Type": {"type": "string"}, "User-Agent": {"type": "string"}}}


def test_docs_example_is_current() -> None:
    """docs/providers/dialects.md shows this report; keep the page and the code in step."""
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "providers" / "dialects.md").read_text()
    text = format_report(compatibility(registry(), ["openai", "anthropic", "gemini", "cohere"], aliases=True))
    assert f"```text\n{text}\n```" in page


@pytest.mark.parametrize(("vendor", "none_choice"), [("mistral", "none"), ("cohere", "NONE")])
def test_empty_active_tools_keeps_the_tools_and_forbids_calls(vendor: str, none_choice: str) -> None:
    tools = Registry({"search": search_docs, "weather": get_weather})
    payload = get_provider(vendor).format_tools(tools, active_tools=[])
    assert len(payload["tools"]) == 2  # a history holding tool calls still needs them declared
    assert payload["tool_choice"] == none_choice
