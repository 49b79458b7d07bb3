"""Code mode: the model writes a Python program that calls your tools, run in a sandbox.

One code tool replaces (or joins) the chosen tools; the model is shown them as a typed Python module and
answers with a program. The program runs in `pydantic-monty` (a Rust interpreter in a worker process, never
this one), and each tool call it makes goes through the run exactly like a call the model made: see the
code mode page of the docs. Needs the ``codemode`` extra (``pip install "agentkit-tools[codemode]"``).
"""

from __future__ import annotations as _annotations

from ._limits import CodeLimits
from ._mode import CodeMode, ProgramReport, ToolSelection

__all__ = ["CodeLimits", "CodeMode", "ProgramReport", "ToolSelection"]
