"""A tool that fails: what is logged (logger ``agentkit``), and what the model is told (the error policy)."""

from __future__ import annotations

import logging
import subprocess
import sys
from typing import Any

import pytest

from agentkit import Agent, AssistantMessage, ModelRetry, Registry, ToolCall, ToolError, ToolTransform, tool
from agentkit.testing import FunctionModel

SECRET = "hunter2-secret-token"


@tool
def lookup(token: str) -> str:
    """Look a token up."""
    raise ValueError(f"no such token {token!r}")


@tool
def asks_again(token: str) -> str:
    """Ask the model to retry."""
    raise ModelRetry("use the other token")


@tool
def refuses(token: str) -> str:
    """Fail on purpose."""
    raise ToolError("the service is closed today")


@tool(mask_error_details=True)
def masked(token: str) -> str:
    """Fail with internals."""
    raise RuntimeError(f"postgres://admin:{token}@db/prod is down")


@tool(mask_error_details=False)
def unmasked(token: str) -> str:
    """Fail, and say why."""
    raise KeyError(token)


def call(name: str, arguments: Any = None) -> ToolCall:
    return ToolCall("c7", name, arguments if arguments is not None else {"token": SECRET})


def records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith("agentkit")]


# ---- logging ------------------------------------------------------------------------------------------------


async def test_an_exception_is_logged_at_error_with_its_traceback_key_and_call_id(
    caplog: pytest.LogCaptureFixture,
) -> None:
    registry = Registry({"find": lookup})
    with caplog.at_level(logging.DEBUG, logger="agentkit"):
        result = await registry.call(call("find"))
    [record] = records(caplog)
    assert record.name == "agentkit.tools" and record.levelno == logging.ERROR
    assert record.exc_info is not None and record.exc_info[0] is ValueError  # the traceback is kept
    assert "in lookup" in caplog.text  # the tool's own frame is in the logged traceback
    assert (record.tool_name, record.tool_call_id, record.error_kind) == ("find", "c7", "exception")  # type: ignore[attr-defined]
    assert "'find'" in record.getMessage() and "'c7'" in record.getMessage()
    assert result.text == f"Tool 'find' failed: ValueError: no such token {SECRET!r}"  # the default policy


@pytest.mark.parametrize(
    ("item", "kind", "text"),
    [(asks_again, "retry", "use the other token"), (refuses, "tool_error", "the service is closed today")],
)
async def test_signals_are_logged_at_info_and_always_reach_the_model(
    caplog: pytest.LogCaptureFixture, item: Any, kind: str, text: str
) -> None:
    registry = Registry({"t": item}, mask_error_details=True)
    with caplog.at_level(logging.DEBUG, logger="agentkit"):
        result = await registry.call(call("t"), mask_error_details=True)
    assert result.text == text and result.error_kind == kind  # masking never hides a message for the model
    [record] = records(caplog)
    assert record.levelno == logging.INFO and record.exc_info is None
    assert text in record.getMessage()


async def test_the_models_mistakes_are_logged_at_info(caplog: pytest.LogCaptureFixture) -> None:
    registry = Registry({"find": lookup})
    with caplog.at_level(logging.DEBUG, logger="agentkit"):
        await registry.call(call("find", {"token": 3}))
        await registry.call(call("fnd"))
    assert [(r.levelno, r.error_kind) for r in records(caplog)] == [  # type: ignore[attr-defined]
        (logging.INFO, "invalid_arguments"),
        (logging.INFO, "unknown_tool"),
    ]


async def test_a_timeout_and_a_bad_result_are_warnings(caplog: pytest.LogCaptureFixture) -> None:
    import asyncio

    @tool(timeout=0.01)
    async def slow() -> int:
        """Take long."""
        await asyncio.sleep(1)
        return 1

    @tool
    def wrong() -> int:
        """Return the wrong type."""
        return "many"  # type: ignore[return-value]

    registry = Registry({"slow": slow, "wrong": wrong})
    with caplog.at_level(logging.DEBUG, logger="agentkit"):
        await registry.call(ToolCall("a", "slow", {}))
        await registry.call(ToolCall("b", "wrong", {}))
    assert [(r.levelno, r.error_kind) for r in records(caplog)] == [  # type: ignore[attr-defined]
        (logging.WARNING, "timeout"),
        (logging.WARNING, "invalid_output"),
    ]


def test_importing_logs_nothing_and_installs_no_handler() -> None:
    probe = (
        "import logging, io\n"
        "stream = io.StringIO()\n"
        "logging.basicConfig(level=logging.DEBUG, stream=stream)\n"
        "import agentkit, agentkit.providers, agentkit.testing\n"
        "names = [n for n in logging.root.manager.loggerDict if n.startswith('agentkit')]\n"
        "handlers = [n for n in names if getattr(logging.getLogger(n), 'handlers', [])]\n"
        "print(repr(stream.getvalue()), handlers)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "'' []"


# ---- masking ----------------------------------------------------------------------------------------------


async def test_masking_replaces_the_exception_with_a_generic_text_but_the_log_keeps_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    registry = Registry({"db": masked})
    with caplog.at_level(logging.DEBUG, logger="agentkit"):
        result = await registry.call(call("db"))
    assert "postgres" not in result.text and SECRET not in result.text
    assert result.text == "Tool 'db' failed because of an internal error; the details are not shown."
    assert result.exception_type == "RuntimeError"  # for the application, not the model
    assert "postgres://admin" in caplog.text  # the operator still sees what happened


async def test_the_most_specific_masking_setting_wins() -> None:
    plain = Registry({"find": lookup, "keep": unmasked})
    assert "no such token" in (await plain.call(call("find"))).text  # default: not masked
    assert "internal error" in (await plain.call(call("find"), mask_error_details=True)).text  # the caller's
    assert "KeyError" in (await plain.call(call("keep"), mask_error_details=True)).text  # the tool's own wins
    strict = Registry({"find": lookup, "keep": unmasked}, mask_error_details=True)
    assert "internal error" in (await strict.call(call("find"), mask_error_details=False)).text  # the registry's
    assert "KeyError" in (await strict.call(call("keep"))).text


async def test_an_agent_masks_its_tools_errors_and_its_registrys_setting_survives_copies() -> None:
    seen: list[str] = []

    def turn(messages: list[Any], info: Any) -> Any:
        if len(messages) == 1:
            return AssistantMessage(tool_calls=[call("find")])
        seen.append(messages[-1].results[0].text)
        return "ok"

    await Agent(model=FunctionModel(turn), tools=Registry({"find": lookup}, mask_error_details=True)).generate("go")
    sub = Agent(id="sub", model="test")
    strict = Registry({"find": lookup}, mask_error_details=True)
    await Agent(model=FunctionModel(turn), tools=strict, agents={"sub": sub}).generate("go")  # a copied registry
    assert seen == [
        "Tool 'find' failed because of an internal error; the details are not shown.",
        "Tool 'find' failed because of an internal error; the details are not shown.",
    ]


# ---- redaction ---------------------------------------------------------------------------------------------

HIDE = ToolTransform(input=lambda args: {"token": "***"})


async def test_a_redacted_input_never_reaches_the_error_text_or_the_log(caplog: pytest.LogCaptureFixture) -> None:
    seen: list[str] = []

    def turn(messages: list[Any], info: Any) -> Any:
        if len(messages) == 1:
            return AssistantMessage(tool_calls=[call("find"), call("find", {"token": ["x", SECRET]})])
        seen.extend(r.text for r in messages[-1].results)
        return "ok"

    agent = Agent(model=FunctionModel(turn), tools=Registry({"find": lookup}, transform=HIDE))
    with caplog.at_level(logging.DEBUG, logger="agentkit"):
        result = await agent.generate("go")
    assert seen[0] == "Tool 'find' failed: ValueError: no such token '[redacted]'"  # the message, minus the value
    assert seen[1].startswith("Invalid arguments for tool 'find':\n- $.token: ")  # where and what, no value
    assert all(SECRET not in text for text in seen)
    assert SECRET not in caplog.text
    assert "in lookup" in caplog.text and "builtins.ValueError: no such token '[redacted]'" in caplog.text
    assert result.text == "ok"


async def test_a_tools_own_input_transform_redacts_its_errors_too(caplog: pytest.LogCaptureFixture) -> None:
    @tool(transform=HIDE)
    def vault(token: str) -> str:
        """Open the vault."""
        try:
            raise LookupError(f"unknown {token}")
        except LookupError as exc:
            raise RuntimeError(f"vault refused {token}") from exc

    with caplog.at_level(logging.DEBUG, logger="agentkit"):
        result = await Registry({"vault": vault}).call(call("vault"))
    assert result.text == "Tool 'vault' failed: RuntimeError: vault refused [redacted]"
    assert SECRET not in caplog.text
    assert "builtins.LookupError: unknown [redacted]" in caplog.text  # the whole chain, in order
    assert caplog.text.index("LookupError") < caplog.text.index("builtins.RuntimeError")


async def test_signals_of_a_redacted_tool_reach_the_model_without_the_value(caplog: pytest.LogCaptureFixture) -> None:
    @tool(transform=HIDE)
    def vault(token: str) -> str:
        """Open the vault."""
        raise ToolError(f"token {token} expired")

    with caplog.at_level(logging.DEBUG, logger="agentkit"):
        result = await Registry({"vault": vault}).call(call("vault"))
    assert result.text == "token [redacted] expired"
    assert SECRET not in caplog.text and "token [redacted] expired" in caplog.text


def test_the_scrubber_takes_out_every_argument_value_longest_first() -> None:
    from agentkit._tool_errors import Scrubber

    scrub = Scrubber(ToolCall("c", "t", {"a": "abc", "b": ["abcdef", {"c": 123456}], "d": True, "e": "xy"}))
    assert scrub("abcdef abc 123456 xy True") == "[redacted] [redacted] [redacted] xy True"
    assert Scrubber(ToolCall("c", "t", '{"broken": "json'))('bad {"broken": "json here') == "bad [redacted] here"


# ---- the application's own code around a call: hooks and concurrency-limit keys --------------------------


async def test_a_failing_hook_or_limit_key_is_logged_and_told_under_the_same_policy(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from agentkit import ConcurrencyLimit, RunHooks, ToolContext

    class Audit(RunHooks[Any]):
        def before_tool_call(self, ctx: ToolContext[Any], call: ToolCall) -> None:
            raise RuntimeError(f"audit db postgres://admin@db refused {call.arguments_dict()['token']}")

    @tool(limits=[ConcurrencyLimit(1, key=lambda args: args["tenant"] + args["token"])])
    def limited(token: str) -> str:
        """Limited per tenant."""
        return "ok"

    told: list[str] = []

    def turn(messages: list[Any], info: Any) -> Any:
        if len(messages) == 1:
            return AssistantMessage(tool_calls=[call("find")])
        told.append(messages[-1].results[0].text)
        return "ok"

    def limited_turn(messages: list[Any], info: Any) -> Any:
        if len(messages) == 1:
            return AssistantMessage(tool_calls=[call("limited")])
        told.append(messages[-1].results[0].text)
        return "ok"

    with caplog.at_level(logging.DEBUG, logger="agentkit"):
        await Agent(
            model=FunctionModel(turn), tools=Registry({"find": lookup}, transform=HIDE), hooks=[Audit()]
        ).generate("a")
        masked = Registry({"find": lookup}, mask_error_details=True)
        await Agent(model=FunctionModel(turn), tools=masked, hooks=[Audit()]).generate("b")
        await Agent(model=FunctionModel(limited_turn), tools={"limited": limited}).generate("c")
    assert SECRET not in told[0] and "[redacted]" in told[0]  # the hook's message, the redacted value taken out
    assert "postgres" not in told[1] and "internal error" in told[1]  # masked like a tool's exception
    assert "KeyError: 'tenant'" in told[2]  # the default policy: type and message
    failed = [r for r in records(caplog) if getattr(r, "error_kind", None) in ("hook_error", "limit_error")]
    assert [(r.levelno, r.error_kind) for r in failed] == [  # type: ignore[attr-defined]
        (logging.ERROR, "hook_error"),
        (logging.ERROR, "hook_error"),
        (logging.ERROR, "limit_error"),
    ]
    assert SECRET not in failed[0].getMessage()  # a redacted call's values stay out of the log too
    assert SECRET in failed[1].getMessage() and failed[1].exc_info is not None  # masking hides from the model only
