"""`CodeLimits`: what one program may use of the sandbox."""

from __future__ import annotations as _annotations

from dataclasses import dataclass

from ..exceptions import AgentSetupError

__all__ = ["CodeLimits"]


@dataclass(frozen=True)
class CodeLimits:
    """What one program may use; a program that breaks a limit fails with an error the model reads.

    Example:
        ```python
        from agentkit.codemode import CodeLimits, CodeMode

        mode = CodeMode(limits=CodeLimits(timeout=2.0, max_calls=20))
        ```
    """

    timeout: float = 5.0
    """Seconds of the program's own execution (the clock stops while its tool calls run): an endless loop ends."""
    max_memory: int = 64 * 1024 * 1024
    """Bytes of heap the program may hold."""
    max_calls: int = 100
    """Tool calls one program may make (each runs under the run's own budgets too)."""
    max_output: int = 20_000
    """Characters of ``print`` output kept; the rest is cut (and said to be)."""
    max_result: int = 20_000
    """Characters of the program's result shown to the model; longer results are cut (and said to be)."""
    max_recursion: int = 200
    """Depth of nested function calls inside the program."""
    max_code: int = 100_000
    """Characters of program text accepted."""

    def __post_init__(self) -> None:
        for name in ("timeout", "max_memory", "max_calls", "max_output", "max_result", "max_recursion", "max_code"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise AgentSetupError(f"CodeLimits({name}={value!r}): give a positive number")
