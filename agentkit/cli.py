"""The `agentkit` command line: inspect payloads, lint a registry, call a tool, serve MCP, run an agent.

``TARGET`` everywhere is ``package.module:attribute`` or ``path/to/file.py:attribute`` naming a
`Registry`, a `Tool`, a list/dict of tools, or an `Agent` (its tools are used).
Errors are one clear line on stderr and a non-zero exit: 2 for bad usage, 1 for a failed operation.
"""

from __future__ import annotations as _annotations

import argparse
import asyncio
import importlib
import importlib.util
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .exceptions import AgentkitError, CLIError, ModelRetry, ToolError, ToolInputError, ToolOutputError, ToolSuspended
from .registry import Registry
from .tools import Tool

__all__ = ["CLIError", "load_target", "main"]


def load_object(target: str) -> Any:
    """The object named by ``module:attribute`` or ``file.py:attribute``."""
    module_name, sep, attribute = target.partition(":")
    if not sep or not module_name or not attribute:
        raise CLIError(f"target {target!r} must look like 'package.module:name' or 'path/file.py:name'", 2)
    if module_name.endswith(".py") or "/" in module_name:
        path = Path(module_name)
        if not path.exists():
            raise CLIError(f"no such file: {path}")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            raise CLIError(f"cannot import {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:  # noqa: BLE001 - the user's module failed while loading: one line
            raise CLIError(f"importing {path} failed: {type(exc).__name__}: {exc}") from None
    else:
        sys.path.insert(0, str(Path.cwd()))
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise CLIError(f"cannot import {module_name!r}: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - the user's module failed while loading: one line
            raise CLIError(f"importing {module_name!r} failed: {type(exc).__name__}: {exc}") from None
    obj = module
    for part in attribute.split("."):
        if not hasattr(obj, part):
            raise CLIError(f"{module_name!r} has no attribute {attribute!r}")
        obj = getattr(obj, part)
    return obj


def load_target(target: str) -> Registry:
    """The registry named by `target` (a Registry, Tool, list/dict of tools, or an Agent's tools)."""
    obj = load_object(target)
    if isinstance(obj, Registry):
        return obj
    if isinstance(obj, Tool):
        return Registry([obj])
    tools = getattr(obj, "tools", None)
    if isinstance(tools, Registry):
        return tools
    if isinstance(obj, (list, tuple, dict)):
        return Registry(obj)
    raise CLIError(f"{target!r} is a {type(obj).__name__}, not a Registry, Tool, list/dict of tools or Agent", 2)


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
    options = {"tool_choice": args.tool_choice, "active_tools": args.active_tools or None}
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


def _cmd_call(args: argparse.Namespace) -> int:
    registry = load_target(args.target)
    if args.tool not in registry:
        registry[args.tool]  # raises UnknownToolError with a "did you mean"
    item = registry[args.tool]
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
        raise CLIError(f"{args.tool!r} asked for input ({exc.payload!r}), which the command line cannot give") from None
    except Exception as exc:  # noqa: BLE001 - the tool itself raised: one line, not a traceback
        raise CLIError(f"{args.tool!r} raised {type(exc).__name__}: {exc}") from None
    _print_json(item.schema.dump_output_python(value))
    return 0


def _cmd_mcp_serve(args: argparse.Namespace) -> int:
    from . import mcp

    try:
        mcp.serve_command(args.target, args.transport, args.host, args.port)
    except ImportError as exc:  # the optional `mcp` package is missing: the message says what to install
        raise CLIError(str(exc)) from None
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    from .agent import Agent

    obj = load_object(args.target)
    agent = obj if isinstance(obj, Agent) else Agent(name="cli", model="test", tools=load_target(args.target))
    if args.model:
        with agent.override(model=args.model):
            result = agent.generate_sync(args.prompt, max_steps=args.max_steps)
    else:
        result = agent.generate_sync(args.prompt, max_steps=args.max_steps)
    for step in result.steps:
        for call, res in zip(step.tool_calls, step.results, strict=False):
            flag = "error" if res.is_error else "ok"
            print(f"[tool] {call.name}({json.dumps(call.arguments_dict())}) -> {flag}: {res.text[:200]}")
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
    call_cmd.set_defaults(run=_cmd_call)

    mcp_cmd = commands.add_parser("mcp", help="Model Context Protocol")
    mcp_commands = mcp_cmd.add_subparsers(dest="mcp_command", required=True, metavar="SUBCOMMAND")
    serve_cmd = mcp_commands.add_parser("serve", help="serve a registry as an MCP server")
    target(serve_cmd)
    serve_cmd.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    serve_cmd.add_argument("--host", default="127.0.0.1")
    serve_cmd.add_argument("--port", type=int, default=8000)
    serve_cmd.set_defaults(run=_cmd_mcp_serve)

    run_cmd = commands.add_parser("run", help="run an agent (or a registry's tools with a model) on a prompt")
    target(run_cmd)
    run_cmd.add_argument("prompt")
    run_cmd.add_argument("--model", "-m", default=None, help="vendor:model-name or 'test' (default: the agent's)")
    run_cmd.add_argument("--max-steps", type=int, default=8)
    run_cmd.set_defaults(run=_cmd_run)

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
