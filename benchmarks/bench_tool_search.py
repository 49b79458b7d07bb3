"""Tool search over the BFCL corpus as one tool library (issue 12 §4.2).

    python benchmarks/bench_tool_search.py            # recall, payload bytes and step times
    python benchmarks/bench_tool_search.py --quick    # fewer repetitions

* recall@5: every question of BFCL's single-function categories (``simple_python``, ``simple_java``,
  ``simple_javascript``, ``live_simple``) is searched with `agentkit.search.ToolIndex` among all 3,526
  unique BFCL definitions; a hit is that question's own definition among the first five results.
  Beside it: a hit on any definition of the same function name (BFCL repeats names with other wording:
  ``get_current_weather`` has 62 definitions), and recall@10.
* the halves: the ranking's settings were chosen on the even-numbered questions of ``simple_python`` and
  ``live_simple`` ("tuned on"); the odd-numbered ones were held out. Both are printed.
* a cap, computed from the index's own words: a question whose own definition contains exactly the same
  of the question's words as five or more other definitions of the same name cannot be told apart from
  them by any ranking over those words (only document length differs), so it reaches the top five by
  chance at best; and questions sharing no word at all with their definition (other scripts). The
  ceiling is the recall a ranking would get if it placed every such group first and each member of a
  group of n had a 5/n chance (1 for the others).
* one step with the 3,526 tools deferred versus sent: the request body's bytes (OpenAI Chat and Anthropic
  wire formats) and the time of one agent step through the official ``openai`` SDK over an in-process
  transport (the first step, which builds every payload entry, and a later one).

Nothing here fails on timing; the exit code is 0 unless the measurement itself is wrong.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sys
import time
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from agentkit import Registry  # noqa: E402
from agentkit.interop import tool_from_definition  # noqa: E402
from agentkit.search import ToolSearch  # noqa: E402

DATA = ROOT / "tests" / "data" / "corpus"
QUESTIONS = DATA / "bfcl_single_questions.jsonl"
CATEGORIES = ("simple_python", "simple_java", "simple_javascript", "live_simple")
RECALL_TARGET, BYTES_TARGET = 0.9, 20.0


def _json_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def definitions() -> list[dict[str, Any]]:
    """The 3,526 unique BFCL definitions, first appearance first (tests/data; `dev/make_test_data.py`)."""
    return _json_lines(DATA / "bfcl_definitions.jsonl")


def fingerprint(definition: dict[str, Any]) -> str:
    """What the questions file names a definition by (as `dev/make_test_data.py` computes it)."""
    return hashlib.sha256(json.dumps(definition, sort_keys=True).encode()).hexdigest()[:16]


def questions() -> list[tuple[str, str, str]]:
    """(category, question text, fingerprint of its one function definition), single-function categories."""
    out = []
    for row in _json_lines(QUESTIONS):
        category = next(c for c in CATEGORIES if row["id"].startswith(c + "_"))
        out.append((category, row["question"], row["definition"]))
    return out


def unique_keys(defs: list[dict[str, Any]]) -> list[str]:
    """A registry key per definition: its name, ``_2``, ``_3``... for a name seen before."""
    keys: list[str] = []
    taken: set[str] = set()
    for definition in defs:
        key, n = definition["name"], 1
        while key in taken:
            n += 1
            key = f"{definition['name']}_{n}"
        taken.add(key)
        keys.append(key)
    return keys


def library(defs: list[dict[str, Any]]) -> tuple[Registry, dict[str, str]]:
    """Every definition as a tool under its unique key; key -> the definition's name."""
    registry = Registry()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the importer warns about each schema it repairs
        for key, definition in zip(unique_keys(defs), defs, strict=True):
            registry.add(key, tool_from_definition(definition))
    return registry, {key: d["name"] for key, d in zip(registry, defs, strict=True)}


def half(category: str, position: int) -> str:
    """Which half a question is in: settings were tuned on the even-numbered questions of two categories."""
    if category not in ("simple_python", "live_simple"):
        return "other"
    return "tuned on" if position % 2 == 0 else "held out"


def _words_of(text: str) -> set[str]:
    """The words the index ranks `text` by (its tokenizer: identifiers split, stop words dropped)."""
    from agentkit.search import _tokens, _words

    [words] = _tokens([_words(text)])
    return set(words)


def indistinguishable(
    names: dict[str, str], document_words: dict[str, set[str]], text: str, expected: str
) -> tuple[int, bool]:
    """(how many definitions of the expected name share exactly the same question words, itself included;
    whether the question shares any word with its own definition)."""
    words = _words_of(text)
    matched = words & document_words[expected]
    same = sum(1 for key, name in names.items() if name == names[expected] and words & document_words[key] == matched)
    return same, bool(matched)


def recall(
    registry: Registry, names: dict[str, str], defs: list[dict[str, Any]], sample: int | None = None
) -> dict[str, Any]:
    """Recall figures of the search over `registry` for every question (or every `sample`-th), the cap, and
    why the misses missed."""
    from agentkit.search import ToolIndex, _tool_document

    key_of = {fingerprint(d): key for d, key in zip(defs, registry, strict=True)}
    index = ToolIndex(registry)
    start = time.perf_counter()
    index.search("warm up")  # builds the index
    built = time.perf_counter() - start
    counts: Counter[str] = Counter()
    asked = questions()
    per_category: Counter[str] = Counter()
    per_category_hits: Counter[str] = Counter()
    positions: Counter[str] = Counter()
    located = []
    for category, text, definition in asked:
        located.append((category, half(category, positions[category]), text, definition))
        positions[category] += 1
    if sample:
        located = located[::sample]
    document_words = {
        key: _words_of(_tool_document(key, tool.description, tool.input_schema)) for key, tool in registry.items()
    }
    elapsed = ceiling = 0.0
    for category, part, text, definition in located:
        expected = key_of[definition]
        start = time.perf_counter()
        found = [hit.key for hit in index.search(text, 10)]
        elapsed += time.perf_counter() - start
        same_name = names[expected] in {names[k] for k in found[:5]}
        per_category[category] += 1
        per_category[part] += 1
        tied, shares = indistinguishable(names, document_words, text, expected)
        if not shares:
            counts["cap: shares no word with its own definition"] += 1
        elif tied >= 6:
            counts["cap: indistinguishable from >= 5 definitions of its name"] += 1
        ceiling += min(1.0, 5 / tied) if shares else 0.0
        if expected in found[:5]:
            counts["recall@5"] += 1
            per_category_hits[category] += 1
            per_category_hits[part] += 1
        elif same_name:
            counts["miss: another definition of the same name ranked first"] += 1
        elif sum(ord(ch) > 0x2FF for ch in text) > len(text) / 5:
            counts["miss: a question not in a Latin script"] += 1
        else:
            counts["miss: other tools ranked first"] += 1
        counts["recall@10"] += expected in found
        counts["name@5"] += same_name
    count = len(located)
    searched = elapsed / count
    return {
        "questions": count,
        **{k: v / count for k, v in counts.items() if not k.startswith(("miss", "cap"))},
        "misses": {k: v for k, v in sorted(counts.items()) if k.startswith("miss")},
        "cap": {k: v for k, v in sorted(counts.items()) if k.startswith("cap")},
        "ceiling": ceiling / count,
        "categories": {c: (per_category_hits[c] / n, n) for c, n in per_category.items()},
        "index_s": built,
        "search_ms": searched * 1e3,
    }


def chat_reply() -> dict[str, Any]:
    return {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 1764494400,
        "model": "gpt-4.1-2025-04-14",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Done."},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
    }


def openai_model() -> Any:
    import openai

    try:
        import httpx2 as httpx  # what the installed openai SDK is built on
    except ImportError:  # older SDKs
        import httpx  # type: ignore[no-redef]

    try:
        from agentkit.providers.openai import OpenAIChatModel
    except ImportError:  # before the vendor folders
        from agentkit.models.openai import OpenAIChatModel  # type: ignore[no-redef]

    raw = json.dumps(chat_reply()).encode()
    client = openai.AsyncOpenAI(
        api_key="sk-bench",
        base_url="http://127.0.0.1:8080/v1",
        max_retries=0,
        http_client=httpx.AsyncClient(
            transport=httpx.MockTransport(
                lambda request: httpx.Response(200, content=raw, headers={"content-type": "application/json"})
            )
        ),
    )
    return OpenAIChatModel("gpt-4.1", client=client)


async def step_times(registry: Registry, deferred: bool, repeats: int) -> tuple[float, float]:
    """(first step, best later step) in seconds: one agent step through the openai SDK."""
    from agentkit import Agent
    from agentkit.models import ModelSettings

    agent = Agent(
        model=openai_model(),
        tools=registry,
        model_settings=ModelSettings(aliases=True),
        tool_search=ToolSearch(deferred=deferred),
    )
    start = time.perf_counter()
    await agent.generate("Find the weather in Oslo.")
    first = time.perf_counter() - start
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        await agent.generate("Find the weather in Oslo.")
        best = min(best, time.perf_counter() - start)
    return first, best


def payload_bytes(registry: Registry, deferred: bool, model: str) -> int:
    from agentkit import Agent
    from agentkit.models import Model, ModelSettings
    from agentkit.providers.openai import OpenAIChatModel
    from agentkit.testing import request_payload

    settings = ModelSettings(aliases=True)
    chosen: str | Model = model
    if model.startswith("openai:") and not deferred:
        # api.openai.com refuses more than 128 tools before anything is sent (PayloadRejectedError): the body
        # every tool would make is measured as an OpenAI-compatible server (which takes any number) gets it
        chosen = OpenAIChatModel(model.partition(":")[2], base_url="http://127.0.0.1:9/v1")
    agent = Agent(model=chosen, tools=registry, model_settings=settings, tool_search=ToolSearch(deferred=deferred))
    return len(json.dumps(request_payload(agent, "Find the weather in Oslo."), separators=(",", ":")).encode())


async def main(quick: bool) -> None:
    defs = definitions()
    registry, names = library(defs)
    measured = recall(registry, names, defs)
    print(f"python {sys.version.split()[0]}; {len(registry)} tools; {measured['questions']} questions")
    ok = "ok" if measured["recall@5"] >= RECALL_TARGET else "BELOW TARGET"
    print(f"recall@5 (the question's own definition)   {measured['recall@5']:.3f}   target >= {RECALL_TARGET} [{ok}]")
    for category, (value, n) in measured["categories"].items():
        if category not in ("tuned on", "held out", "other"):
            print(f"  {category:<41} {value:.3f}   ({n} questions)")
    for part in ("tuned on", "held out"):
        value, n = measured["categories"][part]
        print(f"  half {part} (simple_python + live_simple) {value:.3f}   ({n} questions)")
    for reason, n in measured["misses"].items():
        print(f"  {reason:<57} {n:4d}")
    print(f"recall@5 (any definition of its function)  {measured['name@5']:.3f}")
    print(f"recall@10 (the question's own definition)  {measured['recall@10']:.3f}")
    print("cap (computed over the index's words; a ranking cannot beat it except by chance):")
    for reason, n in measured["cap"].items():
        print(f"  {reason:<57} {n:4d}")
    print(f"  ceiling of recall@5 (ties broken by chance, the rest all found) {measured['ceiling']:.3f}")
    build_ms, search_ms = measured["index_s"] * 1e3, measured["search_ms"]
    print(f"index build {build_ms:.0f} ms (bm25s import included); a search {search_ms:.2f} ms")
    for model in ("openai:gpt-4.1", "anthropic:claude-3-7-sonnet-latest"):
        sent, deferred = payload_bytes(registry, False, model), payload_bytes(registry, True, model)
        ratio = sent / deferred
        verdict = "ok" if ratio >= BYTES_TARGET else "BELOW TARGET"
        print(
            f"{model} request body: {sent:,} B with every tool sent, {deferred:,} B with them deferred: "
            f"{ratio:.0f}x smaller (target >= {BYTES_TARGET:g}x) [{verdict}]"
        )
    native = payload_bytes(registry, True, "anthropic:claude-opus-4-6")
    print(f"anthropic:claude-opus-4-6 (native tool search: every definition sent, defer_loading): {native:,} B")
    repeats = 3 if quick else 10
    for deferred in (False, True):
        first, later = await step_times(registry, deferred, repeats)
        label = "deferred" if deferred else "sent    "
        print(
            f"one step through openai.AsyncOpenAI, {len(registry)} tools {label}: "
            f"first {first * 1e3:7.1f} ms, later {later * 1e3:6.2f} ms"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    asyncio.run(main(parser.parse_args().quick))
