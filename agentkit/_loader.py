"""One loader for command-line targets: ``package.module:attribute`` or ``path/to/file.py:attribute``.

Used by every ``agentkit`` command and by ``agentkit mcp serve`` / `agentkit.mcp.load_registry`, so the
rules and the messages are the same everywhere:

* ``path/to/file.py:attr`` imports the file as the module ``file`` with its folder put first on
  ``sys.path`` (as uvicorn and FastMCP do), so it can import the modules beside it;
* ``package.module:attr`` imports the module with the current directory on ``sys.path`` (as
  ``python -m`` does);
* the attribute may be dotted (``module:app.tools``).

Every failure is an `agentkit.exceptions.MCPLoadError` (named for ``mcp serve``, where it was first
raised; one class for the one mistake, whichever command made it).
"""

from __future__ import annotations as _annotations

import difflib
import importlib
import importlib.util
import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from typing_extensions import TypeIs

from .exceptions import MCPLoadError
from .registry import Registry
from .tools import Tool

if TYPE_CHECKING:
    from .agent import Agent

__all__ = ["as_registry", "is_agent", "load_object", "load_registry"]


def is_agent(value: object) -> TypeIs[Agent[Any, Any]]:
    """Whether a loaded object is an `Agent` (imported on first need: the CLI's other commands never load it)."""
    from .agent import Agent

    return isinstance(value, Agent)


_FORMS = "'package.module:attribute' or 'path/to/file.py:attribute'"


def _is_path(module_ref: str) -> bool:
    return module_ref.endswith(".py") or "/" in module_ref or os.sep in module_ref


def _import_file(module_ref: str, target: str) -> Any:
    file = Path(module_ref).expanduser().resolve()
    if not file.is_file():
        raise MCPLoadError(f"no such file: {module_ref} (from the target {target!r})")
    folder = str(file.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # the file's siblings are importable, as when it is run as a script
    name = file.stem
    loaded = sys.modules.get(name)
    loaded_file = getattr(loaded, "__file__", None)
    if loaded is not None and loaded_file and Path(loaded_file).resolve() == file:
        return loaded
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise MCPLoadError(f"cannot import {module_ref} as a Python module (from the target {target!r})")
    module = importlib.util.module_from_spec(spec)
    previous = sys.modules.get(name)
    sys.modules[name] = module  # before running it: the module can import itself, and siblings can import it
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        if previous is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = previous
        raise MCPLoadError(f"importing {module_ref} failed: {type(exc).__name__}: {exc}") from exc
    return module


def _import_module(module_ref: str, target: str) -> Any:
    cwd = os.getcwd()
    if "" not in sys.path and cwd not in sys.path:
        sys.path.insert(0, cwd)  # like `python -m`: the modules of the current directory are found
    try:
        return importlib.import_module(module_ref)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (module_ref == exc.name or module_ref.startswith(exc.name + ".")):
            raise MCPLoadError(
                f"cannot import {module_ref!r}: no module named {exc.name!r} (looked in {cwd} and on sys.path); "
                "run from the folder that holds it, or name the file: path/to/file.py:attribute"
            ) from None
        raise MCPLoadError(f"importing {module_ref!r} failed: ModuleNotFoundError: {exc}") from exc
    except Exception as exc:
        raise MCPLoadError(f"importing {module_ref!r} failed: {type(exc).__name__}: {exc}") from exc


def load_object(target: str) -> Any:
    """The object named by ``package.module:attribute`` or ``path/to/file.py:attribute``.

    Raises:
        MCPLoadError: the target is malformed, the module or file cannot be imported (or raised while
            importing), or the attribute does not exist. The message says which, and what to do.
    """
    module_ref, sep, attribute = target.rpartition(":")  # the last colon: a Windows path has one of its own
    if not sep or not module_ref or not attribute:
        raise MCPLoadError(f"a target looks like {_FORMS}, got {target!r}")
    value = _import_file(module_ref, target) if _is_path(module_ref) else _import_module(module_ref, target)
    for part in attribute.split("."):
        if not hasattr(value, part):
            names = [n for n in dir(value) if not n.startswith("_")]
            close = difflib.get_close_matches(part, names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise MCPLoadError(f"{module_ref!r} has no attribute {attribute!r}{hint}")
        value = getattr(value, part)
    return value


def as_registry(value: Any, target: str) -> Registry:
    """`value` as a `Registry`: a Registry, a `Tool` or function, an Agent's tools, or a dict/list of tools."""
    if isinstance(value, Registry):
        return value
    if isinstance(value, type):  # a class is no toolset, even one that iterates (an Enum) or is callable
        raise MCPLoadError(
            f"{target!r} is the class {value.__name__!r} ({_kind_of_class(value)}), not tools: name a Registry, "
            "a tool, a list or dict of tools, or an Agent"
        )
    if isinstance(value, Tool):
        return Registry([value])
    tools = getattr(value, "tools", None)
    if isinstance(tools, Registry):  # an Agent (or anything holding a registry)
        return tools
    if isinstance(value, Mapping) or (isinstance(value, Iterable) and not isinstance(value, (str, bytes))):
        return Registry(cast("Mapping[str, Any] | Iterable[Any]", value))
    if callable(value):
        return Registry([value])
    raise MCPLoadError(
        f"{target!r} is a {type(value).__name__}, not a Registry, a tool, a list/dict of tools or an Agent"
    )


def _kind_of_class(value: type) -> str:
    """What a class is, in a user's words (not its metaclass: ``ModelMetaclass`` means nothing to them)."""
    if any(base.__module__.startswith("pydantic") and base.__name__ == "BaseModel" for base in value.__mro__):
        return "a pydantic model"
    if hasattr(value, "__members__"):
        return "an enum"
    return "a dataclass" if hasattr(value, "__dataclass_fields__") else "a class"


def load_registry(target: str) -> Registry:
    """The `Registry` named by `target` (see `load_object` for the forms and `as_registry` for the values)."""
    return as_registry(load_object(target), target)
