"""What kind of callable a tool wraps, and where its annotations, docstring and name come from.

A tool may be a function, a bound method, a `functools.partial` (of a function, a method or a
callable object), or an instance whose class defines ``__call__`` (sync or async). Each keeps its
annotations somewhere else: `Callable` describes where, so the schema builder reads the right ones.
``Self`` in a method's annotations is replaced by the class of the object it is bound to.
"""

from __future__ import annotations as _annotations

import dataclasses
import functools
import inspect
import sys
import types
import typing
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import typing_extensions
from typing_extensions import TypeIs

from ._jsonish import is_array, is_object

__all__ = ["CallableInfo", "describe_callable", "get_hints", "substitute_self"]

_SELF_TYPES: tuple[Any, ...] = tuple({typing_extensions.Self, getattr(typing, "Self", typing_extensions.Self)})


@dataclass(frozen=True)
class CallableInfo:
    """Where a tool's pieces come from."""

    hints_from: Any
    """The object whose ``__annotations__`` describe the parameters (a function or bound method)."""
    doc_from: Any
    """The object whose docstring describes the tool."""
    name: str | None
    """The default tool id."""
    qualname: str
    """``module.Qualified.name`` for error messages."""
    bound: frozenset[str]
    """Keyword arguments fixed by `functools.partial`: not part of the schema."""
    self_type: type[Any] | None
    """The class ``Self`` stands for (the bound object's class), if any."""
    is_async: bool
    described_by: type[Any] | None = None
    """For a callable object: its class, whose own docstring describes the tool (as FastMCP reads it); the
    ``__call__`` docstring (`doc_from`) still documents the parameters, and describes the tool when the
    class has no text of its own."""


def _qualname(obj: Any) -> str:
    return f"{getattr(obj, '__module__', None) or '?'}.{getattr(obj, '__qualname__', None) or repr(obj)}"


def _self_type_of(method: Any) -> type[Any] | None:
    owner = getattr(method, "__self__", None)
    if owner is None or isinstance(owner, types.ModuleType):  # builtins bound to their module
        return None
    return owner if isinstance(owner, type) else type(owner)


def describe_callable(fn: Any) -> CallableInfo | str:
    """Where `fn`'s annotations, docstring and name are; a sentence saying why when it cannot be a tool."""
    if type(fn) is types.FunctionType:  # the common case, first
        return CallableInfo(
            hints_from=fn,
            doc_from=fn,
            name=fn.__name__,
            qualname=f"{fn.__module__}.{fn.__qualname__}",
            bound=frozenset(),
            self_type=None,
            is_async=inspect.iscoroutinefunction(fn) or _marked_async(fn),
        )
    if _is_partial(fn):
        inner = describe_callable(fn.func)
        if isinstance(inner, str):
            return inner
        return CallableInfo(
            hints_from=inner.hints_from,
            doc_from=inner.doc_from,
            name=inner.name,
            qualname=f"functools.partial({inner.qualname})",
            bound=inner.bound | frozenset(fn.keywords) | _positionally_bound(fn),
            self_type=inner.self_type,
            is_async=inner.is_async,
            described_by=inner.described_by,
        )
    if isinstance(fn, staticmethod):
        return describe_callable(fn.__func__)
    if isinstance(fn, classmethod):
        return (
            "it is a classmethod object, not bound to its class yet, so it has no class to be called with. "
            "Make the tool once the class exists: Tool.from_function(MyClass.method)"
        )
    if isinstance(fn, type):
        return (
            f"{fn.__qualname__} is a class: calling it constructs an instance, and its annotations describe its "
            "attributes, not the arguments of a call. Make a tool of a function that builds and returns the "
            "instance, or of an instance whose class defines __call__"
        )
    if inspect.isfunction(fn) or inspect.ismethod(fn) or inspect.isbuiltin(fn):
        return CallableInfo(
            hints_from=fn,
            doc_from=fn,
            name=getattr(fn, "__name__", None),
            qualname=_qualname(fn),
            bound=frozenset(),
            self_type=_self_type_of(fn) if inspect.ismethod(fn) else None,
            is_async=inspect.iscoroutinefunction(fn) or _marked_async(fn),
        )
    cls = _class_of(fn)
    call = vars(cls).get("__call__") or next(
        (vars(base)["__call__"] for base in cls.__mro__ if "__call__" in vars(base)), None
    )
    if call is None or not callable(fn):
        return f"{fn!r} is not callable; @tool needs a function (def or async def) or a callable object"
    if inspect.isfunction(call):  # an instance of a class that defines __call__
        bound_call = fn.__call__
        return CallableInfo(
            hints_from=bound_call,
            doc_from=bound_call,
            name=type(fn).__name__,
            qualname=f"{_qualname(type(fn))}.__call__",
            bound=frozenset(),
            self_type=type(fn),
            is_async=inspect.iscoroutinefunction(call) or _marked_async(call),
            described_by=cls if _written_doc(cls) else None,
        )
    # Other callables (functools.cached/lru wrappers, C-implemented objects, ...): read what they expose.
    return CallableInfo(
        hints_from=fn,
        doc_from=fn,
        name=getattr(fn, "__name__", None),
        qualname=_qualname(fn),
        bound=frozenset(),
        self_type=None,
        is_async=inspect.iscoroutinefunction(fn) or _marked_async(fn),
    )


def _written_doc(cls: type[Any]) -> bool:
    """Whether the class has a docstring of its own (not the signature `dataclasses` writes when it has none)."""
    doc = vars(cls).get("__doc__")
    if not isinstance(doc, str) or not doc.strip():
        return False
    return not (dataclasses.is_dataclass(cls) and doc.startswith(f"{cls.__name__}("))


def _is_partial(fn: object) -> TypeIs[functools.partial[Any]]:
    return isinstance(fn, functools.partial)


def _class_of(value: object) -> type[Any]:
    # type() of an Any value is type[Unknown] to pyright; of an object, a known class
    return type(value)


def _positionally_bound(fn: functools.partial[Any]) -> frozenset[str]:
    """The parameters a partial's positional arguments fill (gone from its signature, maybe documented)."""
    if not fn.args:
        return frozenset()
    try:
        parameters = list(inspect.signature(fn.func).parameters.values())
    except (TypeError, ValueError):
        return frozenset()
    positional = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return frozenset(positional[: len(fn.args)])


def _marked_async(fn: Any) -> bool:
    # `inspect.markcoroutinefunction` (3.12) sets this marker on sync wrappers of async functions
    marker = getattr(inspect, "_is_coroutine_mark", None)
    return marker is not None and getattr(fn, "_is_coroutine_marker", None) is marker


# ---- annotations ---------------------------------------------------------------------------------

_EVALUATED: dict[tuple[str, int], tuple[Any, dict[str, Any]]] = {}


def _evaluate(text: str, globalns: dict[str, Any]) -> Any:
    """Evaluate a string annotation in a module namespace, cached per (text, module)."""
    key = (text, id(globalns))
    hit = _EVALUATED.get(key)
    if hit is not None and hit[1] is globalns:
        return hit[0]
    value = eval(text, globalns)
    if len(_EVALUATED) < 4096:
        _EVALUATED[key] = (value, globalns)  # the namespace is kept alive so its id cannot be reused
    return value


def get_hints(fn: Any, localns: dict[str, Any] | None = None) -> dict[str, Any]:
    """`typing.get_type_hints(fn, include_extras=True)`, with string annotations cached.

    Under ``from __future__ import annotations`` every annotation is a string; evaluating each through a
    cache keeps decorating cheap. Anything unusual falls back to `typing.get_type_hints`. String
    annotations are evaluated in the module of the function that wrote them (through `functools.wraps`
    layers), not the wrapper's.
    """
    if localns is not None:
        return typing.get_type_hints(fn, localns=localns, include_extras=True)
    origin = inspect.unwrap(fn.__func__ if inspect.ismethod(fn) else fn)
    globalns = getattr(origin, "__globals__", None)
    annotations = getattr(fn, "__annotations__", None)
    if not is_object(globalns) or not is_object(annotations):
        return typing.get_type_hints(fn, include_extras=True)
    hints: dict[str, Any] = {}
    for name, value in annotations.items():
        if value is None:
            value = type(None)
        elif isinstance(value, str):
            value = _evaluate(value, globalns)
        if isinstance(value, (str, typing.ForwardRef)):
            return typing.get_type_hints(fn, include_extras=True)
        hints[name] = value
    return hints


def caller_locals() -> dict[str, Any] | None:
    """The local namespace of the nearest frame outside agentkit (where `@tool` was applied)."""
    frame: types.FrameType | None = sys._getframe(1)  # pyright: ignore[reportPrivateUsage]  # CPython's frame access
    while frame is not None and frame.f_globals.get("__name__", "").startswith("agentkit."):
        frame = frame.f_back
    if frame is None or frame.f_locals is frame.f_globals:
        return None
    return dict(frame.f_locals)


def substitute_self(tp: Any, cls: type[Any] | None) -> Any:
    """`tp` with every ``Self`` replaced by `cls` (``-> Self``, ``list[Self]``, ``Self | None``, ...)."""
    if cls is None:
        return tp
    if any(tp is s for s in _SELF_TYPES):
        return cls
    args = get_args(tp)
    origin = get_origin(tp)
    if not args or origin is Literal:
        return tp
    if origin is Annotated:
        inner = substitute_self(args[0], cls)
        return tp if inner is args[0] else typing.cast(Any, Annotated)[(inner,) + tuple(tp.__metadata__)]
    new = tuple(substitute_self(a, cls) if not is_array(a) else a for a in args)
    if all(a is b for a, b in zip(new, args, strict=True)):
        return tp
    if origin in (Union, types.UnionType):
        return Union[new]
    if isinstance(tp, types.GenericAlias):
        return types.GenericAlias(origin, new)
    copy_with = getattr(tp, "copy_with", None)
    return copy_with(new) if copy_with is not None else tp
