"""The error tree: every class in `agentkit.exceptions`, drawn exactly in its docstring; one class per mistake."""

from __future__ import annotations

import builtins
import importlib
import inspect
import pickle
import pkgutil
import re
from pathlib import Path

import pytest

import agentkit
import agentkit.exceptions as exceptions
from agentkit import Registry, tool
from agentkit.agent import Agent
from agentkit.exceptions import AgentSetupError, ToolChoiceError, UsageError
from agentkit.limits import RunLimits
from agentkit.providers import get_provider, provider_names
from agentkit.testing import TestModel

_LINE = re.compile(r"^(?P<prefix>[│ ]*)(?P<branch>[├└]── )?(?P<name>\w+)(?: \((?P<extras>[^)]*)\))?")
_LEAVES_THE_PACKAGE: set[str] = set()  # modules that are not imported in this check (none: dev/local_llm.py left)


def drawn_tree() -> list[tuple[str, str | None, set[str]]]:
    """(class, drawn parent, built-ins in parentheses) for every line of the docstring's tree."""
    doc = exceptions.__doc__ or ""
    block = doc.split("```")[1].strip("\n")
    rows: list[tuple[str, str | None, set[str]]] = []
    parents: list[str] = []
    for line in block.splitlines():
        match = _LINE.match(line)
        assert match is not None, line
        depth = len(match["prefix"]) // 4 + (1 if match["branch"] else 0)
        del parents[depth:]
        extras = {e.strip() for e in match["extras"].split(",")} if match["extras"] else set()
        rows.append((match["name"], parents[-1] if parents else None, extras))
        parents.append(match["name"])
    return rows


def _lookup(name: str) -> type[BaseException]:
    cls = getattr(exceptions, name, None) or getattr(builtins, name)
    assert isinstance(cls, type) and issubclass(cls, BaseException), name
    return cls


def _builtin_bases(cls: type[BaseException], parent: type[BaseException]) -> set[str]:
    """The built-in exceptions `cls` derives from beyond `parent`, each named once (the most specific)."""
    extra = [b for b in cls.__mro__ if b.__module__ == "builtins" and b not in parent.__mro__ and b is not object]
    return {b.__name__ for b in extra if not any(o is not b and issubclass(o, b) for o in extra)}


def _package_errors() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    names = ["agentkit"] + [m.name for m in pkgutil.walk_packages(agentkit.__path__, prefix="agentkit.")]
    for name in names:
        if name in _LEAVES_THE_PACKAGE or name.endswith("__main__"):
            continue
        module = importlib.import_module(name)
        for value in vars(module).values():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__.startswith("agentkit")
                and not value.__name__.startswith("_")  # private control flow that never leaves its module
            ):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return found


def test_the_drawn_tree_is_the_class_hierarchy() -> None:
    rows = drawn_tree()
    public = {
        name
        for name, value in vars(exceptions).items()
        if inspect.isclass(value) and issubclass(value, BaseException) and not name.startswith("_")
    }
    drawn = {name for name, parent, _ in rows if parent is not None}
    assert drawn == public  # every class drawn, nothing drawn that does not exist
    for name, parent, extras in rows:
        if parent is None:
            assert name in ("Exception", "Warning", "BaseException")  # signals that must not be caught as errors
            continue
        cls, parent_cls = _lookup(name), _lookup(parent)
        assert issubclass(cls, parent_cls), f"{name} is drawn under {parent}"
        # the drawn parent is the nearest public agentkit ancestor (private helper bases are skipped)
        nearest = next((b for b in cls.__mro__[1:] if b.__name__ in public), None)
        assert (nearest.__name__ if nearest else None) == (parent if parent in public else None), name
        assert _builtin_bases(cls, parent_cls) == extras, f"{name}: built-ins drawn {extras}"


def test_the_checker_sees_a_wrong_drawing() -> None:
    assert _builtin_bases(exceptions.UnknownToolError, exceptions.RegistryError) == {"KeyError"}
    assert _builtin_bases(exceptions.ToolTimeoutError, exceptions.AgentkitError) == {"TimeoutError"}
    names = {name: parent for name, parent, _ in drawn_tree()}
    assert names["RetryLimitExceeded"] == "UsageLimitExceeded" and names["ModelRetry"] == "Exception"


def test_every_error_class_of_the_package_lives_in_exceptions() -> None:
    elsewhere = {k: v for k, v in _package_errors().items() if v.__module__ != "agentkit.exceptions"}
    assert elsewhere == {}
    # and stays importable where it was defined before
    from agentkit.agent import ApprovalError, RetryLimitExceeded
    from agentkit.cli import CLIError
    from agentkit.evals import EvalDataError
    from agentkit.mcp import MCPConnectionError, MCPLoadError
    from agentkit.providers import InvalidToolNameError, InvalidToolNamesError, UnknownProviderError
    from agentkit.ui import UIInputError
    from agentkit.workflows import WorkflowStepError

    for cls in (
        ApprovalError,
        RetryLimitExceeded,
        CLIError,
        EvalDataError,
        MCPConnectionError,
        MCPLoadError,
        InvalidToolNameError,
        InvalidToolNamesError,
        UnknownProviderError,
        UIInputError,
        WorkflowStepError,
    ):
        assert getattr(exceptions, cls.__name__) is cls


def test_the_errors_page_renders_the_docstring_instead_of_a_copy() -> None:
    page = (Path(__file__).parents[1] / "docs" / "errors.md").read_text(encoding="utf-8")
    assert "::: agentkit.exceptions" in page
    assert "├──" not in page  # no hand-drawn second copy to drift


def test_errors_with_fields_survive_pickling() -> None:
    samples = [
        exceptions.CLIError("bad", 2),
        exceptions.UnknownProviderError("opnai", ["openai"]),
        exceptions.InvalidToolNameError("a b", "openai", "^x$"),
        exceptions.WorkflowStepError("w", "s", 0, "m"),
        exceptions.UIInputError("no run", 404),
        exceptions.SnapshotError("the tools changed", ["refund"]),
    ]
    for error in samples:
        copy = pickle.loads(pickle.dumps(error))
        assert type(copy) is type(error) and str(copy) == str(error) and vars(copy) == vars(error)


# ---- one error class per mistake -------------------------------------------------------------------


@tool
def first(a: int) -> int:
    """First."""
    return a


@tool
def second(a: int) -> int:
    """Second."""
    return a


async def test_a_tool_choice_outside_active_tools_is_one_error_everywhere() -> None:
    registry = Registry([first, second])
    agent = Agent(model=TestModel(), tools=registry)
    with pytest.raises(ToolChoiceError, match="add it to active_tools") as from_agent:
        await agent.generate("go", tool_choice="second", active_tools=["first"])
    for vendor in provider_names():
        with pytest.raises(ToolChoiceError, match="add it to active_tools") as from_provider:
            get_provider(vendor).format_tools(registry, tool_choice="second", active_tools=["first"])
        assert str(from_agent.value) == str(from_provider.value)
        assert isinstance(from_provider.value, exceptions.RegistryError)
    with pytest.raises(ToolChoiceError, match="no tool could be called") as from_agent:
        await agent.generate("go", tool_choice="required", active_tools=[])
    for vendor in provider_names():
        with pytest.raises(ToolChoiceError, match="no tool could be called") as from_provider:
            get_provider(vendor).format_tools(registry, tool_choice="required", active_tools=[])
        assert str(from_agent.value) == str(from_provider.value)


async def test_bad_run_limits_are_agent_setup_errors() -> None:
    with pytest.raises(AgentSetupError, match="max_steps must be .* at least 1 .*got 0"):
        Agent(model=TestModel(), limits=RunLimits(max_steps=0))
    with pytest.raises(AgentSetupError, match="retries must be .* got -1"):
        Agent(model=TestModel(), limits=RunLimits(retries=-1))
    agent = Agent(model=TestModel())
    with pytest.raises(AgentSetupError, match="got 0"):
        await agent.generate("go", max_steps=0)
    with pytest.raises(ValueError):  # still a ValueError for code that catches that
        await agent.stream("go", max_steps=-1).get_result()


def test_reading_an_unfinished_stream_is_a_usage_error() -> None:
    stream = Agent(model=TestModel()).stream("go")
    with pytest.raises(UsageError, match="has not finished"):
        _ = stream.result
