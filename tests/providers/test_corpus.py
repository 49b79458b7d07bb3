"""Conformance corpus (issue 3 §4.3): every BFCL definition and MCP tool, every provider, spec-valid.

The corpus (tests/data/corpus) is imported with `agentkit.interop.tool_from_definition`, batched into
registries of 200 keyed by the definitions' own names (dots kept, aliases on), and each provider's
`format_tools` output is validated against the vendor's spec schema, entry by entry. Strict forms are
checked for consistency with `compatibility`: a tool that is not reported as rejected must pass the
vendor's strict linter (tests/data/tools/lint_schema.py). docs/providers/corpus.md holds the
counts `benchmarks/corpus_report.py` generated; the last test checks they are still what the code gives.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

import pytest

from agentkit import Registry
from agentkit.exceptions import PayloadRejectedError, StrictSchemaError
from agentkit.providers import Compatibility, Provider, compatibility
from benchmarks import corpus_report as corpus
from tests.spec import spec_errors

from .cases import VendorCases, cases
from .common import lint_module
from .strict_rules import structural_errors

CORPORA = ("bfcl", "mcp")
VARIANTS = corpus.VARIANTS


def _cases(name: str) -> VendorCases:
    return cases("gemini" if name == "gemini-openapi" else name)  # the OpenAPI-subset form is Gemini's too


def entry_count(name: str, payload: dict[str, Any]) -> int:
    return len(_cases(name).entries(payload))


_VALID: set[tuple[str, str]] = set()


def part_errors(spec: str, part: Any) -> list[str]:
    """`spec_errors`, once per distinct part (strict and default entries are often identical)."""
    key = (spec, json.dumps(part, sort_keys=True))
    if key in _VALID:
        return []
    errors = spec_errors(spec, part)
    if not errors:
        _VALID.add(key)
    return errors


def spec_parts(name: str, payload: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """(spec schema name, payload part) pairs covering one `format_tools` payload."""
    yield from _cases(name).spec_parts(payload)


@cache
def linters() -> dict[str, Callable[[dict[str, Any]], list[tuple[str, str, str]]]]:
    module = lint_module()
    return {
        "openai": module.lint_openai_strict,
        "openai-responses": module.lint_openai_strict,
        "mistral": module.lint_openai_strict,  # the shared strict core: all required, no extra keys
        "anthropic": module.lint_anthropic_strict,
        "bedrock": module.lint_anthropic_strict,  # Claude's strict subset, which Bedrock strict sends
        "cohere": module.lint_cohere_strict_tools,
        "gemini-openapi": module.lint_gemini_openapi_subset,
    }


def lint_errors(name: str, schema: dict[str, Any]) -> list[tuple[str, str, str]]:
    """The linter's errors for one schema, without the per-request aggregate limits (not per tool).

    Mistral is checked with OpenAI's structural rules only: it publishes no format list. Strict vendors
    are also held to the structural rules the shared linter lacks (`tests.providers.strict_rules`).
    """
    errors = [f for f in linters()[name](schema) if f[0] == "error" and "limit is across" not in f[2]]
    if name != "gemini-openapi":
        errors += [("error", "#", problem) for problem in structural_errors(schema, name)]
    return [f for f in errors if not f[2].startswith("format ")] if name == "mistral" else errors


def sendable(reg: Registry, p: Provider, strict: bool | None) -> Registry:
    """`reg` without the tools `format_tools` refuses: forced strict (``strict=True``) and rejected, or a schema
    the vendor refuses whatever the strictness (Gemini's ``parameters`` property names).

    Each one left out must raise `StrictSchemaError` (`PayloadRejectedError`) on its own, naming itself.
    """
    refuses = {d.key for d in reg.definitions() if p.schema_problems([d], strict)}
    for key in refuses:
        with pytest.raises(PayloadRejectedError, match=re.escape(repr(key))):
            p.format_tools(Registry({key: reg[key]}), aliases=True, strict=strict)
    if refuses:
        reg = Registry({key: item for key, item in reg.items() if key not in refuses})
    if strict is not True or not p.refuses_forced_strict:
        return reg
    refused = {row.key for row in compatibility(reg, p, strict=True, aliases=True, per_request=False) if row.rejected}
    for key in refused:
        with pytest.raises(StrictSchemaError, match=re.escape(repr(key))):
            p.format_tools(Registry({key: reg[key]}), aliases=True, strict=True)
    return Registry({key: item for key, item in reg.items() if key not in refused})


def rows(corpus_name: str, name: str, strict: bool | None) -> list[tuple[Registry, Compatibility]]:
    p = corpus.provider(name)
    return [
        (reg, row)
        for reg in corpus.registries(corpus_name)
        for row in compatibility(reg, p, strict=strict, aliases=True)
    ]


# ---- the corpus itself ------------------------------------------------------------------------------------


def test_corpus_size() -> None:
    assert len(corpus.bfcl_definitions()) == 3526  # about 3,500, as issue 3 says
    assert len(corpus.mcp_definitions()) == 96
    assert sum(len(r) for r in corpus.registries("bfcl")) == 3526
    assert all(len(r) <= corpus.BATCH for r in corpus.registries("bfcl"))


@pytest.mark.parametrize("corpus_name", CORPORA)
def test_every_definition_imports(corpus_name: str) -> None:
    """Tool() checks each schema with Draft202012Validator.check_schema; here: ids, roots, output schemas."""
    definitions = corpus.bfcl_definitions() if corpus_name == "bfcl" else corpus.mcp_definitions()
    tools = corpus.tools(corpus_name)
    assert [t.id for t in tools] == [d["name"] for d in definitions]  # dotted names kept as they are
    for item, definition in zip(tools, definitions, strict=True):
        assert item.input_schema["type"] == "object", item.id
        assert "$schema" not in item.input_schema
        declared_output = definition.get("outputSchema", definition.get("response"))
        if declared_output is not None:
            assert item.output_schema and item.output_schema != {}, item.id
        else:
            assert item.output_schema is None, item.id
    if corpus_name == "bfcl":
        assert sum("." in t.id for t in tools) > 1000


def test_mcp_schemas_need_no_repair() -> None:
    assert corpus.fix_counts("mcp") == {}


# ---- spec validity -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("strict", [None, True], ids=["default", "strict"])
@pytest.mark.parametrize("corpus_name", CORPORA)
@pytest.mark.parametrize("name", VARIANTS)
def test_payloads_are_spec_valid(name: str, corpus_name: str, strict: bool | None) -> None:
    p = corpus.provider(name)
    for whole in corpus.registries(corpus_name):
        reg = sendable(whole, p, strict)
        payload = p.format_tools(reg, aliases=True, strict=strict)
        assert entry_count(name, payload) == len(reg)
        for spec, part in spec_parts(name, payload):
            errors = part_errors(spec, part)
            assert not errors, f"{name}: {spec}: {str(part)[:300]}\n" + "\n".join(errors[:5])


@pytest.mark.parametrize("name", VARIANTS)
def test_wire_names_follow_the_rule_and_map_back(name: str) -> None:
    p = corpus.provider(name)
    for reg in corpus.registries("bfcl"):
        names = p.names(reg, aliases=True)
        for key in reg:
            wire = names.name_for(key)
            assert p.name_rule.accepts(wire), (name, key, wire)
            assert names.key_for(wire) == key


# ---- strict forms agree with compatibility -----------------------------------------------------------------


def entry_strict(name: str, payload: dict[str, Any], p: Provider, reg: Registry) -> dict[str, bool]:
    """Registry key -> whether the payload sends that tool strict."""
    names = p.names(reg, aliases=True)
    if name == "cohere":
        return {names.key_for(e["function"]["name"]): payload.get("strict_tools", False) for e in payload["tools"]}
    if name == "bedrock":
        return {
            names.key_for(e["toolSpec"]["name"]): e["toolSpec"].get("strict", False)
            for e in payload["toolConfig"]["tools"]
        }
    entries = [e.get("function", e) for e in payload["tools"]]
    return {names.key_for(e["name"]): e.get("strict", False) for e in entries}


STRICT_VENDORS = ("openai", "openai-responses", "anthropic", "bedrock", "mistral", "cohere")


@pytest.mark.parametrize("strict", [None, True], ids=["default", "strict"])
@pytest.mark.parametrize("name", STRICT_VENDORS)
def test_strict_forms_agree_with_compatibility(name: str, strict: bool | None) -> None:
    """A tool sent strict and not reported as rejected passes the vendor's strict linter.

    Per-request rules are the exception, and are checked as such: Anthropic's strict budget (at most
    20 strict tools per request) and Cohere's request-wide ``strict_tools``.
    """
    p = corpus.provider(name)
    for corpus_name in CORPORA:
        for whole in corpus.registries(corpus_name):
            reg = sendable(whole, p, strict)
            payload = p.format_tools(reg, aliases=True, strict=strict)
            sent = entry_strict(name, payload, p, reg)
            report = compatibility(reg, p, strict=strict, aliases=True)
            for row in report:
                if row.key == "(request)":  # the whole request's limits (a 200-tool batch on OpenAI Chat)
                    continue
                if row.strict and not row.rejected:
                    schema = p.schema_dialect(reg[row.key], strict).schema
                    assert lint_errors(name, schema) == [], (name, row.key, lint_errors(name, schema)[:3])
                if strict is None and name in ("anthropic", "cohere"):
                    assert not sent[row.key] or row.strict, (name, row.key)  # never stricter than reported
                else:
                    assert sent[row.key] == row.strict, (name, row.key)
            if name == "anthropic" and strict is None:
                assert sum(sent.values()) <= 20
            if name == "cohere" and strict is None and payload.get("strict_tools"):
                assert all(row.strict for row in report)


@pytest.mark.parametrize("corpus_name", CORPORA)
def test_gemini_openapi_form_lints_clean_unless_rejected(corpus_name: str) -> None:
    p = corpus.provider("gemini-openapi")
    for reg, row in rows(corpus_name, "gemini-openapi", None):
        errors = lint_errors("gemini-openapi", p.schema_dialect(reg[row.key]).schema)
        assert bool(errors) == row.rejected, (row.key, errors[:3], [str(loss) for loss in row.losses])


# ---- the documented counts ----------------------------------------------------------------------------------


def test_documented_counts_match_the_code() -> None:
    """docs/providers/corpus.md was generated by benchmarks/corpus_report.py; regenerate it if this fails."""
    assert corpus.documented() == corpus.generated(), "run: .venv/bin/python benchmarks/corpus_report.py"
