"""The `agentkit` command line: inspect payloads, lint a registry, call a tool, run an agent, serve MCP.

``TARGET`` everywhere is ``package.module:attribute`` or ``path/to/file.py:attribute`` naming a
`Registry`, a `Tool`, a list/dict of tools, or an `Agent` (its tools are used).

Every command that prints results takes ``--json``: one JSON document on stdout, of the stable shape
docs/cli.md writes down (``{"format": "agentkit.<command>/1", ...}``). Exit status: 0 ok, 1 findings (a
vendor rejects a tool, a tool failed, a run ended without an answer), 2 usage (the command line or its
target is wrong), 130 interrupted, 141 when the reader of stdout went away (``| head -1``). Errors are one
message on stderr (with ``--json``, also the error document on stdout). Progress is shown on stderr only
when it is a terminal.
"""

from __future__ import annotations as _annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from .exceptions import CLIError
from .registry import Registry

__all__ = ["CLIError", "load_target", "main"]


def load_target(target: str) -> Registry:
    """The registry named by `target` (a Registry, Tool, list/dict of tools, or an Agent's tools)."""
    from ._cli._tools import load_target as load

    return load(target)


class _UsageError(Exception):
    """argparse's complaint about the command line (status 2), raised instead of exiting."""

    def __init__(self, parser: argparse.ArgumentParser, message: str) -> None:
        super().__init__(message)
        self.parser = parser
        self.message = message


class _Parser(argparse.ArgumentParser):
    """An argparse parser whose usage errors are raised (``main`` returns their status; ``--json`` sees them)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)  # keep the examples' lines
        super().__init__(*args, **kwargs)

    commands: dict[str, argparse.ArgumentParser]
    """The subcommands' parsers by name (the top parser's)."""

    def error(self, message: str) -> NoReturn:
        raise _UsageError(self, message)


def _examples(*lines: str) -> str:
    return "examples:\n" + "\n".join(f"  {line}" for line in lines)


_EXIT = """exit status: 0 ok, 1 findings (a vendor rejects a tool, a tool failed, a run ended without an
answer), 2 usage (a wrong command line or target), 130 interrupted, 141 the reader of stdout went away.
--json documents: docs/cli.md."""


def _cmd_inspect(args: argparse.Namespace) -> int:
    from ._cli._tools import cmd_inspect

    return cmd_inspect(args)


def _cmd_lint(args: argparse.Namespace) -> int:
    from ._cli._tools import cmd_lint

    return cmd_lint(args)


def _cmd_call(args: argparse.Namespace) -> int:
    from ._cli._tools import cmd_call

    return cmd_call(args)


def _cmd_run(args: argparse.Namespace) -> int:
    from ._cli._run import cmd_run

    return cmd_run(args)


def _cmd_eval(args: argparse.Namespace) -> int:
    from .evals._cli import run

    return run(args)


def _cmd_mcp_serve(args: argparse.Namespace) -> int:
    from .mcp._server import run_serve

    try:
        run_serve(args)
    except ImportError as exc:  # the optional `mcp` package is missing: the message says what to install
        raise CLIError(str(exc)) from None
    except ValueError as exc:  # a refused bind or a bad transport: usage
        raise CLIError(str(exc), 2) from None
    return 0


def _parser() -> argparse.ArgumentParser:
    from . import __version__
    from ._cli._json import add_json_flag
    from .providers import provider_names

    parser = _Parser(
        prog="agentkit",
        description="agentkit: typed tools for LLM tool calling.",
        epilog=_examples(
            "agentkit lint myapp.tools:registry -p openai -p gemini",
            'agentkit call myapp.tools:registry add \'{"a": 1, "b": 2}\' --json',
            'agentkit run myapp/agent.py:agent "Weather in Paris?" -m test',
        )
        + "\n\n"
        + _EXIT,
    )
    parser.add_argument("--version", action="version", version=f"agentkit {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    providers = provider_names()

    def target(p: argparse.ArgumentParser) -> None:
        p.add_argument("target", help="module:attr or file.py:attr naming a Registry, Tool, tools or Agent")

    def strictness(p: argparse.ArgumentParser) -> None:
        group = p.add_mutually_exclusive_group()
        group.add_argument("--strict", dest="strict", action="store_true", default=None, help="force strict schemas")
        group.add_argument("--no-strict", dest="strict", action="store_false", help="never strict")
        p.add_argument("--aliases", action="store_true", help="alias keys a vendor rejects instead of failing")

    def output_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--output", help="module:attr or file.py:attr naming an output type (default: the agent's)")
        p.add_argument("--output-mode", choices=["auto", "native", "tool", "prompted"], help="how it is asked for")

    inspect_cmd = commands.add_parser(
        "inspect",
        help="print the tools (and output) payload a provider would send",
        description="Print the exact tools fragment (and structured-output part) a provider would send.",
        epilog=_examples(
            "agentkit inspect myapp.tools:registry -p anthropic",
            "agentkit inspect myapp/agent.py:agent -p openai --tool-choice required --output myapp.models:Weather",
            "agentkit inspect myapp.tools:registry -p gemini --json | jq .payload",
        ),
    )
    target(inspect_cmd)
    inspect_cmd.add_argument("--provider", "-p", default="openai", choices=providers)
    inspect_cmd.add_argument("--tool-choice", default="auto", help="auto, none, required or a key")
    inspect_cmd.add_argument("--active-tools", nargs="*", help="keys the model may call")
    strictness(inspect_cmd)
    output_options(inspect_cmd)
    add_json_flag(inspect_cmd)
    inspect_cmd.set_defaults(run=_cmd_inspect)

    lint_cmd = commands.add_parser(
        "lint",
        help="per-provider compatibility report (exit 1 if a vendor rejects)",
        description="What each vendor loses or rejects of the tools (exit status 1 when a vendor rejects one).",
        epilog=_examples(
            "agentkit lint myapp.tools:registry",
            "agentkit lint myapp.tools:registry -p openai -p gemini --strict --json",
        ),
    )
    target(lint_cmd)
    lint_cmd.add_argument("--provider", "-p", action="append", choices=providers, help="repeatable; default: all")
    strictness(lint_cmd)
    output_options(lint_cmd)
    add_json_flag(lint_cmd)
    lint_cmd.set_defaults(run=_cmd_lint)

    call_cmd = commands.add_parser(
        "call",
        help="run one tool with JSON arguments, validated",
        description="Validate the JSON arguments, run the tool, validate and print its result.",
        epilog=_examples(
            'agentkit call myapp.tools:registry add \'{"a": 1, "b": 2}\'',
            "agentkit call myapp.tools:registry refund '{\"amount\": 500}' --approve --json",
        ),
    )
    target(call_cmd)
    call_cmd.add_argument("tool", help="the tool's registry key")
    call_cmd.add_argument("arguments", nargs="?", default="{}", help="JSON object of arguments (default {})")
    call_cmd.add_argument(
        "--approve", action="store_true", help="run a tool that requires approval (else: a y/N prompt on a terminal)"
    )
    add_json_flag(call_cmd)
    call_cmd.set_defaults(run=_cmd_call)

    mcp_cmd = commands.add_parser(
        "mcp",
        help="Model Context Protocol",
        description="Model Context Protocol.",
        epilog=_examples("agentkit mcp serve myapp.tools:registry"),
    )
    mcp_commands = mcp_cmd.add_subparsers(dest="mcp_command", required=True, metavar="SUBCOMMAND")
    serve_cmd = mcp_commands.add_parser(
        "serve",
        help="serve a registry as an MCP server",
        description="Serve a registry as an MCP server (stdio by default).",
        epilog=_examples(
            "agentkit mcp serve myapp.tools:registry",
            "agentkit mcp serve myapp.tools:registry --transport http --port 8765",
        ),
    )
    from .mcp._server import add_serve_arguments

    add_serve_arguments(serve_cmd)
    serve_cmd.set_defaults(run=_cmd_mcp_serve)

    run_cmd = commands.add_parser(
        "run",
        help="run an agent (or a registry's tools with a model) on a prompt",
        description="Run an agent (or a registry's tools on a model) on one prompt: its tool calls, then its answer.",
        epilog=_examples(
            'agentkit run myapp/agent.py:agent "Weather in Paris?"',
            'agentkit run myapp.tools:registry "Add 2 and 3" -m openai:gpt-4.1-mini --max-steps 4 --json',
        ),
    )
    target(run_cmd)
    run_cmd.add_argument("prompt")
    run_cmd.add_argument("--model", "-m", default=None, help="vendor:model-name or 'test' (default: the agent's)")
    run_cmd.add_argument("--max-steps", type=int, default=8, help="model turns at most (default 8)")
    add_json_flag(run_cmd)
    run_cmd.set_defaults(run=_cmd_run)

    eval_cmd = commands.add_parser(
        "eval",
        help="score a model's tool calls on BFCL or your own cases",
        description="Score a model's tool calls on BFCL or on your own cases (exit 1 below --min-accuracy).",
        epilog=_examples(
            "agentkit eval --dataset bfcl:simple_python --model openai:gpt-4.1-mini --limit 50",
            "agentkit eval myapp.tools:registry -d cases.jsonl -m openai:local --base-url http://127.0.0.1:8080/v1",
            "agentkit eval --self-test",
        ),
    )
    from .evals._cli import add_arguments as add_eval_arguments

    add_eval_arguments(eval_cmd)
    eval_cmd.set_defaults(run=_cmd_eval)

    # listed for --help; `main` hands `agentkit dev ...` to the playground's own parser
    commands.add_parser("dev", help="a local web page to talk to an agent (agentkit dev --help)", add_help=False)
    parser.commands = dict(commands.choices)
    return parser


def _say(command: str | None, message: str, status: int, as_json: bool) -> int:
    from ._cli._errors import say
    from ._cli._json import dump, error_document

    say(command, message)
    if as_json:
        dump(error_document(command, status, message))
    return status


def _main(arguments: list[str]) -> int:
    from ._cli._errors import failure
    from ._cli._json import wants_json

    as_json = wants_json(arguments)
    parser = _parser()
    try:
        args = parser.parse_args(arguments)
    except _UsageError as exc:
        culprit = exc.parser
        if culprit is parser:  # argparse reports leftover arguments at the top: name the command they follow
            named = next((a for a in arguments if not a.startswith("-")), None)
            culprit = parser.commands.get(named or "", parser) if isinstance(parser, _Parser) else parser
        culprit.print_usage(sys.stderr)
        return _say(culprit.prog.removeprefix("agentkit").strip() or None, exc.message, 2, as_json)
    except SystemExit as exc:  # --help, --version: printed, and done
        return exc.code if isinstance(exc.code, int) else 0
    command: str = args.command
    try:
        status: int = args.run(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        raise
    except Exception as exc:  # noqa: BLE001 - every failure is one message and a status, never a traceback
        message, status = failure(exc)
        return _say(command, message, status, as_json)
    return status


def _dev(arguments: list[str]) -> int:
    from .playground import main as dev

    try:
        return dev(arguments)
    except SystemExit as exc:  # its parser's --help, or a usage error (printed)
        return exc.code if isinstance(exc.code, int) else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    from ._cli._terminal import stdout_gone

    arguments = list(sys.argv[1:] if argv is None else argv)
    try:
        status = _dev(arguments[1:]) if arguments[:1] == ["dev"] else _main(arguments)
        sys.stdout.flush()  # a reader that went away is seen here, not in the interpreter's exit
        return status
    except BrokenPipeError:
        return stdout_gone()


if __name__ == "__main__":
    sys.exit(main())
