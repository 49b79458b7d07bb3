"""A run's dependencies against its tools' ``ToolContext[Deps]`` annotations, checked before anything runs.

Type checkers see a mismatch where both types meet in one expression (``agent.generate(deps=...)`` on an
``Agent[Database, ...]``); a tool in a list of tools hides its context type from them, so the run checks
it: a tool annotated ``ToolContext[Database]`` in a run whose deps are ``42`` is an `AgentSetupError`
naming the tool and both types, raised before the first model request. What cannot be checked at run
time (``Any``, type variables, protocols that are not ``runtime_checkable``, parametrised generics beyond
their class) is left to the type checker.
"""

from __future__ import annotations as _annotations

import types
from typing import Annotated, Any, Union, cast, get_args, get_origin

from ..context import ToolContext
from ..exceptions import AgentSetupError
from ..registry import Registry

__all__ = ["check_deps", "expected_deps"]


def expected_deps(annotation: Any) -> tuple[type[Any], ...] | None:
    """The classes ``ToolContext[X]`` (or ``ToolContext[X] | None``) asks of the deps; None: nothing checkable."""
    if get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    if get_origin(annotation) in (Union, types.UnionType):
        options = [a for a in get_args(annotation) if a is not type(None)]
        annotation = options[0] if len(options) == 1 else None
    if get_origin(annotation) is not ToolContext:
        return None  # bare ToolContext (deps of any type), or an unresolved string
    (wanted,) = get_args(annotation) or (Any,)
    members = get_args(wanted) if get_origin(wanted) in (Union, types.UnionType) else (wanted,)
    classes: list[type[Any]] = []
    for member in members:
        if member is type(None):
            classes.append(type(None))
            continue
        origin = get_origin(member) or member
        if not isinstance(origin, type):
            return None  # Any, a TypeVar, a NewType: for the type checker only
        cls = cast("type[Any]", origin)
        if cls is object or _is_static_protocol(cls):
            return None  # a static protocol: for the type checker only
        classes.append(cls)
    return tuple(classes)


def _is_static_protocol(cls: type[Any]) -> bool:
    return bool(getattr(cls, "_is_protocol", False)) and not getattr(cls, "_is_runtime_protocol", False)


def check_deps(registry: Registry, deps: Any, deps_type: Any, where: str) -> None:
    """Raise `AgentSetupError` if `deps` (or, without them, `deps_type`) does not fit a tool's context type.

    Nothing is checked without deps or a declared type (a tool that reads ``ctx.deps`` then sees None).
    """
    if deps is None and not isinstance(deps_type, type):
        return
    deps_class: type[Any] = type(cast(object, deps))
    probe = (deps_class, deps_type if deps is None else None)
    # kept on the registry: (version, the (deps type, declared type) pairs already found to fit)
    hit: tuple[int, set[tuple[Any, Any]]] | None = registry.__dict__.get("_agentkit_deps_checked")
    if hit is not None and hit[0] == registry.version and probe in hit[1]:
        return
    for key, item in registry.items():
        for annotation in item.schema.context_types.values():
            wanted = expected_deps(annotation)
            if wanted is None or _fits(deps, deps_type, wanted):
                continue
            names = " | ".join(_name(c) for c in wanted)
            have = deps_class if deps is not None else deps_type
            # the type only: deps hold credentials and connections, whose repr may show them
            given = _name(have) if deps is not None else f"deps_type={_name(have)}"
            raise AgentSetupError(
                f"{where}: tool {key!r} ({item.schema.qualname}) takes ToolContext[{names}], but the run's deps are "
                f"{given}. Pass deps of type {names}, or annotate the tool's context as ToolContext[{_name(have)}]."
            )
    if hit is None or hit[0] != registry.version:
        hit = (registry.version, set())
        registry.__dict__["_agentkit_deps_checked"] = hit
    hit[1].add(probe)


def _fits(deps: Any, deps_type: Any, wanted: tuple[type[Any], ...]) -> bool:
    try:
        if deps is not None:
            return isinstance(deps, wanted)
        return issubclass(deps_type, wanted)
    except TypeError:  # e.g. a class isinstance() cannot check: left to the type checker
        return True


def _name(cls: Any) -> str:
    return "None" if cls is type(None) else getattr(cls, "__qualname__", None) or repr(cls)
