"""The tools of one run, and what each step sends and may run.

A run's tools are the agent's, the run's own (tools and MCP servers given to one call), deferred tools
and the search tool that finds them.

Nothing here changes the agent's registry: a run that adds tools gets a registry of its own, so no
other run (concurrent or later) sees them.
"""

from __future__ import annotations as _annotations

import asyncio
import contextlib
import threading
from collections import OrderedDict
from collections.abc import AsyncGenerator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

from .._jsonish import is_array, is_object
from ..exceptions import AgentSetupError, RegistryError
from ..models import Model
from ..registry import Registry
from ..search import ToolIndex, ToolSearch
from ..tools import Tool
from .sessions import MCPServerLike

__all__ = ["DeferredTools", "RunTools", "cached_index", "check_deferred", "found_keys", "open_run_tools"]

DeferredTools = Union[bool, Iterable[str]]
"""``deferred_tools=``: True defers every tool (the search tool aside), or the keys to defer."""


def check_deferred(value: DeferredTools | None, where: str) -> bool | frozenset[str] | None:
    """`value` normalised: None, a bool, or a set of keys (an error for anything else)."""
    if value is None or isinstance(value, bool):
        return value
    # run-time checks: callers without a type checker pass anything
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise AgentSetupError(f"{where}deferred_tools= takes True/False or a list of keys, got {value!r}")
    keys = frozenset(value)
    bad = [k for k in keys if not isinstance(k, str)]  # pyright: ignore[reportUnnecessaryIsInstance]
    if bad:
        raise AgentSetupError(f"{where}deferred_tools= lists keys (strings), got {bad[0]!r}")
    return keys


def merge_registries(base: Registry, extra: Mapping[str, Tool[..., Any]], what: str) -> Registry:
    """A new registry with `base`'s tools, then `extra`'s; a key in both is an error naming both tools."""
    merged = Registry(dict(base.items()), mask_error_details=base.mask_error_details, transform=base.transform)
    for key, item in extra.items():
        existing = base.get(key) if key in base else merged.get(key)
        if existing is not None:
            raise RegistryError(
                f"{what} {key!r} ({_label(item)}) clashes with the tool already under that key "
                f"({_label(existing)}); register one of them under another key"
            )
        merged.add(key, item)
    return merged


def _label(item: Any) -> str:
    schema = getattr(item, "schema", None)
    return str(getattr(schema, "qualname", None) or getattr(item, "__qualname__", None) or repr(item))


def open_run_tools(
    base: Registry,
    tools: Registry | Mapping[str, Any] | Iterable[Any] | None,
    servers: Sequence[MCPServerLike],
) -> contextlib.AbstractAsyncContextManager[tuple[Registry, frozenset[str]]]:
    """The run's registry and the keys the run added.

    The registry is `base` plus the run's own tools and servers (opened here, closed on exit).
    """
    if tools is None and not servers:
        return contextlib.nullcontext((base, frozenset()))  # most runs: nothing to open or merge
    return _opened_run_tools(base, tools, servers)


@contextlib.asynccontextmanager
async def _opened_run_tools(
    base: Registry,
    tools: Registry | Mapping[str, Any] | Iterable[Any] | None,
    servers: Sequence[MCPServerLike],
) -> AsyncGenerator[tuple[Registry, frozenset[str]], None]:
    own = tools if isinstance(tools, Registry) else Registry(tools)
    registry = merge_registries(base, own, "The run's tool")
    async with contextlib.AsyncExitStack() as stack:
        for server in servers:
            # the class, not the instance: a session's registry property raises until it is open
            if not hasattr(type(server), "__aenter__") or not hasattr(type(server), "registry"):
                raise AgentSetupError(
                    f"mcp_servers= takes MCP sessions (async context managers with a registry), got {server!r}"
                )
            await stack.enter_async_context(server)
            registry = merge_registries(registry, server.registry, f"The MCP server tool ({server!r})")
        yield registry, frozenset(registry) - frozenset(base)


@dataclass
class RunTools:
    """Which of the run's tools each step sends, and which it may run.

    A deferred tool is sent once a search found it (`RunState.found`) or when the step's active tools
    name it; a tool whose budget is spent stays sent (vendors that keep tool lists stable for prompt
    caching need that) but leaves the step's active tools, so the model cannot call it.
    """

    registry: Registry
    """Every tool of the run: the agent's, the run's own, MCP servers', the search tool."""
    deferred: frozenset[str]
    search: ToolSearch | None
    budgeted: tuple[str, ...] = ()
    """The keys of the tools with a ``max_calls`` budget."""
    _sent: dict[tuple[tuple[str, ...], tuple[str, ...]], Registry] = field(default_factory=lambda: {}, repr=False)

    shown: tuple[str, ...] = ()
    """The keys sent in every step: all but the deferred ones (the search tool among them)."""
    plain: Registry | None = None
    """The run's tools without agentkit's search tool: what a model with native tool search is sent."""
    plans: dict[int, Any] = field(default_factory=lambda: {}, repr=False)
    """Plain steps' plans by settings object (see `agentkit._agent._steps`), shared by the runs of these tools."""
    offered: Registry | None = None
    """Every tool sent when none is deferred: the registry without the keys only programs call (code mode)."""

    @classmethod
    def build(
        cls,
        registry: Registry,
        search: ToolSearch | None,
        deferred: bool | frozenset[str] | None,
        hidden: frozenset[str] = frozenset(),
    ) -> RunTools:
        """The run's tools; with deferred tools, a registry of the run's own holding the search tool too.

        One pass over the tools per run (well under a millisecond for thousands); what it finds is shared
        by the runs that see the same tools with the same options, so their requests reuse one registry
        (and the payloads the vendor layer caches for it).
        """
        if deferred is not None and deferred is not True and deferred is not False:
            registry.require(*sorted(deferred))
        # a tool's `deferred` and `max_calls` move the registries holding it to a new version: the key
        # stays flat in the registry's size
        cache_key = (deferred, search, registry.version, hidden)
        # kept on the registry itself (registries are unhashable mappings): it goes when the registry goes
        layouts: dict[tuple[Any, ...], RunTools] = registry.__dict__.setdefault("_run_layouts", {})
        hit = layouts.get(cache_key)
        if hit is not None:
            return hit
        made = cls._build(registry, search, deferred, hidden)
        if len(layouts) > 8:
            layouts.clear()
        layouts[cache_key] = made
        return made

    @classmethod
    def _build(
        cls,
        registry: Registry,
        search: ToolSearch | None,
        deferred: bool | frozenset[str] | None,
        hidden: frozenset[str],
    ) -> RunTools:
        hold_all = deferred is True
        named: frozenset[str] = deferred if isinstance(deferred, frozenset) else frozenset()
        budgeted: list[str] = []
        pairs: list[tuple[str, Tool[..., Any]]] = []
        shown: list[str] = []
        for key, item in registry.items():
            if item.max_calls is not None:
                budgeted.append(key)
            if key in hidden:
                continue  # only programs call it: neither sent nor searched for
            if hold_all or item.deferred or key in named:
                pairs.append((key, item))
            else:
                shown.append(key)
        offered = registry.select(shown) if hidden else registry
        if not pairs:
            return cls(registry, frozenset(), None, tuple(budgeted), shown=tuple(shown), offered=offered)
        config = search or ToolSearch()
        if config.key in registry:
            raise RegistryError(
                f"The tool search's key {config.key!r} is already a tool's key ({_label(registry[config.key])}); "
                "pick another with Agent(tool_search=ToolSearch(key=...))"
            )
        run_registry = registry.copy()
        run_registry.add(config.key, search_tool(config, pairs))
        keys = frozenset(key for key, _ in pairs)
        plain = registry.select([k for k in registry if k not in hidden]) if hidden else registry
        return cls(
            run_registry, keys, config, tuple(budgeted), shown=(*shown, config.key), plain=plain, offered=offered
        )

    def native(self, model: Model) -> bool:
        """Whether `model` gets the deferred tools in its vendor's native form (see `ToolSearch.native`)."""
        return self.search is not None and model.native_tool_search(self.search.native)

    def deferred_keys(self, active: tuple[str, ...] | None) -> tuple[str, ...]:
        """For a native step: the keys sent deferred, in registry order (a key named active is sent whole)."""
        assert self.plain is not None
        named = set(active or ())
        return tuple(k for k in self.plain if k in self.deferred and k not in named)

    def sent(self, found: Sequence[str], active: tuple[str, ...] | None, *, native: bool = False) -> Registry:
        """The tools sent in a step: every tool but the deferred ones not found (nor named in `active`).

        With `native`, every tool but agentkit's search tool: the vendor holds the deferred ones back.
        """
        if not self.deferred:
            return self.offered if self.offered is not None else self.registry
        if native:
            assert self.plain is not None
            return self.plain
        named = tuple(k for k in active or () if k in self.deferred and k not in found)
        cache_key = (tuple(found), named)
        hit = self._sent.get(cache_key)
        if hit is None:
            if len(self._sent) > 64:
                self._sent.clear()
            hit = self._sent[cache_key] = self.registry.select((*self.shown, *found, *named))
        return hit


def search_tool(config: ToolSearch, tools: list[tuple[str, Tool[..., Any]]]) -> Tool[..., Any]:
    """The search tool: ranks the deferred `tools` and lists the best matches.

    It is shared by the runs over the same tools and knows none of them: the run that called it records
    what its result lists (`found_keys`), which is sent from its next step on.
    """
    limit_max = config.max_results

    async def search(query: str, limit: int = limit_max) -> list[dict[str, str]]:
        """Search the tools that are not loaded yet.

        Args:
            query: What you need to do, in a few words (e.g. "convert currency", "weather forecast").
            limit: How many tools to list at most.
        """
        count = max(1, min(limit, limit_max))
        # building the index (schemas, tokens) and ranking are CPU work: never on the event loop
        hits = await asyncio.to_thread(lambda: cached_index(tools).search(query, count))
        described = dict(tools)
        return [{"name": hit.key, "description": described[hit.key].description} for hit in hits]

    return Tool(search, id=config.key, description=config.description, inline=True)


def found_keys(tools: RunTools, output: Any) -> list[str]:
    """The deferred keys a successful search call's output lists (what the model was told it found)."""
    if not is_array(output):
        return []
    listed = (hit.get("name") for hit in output if is_object(hit))
    return [key for key in listed if isinstance(key, str) and key in tools.deferred]


# One index per set of deferred tools (a run's set is usually the agent's): building it is the cost.
_CACHE: OrderedDict[tuple[tuple[str, int], ...], tuple[list[Any], ToolIndex]] = OrderedDict()
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 8


def cached_index(tools: list[tuple[str, Tool[..., Any]]]) -> ToolIndex:
    """The index of these (key, tool) pairs, shared by every run that defers exactly them."""
    signature = tuple((key, id(item)) for key, item in tools)
    with _CACHE_LOCK:
        hit = _CACHE.get(signature)
        if hit is not None:
            _CACHE.move_to_end(signature)
            return hit[1]
    index = ToolIndex(tools)
    with _CACHE_LOCK:
        # the tools are kept alive with their index, so an id in the signature is never reused meanwhile
        _CACHE[signature] = ([item for _, item in tools], index)
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return index
