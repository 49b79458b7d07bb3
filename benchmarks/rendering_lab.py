"""The rendering lab: the same BFCL questions, the same model, different renderings, paired tests.

A benchmark, not a test: it needs a real model (the local llama-server of ``dev.local_llm``) and hours
of CPU. Renderings are in `benchmarks/lab_renderings.py`. Questions are asked one rendering after the
other for each question in turn, so at any moment every rendering has answered the same questions and
the paired comparison holds on a partial run; results are appended to a JSON Lines file as they come
(a run resumes where it stopped). A rendering whose request is byte-for-byte the one another rendering
already sent for a question reuses that answer (greedy decoding: same request, same answer).

```
nice -n 19 python -m benchmarks.rendering_lab run results.jsonl --questions 400 --bfcl-tools bfcl_tools.json
python -m benchmarks.rendering_lab report results.jsonl          # markdown tables, McNemar tests
python -m benchmarks.rendering_lab run timing.jsonl --questions 14 --renderings agentkit   # seconds/question
```

``--model PATH`` runs another GGUF model (``--template`` for its chat template); the server always runs
with one thread (``-t 1``) and one slot.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentkit.evals import EvalCase, bfcl_cases, check_calls, repair_arguments, run_case
from agentkit.messages import (
    AssistantMessage,
    Message,
    ModelResponse,
    SystemMessage,
    ToolCall,
    ToolResultsMessage,
    Usage,
    UserMessage,
)
from agentkit.models import Model, ModelSettings
from agentkit.providers._nulls import restore_defaults
from agentkit.providers.openai import OpenAIChatModel, OpenAIChatProvider
from agentkit.registry import Registry
from benchmarks import lab_renderings as lab

PER_CATEGORY = {
    "simple_python": 80,
    "multiple": 60,
    "parallel": 60,
    "parallel_multiple": 60,
    "live_simple": 60,
    "live_multiple": 40,
    "irrelevance": 40,
}
"""Questions per category for 400 (scaled for other sizes): every category well represented."""

ALL = [
    "agentkit",
    "agentkit+retry",
    "bfcl",
    "pydantic-ai",
    "openai-agents",
    "grammar",
    "non-strict",
    "enums-described",
    "dotted-names",
    "plain-optional",
    "docstring",
    "constraints-described",
]
"""In the order each question is asked (the most important comparisons first)."""

PAIRS = {
    "bfcl": "agentkit",
    "pydantic-ai": "agentkit",
    "openai-agents": "agentkit",
    "grammar": "agentkit",
    "non-strict": "agentkit",
    "plain-optional": "agentkit",
    "enums-described": "agentkit",
    "constraints-described": "non-strict",
    "docstring": "agentkit",
    "dotted-names": "agentkit",
}
"""Each rendering and the one it is compared with (one change apart)."""

MAX_TOKENS = 128


def choose(size: int, seed: int = 0) -> list[EvalCase]:
    """`size` questions, spread over the categories as `PER_CATEGORY` says, in a seeded random order."""
    import random

    cases = bfcl_cases()
    rng = random.Random(seed)
    chosen: list[EvalCase] = []
    total = sum(PER_CATEGORY.values())
    for category, share in PER_CATEGORY.items():
        members = [c for c in cases if c.category == category]
        chosen += rng.sample(members, min(len(members), max(1, round(size * share / total))))
    rng.shuffle(chosen)  # categories interleaved: a run stopped early is still a sample of every category
    return chosen


class RawProvider(OpenAIChatProvider):
    """OpenAI Chat, reading calls as a peer library does: names mapped back, a ``null`` kept as it came."""

    def _finish_call(self, call: ToolCall, names: Any, tools: Any) -> ToolCall:
        name = names.key_for(call.name) if names is not None else call.name
        return ToolCall(id=call.id, name=name, arguments=call.arguments)


class PromptedModel(Model):
    """The chat template's own prompt, built here and sent without ``tools``: calls parsed from the text.

    The tools (``settings.extra["tools"]``, else agentkit's default rendering) go into the system message
    exactly where and as the bare-tools template puts them (``tool | tojson`` per line), earlier calls
    and tool results as the template renders them; no grammar applies, and the calls are read from the
    text as the template asks for them (a fenced block too). ``extra["peer"]`` reads calls as a peer
    library does (a ``null`` kept); otherwise as agentkit does (a ``null`` for a parameter that cannot be
    null means "left out").
    """

    def __init__(self, client: Any) -> None:
        self.client = client

    @property
    def name(self) -> str:
        return "local:prompted"

    async def request(self, messages: Sequence[Message], tools: Registry, settings: ModelSettings) -> ModelResponse:
        rendered = settings.extra.get("tools") or lab.agentkit_tools(_current_case(tools))
        system = next((m.text for m in messages if isinstance(m, SystemMessage)), None)
        wire: list[dict[str, Any]] = [{"role": "system", "content": lab.template_system_prompt(system, rendered)}]
        for message in messages:
            if isinstance(message, UserMessage):
                wire.append({"role": "user", "content": message.content})
            elif isinstance(message, AssistantMessage):
                lines = [message.text] if message.text else []
                for call in message.tool_calls:  # as the template writes a call: arguments as an object
                    arguments = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
                    name = _wire_name(tools, rendered, call.name)
                    lines.append(f'{{"name": "{name}", "arguments": {arguments}}}')
                wire.append({"role": "assistant", "content": "\n".join(lines)})
            elif isinstance(message, ToolResultsMessage):
                shown = "\n".join(f"<tool_response>\n{r.text}\n</tool_response>" for r in message.results)
                wire.append({"role": "user", "content": shown})
        response = await self.client.chat.completions.create(
            model="local", messages=wire, temperature=0, max_tokens=settings.max_tokens or MAX_TOKENS
        )
        text = response.choices[0].message.content or ""
        names = OpenAIChatProvider().names(tools, aliases=True)
        calls: list[ToolCall] = []
        for i, (name, arguments) in enumerate(lab.parse_bare_calls(text)):
            key = names.key_for(name)
            if not settings.extra.get("peer") and key in tools:
                arguments = restore_defaults(arguments, tools[key].input_schema)
            calls.append(ToolCall(f"call_{i}", key, arguments))
        return ModelResponse(
            message=AssistantMessage(text="" if calls else text, tool_calls=calls),
            usage=Usage(requests=1),
            finish_reason="tool_calls" if calls else "stop",
            model_name="local",
        )


def _wire_name(tools: Registry, rendered: list[dict[str, Any]], key: str) -> str:
    """The name the rendering showed for `key` (the template writes earlier calls under it)."""
    shown = {t["function"]["name"] for t in rendered}
    alias = OpenAIChatProvider().names(tools, aliases=True).name_for(key)
    return key if key in shown else alias


_CASES: dict[int, EvalCase] = {}


def _invalid(registry: Registry, calls: list[list[Any]]) -> bool:
    """Whether any call names no tool or fails its tool's validation (what triggers a retry)."""
    for name, arguments in calls:
        if name not in registry:
            return True
        try:
            registry[name].schema.validate_arguments(name, arguments)
        except Exception:
            return True
    return False


def _current_case(tools: Registry) -> EvalCase:
    return _CASES[id(tools)]


def _settings(tools: list[dict[str, Any]] | None = None, *, peer: bool = False, choice: str = "auto") -> ModelSettings:
    extra: dict[str, Any] = {"tools": tools, "peer": peer} if tools is not None else {}
    return ModelSettings(tool_choice=choice, temperature=0.0, aliases=True, max_tokens=MAX_TOKENS, extra=extra)


def _request(rendering: str, case: EvalCase, bfcl: lab.BFCLRendering | None) -> tuple[ModelSettings, str]:
    """The settings of `rendering`'s request for `case`, and a key equal for byte-identical requests."""
    if rendering == "grammar":  # the real pipeline: agentkit's payload to the server, grammar from token one
        text = "grammar:" + json.dumps(lab.agentkit_tools(case), sort_keys=True)
        return _settings(choice="required"), hashlib.sha256(text.encode()).hexdigest()[:16]
    if rendering == "agentkit":
        tools = lab.agentkit_tools(case)
    elif rendering == "bfcl":
        assert bfcl is not None
        tools = bfcl(case)
    else:
        tools = lab.PAYLOAD_RENDERINGS[rendering](case)
    peer = rendering in lab.PEERS
    text = ("peer:" if peer else "agentkit:") + json.dumps(tools, sort_keys=True)
    return _settings(tools, peer=peer), hashlib.sha256(text.encode()).hexdigest()[:16]


def _row(rendering: str, case: EvalCase, result: Any, request_key: str, reused: bool = False) -> dict[str, Any]:
    return {
        "rendering": rendering,
        "id": case.id,
        "category": case.category,
        "passed": result.passed,
        "error": result.error,
        "bfcl_error": result.bfcl_error,
        "detail": result.detail,
        "first_passed": result.first_passed,
        "retried": result.retried,
        "calls": [
            [name, arguments if isinstance(arguments, str) else dict(arguments)] for name, arguments in result.calls
        ],
        "seconds": round(result.seconds, 2),
        "text": result.text[:200],
        "request": request_key,
        "reused": reused,
    }


async def run(args: argparse.Namespace) -> None:
    import openai

    try:  # the http module the installed openai SDK is built on
        import httpx2 as httpx  # type: ignore[import-not-found]
    except ImportError:
        import httpx

    from dev import local_llm as local

    renderings = [r for r in (args.renderings.split(",") if args.renderings else ALL) if r != "agentkit+retry"]
    unknown = [r for r in renderings if r not in ALL]
    if unknown:
        raise SystemExit(f"unknown rendering(s) {unknown}: pick from {ALL}")
    bfcl = lab.BFCLRendering(args.bfcl_tools) if "bfcl" in renderings else None
    cases = choose(args.questions, args.seed)
    out = Path(args.results)
    done: set[tuple[str, str]] = set()
    previous: dict[tuple[str, str], dict[str, Any]] = {}
    if out.exists():
        for line in out.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                done.add((row["rendering"], row["id"]))
                previous[(row["id"], row["request"])] = row
    model_path = Path(args.model) if args.model else None
    template = Path(args.template) if args.template else None
    server = local.LlamaServer.start(model=model_path, template=template, threads=1, context=args.context)
    print(f"server on {server.openai_base_url} (started in {server.started_in:.1f} s)", file=sys.stderr)
    try:
        http = openai.DefaultAsyncHttpxClient(
            limits=httpx.Limits(max_connections=2, max_keepalive_connections=0), timeout=httpx.Timeout(600.0)
        )
        client = openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="x", max_retries=0, http_client=http)
        server_model = OpenAIChatModel("local", client=client)
        prompted = PromptedModel(client)
        started = time.monotonic()
        asked = 0
        with out.open("a") as sink:
            for number, case in enumerate(cases, 1):
                registry = case.registry()
                _CASES.clear()
                _CASES[id(registry)] = case
                for rendering in renderings:
                    if (rendering, case.id) in done:
                        continue
                    if rendering == "grammar" and not case.expected:
                        continue  # tool_choice="required" forces a call: irrelevance is not asked
                    model: Model = server_model if rendering == "grammar" else prompted
                    settings, key = _request(rendering, case, bfcl)
                    hit = previous.get((case.id, key))
                    if hit is not None:
                        row = {**hit, "rendering": rendering, "reused": True}
                    else:
                        result = await run_case(model, case, settings=settings)
                        row = previous[(case.id, key)] = _row(rendering, case, result, key)
                        asked += 1
                    sink.write(json.dumps(row) + "\n")
                    if rendering == "agentkit" and args.retry and ("agentkit+retry", case.id) not in done:
                        if _invalid(registry, row["calls"]):
                            result = await run_case(prompted, case, settings=settings, retry=True)
                            retried = _row("agentkit+retry", case, result, key)
                            asked += 2
                        else:
                            retried = {**row, "rendering": "agentkit+retry", "first_passed": row["passed"]}
                        sink.write(json.dumps(retried) + "\n")
                    sink.flush()
                elapsed = time.monotonic() - started
                print(
                    f"[{number}/{len(cases)}] {case.id}: {asked} requests in {elapsed:.0f} s "
                    f"({elapsed / max(asked, 1):.1f} s each)",
                    file=sys.stderr,
                    flush=True,
                )
    finally:
        server.stop()


# ---- the report ----------------------------------------------------------------------------------


def mcnemar(b: int, c: int) -> float:
    """Exact two-sided McNemar p-value for `b` and `c` discordant pairs (a binomial test at 1/2)."""
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def _load(path: Path) -> dict[str, dict[str, dict[str, Any]]]:
    rows: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for line in path.read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            rows[row["rendering"]][row["id"]] = row
    return rows


def _pct(x: int, n: int) -> str:
    return f"{100 * x / n:.1f}" if n else "-"


def report(path: Path, out: Any = sys.stdout) -> None:
    rows = _load(path)
    present = [r for r in ALL if r in rows]
    base = set(rows.get("agentkit", {}))
    common = base
    categories = list(PER_CATEGORY)
    by_id = {row["id"]: row["category"] for r in present for row in rows[r].values()}
    print(f"{len(base)} questions asked (accuracy in %, questions in brackets)\n", file=out)
    head = "| rendering | all | " + " | ".join(categories) + " |"
    print(head, file=out)
    print("|" + " --- |" * (2 + len(categories)), file=out)
    for rendering in present:
        ids = sorted(base & set(rows[rendering]))
        passed = sum(rows[rendering][i]["passed"] for i in ids)
        cells = [f"{_pct(passed, len(ids))} ({len(ids)})"]
        for category in categories:
            members = [i for i in ids if by_id[i] == category]
            cells.append(_pct(sum(rows[rendering][i]["passed"] for i in members), len(members)))
        print(f"| {rendering} | " + " | ".join(cells) + " |", file=out)
    print("\nPaired comparisons (McNemar, exact): points = variant minus baseline", file=out)
    print("| variant | baseline | questions | variant only | baseline only | points | p | own requests |", file=out)
    print("| --- | --- | --- | --- | --- | --- | --- | --- |", file=out)
    for variant, baseline in PAIRS.items():
        if variant not in rows or baseline not in rows:
            continue
        ids = sorted(set(rows[variant]) & set(rows[baseline]))
        b = sum(rows[variant][i]["passed"] and not rows[baseline][i]["passed"] for i in ids)
        c = sum(rows[baseline][i]["passed"] and not rows[variant][i]["passed"] for i in ids)
        differ = sum(not rows[variant][i].get("reused") for i in ids)
        points = 100 * (b - c) / len(ids) if ids else 0.0
        print(
            f"| {variant} | {baseline} | {len(ids)} | {b} | {c} | {points:+.1f} | {mcnemar(b, c):.3g} | {differ} |",
            file=out,
        )
    if "agentkit+retry" in rows:
        _retry_table(rows["agentkit+retry"], sorted(common & set(rows["agentkit+retry"])), by_id, out)
    _repair_table(rows, present, sorted(common), out)
    print("\nWhy questions failed (error classes)", file=out)
    classes = sorted({row["error"] for r in present for row in rows[r].values() if row["error"]})
    print("| rendering | " + " | ".join(classes) + " |", file=out)
    print("|" + " --- |" * (1 + len(classes)), file=out)
    for rendering in present:
        counts = Counter(rows[rendering][i]["error"] for i in common if i in rows[rendering])
        print(f"| {rendering} | " + " | ".join(str(counts.get(k, 0)) for k in classes) + " |", file=out)


def _retry_table(agentkit: dict[str, dict[str, Any]], ids: list[str], by_id: dict[str, str], out: Any) -> None:
    if not any(agentkit[i].get("first_passed") is not None for i in ids):
        return
    print("\nValidation feedback and one retry (agentkit's default rendering)", file=out)
    print("| questions | first attempt | after retry | points | retried | p |", file=out)
    print("| --- | --- | --- | --- | --- | --- |", file=out)
    groups = {
        "simple + multiple + parallel": [i for i in ids if by_id[i] in ("simple_python", "multiple", "parallel")],
        "all": ids,
    }
    for label, members in groups.items():
        first = sum(bool(agentkit[i]["first_passed"]) for i in members)
        final = sum(agentkit[i]["passed"] for i in members)
        b = sum(agentkit[i]["passed"] and not agentkit[i]["first_passed"] for i in members)
        c = sum(agentkit[i]["first_passed"] and not agentkit[i]["passed"] for i in members)
        retried = sum(bool(agentkit[i]["retried"]) for i in members)
        n = len(members)
        print(
            f"| {label} ({n}) | {_pct(first, n)} | {_pct(final, n)} | {100 * (final - first) / n:+.1f} | "
            f"{retried} | {mcnemar(b, c):.3g} |",
            file=out,
        )


def _repair_table(rows: dict[str, dict[str, dict[str, Any]]], present: list[str], ids: list[str], out: Any) -> None:
    """Argument repair applied to the recorded calls (no new requests): what it fixes and what it breaks."""
    cases = {c.id: c for c in bfcl_cases() if c.id in set(ids)}
    print("\nArgument repair on the recorded calls (first attempts; a repair only where validation fails)", file=out)
    print("| rendering | calls repaired | questions fixed | questions broken |", file=out)
    print("| --- | --- | --- | --- |", file=out)
    for rendering in present:
        if rendering == "agentkit+retry":
            continue
        repaired = fixed = broken = 0
        for i in ids:
            if i not in rows[rendering]:
                continue
            row = rows[rendering][i]
            case = cases[i]
            registry = case.registry()
            calls = []
            changed = False
            for name, arguments in row["calls"]:
                fix = repair_arguments(arguments, registry[name]) if name in registry else None
                if fix is not None:
                    repaired += 1
                    changed = True
                    arguments = fix.arguments
                calls.append((name, arguments))
            if not changed:
                continue
            verdict = check_calls(case.specs(), calls, case.expected, case.check_mode)
            fixed += verdict.passed and not row["passed"]
            broken += row["passed"] and not verdict.passed
        print(f"| {rendering} | {repaired} | {fixed} | {broken} |", file=out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.rendering_lab", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run_cmd = commands.add_parser("run", help="ask the questions under each rendering (resumes a results file)")
    run_cmd.add_argument("results", help="JSON Lines file the rows are appended to")
    run_cmd.add_argument("--questions", type=int, default=400)
    run_cmd.add_argument("--seed", type=int, default=0)
    run_cmd.add_argument("--renderings", help=f"comma-separated, default all: {','.join(ALL)}")
    run_cmd.add_argument("--bfcl-tools", default="bfcl_tools.json", help="from python -m dev.bfcl render")
    run_cmd.add_argument("--no-retry", dest="retry", action="store_false", help="skip agentkit+retry")
    run_cmd.add_argument("--model", help="a GGUF file (default: the e2e model, Qwen2.5-Coder-0.5B Q4_K_M)")
    run_cmd.add_argument("--template", help="its chat template (default: dev/qwen25-bare-tools.jinja)")
    run_cmd.add_argument("--context", type=int, default=8192)
    report_cmd = commands.add_parser("report", help="markdown tables and paired tests of a results file")
    report_cmd.add_argument("results")
    args = parser.parse_args(argv)
    if args.command == "run":
        asyncio.run(run(args))
    else:
        report(Path(args.results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
