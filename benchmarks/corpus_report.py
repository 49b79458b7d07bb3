"""The conformance corpus: BFCL function documents and MCP tools imported as agentkit tools.

    python benchmarks/corpus_report.py           # rewrite the generated part of docs/providers/corpus.md
    python benchmarks/corpus_report.py --print   # print it instead

The corpus is kept in the repository, in tests/data/corpus (sources: tests/data/README.md).
tests/providers/test_corpus.py imports this module to load the same tools and checks that the page still
matches what the code produces; CI never rewrites the page.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script
    sys.path.insert(0, str(ROOT))

from agentkit import Registry, Tool  # noqa: E402
from agentkit.interop import normalize_schema, tool_from_definition  # noqa: E402
from agentkit.providers import Compatibility, Provider, compatibility, get_provider, provider_names  # noqa: E402
from agentkit.providers.report import summarize  # noqa: E402

CORPUS = ROOT / "tests" / "data" / "corpus"
PAGE = ROOT / "docs" / "providers" / "corpus.md"
START, END = "<!-- corpus-report:start -->", "<!-- corpus-report:end -->"
BATCH = 200

BUILTIN = tuple(provider_names())
"""Every vendor of the table (agentkit/_vendors.py), in its order."""
VARIANTS = tuple(v for name in BUILTIN for v in ((name, "gemini-openapi") if name == "gemini" else (name,)))
"""The vendors, plus Gemini's OpenAPI-subset form (``GeminiProvider(schema_format="openapi")``) after Gemini."""


@cache
def provider(name: str) -> Provider:
    """A built-in provider, or ``"gemini-openapi"`` (one instance per name)."""
    if name == "gemini-openapi":
        from agentkit.providers.gemini import GeminiProvider

        return GeminiProvider(schema_format="openapi")
    return get_provider(name)


# ---- loading ---------------------------------------------------------------------------------------------


@cache
def bfcl_definitions() -> tuple[dict[str, Any], ...]:
    """Every unique BFCL function definition (deduplicated by JSON text, one per line of the corpus file)."""
    lines = (CORPUS / "bfcl_definitions.jsonl").read_text().splitlines()
    return tuple(json.loads(line) for line in lines if line.strip())


@cache
def mcp_definitions() -> tuple[dict[str, Any], ...]:
    """The MCP tools (``tools/list`` entries) of corpus/mcp_schemas.json, every server's in order."""
    data = json.loads((CORPUS / "mcp_schemas.json").read_text())
    return tuple(entry for server in data["servers"] for entry in server["tools"])


@cache
def tools(corpus: str) -> tuple[Tool[..., Any], ...]:
    """The corpus ("bfcl" or "mcp") imported with `tool_from_definition` (repairs not warned here)."""
    definitions = bfcl_definitions() if corpus == "bfcl" else mcp_definitions()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tuple(tool_from_definition(d) for d in definitions)


@cache
def registries(corpus: str) -> tuple[Registry, ...]:
    """The corpus's tools in registries of up to `BATCH`, keyed by their names (dots kept).

    BFCL reuses names across definitions (``requests.get`` has dozens): a tool goes into the first
    batch that does not hold its name yet.
    """
    batches: list[dict[str, Tool[..., Any]]] = []
    for item in tools(corpus):
        for batch in batches:
            if item.id not in batch and len(batch) < BATCH:
                batch[item.id] = item
                break
        else:
            batches.append({item.id: item})
    return tuple(Registry(batch) for batch in batches)


def report(corpus: str, name: str, strict: bool | None = None) -> list[Compatibility]:
    """`compatibility` over the whole corpus for one provider variant (aliases on), each tool judged alone
    (per-request rules such as Anthropic's strict budget depend on what else a request holds)."""
    return [
        row
        for reg in registries(corpus)
        for row in compatibility(reg, provider(name), strict=strict, aliases=True, per_request=False)
    ]


# ---- the page ---------------------------------------------------------------------------------------------


def fix_counts(corpus: str) -> Counter[str]:
    """Repair kinds made by the importer -> number of tools repaired that way (warned kinds only)."""
    counts: Counter[str] = Counter()
    definitions = bfcl_definitions() if corpus == "bfcl" else mcp_definitions()
    for definition in definitions:
        schema = definition.get("parameters", definition.get("inputSchema"))
        counts.update(k for k, fixes in normalize_schema(schema, check=False).kinds().items() if not fixes[0].quiet)
    return counts


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def provider_table(corpus: str, *, top: int = 4) -> list[str]:
    """The markdown table of one corpus: per provider variant, counts and the commonest loss kinds."""
    lines = [
        "| provider | tools | strict (default) | with losses | rejected | rejected with `strict=True` "
        "| commonest losses (tools) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for name in VARIANTS:
        default = summarize(report(corpus, name))[provider(name).name]
        forced = summarize(report(corpus, name, strict=True))[provider(name).name]
        kinds = "<br>".join(f"`` {_cell(kind)} `` ({count})" for kind, count in default.top_kinds(top)) or "none"
        label = 'gemini (`schema_format="openapi"`)' if name == "gemini-openapi" else name
        lines.append(
            f"| {label} | {default.tools} | {default.strict} | {default.lossy} | {default.rejected} "
            f"| {forced.rejected} | {kinds} |"
        )
    return lines


def anthropic_over_budget(corpus: str) -> list[str]:
    """Tools that exceed Anthropic's per-request strict budget on their own (20 tools/24 optional/16 unions)."""
    from agentkit.providers.anthropic import AnthropicProvider

    anthropic = provider("anthropic")
    assert isinstance(anthropic, AnthropicProvider)
    over = []
    for item in tools(corpus):
        if not anthropic.schema_dialect(item).strict:
            continue
        plan = anthropic.strict_budget(Registry({item.id: item}))
        if plan.fallbacks:
            over.append(item.id)
    return over


def generated() -> str:
    """The generated part of docs/providers/corpus.md."""
    bfcl, mcp = bfcl_definitions(), mcp_definitions()
    lines = [
        f"BFCL: **{len(bfcl)}** unique function definitions; MCP: **{len(mcp)}** tools "
        f"({sum('outputSchema' in d for d in mcp)} with an output schema).",
        "",
        "### Repairs made by the importer (BFCL)",
        "",
        "| repair | tools |",
        "| --- | ---: |",
        *(
            f"| {_cell(kind)} | {count} |"
            for kind, count in sorted(fix_counts("bfcl").items(), key=lambda kv: (-kv[1], kv[0]))
        ),
        "",
        f"MCP: {sum(fix_counts('mcp').values())} repairs (the draft-07 `$schema` declarations are removed quietly).",
        "",
        "### BFCL, per provider",
        "",
        *provider_table("bfcl"),
        "",
        "### MCP, per provider",
        "",
        *provider_table("mcp"),
        "",
        f"Anthropic: {len(anthropic_over_budget('bfcl'))} BFCL tools and {len(anthropic_over_budget('mcp'))} MCP "
        "tools exceed the per-request strict budget on their own; with `strict=None` they are sent non-strict.",
    ]
    return "\n".join(lines)


def documented(page: Path = PAGE) -> str:
    """The generated part as the page holds it now."""
    text = page.read_text()
    return text.split(START, 1)[1].split(END, 1)[0].strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--print", action="store_true", help="print the generated part instead of writing the page")
    args = parser.parse_args()
    block = generated()
    if args.print:
        print(block)
        return
    text = PAGE.read_text()
    head, rest = text.split(START, 1)
    tail = rest.split(END, 1)[1]
    PAGE.write_text(f"{head}{START}\n{block}\n{END}{tail}")
    print(f"wrote {PAGE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
