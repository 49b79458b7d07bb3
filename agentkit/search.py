"""Tool search for large registries: deferred tools stay out of requests until a search finds them.

Mark tools ``@tool(deferred=True)`` (or defer whole sets: ``Agent(deferred_tools=True)``, per run
``generate(deferred_tools=[...])``). A run with deferred tools gets a search tool (key ``search_tools``,
see `ToolSearch`): the model searches by what it needs, the best matches are listed back to it, and from
the next request on they are sent like any other tool, for the rest of that run only (another run starts
from scratch again). Deferred tools can still be named in ``active_tools`` (by ``prepare_step``, say),
which sends them for that turn.

Ranking is BM25 (the maintained `bm25s <https://pypi.org/project/bm25s/>`_ library, imported on first
use: ``pip install 'agentkit-tools[search]'``) over each tool's key (split at ``_``, ``.``, ``-`` and
camelCase), description (counted twice: it says what the tool is for), parameter names, parameter
descriptions and enum values. A word repeated in the query counts once. `ToolIndex` is the index on its
own, for searching a registry outside a run.
"""

from __future__ import annotations as _annotations

import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast

from ._jsonish import is_array, is_mapping
from .exceptions import AgentSetupError

if TYPE_CHECKING:
    pass

__all__ = ["SearchHit", "Searchable", "ToolIndex", "ToolSearch"]


class Searchable(Protocol):
    """What `ToolIndex` reads of a tool: a `Tool`, or any record with these two attributes."""

    @property
    def description(self) -> str:
        """What the tool does."""
        ...

    @property
    def input_schema(self) -> Mapping[str, Any]:
        """Its parameters (JSON Schema ``properties``, nested ones too)."""
        ...


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[\W_]+")
_KEY = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def _words(text: str) -> str:
    """`text` with identifiers split into words: ``getWeather_v2.city-list`` -> ``get Weather v2 city list``."""
    return _SEPARATORS.sub(" ", _CAMEL.sub(" ", text)).strip()


def _schema_text(schema: Any, out: list[str], depth: int = 0, names: list[str] | None = None) -> None:
    """Parameter names, their descriptions and enum values, nested objects and arrays included.

    The names go into `names` if given (benchmarks/tool_search_variants.py weighs them apart).
    """
    if not is_mapping(schema) or depth > 4:
        return
    properties = schema.get("properties")
    if is_mapping(properties):
        for name, prop in properties.items():
            (out if names is None else names).append(_words(str(name)))
            if is_mapping(prop):
                description = prop.get("description")
                if isinstance(description, str):
                    out.append(description)
                enum = prop.get("enum")
                if is_array(enum):
                    out.append(" ".join(str(v) for v in enum))
                _schema_text(prop, out, depth + 1, names)
    items = schema.get("items")
    if is_mapping(items):
        _schema_text(items, out, depth + 1, names)


# BM25 parameters chosen on half of the BFCL questions (benchmarks/bench_tool_search.py): b=1 normalises
# fully for length, so a long parameter list does not outweigh a short, focused description.
_K1, _B = 1.2, 1.0


def _tool_document(key: str, description: str, input_schema: Mapping[str, Any]) -> str:
    """The text a tool is ranked by: key words, description (twice), parameter names and descriptions.

    The description is repeated to weigh it above the parameters (a cheap field weight: bm25s has one
    field per document): it says what the tool is for, while parameter text names what it takes, and
    words like "date" or "start" there match requests for unrelated tools.
    """
    parts = [_words(key), description, description]
    _schema_text(input_schema, parts)
    return " ".join(p for p in parts if p)


@dataclass(frozen=True)
class SearchHit:
    """One match: the tool's key and its BM25 score (higher is better)."""

    key: str
    score: float


def _bm25s() -> Any:
    try:
        import bm25s  # pyright: ignore[reportMissingTypeStubs]  # bm25s ships no type information
    except ImportError as exc:  # pragma: no cover - the search extra is installed in every test environment
        raise ImportError("tool search needs the BM25 library bm25s: pip install 'agentkit-tools[search]'") from exc
    return bm25s


def _tokens(texts: list[str]) -> Any:
    # Identifiers in documents are split already (`_tool_document`); prose only needs ``snake_case`` split,
    # which is far cheaper than the camelCase rule over the whole text.
    return _bm25s().tokenize(
        [t.replace("_", " ").lower() for t in texts], stopwords="en", return_ids=False, show_progress=False
    )


class ToolIndex:
    """A BM25 index over tools (key, description, parameter names and descriptions).

    Takes a registry (or any mapping / pairs of key and `Searchable`); keys may repeat.

    Built on the first search (a CPU-bound step: about 0.2 s for 3,500 tools; the agent loop builds and
    searches in a worker thread, never on the event loop), then searched in a few milliseconds.

    ```python
    index = ToolIndex(registry)
    [hit.key for hit in index.search("weather forecast for a city", limit=5)]
    ```
    """

    def __init__(self, tools: Mapping[str, Searchable] | Iterable[tuple[str, Searchable]]) -> None:
        pairs = list(cast("Mapping[str, Searchable]", tools).items()) if isinstance(tools, Mapping) else list(tools)
        self.keys: list[str] = [key for key, _ in pairs]
        self._documents = [_tool_document(key, item.description, item.input_schema) for key, item in pairs]
        self._retriever: Any = None
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.keys)

    def _index(self) -> Any:
        with self._lock:
            if self._retriever is None:
                retriever = _bm25s().BM25(k1=_K1, b=_B)
                if self._documents:
                    retriever.index(_tokens(self._documents), show_progress=False)
                self._retriever = retriever
            return self._retriever

    def search(self, query: str, limit: int = 5) -> list[SearchHit]:
        """The best `limit` matches for `query`, best first; tools sharing no word with it are left out."""
        if not isinstance(query, str):  # pyright: ignore[reportUnnecessaryIsInstance]  # untyped callers
            raise TypeError(f"a search query is text, got {query!r}")
        retriever = self._index()
        [words] = _tokens([_words(query)])
        tokens = list(dict.fromkeys(words))  # "weather ... weather" must not outweigh the other words
        if not tokens or not self.keys or limit < 1:
            return []
        documents, scores = retriever.retrieve([tokens], k=min(limit, len(self.keys)), show_progress=False)
        return [SearchHit(self.keys[int(i)], float(s)) for i, s in zip(documents[0], scores[0], strict=True) if s > 0]


@dataclass(frozen=True)
class ToolSearch:
    """How a run with deferred tools searches them (`Agent(tool_search=...)`).

    The search tool is added to a run only when the run has deferred tools.
    """

    key: str = "search_tools"
    """The search tool's key (the name the model calls)."""
    max_results: int = 5
    """Matches listed per search (the model may ask for fewer)."""
    description: str = (
        "Search the tools available to you that are not loaded yet. Describe what you need to do in a few "
        "words; the best matching tools are listed and can be called from your next step on."
    )
    """What the model is told the search tool does."""
    native: bool | None = None
    """Use the vendor's own server-side tool search where it has one (Anthropic's BM25 tool search tool,
    OpenAI Responses' hosted ``tool_search``): None (the default) on the models the vendor documents it
    for, True wherever the vendor has the form, False never (agentkit's search, on every model)."""
    deferred: bool | Iterable[str] | None = None
    """Which tools an agent with this search defers besides those marked ``deferred=True``: True for all
    (the search tool aside), or their keys (kept as a frozenset)."""

    def __post_init__(self) -> None:
        # run-time checks of the fields: callers without a type checker pass anything
        if not isinstance(self.key, str) or not _KEY.match(self.key):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise AgentSetupError(
                f"ToolSearch(key={self.key!r}): the search tool's key must be 1-64 letters, digits, '_' or '-' "
                "(every vendor accepts those)"
            )
        if self.native is not None and not isinstance(self.native, bool):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise AgentSetupError(f"ToolSearch(native=...) is None, True or False, got {self.native!r}")
        if isinstance(self.max_results, bool) or not isinstance(self.max_results, int) or self.max_results < 1:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise AgentSetupError(
                f"ToolSearch(max_results=...) must be a whole number of at least 1, got {self.max_results!r}"
            )
        deferred: Any = self.deferred
        if deferred is not None and not isinstance(deferred, bool):
            if isinstance(deferred, (str, bytes)) or not hasattr(deferred, "__iter__"):
                raise AgentSetupError(f"ToolSearch(deferred=...) takes True/False or a list of keys, got {deferred!r}")
            keys = frozenset(cast("Iterable[Any]", deferred))
            bad = [k for k in keys if not isinstance(k, str)]
            if bad:
                raise AgentSetupError(f"ToolSearch(deferred=...) lists keys (strings), got {bad[0]!r}")
            object.__setattr__(self, "deferred", keys)  # hashable: a run's tool layout is cached by its search
