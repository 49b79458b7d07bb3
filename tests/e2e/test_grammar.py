"""Grammar check of our schemas: a real JSON-Schema-to-grammar compiler must accept them and its output
must pass `Tool.invoke`.

llama-cpp-python's server with ``--chat_format chatml-function-calling`` compiles a named tool's
``parameters`` into a GBNF grammar and samples the arguments under it, so whatever comes back is what
the schema allows. For each tool below, in the OpenAI payload we send (plain and strict-mode rewrites),
a named tool_choice forces the call; the arguments, after null -> default restoration by
``parse_tool_calls(registry=...)``, must be accepted by ``invoke``. What the compiler rejects or cannot
express is recorded in docs/e2e.md.
"""

from __future__ import annotations

import json
import os
import subprocess
from datetime import date
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Literal, Optional, Union

import jsonschema
import pytest
from pydantic import BaseModel, Field

from agentkit import Registry, Tool, tool
from agentkit.exceptions import StrictSchemaError
from agentkit.providers.openai import OpenAIChatProvider
from dev import local_llm as local

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]  # one busy CPU thread: see conftest.REQUEST_TIMEOUT


class Priority(str, Enum):
    LOW = "low"
    HIGH = "high"


class Address(BaseModel):
    street: str
    city: str
    postcode: Optional[str] = None


class Item(BaseModel):
    sku: Annotated[str, Field(min_length=3, max_length=8)]
    quantity: Annotated[int, Field(ge=1, le=10)]


class Circle(BaseModel):
    kind: Literal["circle"]
    radius: Annotated[float, Field(gt=0)]


class Square(BaseModel):
    kind: Literal["square"]
    side: Annotated[float, Field(gt=0)]


class Node(BaseModel):
    label: str
    children: list[Node] = Field(default_factory=list, max_length=2)


@tool
def set_priority(level: Literal["low", "medium", "high"], priority: Priority, code: Literal[1, 2, 3]) -> str:
    """Set a priority (enums: a Literal of strings, a str Enum, a Literal of ints)."""
    return f"{level}/{priority.value}/{code}"


@tool
def ship_to(name: str, address: Address) -> str:
    """Ship a parcel to an address (a nested model)."""
    assert isinstance(address, Address)
    return address.city


@tool
def place_order(items: Annotated[list[Item], Field(min_length=1, max_length=3)]) -> int:
    """Place an order of one to three items (an array of objects with constraints)."""
    assert all(isinstance(i, Item) for i in items)
    return sum(i.quantity for i in items)


@tool
def search(query: str, limit: Optional[int] = 10, tags: Optional[list[str]] = None, exact: bool = False) -> str:
    """Search documents (optional and nullable fields with defaults)."""
    return query


@tool
def rename(
    new_name: Annotated[str, Field(min_length=2, max_length=12, pattern=r"^[a-z][a-z_]*$")],
    ratio: Annotated[float, Field(ge=0, le=1)],
    copies: Annotated[int, Field(ge=1, le=99)] = 1,
) -> str:
    """Rename a file (string length, pattern and number range constraints)."""
    return new_name


@tool
def draw(shape: Annotated[Union[Circle, Square], Field(discriminator="kind")], label: Optional[str] = None) -> str:
    """Draw a shape (a discriminated union of models)."""
    return shape.kind


@tool
def book(day: date, nights: Annotated[int, Field(ge=1, le=14)]) -> str:
    """Book a room (a ``format: date`` string)."""
    return day.isoformat()


@tool
def configure(settings: dict[str, int], note: Union[str, int, None] = None) -> int:
    """Configure counters (a free-form map and a union of scalars)."""
    return len(settings)


@tool
def outline(root: Node) -> str:
    """Write an outline (a recursive model)."""
    return root.label


@tool
def lookup(code: Annotated[str, Field(pattern=r"[A-Z]{3}")], when: Optional[date] = None) -> str:
    """Look up a currency code (an unanchored pattern, as pydantic writes them: JSON Schema patterns search)."""
    return code


# a lookahead (pydantic's own regex engine refuses one, a foreign schema may hold it): OpenAI strict refuses it,
# so the strict payload moves it into the description
set_pin = Tool.from_json_schema(
    "set_pin",
    {
        "type": "object",
        "properties": {"pin": {"type": "string", "pattern": r"^(?=.*[1-9])[0-9]{4,8}$"}},
        "required": ["pin"],
    },
    fn=lambda args: args["pin"],
    description="Set a PIN (a lookahead in its pattern).",
)


@tool
def ping() -> str:
    """Check the connection (no parameters)."""
    return "pong"


TOOLS: list[Tool[..., Any]] = [
    set_priority,
    ship_to,
    place_order,
    search,
    rename,
    draw,
    book,
    configure,
    outline,
    lookup,
    ping,
]
NAMES = [t.id for t in TOOLS]
COMPILE_ONLY: list[Tool[..., Any]] = [set_pin]
"""Checked by the compiler alone: its plain schema has no grammar, so a forced call samples any JSON."""
PROVIDER = OpenAIChatProvider()
STRICT_REFUSED = {"configure": "free-form map values"}
"""Tools OpenAI strict mode refuses: forced strict, `format_tools` raises instead of sending them."""

# What the grammar compiler (llama-cpp-python 0.3.36, llama_cpp/llama_grammar.py) cannot do with our schemas,
# by tool (plain and strict alike); docs/e2e.md has the details. For these the forced call is checked for
# what the protocol guarantees (the named tool, the model's mistake reported as an error result).
NO_RANGES = "the compiler ignores minimum/maximum (a TODO in llama_grammar.py): the integer sampled may be out of range"
UNANCHORED = "the compiler rejects a pattern without ^...$; the server then silently falls back to any JSON"
KNOWN: dict[str, str] = {
    "rename": NO_RANGES,
    "book": NO_RANGES,
    "lookup": UNANCHORED,
    "outline": "a recursive $ref compiles, but nothing bounds the depth: the model nests until max_tokens",
}
RUNAWAY = {"outline", "lookup"}
"""Cut short: their output is not held to a finite shape."""
REJECTED = {
    "lookup:False": "Pattern must start with",
    "lookup:True": "Pattern must start with",
    "set_pin:False": "Unsupported pattern syntax",  # the strict payload has the lookahead in the description
}
"""Schemas (``name:strict``) the compiler raises on (checked directly, without a model)."""


def _case(name: str, strict: bool) -> Any:
    return pytest.param(name, strict, id=f"{name}-{'strict' if strict else 'plain'}")


COMPILE = """
import json, sys
from llama_cpp.llama_grammar import json_schema_to_gbnf
out = {}
for key, schema in json.load(sys.stdin).items():
    try:
        out[key] = {"ok": bool(json_schema_to_gbnf(json.dumps(schema)))}
    except Exception as exc:
        out[key] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
print(json.dumps(out))
"""


def test_every_schema_compiles_to_a_grammar(grammar_venv: Path) -> None:
    """Our OpenAI ``parameters`` (plain and strict) through llama-cpp-python's JSON-Schema-to-GBNF compiler.

    chatml-function-calling swallows a compiler error and samples any JSON instead, so rejections are
    invisible over HTTP: this compiles each schema directly, in the server's own venv.
    """
    schemas = {}
    for item in [*TOOLS, *COMPILE_ONLY]:
        for strict in (False, True):
            if strict and item.id in STRICT_REFUSED:
                with pytest.raises(StrictSchemaError, match=STRICT_REFUSED[item.id]):
                    PROVIDER.format_tools(Registry([item]), strict=True)
                continue
            fragment = PROVIDER.format_tools(Registry([item]), strict=strict)
            schemas[f"{item.id}:{strict}"] = fragment["tools"][0]["function"]["parameters"]
    env = dict(os.environ, LLAMA_CPP_LIB_PATH=str(local.build_dir() / "build" / "bin"))
    proc = subprocess.run(
        [str(grammar_venv), "-c", COMPILE],
        input=json.dumps(schemas),
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout)
    rejected = {key: r["error"] for key, r in results.items() if not r["ok"]}
    assert set(rejected) == set(REJECTED), rejected
    for name, reason in REJECTED.items():
        assert reason in rejected[name], rejected[name]


@pytest.mark.parametrize(("name", "strict"), [_case(n, s) for n in NAMES for s in (False, True)])
async def test_forced_call_passes_invoke(grammar_client: Any, name: str, strict: bool) -> None:
    registry = Registry([TOOLS[NAMES.index(name)]])
    if strict and name in STRICT_REFUSED:
        with pytest.raises(StrictSchemaError, match=STRICT_REFUSED[name]):
            PROVIDER.format_tools(registry, tool_choice=name, strict=strict)
        return
    fragment = PROVIDER.format_tools(registry, tool_choice=name, strict=strict)
    sent = fragment["tools"][0]["function"]
    assert sent.get("strict", False) is strict or not strict, "strict-mode rewrite applied when asked"
    completion = await grammar_client.chat.completions.create(
        model="local",
        messages=[{"role": "user", "content": f"Call {name} with realistic example arguments."}],
        max_tokens=120 if name in RUNAWAY else 400,
        temperature=0,
        **fragment,
    )
    [call] = PROVIDER.parse_tool_calls(completion, registry=registry)
    assert call.name == name  # the named tool_choice was honoured
    if name in KNOWN:
        # The grammar cannot hold the sampler to this schema (see KNOWN): whatever comes back, the
        # model's mistake must reach it as an error result naming the problem, never as an exception.
        result = await registry.call(call)
        assert not result.is_error or result.error_kind == "invalid_arguments", result.text
        return
    raw = json.loads(completion.choices[0].message.tool_calls[0].function.arguments)
    # the grammar held the sampler to the schema we sent ...
    errors = [e.message for e in jsonschema.Draft202012Validator(sent["parameters"]).iter_errors(raw)]
    assert errors == [], (raw, sent["parameters"])
    # ... and what it allowed is what the Python function accepts
    registry[name].invoke(call.arguments)
    result = await registry.call(call)
    assert not result.is_error, (result.text, raw)
