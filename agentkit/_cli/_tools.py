"""``agentkit inspect``, ``lint`` and ``call``: a registry's payloads, its compatibility report, one tool run."""

from __future__ import annotations as _annotations

import argparse
import asyncio
import json
import sys
from typing import TYPE_CHECKING, Any

from .._jsonish import is_object
from .._loader import as_registry, load_object
from .._text import shorten
from ..exceptions import (
    CLIError,
    MCPLoadError,
    ModelRetry,
    ToolChoiceError,
    ToolError,
    ToolInputError,
    ToolOutputError,
    ToolSuspended,
    UnknownToolError,
)
from ..registry import Registry
from ._errors import USAGE, in_cli_words
from ._json import dump, print_json
from ._terminal import Progress

if TYPE_CHECKING:
    from ..providers import Compatibility

__all__ = ["cmd_call", "cmd_inspect", "cmd_lint", "load_target"]


def load_target(target: str, *, output_flag: bool = False) -> Registry:
    """The registry named by `target` (see `agentkit._loader.as_registry`).

    `output_flag`: the command takes ``--output``, where a model class named as the target belongs.
    """
    value = load_object(target)
    try:
        return as_registry(value, target)
    except MCPLoadError as exc:
        if output_flag and isinstance(value, type):
            raise CLIError(f"{exc} (to ask for it as the output type, pass --output {target})", USAGE) from None
        raise


def _output_of(args: argparse.Namespace) -> Any:
    """The output type asked with ``--output module:attr`` (and ``--output-mode``), else the target agent's."""
    from ..output import Output

    if args.output:
        target = load_object(args.output)
        return Output(target, mode=args.output_mode) if args.output_mode else target
    agent_output: Any = getattr(load_object(args.target), "output", None)
    target = getattr(agent_output, "target", None)
    if target is None:
        return None
    return Output(target, mode=args.output_mode or agent_output.mode, name=agent_output.name)


def cmd_inspect(args: argparse.Namespace) -> int:
    """``agentkit inspect``: the tools (and output) fragment a provider would send."""
    from .._agent._output import RunOutput, output_config
    from ..models import ModelSettings
    from ..providers import get_provider

    registry = load_target(args.target, output_flag=True)
    provider = get_provider(args.provider)
    options: dict[str, Any] = {"tool_choice": args.tool_choice, "active_tools": args.active_tools or None}
    output = _output_of(args)
    try:
        plan = None
        if output is not None:
            run = RunOutput.of(output_config(output, None, None, "inspect"), provider, registry)
            if run is not None and run.request is not None:
                registry = run.registry(registry)
                settings = run.settings(ModelSettings(args.tool_choice, tuple(options["active_tools"] or ()) or None))
                options = {"tool_choice": settings.tool_choice, "active_tools": settings.active_tools}
                plan = run
        payload = provider.format_tools(registry, strict=args.strict, aliases=args.aliases, **options)
    except (ToolChoiceError, UnknownToolError) as exc:  # --tool-choice / --active-tools name what is not there
        raise CLIError(in_cli_words(str(exc).strip("\"'")), USAGE) from None
    if plan is not None and plan.request is not None and plan.request.mode == "native":
        payload.update(provider.format_output(plan.request.definition))
    how = plan.plan if plan is not None else None
    instructions = plan.request.prompt if plan is not None and plan.request is not None else None
    if args.json:
        shown = None if how is None else {"mode": how.mode, "reason": how.reason, "instructions": instructions or None}
        print_json("inspect", {"provider": args.provider, "payload": payload, "output": shown})
        return 0
    dump(payload)
    if how is not None:
        print(f"output: {how.mode}" + (f" ({how.reason})" if how.reason else ""), file=sys.stderr)
        if instructions:
            print(f"instructions added: {instructions}", file=sys.stderr)
    return 0


def _loss(loss: Any) -> dict[str, Any]:
    return {"path": loss.path, "keyword": loss.keyword, "change": loss.change, "rejected": loss.rejected}


def cmd_lint(args: argparse.Namespace) -> int:
    """``agentkit lint``: the per-provider compatibility report; status 1 when a vendor would reject a tool."""
    from ..providers import compatibility, provider_names

    registry = load_target(args.target, output_flag=True)
    output = _output_of(args)
    vendors: list[str] = args.provider or provider_names()
    report: list[Compatibility] = []
    progress = Progress()
    try:
        for done, vendor in enumerate(vendors):  # one vendor at a time, so a terminal sees where it is
            progress.update(f"checking {vendor} ({done + 1}/{len(vendors)}, {len(registry)} tool(s))")
            report += compatibility(registry, vendor, strict=args.strict, aliases=args.aliases, output=output)
    finally:
        progress.close()
    rejected = sum(entry.rejected for entry in report)
    lossy = sum(len(entry.losses) for entry in report)
    if args.json:
        rows = [
            {
                "provider": entry.provider,
                "key": entry.key,
                "wire_name": entry.wire_name,
                "output_mode": entry.output_mode,
                "strict": entry.strict,
                "rejected": entry.rejected,
                "name_problem": entry.name_problem,
                "losses": [_loss(loss) for loss in entry.losses],
            }
            for entry in report
        ]
        summary = {"checked": len(report), "rejected": rejected, "lossy": lossy}
        print_json("lint", {"providers": vendors, "summary": summary, "results": rows})
    else:
        for entry in report:
            print(entry)
        print(f"\n{len(report)} tool/provider pairs checked: {rejected} rejected, {lossy} lossy rewrites.")
    return 1 if rejected else 0


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


def _arguments(text: str, key: str) -> Any:
    """The ARGUMENTS text as JSON: text that is not a JSON object is a usage error, before anything runs."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        problem = f"is not JSON ({exc})"
    else:
        if is_object(value):
            return value
        problem = f"is {shorten(value)}"
    raise CLIError(f"ARGUMENTS for {key!r} must be a JSON object, e.g. '{{\"a\": 1}}'; it {problem}", USAGE)


def cmd_call(args: argparse.Namespace) -> int:
    """``agentkit call``: validate the arguments, run the tool, validate and print its result."""
    registry = load_target(args.target)
    registry.require(args.tool)
    item = registry[args.tool]
    arguments = _arguments(args.arguments, args.tool)
    if item.needs_approval_for(args.arguments, name=args.tool):  # the tool's one decision, on validated arguments
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
        from .._agent.display import registry_rules, tool_made

        shown, withheld = tool_made(registry_rules(registry, args.tool), "suspension", exc.payload)
        what = withheld if withheld is not None else shorten(shown)
        raise CLIError(f"{args.tool!r} asked for input ({what}), which the command line cannot give") from None
    except Exception as exc:  # noqa: BLE001 - the tool itself raised: one line, not a traceback
        raise CLIError(f"{args.tool!r} raised {type(exc).__name__}: {exc}") from None
    output = item.schema.dump_output_python(value)
    if args.json:
        print_json("call", {"tool": args.tool, "arguments": arguments, "output": output})
    else:
        dump(output)
    return 0
