"""Budgets and concurrency limits for tool calls.

* per run (`RunLimits`, on `Agent(limits=...)` or one `generate(limits=...)`): the model turns and
  retries a run may take, a total tool-call budget and a cap on calls running at once in the whole run
  (both counting its subagents' and workflows' calls), and a cap on calls running at once in one model
  turn;
* per tool (`@tool(...)` options): ``max_calls`` (a budget per run), ``max_concurrency`` (calls of
  that tool running at once, across every run of the process), ``sequential=True`` (the call runs
  alone: the turn's earlier calls finish first, later ones wait), and ``limits=[ConcurrencyLimit(...)]``
  shared by several tools, optionally keyed by a resource (``key=lambda args: args["account_id"]``:
  calls touching one account run one at a time, whichever tool and run they come from).

A spent budget hides the tool from the model for the rest of the run, and a further call gets an error
result saying so (``error_kind="budget"``); the model answers or uses other tools. Whatever waits, the
results of a turn come back one per call, in call order.
"""

from __future__ import annotations as _annotations

import asyncio
import dataclasses
import itertools
import weakref
from collections.abc import AsyncGenerator, Callable, Hashable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from .exceptions import AgentSetupError
from .repeats import RepeatPolicy

__all__ = ["ConcurrencyLimit", "RunLimits"]


def _check_count(owner: str, name: str, value: Any, *, minimum: int = 1) -> int | None:
    """`value` as an optional whole number of at least `minimum`, or an error naming `owner` and `name`."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise AgentSetupError(f"{owner}: {name} must be a whole number of at least {minimum} (or None), got {value!r}")
    return value


@dataclass(frozen=True)
class RunLimits:
    """The budgets and limits of one run; a field left `None` sets no limit (or keeps the agent's).

    Per-run limits given to `generate` override the agent's field by field.
    """

    max_tool_calls: int | None = None
    """Tool calls the run may make in all, its subagents' calls included (they draw from it, each also
    under its own budget). Once spent, every tool is hidden from the model and a further call gets an
    error result (the model must answer)."""
    max_concurrency: int | None = None
    """Tool calls running at once in this run, its subagents' and workflows' calls included (a subagent
    or workflow call itself takes no slot while its inner calls run, so nesting cannot deadlock)."""
    max_turn_concurrency: int | None = None
    """Tool calls of one model turn running at once."""
    max_steps: int | None = None
    """Model turns per run (a run that uses them all ends with status ``"max_steps"``); the agent's
    default is 10."""
    retries: int | None = None
    """Consecutive retryable failures (invalid arguments, `ModelRetry`, an answer that does not fit the
    output type) allowed per tool; the agent's default is 2."""
    max_retries: int | None = None
    """Retryable failures (unknown tool names included) allowed per run; the agent's default is 10."""
    repeats: RepeatPolicy | None = None
    """Loop detection: when the model counts as repeating itself, and what happens then (see
    `agentkit.repeats`); the default is `RepeatPolicy()`."""

    def __post_init__(self) -> None:
        _check_count("RunLimits", "max_steps", self.max_steps)
        _check_count("RunLimits", "retries", self.retries, minimum=0)
        _check_count("RunLimits", "max_retries", self.max_retries, minimum=0)
        _check_count("RunLimits", "max_tool_calls", self.max_tool_calls, minimum=0)
        _check_count("RunLimits", "max_concurrency", self.max_concurrency)
        _check_count("RunLimits", "max_turn_concurrency", self.max_turn_concurrency)
        if self.repeats is not None and not isinstance(self.repeats, RepeatPolicy):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise AgentSetupError(f"RunLimits(repeats=...) takes RepeatPolicy(...), got {self.repeats!r}")

    def over(self, other: RunLimits | None) -> RunLimits:
        """These limits with `other`'s fields filling the ones left `None`."""
        if other is None:
            return self
        mine, theirs = self.__dict__, other.__dict__
        return RunLimits(**{name: mine[name] if mine[name] is not None else theirs[name] for name in _FIELDS})


_FIELDS = tuple(field.name for field in dataclasses.fields(RunLimits))

_ORDER = itertools.count()


class ConcurrencyLimit:
    """At most `max_concurrency` calls at once, over every tool that lists this limit and every run.

    With `key`, the limit holds per resource instead: ``key`` receives a call's validated arguments
    (as an approval policy does: a dict of argument name -> value, defaults applied) and returns a
    hashable value, and calls with equal values share the limit. A key function that raises fails that
    call with an error result (it never runs unguarded).

    ```python
    per_account = ConcurrencyLimit(1, key=lambda args: args["account_id"])

    @tool(limits=[per_account])
    def transfer(account_id: str, amount: int) -> str: ...

    @tool(limits=[per_account])
    def balance(account_id: str) -> int: ...
    ```
    """

    def __init__(
        self, max_concurrency: int = 1, *, key: Callable[[dict[str, Any]], Hashable] | None = None, name: str = ""
    ) -> None:
        _check_count("ConcurrencyLimit", "max_concurrency", max_concurrency)
        if key is not None and not callable(key):
            raise AgentSetupError(f"ConcurrencyLimit(key=...) must be a function of the arguments, got {key!r}")
        self.max_concurrency = max_concurrency
        self.key = key
        self.name = name
        """A label for reprs and error messages."""
        self.order = next(_ORDER)
        """Limits are always acquired in creation order, so two calls can never wait on each other."""
        # event loop -> resource key -> [semaphore, holders]; a loop's entries go with the loop
        self._slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Hashable, list[Any]]] = (
            weakref.WeakKeyDictionary()
        )

    def __repr__(self) -> str:
        keyed = f", key={getattr(self.key, '__name__', self.key)}" if self.key is not None else ""
        label = f", name={self.name!r}" if self.name else ""
        return f"ConcurrencyLimit({self.max_concurrency}{keyed}{label})"

    def resource(self, arguments: dict[str, Any]) -> Hashable:
        """The resource a call with these (policy-shaped) arguments holds; raises what `key` raises."""
        if self.key is None:
            return None
        value = self.key(arguments)
        hash(value)  # an unhashable key is the key function's mistake, reported for this call
        return value

    @asynccontextmanager
    async def hold(self, resource: Hashable) -> AsyncGenerator[None, None]:
        """Hold one slot of this limit for `resource` while the block runs."""
        slots = self._slots.setdefault(asyncio.get_running_loop(), {})
        entry = slots.get(resource)
        if entry is None:
            entry = slots[resource] = [asyncio.Semaphore(self.max_concurrency), 0]
        entry[1] += 1  # holders and waiters: the entry is dropped when the last one leaves
        try:
            async with entry[0]:
                yield
        finally:
            entry[1] -= 1
            if entry[1] == 0 and slots.get(resource) is entry:
                del slots[resource]

    def holders(self, resource: Hashable = None) -> int:
        """Calls holding or waiting for `resource` now, on the running event loop (for tests and metrics)."""
        entry = self._slots.get(asyncio.get_running_loop(), {}).get(resource)
        return int(entry[1]) if entry is not None else 0
