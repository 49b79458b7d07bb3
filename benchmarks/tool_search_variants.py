"""Ranking variants of the tool search, measured on the BFCL questions (docs/tool-search.md#ranking).

    python benchmarks/tool_search_variants.py    # about 20 s

Each variant is BM25 by bm25s over the same 3,526 definitions and 808 questions as
`bench_tool_search.py`, tokenised as `agentkit.search.ToolIndex` does; only the variant's one change
differs. Printed: recall@5 over all questions, over the half the settings were chosen on (even-numbered
``simple_python`` and ``live_simple`` questions) and over the held-out half (the odd-numbered ones).
Ties are broken by position (the index leaves them to bm25s's top-k), so figures differ from the
benchmark's by up to 0.005.
Stemming needs PyStemmer (not a dependency of agentkit; the variants using it are skipped without it).
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentkit.search import _schema_text, _tokens, _words
from benchmarks.bench_tool_search import definitions, fingerprint, half, questions

Fields = dict[str, str]
FILLER = frozenset(
    [
        "could",
        "would",
        "please",
        "tell",
        "like",
        "want",
        "need",
        "help",
        "hi",
        "hello",
        "can",
        "know",
        "let",
        "give",
        "provide",
        "show",
    ]
)
QUOTED = re.compile(r"'[^']{3,}'|\"[^\"]{3,}\"|```.*?```", re.S)


def fields(definition: dict[str, Any]) -> Fields:
    """A definition's text by field: key words, description, parameter names, the rest of the parameters."""
    names: list[str] = []
    rest: list[str] = []
    _schema_text(definition.get("parameters") or {}, rest, names=names)
    return {
        "key": _words(definition["name"]),
        "description": definition.get("description") or "",
        "names": " ".join(names),
        "parameters": " ".join(rest),
    }


def tokens(text: str, stem: str) -> list[str]:
    """`text` as the index tokenises it; ``stem``: "no", "only" (Snowball stems) or "both" (words and stems)."""
    [words] = _tokens([_words(text)])
    if stem == "no":
        return list(words)
    import Stemmer  # type: ignore[import-not-found]  # PyStemmer, a dev-only experiment

    stems: list[str] = Stemmer.Stemmer("english").stemWords(words)
    return stems if stem == "only" else [*words, *("~" + s for s in stems)]


Ranker = Callable[[str], list[int]]


def bm25(documents: list[list[str]], k1: float, b: float, method: str) -> Any:
    import bm25s  # pyright: ignore[reportMissingTypeStubs]

    retriever = bm25s.BM25(k1=k1, b=b, method=method)
    retriever.index([d or [""] for d in documents], show_progress=False)
    return retriever


def variant(
    corpus: list[Fields],
    weights: dict[str, int] | None = None,
    k1: float = 1.2,
    b: float = 1.0,
    method: str = "lucene",
    stem: str = "no",
    once: bool = True,
    clean: Callable[[str], str] = lambda text: text,
    fused: dict[str, float] | None = None,
) -> Ranker:
    """A ranking: ``weights`` repeats fields in one document; ``fused`` indexes each field on its own and adds
    the scores by weight; ``once`` counts a query word once; ``clean`` edits the query first."""
    import numpy as np

    if fused:
        groups = [([field], weight) for field, weight in fused.items()]
    else:
        repeat = weights or {"key": 1, "description": 2, "names": 1, "parameters": 1}
        groups = [([f for f, n in repeat.items() for _ in range(n)], 1.0)]
    indexes = [
        (bm25([tokens(" ".join(doc[f] for f in chosen), stem) for doc in corpus], k1, b, method), weight)
        for chosen, weight in groups
    ]

    def rank(text: str) -> list[int]:
        query = tokens(clean(text), stem)
        if once:
            query = list(dict.fromkeys(query))
        if not query:
            return []
        scores = sum(weight * index.get_scores(query) for index, weight in indexes)
        best = np.argsort(-scores, kind="stable")[:5]
        return [int(i) for i in best if scores[i] > 0]

    return rank


def measure(rank: Ranker, asked: list[tuple[str, str, int]]) -> tuple[float, float, float]:
    """recall@5 over (all, the tuned half, the held-out half)."""
    hits: Counter[str] = Counter()
    count: Counter[str] = Counter()
    for part, text, expected in asked:
        found = expected in rank(text)
        for group in ("all", part):
            count[group] += 1
            hits[group] += found
    return hits["all"] / count["all"], hits["tuned on"] / count["tuned on"], hits["held out"] / count["held out"]


def main() -> None:
    defs = definitions()
    corpus = [fields(d) for d in defs]
    position = {fingerprint(d): i for i, d in enumerate(defs)}
    seen: Counter[str] = Counter()
    asked = []
    for category, text, definition in questions():
        asked.append((half(category, seen[category]), text, position[definition]))
        seen[category] += 1
    equal = {"key": 1, "description": 1, "names": 1, "parameters": 1}
    try:
        import Stemmer  # type: ignore[import-not-found]  # noqa: F401

        stemming = True
    except ImportError:
        stemming = False
    variants: dict[str, dict[str, Any]] = {
        "before: BM25 defaults (k1 1.5, b 0.75), fields equal, query words as often as said": {
            "weights": equal,
            "k1": 1.5,
            "b": 0.75,
            "once": False,
        },
        "  + the description twice, alone": {"k1": 1.5, "b": 0.75, "once": False},
        "  + k1 1.2, b 1, alone": {"weights": equal, "once": False},
        "  + each query word once, alone": {"weights": equal, "k1": 1.5, "b": 0.75},
        "chosen: all three": {},
        "  description three times": {"weights": {**equal, "description": 3}},
        "  key twice": {"weights": {**equal, "key": 2, "description": 2}},
        "  key three times": {"weights": {**equal, "key": 3, "description": 2}},
        "  no parameter names": {"weights": {**equal, "names": 0, "description": 2}},
        "  fields as separate indexes, scores added (parameters x1)": {
            "fused": {"key": 1.0, "description": 1.0, "names": 1.0, "parameters": 1.0}
        },
        "  fields as separate indexes, scores added (parameters x0.5)": {
            "fused": {"key": 1.0, "description": 1.0, "names": 0.5, "parameters": 0.5}
        },
        **{f"  BM25 variant {m}": {"method": m} for m in ("robertson", "atire", "bm25l", "bm25+")},
        "  quoted text dropped from the query": {"clean": lambda t: QUOTED.sub(" ", t)},
        "  chat filler dropped from the query": {
            "clean": lambda t: " ".join(w for w in re.findall(r"\w+|\W+", t) if w.lower() not in FILLER)
        },
    }
    if stemming:
        variants["  Snowball stems instead of words"] = {"stem": "only"}
        variants["  Snowball stems beside the words"] = {"stem": "both"}
    print(f"{'recall@5':<82} {'all':>5} {'tuned':>6} {'held':>6}")
    for label, options in variants.items():
        every, tuned, held = measure(variant(corpus, **options), asked)
        print(f"{label:<82} {every:.3f} {tuned:.3f}  {held:.3f}")
    if not stemming:
        print("(stemming variants skipped: pip install PyStemmer)")


if __name__ == "__main__":
    main()
