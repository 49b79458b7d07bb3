"""Programs in the sandbox: results, print, errors with lines, limits, concurrent calls, pause and resume."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from typing import Any

from agentkit import tool
from agentkit.codemode import CodeLimits
from agentkit.codemode._program import Failed, NestedCall, Outcome, Paused, Returned, Waiting, run_program
from agentkit.codemode._stubs import build_stubs

from .helpers import CALLS, Overlap, registry, run_code


async def test_the_result_and_printed_output_come_back() -> None:
    result = await run_code("x = await add(1, 2)\nprint('x is', x)\n{'x': x, 'g': (await greet('Ada'))['text']}")
    assert not result.is_error
    assert result.output == {"result": {"x": 3, "g": "hello Ada"}, "printed": "x is 3\n"}
    assert result.text == 'Result: {"x": 3, "g": "hello Ada"}\nPrinted:\nx is 3\n'


async def test_an_error_comes_back_with_its_line_and_message() -> None:
    result = await run_code("a = 1\nb = {}\nb['missing']")
    assert result.is_error and result.error_kind == "tool_error"
    assert "Line 3, in <module>: KeyError: missing" in result.text
    assert "b['missing']" in result.text


async def test_a_syntax_error_names_its_line() -> None:
    result = await run_code("x = 1\ndef f(:\n    pass")
    assert result.is_error
    assert "Line 2" in result.text and "SyntaxError" in result.text


async def test_output_before_an_error_is_kept() -> None:
    result = await run_code("print('before')\n1 / 0")
    assert "ZeroDivisionError" in result.text and "Output before the error:\nbefore" in result.text


async def test_an_endless_loop_is_cut_by_the_time_limit() -> None:
    result = await run_code("while True:\n    pass", limits=CodeLimits(timeout=0.3))
    assert result.is_error and "TimeoutError: the program ran longer than its limit (0.3 s" in result.text


async def test_time_spent_in_tool_calls_does_not_count() -> None:
    @tool
    async def slow() -> int:
        await asyncio.sleep(0.4)
        return 1

    result = await run_code("await slow()", registry(slow=slow), limits=CodeLimits(timeout=0.3))
    assert not result.is_error, result.text


async def test_memory_and_recursion_limits() -> None:
    memory = await run_code(
        "x = []\nwhile True:\n    x.append('a' * 100000)", limits=CodeLimits(max_memory=5_000_000, timeout=5)
    )
    assert memory.is_error and "MemoryError: the program used more than its memory limit" in memory.text
    deep = await run_code("def f(n):\n    return f(n + 1)\nf(0)", limits=CodeLimits(max_recursion=50))
    assert deep.is_error and "RecursionError" in deep.text and "Line 2, in f" in deep.text


async def test_the_call_limit_raises_in_the_program() -> None:
    code = "n = 0\ntry:\n    for i in range(10):\n        n = await add(n, 1)\nexcept RuntimeError as e:\n"
    code += "    print(e)\nn"
    result = await run_code(code, limits=CodeLimits(max_calls=3))
    assert result.output["result"] == 3
    assert "made 3 tool calls, its limit" in result.output["printed"]


async def test_printed_output_and_the_result_are_cut_at_their_limits() -> None:
    code = "for i in range(100):\n    print('x' * 10)\n'y' * 500"
    result = await run_code(code, limits=CodeLimits(max_output=50, max_result=100))
    printed = result.output["printed"]
    assert printed.startswith("x" * 10) and "more characters of output cut]" in printed
    assert len(printed) < 120
    assert "[cut: 502 characters in all]" in result.text


async def test_invalid_arguments_raise_value_error_with_the_json_path_message() -> None:
    code = "try:\n    await add('one', 2)\nexcept ValueError as e:\n    msg = str(e)\nmsg"
    result = await run_code(code)
    assert "Invalid arguments for tool 'add'" in result.output["result"]
    assert "$.a: Input should be a valid integer" in result.output["result"]


async def test_calls_awaited_together_run_concurrently() -> None:
    probe = Overlap()
    code = "import asyncio\nawait asyncio.gather(*[work(i) for i in range(5)])"
    result = await run_code(code, registry(work=probe.tool))
    assert result.output["result"] == [0, 2, 4, 6, 8]
    assert probe.peak == 5


async def test_a_call_never_awaited_still_finishes_before_the_program_returns() -> None:
    CALLS.clear()
    result = await run_code("greet('late')\n'done'")
    assert result.output["result"] == "done"
    assert ("greet", "late") in CALLS


async def test_a_function_name_used_as_a_value_is_still_the_tool() -> None:
    result = await run_code("f = add\nawait f(2, 3)")
    assert result.output["result"] == 5


async def test_a_too_long_program_is_refused() -> None:
    result = await run_code("1" * 200, limits=CodeLimits(max_code=100))
    assert result.is_error and "200 characters; the limit is 100" in result.text


# ---- pause and resume, at the sandbox level ------------------------------------------------------

PROGRAM = textwrap.dedent(
    """
    print("start")
    a = await add(1, 2)
    try:
        b = await greet("x")
    except PermissionError as e:
        b = "denied: " + str(e)
    c = await add(a, 10)
    {"a": a, "b": b, "c": c}
    """
)


async def test_a_pause_dumps_the_program_and_resume_continues_it_in_another_process() -> None:
    module = build_stubs(registry())
    made: list[str] = []

    async def dispatch(call: NestedCall) -> Outcome:
        made.append(call.key)
        if call.key == "greet":
            return Waiting({"id": call.id})
        return Returned(call.arguments["a"] + call.arguments["b"])

    outcome = await run_program(PROGRAM, module.functions, dispatch, CodeLimits(), "c1")
    assert isinstance(outcome, Paused)
    assert [(c.id, c.key) for c, _ in outcome.waiting] == [("c1/2", "greet")]
    assert made == ["add", "greet"]
    state = json.loads(json.dumps(outcome.state))  # JSON all the way
    script = textwrap.dedent(
        f"""
        import asyncio, json
        from agentkit.codemode import CodeLimits
        from agentkit.codemode._program import Raised, Returned, run_program
        from agentkit.codemode._stubs import build_stubs
        from tests.codemode.helpers import registry

        made = []
        async def dispatch(call):
            made.append(call.key)
            if call.key == "greet":
                return Raised("PermissionError", "no")
            return Returned(call.arguments["a"] + call.arguments["b"])

        async def main():
            state = json.loads({json.dumps(json.dumps(state))})
            out = await run_program(None, build_stubs(registry()).functions, dispatch, CodeLimits(), "c1", state=state)
            print(json.dumps({{"value": out.value, "printed": out.printed, "made": made}}))
        asyncio.run(main())
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60)
    seen: dict[str, Any] = json.loads(done.stdout)
    assert seen["value"] == {"a": 3, "b": "denied: no", "c": 13}
    assert seen["made"] == ["greet", "add"]  # add(1, 2) is in the dump: not made again
    assert seen["printed"] == "start\n"


async def test_calls_running_beside_a_paused_one_finish_and_are_delivered_before_the_dump() -> None:
    module = build_stubs(registry())
    made: list[str] = []

    async def dispatch(call: NestedCall) -> Outcome:
        made.append(call.id)
        if call.key == "greet":
            return Waiting(None)
        await asyncio.sleep(0.05)
        return Returned(1)

    code = "import asyncio\nx, y = await asyncio.gather(add(1, 1), greet('a'))\nz = await add(x, 1)\n[x, y, z]"
    outcome = await run_program(code, module.functions, dispatch, CodeLimits(), "p")
    assert isinstance(outcome, Paused)
    assert made == ["p/1", "p/2"]
    assert [c.id for c, _ in outcome.waiting] == ["p/2"]
    resumed: list[str] = []

    async def again(call: NestedCall) -> Outcome:
        resumed.append(call.id)
        return Returned("hi" if call.key == "greet" else 5)

    final = await run_program(None, module.functions, again, CodeLimits(), "p", state=outcome.state)
    assert resumed == ["p/2", "p/3"]  # the add that ran beside it is not run again
    assert final.value == [1, "hi", 5]  # type: ignore[union-attr]


async def test_a_program_runs_in_segments_whose_state_is_plain_data() -> None:
    """What a durable engine does: each segment runs until the program waits on calls, which run elsewhere."""
    from agentkit.codemode._program import Raised, answered_by

    module = build_stubs(registry())
    code = "import asyncio\na = await add(1, 2)\nb, c = await asyncio.gather(add(a, 1), greet('x'))\n[a, b, c]"
    outcome = await run_program(code, module.functions, answered_by({}), CodeLimits(), "w")
    segments = 1
    made: list[list[str]] = []
    while isinstance(outcome, Paused):
        state = json.loads(json.dumps(outcome.state))  # what an engine keeps in its history
        made.append([c.key for c, _ in outcome.waiting])
        results: dict[str, Returned | Raised] = {}
        for call, _ in outcome.waiting:  # the engine runs them (each an activity)
            if call.key == "add":
                results[call.id] = Returned(call.arguments["a"] + call.arguments["b"])
            else:
                results[call.id] = Raised("PermissionError", "no greetings")
        outcome = await run_program(None, module.functions, answered_by(results), CodeLimits(), "w", state=state)
        segments += 1
    assert made == [["add"], ["add", "greet"]]  # calls awaited together come in one segment
    assert segments == 3
    assert isinstance(outcome, Failed) and "PermissionError: no greetings" in outcome.message


def test_the_sandbox_pool_is_closed_at_exit_before_the_interpreter_finalizes() -> None:
    """Left open, a runtime thread waking an event loop as the interpreter finalized aborted the process
    (about one short code-mode script in fifteen); at exit the pool is closed and its threads leave Python."""
    script = textwrap.dedent(
        """
        import asyncio
        from agentkit.codemode import _program
        from tests.codemode.helpers import run_code

        print(asyncio.run(run_code("add(a=1, b=2)")).text.splitlines()[0])
        pool = _program._POOL["pool"]
        _program._close_pool()  # what atexit runs
        print("closed", "pool" not in _program._POOL)
        try:
            asyncio.run(pool.checkout(script_name="x.py").__aenter__())
        except Exception as exc:
            print("refused", type(exc).__name__)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1:] and lines[1] == "closed True", done.stdout
    assert lines[2].startswith("refused")  # the closed pool serves no one
    assert "Fatal Python error" not in done.stderr
