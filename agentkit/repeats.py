"""Loop detection: `RepeatPolicy`, what a run does when the model repeats itself (``RunLimits(repeats=...)``).

A model stuck in a loop calls the same tool with the same arguments and gets the same answer, turn after
turn, until the step budget runs out. A call is a *repeat* when the run already made that call (same tool,
same canonical arguments: key order ignored) and every earlier time got the same answer; a turn (round) is
a repeat when it makes the same calls as the turns before it and they got the same answers. The `calls`-th such
call, or the `rounds`-th such turn in a row, trips the policy:

* ``"warn"``: the call runs; the stream gets a `RepeatEvent`;
* ``"error"`` (default): the call does not run; the model gets an error result (``error_kind="repeated"``)
  telling it it repeats itself, and the stream a `RepeatEvent`;
* ``"approve"``: the run pauses for approval of that call, like a tool with ``requires_approval=True``.

Calls with different arguments, and calls whose answers changed (a job's status being polled), never trip
it. Set it per agent or per run through `RunLimits`; ``RepeatPolicy(on="off")`` turns it off.

```python
from agentkit.limits import RunLimits
from agentkit.repeats import RepeatPolicy

limits = RunLimits(repeats=RepeatPolicy(calls=6, rounds=4, on="warn"))
```
"""

from __future__ import annotations as _annotations

from dataclasses import dataclass
from typing import Literal

from .exceptions import AgentSetupError

__all__ = ["DEFAULT_REPEATS", "RepeatAction", "RepeatPolicy"]

RepeatAction = Literal["warn", "error", "approve", "off"]
"""What a `RepeatPolicy` does with a call that trips it."""

_ACTIONS = ("warn", "error", "approve", "off")


@dataclass(frozen=True)
class RepeatPolicy:
    """When a run counts the model as repeating itself, and what it does then (see the module docstring).

    Args:
        calls: the Nth identical call (same tool, same canonical arguments) trips the policy when the
            N-1 before it all got the same answer (None: never by calls). Default 4: after the same answer
            three times a fourth call cannot tell the model anything new, and a failing call still gets
            the agent's default two retries (``retries=2``: three tries) first.
        rounds: the Nth identical turn in a row (the same calls, the turns before it answered the same)
            trips it (None: never by rounds). Default 3: the loop is caught at step 3 of the default 10,
            with steps left for the model to recover.
        on: ``"error"`` (default), ``"warn"``, ``"approve"`` or ``"off"``; see `RepeatAction`.
    """

    calls: int | None = 4
    rounds: int | None = 3
    on: RepeatAction = "error"

    def __post_init__(self) -> None:
        for name in ("calls", "rounds"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 2):
                raise AgentSetupError(f"RepeatPolicy({name}=...) is a whole number, at least 2, or None; got {value!r}")
        if self.on not in _ACTIONS:
            raise AgentSetupError(f"RepeatPolicy(on=...) is one of {', '.join(_ACTIONS)}; got {self.on!r}")

    @property
    def active(self) -> bool:
        """Whether the policy can act at all."""
        return self.on != "off" and (self.calls is not None or self.rounds is not None)


DEFAULT_REPEATS = RepeatPolicy()
"""The policy of a run whose limits (and its agent's) set none."""
