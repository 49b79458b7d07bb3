"""The `agentkit` command line: inspect payloads, lint a registry, call a tool, serve MCP, run an agent.

``TARGET`` everywhere is ``package.module:attribute`` or ``path/to/file.py:attribute`` naming a
`Registry`, a `Tool`, a list/dict of tools, or an `Agent` (its tools are used).
Errors are one clear line on stderr and a non-zero exit: 2 for bad usage, 1 for a failed operation.
"""

from __future__ import annotations as _annotations

import argparse
import asyncio
import contextlib
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ._jsonish import is_object
from ._loader import is_agent, load_object, load_registry
from ._text import clip, json_text, shorten
from .exceptions import (
    AgentkitError,
    CLIError,
    MCPLoadError,
    ModelRetry,
    ToolError,
    ToolInputError,
    ToolOutputError,
    ToolSuspended,
)
from .registry import Registry
from .tools import Tool

if TYPE_CHECKING:
    from ._agent.display import TranscriptEntry

__all__ = ["CLIError", "load_target", "main"]


def load_target(target: str) -> Registry:
    """The registry named by `target` (a Registry, Tool, list/dict of tools, or an Agent's tools)."""
    return load_registry(target)


def _print_json(value: Any) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def _output_of(args: argparse.Namespace) -> Any:
    """The output type asked with ``--output module:attr`` (and ``--output-mode``), else the target agent's."""
    from .output import Output

    if args.output:
        target = load_object(args.output)
        return Output(target, mode=args.output_mode) if args.output_mode else target
    agent_output: Any = getattr(load_object(args.target), "output", None)
    target = getattr(agent_output, "target", None)
    if target is None:
        return None
    return Output(target, mode=args.output_mode or agent_output.mode, name=agent_output.name)


def _cmd_inspect(args: argparse.Namespace) -> int:
    from ._agent._output import output_config
    from .providers import get_provider

    registry = load_target(args.target)
    provider = get_provider(args.provider)
    options: dict[str, Any] = {"tool_choice": args.tool_choice, "active_tools": args.active_tools or None}
    output = _output_of(args)
    plan = None
    if output is not None:
        from ._agent._output import RunOutput
        from .models import ModelSettings

        run = RunOutput.of(output_config(output, None, None, "inspect"), provider, registry)
        if run is not None and run.request is not None:
            registry = run.registry(registry)
            settings = run.settings(ModelSettings(args.tool_choice, tuple(options["active_tools"] or ()) or None))
            options = {"tool_choice": settings.tool_choice, "active_tools": settings.active_tools}
            plan = run
    payload = provider.format_tools(registry, strict=args.strict, aliases=args.aliases, **options)
    if plan is not None and plan.request is not None and plan.request.mode == "native":
        payload.update(provider.format_output(plan.request.definition))
    _print_json(payload)
    if plan is not None and plan.plan is not None:
        why = f" ({plan.plan.reason})" if plan.plan.reason else ""
        print(f"output: {plan.plan.mode}{why}", file=sys.stderr)
        if plan.request is not None and plan.request.prompt:
            print(f"instructions added: {plan.request.prompt}", file=sys.stderr)
    return 0


def _cmd_lint(args: argparse.Namespace) -> int:
    from .providers import compatibility

    registry = load_target(args.target)
    report = compatibility(
        registry, args.provider or None, strict=args.strict, aliases=args.aliases, output=_output_of(args)
    )
    for entry in report:
        print(entry)
    rejected = [entry for entry in report if entry.rejected]
    lossy = sum(len(entry.losses) for entry in report)
    print(f"\n{len(report)} tool/provider pairs checked: {len(rejected)} rejected, {lossy} lossy rewrites.")
    return 1 if rejected else 0


def _approval_needed(item: Tool[..., Any], key: str, arguments: str) -> bool:
    """Whether this call must be approved: the tool's one decision, on validated arguments with defaults."""
    return item.needs_approval_for(arguments, name=key)


def _confirm(key: str, arguments: str, approve: bool) -> None:
    """Raise unless the call is approved: by ``--approve``, or by a "y" at the prompt on a terminal."""
    if approve:
        return
    if not sys.stdin.isatty():
        raise CLIError(f"{key!r} requires approval for these arguments: pass --approve to run it")
    print(f"{key!r} requires approval. Run it with {arguments}? [y/N] ", end="", file=sys.stderr, flush=True)
    try:
        answer = sys.stdin.readline().strip().lower()
    except KeyboardInterrupt:
        answer = ""
    if answer not in ("y", "yes"):
        raise CLIError(f"{key!r} was not approved; nothing ran")


def _cmd_call(args: argparse.Namespace) -> int:
    registry = load_target(args.target)
    registry.require(args.tool)
    item = registry[args.tool]
    if _approval_needed(item, args.tool, args.arguments):
        _confirm(args.tool, args.arguments, args.approve)
    try:
        value = asyncio.run(item.ainvoke(args.arguments))
    except ToolInputError as exc:
        details = "; ".join(str(e) for e in exc.errors)
        raise CLIError(f"invalid arguments for {args.tool!r}: {details}") from None
    except ToolOutputError as exc:
        raise CLIError(f"{args.tool!r} returned an invalid result: {'; '.join(str(e) for e in exc.errors)}") from None
    except (ModelRetry, ToolError) as exc:
        raise CLIError(f"{args.tool!r} failed: {exc.message}") from None
    except ToolSuspended as exc:  # a BaseException: it would otherwise end the command with a traceback
        from ._agent.display import registry_rules, tool_made

        shown, withheld = tool_made(registry_rules(registry, args.tool), "suspension", exc.payload)
        what = withheld if withheld is not None else shorten(shown)
        raise CLIError(f"{args.tool!r} asked for input ({what}), which the command line cannot give") from None
    except Exception as exc:  # noqa: BLE001 - the tool itself raised: one line, not a traceback
        raise CLIError(f"{args.tool!r} raised {type(exc).__name__}: {exc}") from None
    _print_json(item.schema.dump_output_python(value))
    return 0


def _cmd_mcp_serve(args: argparse.Namespace) -> int:
    from .mcp._server import run_serve

    try:
        run_serve(args)
    except ImportError as exc:  # the optional `mcp` package is missing: the message says what to install
        raise CLIError(str(exc)) from None
    except ValueError as exc:  # a refused bind or a bad transport: usage
        raise CLIError(str(exc), 2) from None
    return 0


_SHOWN = 200
"""Characters of a payload the run command prints (a model may send megabytes)."""


def _shown(value: Any) -> str:
    """A displayed payload (already shaped by the transforms) as one bounded line; any depth."""
    text = value if isinstance(value, str) else json_text(value, ensure_ascii=False)
    return clip(" ".join(text.splitlines()), _SHOWN)


def _shown_input(entry: TranscriptEntry) -> str:
    """A call's arguments as displays show them: shaped by the input transform, never the raw redacted value."""
    if entry.transform_errors and entry.input is None:
        return "[withheld]"
    if isinstance(entry.input, str):  # text the model sent that is not a JSON object (or too deep to read)
        return f"{json.dumps(clip(entry.input, _SHOWN), ensure_ascii=False)} (not a JSON object)"
    return _shown(entry.input)


def _shown_outcome(entry: TranscriptEntry, failed: bool) -> str:
    if entry.transform_errors and (entry.error if failed else entry.output) is None:
        return "[withheld]"
    return _shown(entry.error if failed else entry.output)


def _cmd_run(args: argparse.Namespace) -> int:
    from .agent import Agent

    obj = load_object(args.target)
    agent = obj if is_agent(obj) else Agent(name="cli", model="test", tools=load_target(args.target))
    if args.model:
        with agent.override(model=args.model):
            result = agent.generate_sync(args.prompt, max_steps=args.max_steps)
    else:
        result = agent.generate_sync(args.prompt, max_steps=args.max_steps)
    model = result.steps[-1].response.model_name if result.steps else ""
    outcomes = {(step.index, r.call_id): r.is_error for step in result.steps for r in step.results}
    for entry in agent.transcript(result):  # what displays may show: redacted inputs stay redacted
        failed = outcomes.get((entry.step, entry.call_id))
        if failed is None:
            continue  # not answered (waiting for approval): said below
        flag = "error" if failed else "ok"
        print(f"[tool] {entry.tool_name}({_shown_input(entry)}) -> {flag}: {_shown_outcome(entry, failed)}")
    if model == "test":
        # TestModel's answer is a JSON summary of the tool results, not prose: say so, and show it readably.
        print("[answer] from the offline test model (it calls each tool with generated arguments, then lists results):")
        print(_readable(result.text))
    else:
        print(f"[answer] {model}:" if model else "[answer]")
        print(result.text)
    if result.status == "awaiting_approval":
        pending = ", ".join(f"{p.tool_name} ({p.call_id})" for p in result.pending)
        raise CLIError(f"the run stopped: call(s) awaiting approval: {pending}")
    if result.paused:
        pending = ", ".join(f"{p.tool_name} ({p.call_id}, {p.kind})" for p in result.pending) or "nothing listed"
        raise CLIError(f"the run paused ({result.status}), waiting for: {pending}")
    if result.status != "complete":
        raise CLIError(f"the run ended without an answer ({result.status}, after {len(result.steps)} steps)")
    return 0


def _cmd_eval(args: argparse.Namespace) -> int:
    from .evals._cli import run

    return run(args)


def _readable(text: str) -> str:
    """A JSON object of results as ``key: value`` lines (values that are JSON text decoded), else `text`."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return text
    if not is_object(data):
        return json.dumps(data, indent=2, ensure_ascii=False)
    lines: list[str] = []
    for key, value in data.items():
        if isinstance(value, str):
            with contextlib.suppress(ValueError):
                value = json.loads(value)
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        lines.append(f"  {key}: {shown}")
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    from .providers import provider_names

    parser = argparse.ArgumentParser(prog="agentkit", description="agentkit: typed tools for LLM tool calling.")
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

    inspect_cmd = commands.add_parser("inspect", help="print the tools (and output) payload a provider would send")
    target(inspect_cmd)
    inspect_cmd.add_argument("--provider", "-p", default="openai", choices=providers)
    inspect_cmd.add_argument("--tool-choice", default="auto", help="auto, none, required or a key")
    inspect_cmd.add_argument("--active-tools", nargs="*", help="keys the model may call")
    strictness(inspect_cmd)
    output_options(inspect_cmd)
    inspect_cmd.set_defaults(run=_cmd_inspect)

    lint_cmd = commands.add_parser("lint", help="per-provider compatibility report (exit 1 if a vendor rejects)")
    target(lint_cmd)
    lint_cmd.add_argument("--provider", "-p", action="append", choices=providers, help="repeatable; default: all")
    strictness(lint_cmd)
    output_options(lint_cmd)
    lint_cmd.set_defaults(run=_cmd_lint)

    call_cmd = commands.add_parser("call", help="run one tool with JSON arguments, validated")
    target(call_cmd)
    call_cmd.add_argument("tool", help="the tool's registry key")
    call_cmd.add_argument("arguments", nargs="?", default="{}", help="JSON object of arguments (default {})")
    call_cmd.add_argument(
        "--approve", action="store_true", help="run a tool that requires approval (else: a y/N prompt on a terminal)"
    )
    call_cmd.set_defaults(run=_cmd_call)

    mcp_cmd = commands.add_parser("mcp", help="Model Context Protocol")
    mcp_commands = mcp_cmd.add_subparsers(dest="mcp_command", required=True, metavar="SUBCOMMAND")
    serve_cmd = mcp_commands.add_parser("serve", help="serve a registry as an MCP server")
    from .mcp._server import add_serve_arguments

    add_serve_arguments(serve_cmd)
    serve_cmd.set_defaults(run=_cmd_mcp_serve)

    run_cmd = commands.add_parser("run", help="run an agent (or a registry's tools with a model) on a prompt")
    target(run_cmd)
    run_cmd.add_argument("prompt")
    run_cmd.add_argument("--model", "-m", default=None, help="vendor:model-name or 'test' (default: the agent's)")
    run_cmd.add_argument("--max-steps", type=int, default=8)
    run_cmd.set_defaults(run=_cmd_run)

    eval_cmd = commands.add_parser("eval", help="score a model's tool calls on BFCL or your own cases")
    from .evals._cli import add_arguments as add_eval_arguments

    add_eval_arguments(eval_cmd)
    eval_cmd.set_defaults(run=_cmd_eval)

    # listed for --help; `main` hands `agentkit dev ...` to the playground's own parser
    commands.add_parser("dev", help="a local web page to talk to an agent (agentkit dev --help)", add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["dev"]:
        from .playground import main as dev

        return dev(arguments[1:])
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        status: int = args.run(args)
    except CLIError as exc:
        print(f"agentkit {args.command}: error: {exc.message}", file=sys.stderr)
        return exc.status
    except MCPLoadError as exc:  # a target that cannot be loaded is bad usage
        print(f"agentkit {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except AgentkitError as exc:
        print(f"agentkit {args.command}: error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - anything else is still one line and a non-zero exit
        first = (str(exc).splitlines() or [""])[0]
        print(f"agentkit {args.command}: error: {type(exc).__name__}: {first}", file=sys.stderr)
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main())
