"""Meta-test: no import cycle inside `agentkit`, and no module over the size limit.

The graph is what runs at import time: module-level ``import`` / ``from ... import`` statements of every
module of the package (read from the source, so nothing is imported). Imports inside functions are lazy
(they run on first use, after every module is loaded) and imports under ``if TYPE_CHECKING:`` never run,
so neither is an edge. Importing ``agentkit.a.b`` also runs the package ``agentkit.a``'s ``__init__``: that
counts as an edge too, except for the importing module's own enclosing packages (a submodule importing a
sibling does not re-enter its package's ``__init__``, which is already being imported).
"""

from __future__ import annotations

import ast
import pkgutil
from collections.abc import Iterator
from pathlib import Path

import agentkit

PACKAGE = Path(agentkit.__file__).parent
MAX_LINES = 800


def _modules() -> dict[str, Path]:
    found = {"agentkit": PACKAGE / "__init__.py"}
    for info in pkgutil.walk_packages([str(PACKAGE)], prefix="agentkit."):
        spec = info.module_finder.find_spec(info.name, None)  # type: ignore[call-arg]
        assert spec is not None and spec.origin is not None
        found[info.name] = Path(spec.origin)
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _module_level_imports(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """Import statements that run when the module is imported (not in functions, not under TYPE_CHECKING)."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                yield from _module_level_imports(node.body)
            yield from _module_level_imports(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from _module_level_imports(block)
        elif isinstance(node, (ast.With, ast.AsyncWith, ast.ClassDef)):  # a class body runs at import time
            yield from _module_level_imports(node.body)


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    parts = module.split(".")
    base = parts if is_package else parts[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _with_packages(target: str, importer: str, modules: dict[str, Path]) -> set[str]:
    """`target` and the packages whose ``__init__`` importing it runs (not the importer's own ancestors)."""
    own = {".".join(importer.split(".")[:i]) for i in range(1, importer.count(".") + 1)}
    parts = target.split(".")
    names = {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
    return {n for n in names if n in modules and n not in own and n != importer}


def import_graph() -> dict[str, set[str]]:
    """agentkit module -> the agentkit modules its import runs."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        is_package = path.name == "__init__.py"
        edges: set[str] = set()
        for node in _module_level_imports(tree.body):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = _resolve(name, is_package, node)
                targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
            for target in targets:
                if target == "agentkit" or target.startswith("agentkit."):
                    edges |= _with_packages(target, name, modules)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component with more than one module (or a self-import), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:  # Tarjan's algorithm; the package is small, recursion is fine
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                item = stack.pop()
                on_stack.discard(item)
                component.append(item)
                if item == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_the_checker_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"a"}}) == [["a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_only_imports_that_run_at_import_time_are_edges() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "import a\n"
        "if TYPE_CHECKING:\n"
        "    import b\n"
        "else:\n"
        "    import c\n"
        "try:\n"
        "    import d\n"
        "except ImportError:\n"
        "    import e\n"
        "def f():\n"
        "    import g\n"
        "class K:\n"
        "    import h\n"
    )
    found = [alias.name for node in _module_level_imports(ast.parse(source).body) for alias in node.names]
    assert found == ["TYPE_CHECKING", "a", "c", "d", "e", "h"]


def test_the_graph_of_the_package() -> None:
    graph = import_graph()
    assert "agentkit.messages" in graph["agentkit.registry"]  # a plain module-level import is an edge
    assert "agentkit.models" in graph["agentkit._agent._request"]  # `from ..models._base` runs models/__init__
    assert "agentkit._agent" not in graph["agentkit._agent._request"]  # not its own package
    assert all(not target.startswith("agentkit.testing") for target in graph["agentkit.models"])  # lazy: not


def test_no_import_cycle_inside_agentkit() -> None:
    found = cycles(import_graph())
    assert found == [], "import cycles (module-level imports): " + "; ".join(" <-> ".join(c) for c in found)


def test_no_module_is_over_the_size_limit() -> None:
    sizes = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in _modules().items()}
    over = {name: lines for name, lines in sizes.items() if lines > MAX_LINES}
    assert over == {}, f"modules over {MAX_LINES} lines: {over}"


def test_the_agent_names_stay_where_users_import_them() -> None:
    import agentkit.agent
    import agentkit.events

    for name in agentkit.agent.__all__:
        assert getattr(agentkit.agent, name) is not None
    assert agentkit.agent.RunStatus is agentkit.events.RunStatus
    assert agentkit.Agent is agentkit.agent.Agent and agentkit.RunResult is agentkit.agent.RunResult


# ---- the run half as layers (issue 18) ----------------------------------------------------------------

AGENT_LAYERS: list[set[str]] = [
    # records and primitives, which know nothing of a run
    {"pending", "interrupts", "_usercode", "_progress", "state", "sessions", "_deps", "_instructions"},
    {"results", "_toolset"},  # what a run returns; the run's tools
    {"hooks", "display", "stream", "_output"},  # the execution engine, display transforms, events, output
    {"_options"},  # what one call asks (RunOptions)
    {"config"},  # what a run was asked (RunConfig)
    {"observe", "_limits", "_repeats"},  # helpers of (config, state): logs and traces, budgets and caps, loops
    {"_approvals", "_emit", "_answer", "_cache"},
    {"_intercept", "_background"},
    {"_effects"},  # the effect journal step of a call
    {"_steps", "_calls"},  # plan a step; the tool-call pipeline
    {"_request", "nested"},  # one model request; the calls programs make (code mode)
    {"loop"},  # sequences the stages
    {"_setup"},  # makes a run's config and state
    {"resume"},
    {"runs"},  # the entry points
    {"subagents"},
]
"""`agentkit._agent`'s modules, bottom layer first: each imports only modules of the layers below its own."""


def every_import(module: str) -> set[str]:
    """The agentkit modules `module` imports anywhere: at import time, under ``TYPE_CHECKING``, in functions."""
    modules = _modules()
    path = modules[module]
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, is_package, node)
            targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        for target in targets:
            if target == "agentkit" or target.startswith("agentkit."):
                found |= _with_packages(target, module, modules)
    return found


def test_agent_modules_import_only_the_layers_below_their_own() -> None:
    layer_of = {f"agentkit._agent.{name}": index for index, layer in enumerate(AGENT_LAYERS) for name in layer}
    inside = {name for name in _modules() if name.startswith("agentkit._agent.")}
    assert inside == set(layer_of), f"modules without a layer (add them): {sorted(inside - set(layer_of))}"
    upward: list[str] = []
    for module, level in sorted(layer_of.items()):
        for target in sorted(every_import(module)):
            if target == "agentkit.agent" or (target in layer_of and layer_of[target] >= level):
                upward.append(f"{module} -> {target}")
    assert upward == [], "imports that are not downward (type-only and lazy ones included): " + "; ".join(upward)


def test_no_cycle_inside_the_agent_modules_type_only_imports_included() -> None:
    agent = {name for name in _modules() if name == "agentkit.agent" or name.startswith("agentkit._agent")}
    graph = {name: every_import(name) & agent for name in agent}
    assert cycles(graph) == []


def test_the_layer_check_sees_type_only_and_lazy_imports() -> None:
    assert "agentkit._agent.config" in every_import("agentkit._agent._limits")  # under TYPE_CHECKING only
    assert "agentkit.runs._snapshot" in every_import("agentkit._agent._setup")  # inside a function
    with_cycle = {"a": {"b"}, "b": {"a"}}
    assert cycles(with_cycle) == [["a", "b"]]


def test_the_playground_does_not_import_the_cli() -> None:
    playground = [name for name in _modules() if name.startswith("agentkit.playground")]
    assert playground
    for module in playground:
        assert not any(t == "agentkit.cli" or t.startswith("agentkit.cli.") for t in every_import(module)), module
