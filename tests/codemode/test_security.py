"""The sandbox holds: a program reaches nothing of the host but the tool functions it was given.

Each attempt fails inside the program with the error Python would give, the program's error comes back
to the model, and the host process (its files, environment, modules, deps) is untouched.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from agentkit import Registry, ToolContext, tool
from agentkit.codemode import CodeLimits

from .helpers import registry, run_code

SECRET = "sk-test-secret-0123456789"
RAN: list[str] = []


@tool
def secret_tool() -> str:
    """Never offered to the programs below."""
    RAN.append("secret_tool")
    return SECRET


@tool
def whoami(ctx: ToolContext[Any]) -> str:
    """Reads the deps: only what a tool returns reaches the program."""
    return "someone"


def _reg() -> Registry:
    return registry(secret_tool=secret_tool, whoami=whoami)


ATTEMPTS: dict[str, tuple[str, str]] = {
    "import a module": ("import subprocess\nsubprocess.run(['id'])", "No module named 'subprocess'"),
    "import ctypes": ("import ctypes", "ModuleNotFoundError: No module named 'ctypes'"),
    "the network": ("import socket\nsocket.create_connection(('127.0.0.1', 80))", "No module named 'socket'"),
    "os.system": ("import os\nos.system('touch /tmp/agentkit-pwned')", "module 'os' has no attribute 'system'"),
    "__import__": ("__import__('os').system('id')", "NameError: name '__import__' is not defined"),
    "open a file": ("open('/etc/passwd').read()", "PermissionError"),
    "write a file": ("open('/tmp/agentkit-pwned', 'w').write('x')", "PermissionError: Permission denied"),
    "pathlib": ("from pathlib import Path\nPath('/etc/hostname').read_text()", "PermissionError"),
    "environment": ("import os\nos.environ['AGENTKIT_SECRET']", "'os.environ' is not supported"),
    "getenv": ("import os\nos.getenv('AGENTKIT_SECRET')", "'os.getenv' is not supported"),
    "__subclasses__": ("().__class__.__bases__[0].__subclasses__()", "object has no attribute '__class__'"),
    "object subclasses": ("object.__subclasses__()", "has no attribute '__subclasses__'"),
    "process facts": ("import os\nos.getpid()", "module 'os' has no attribute 'getpid'"),
    "frames": (
        "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    e.__traceback__.tb_frame.f_back.f_globals",
        "object has no attribute '__traceback__'",
    ),
    "globals": ("globals()['__builtins__']", "NameError: name 'globals' is not defined"),
    "sys.modules": ("import sys\nsys.modules['os']", "module 'sys' has no attribute 'modules'"),
    "exec an import": ("exec('import subprocess')", "ModuleNotFoundError"),
    "a tool not given": ("await secret_tool()", "NameError: name 'secret_tool' is not defined"),
    "the deps by name": ("deps", "NameError: name 'deps' is not defined"),
    "the context by name": ("ctx.deps", "NameError: name 'ctx' is not defined"),
}


@pytest.mark.parametrize("name", list(ATTEMPTS))
async def test_each_attempt_fails_with_a_clear_error(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTKIT_SECRET", SECRET)
    code, expected = ATTEMPTS[name]
    RAN.clear()
    result = await run_code(code, _reg(), tools=["add", "greet", "whoami"], deps={"api_key": SECRET})
    assert result.is_error, result.text
    assert expected in result.text
    assert "Line " in result.text  # the model is told where
    assert SECRET not in result.text
    assert RAN == []  # the tool the program was not given never ran
    assert not Path("/tmp/agentkit-pwned").exists()
    assert os.environ["AGENTKIT_SECRET"] == SECRET


async def test_memory_exhaustion_is_contained() -> None:
    result = await run_code("x = 'a' * 10\nwhile True:\n    x = x + x", limits=CodeLimits(max_memory=20_000_000))
    assert result.is_error and ("MemoryError" in result.text or "sandbox stopped" in result.text)
    again = await run_code("await add(1, 1)")  # the host and the pool are fine afterwards
    assert again.output["result"] == 2


async def test_recursion_exhaustion_is_contained() -> None:
    result = await run_code("def f():\n    return f()\nf()", limits=CodeLimits(max_recursion=100_000, timeout=60))
    assert result.is_error and ("RecursionError" in result.text or "sandbox stopped" in result.text)
    assert (await run_code("1 + 1")).output["result"] == 2


async def test_the_program_never_runs_in_this_interpreter() -> None:
    result = await run_code("import sys\nsys.platform")
    assert result.output["result"] == "monty" != sys.platform  # the sandbox's own interpreter


async def test_deps_reach_the_program_only_through_a_tool_result() -> None:
    @tool
    def api_key(ctx: ToolContext[dict[str, str]]) -> str:
        """Hands the key over: the application chose to."""
        return ctx.deps["api_key"]

    result = await run_code("await api_key()", registry(api_key=api_key), deps={"api_key": SECRET})
    assert result.output["result"] == SECRET
