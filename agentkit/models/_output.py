"""What a model request says about structured output: `OutputRequest`, and how a vendor serves it: `OutputPlan`.

The agent loop resolves an output type to one object schema, carried as a `ToolDefinition` (its key is
the name the vendor sees). Each request asks for it in one of three ways:

* ``native``: the vendor's own structured-output form (OpenAI's ``response_format``, Gemini's
  ``responseJsonSchema``, ...): the model's text answer is the JSON value;
* ``tool``: an output tool the model calls with the value as its arguments (added to the tools sent);
* ``prompted``: the schema in the instructions and the answer parsed from the text.

A `Model` decides between them (`Model.output_plan`) from what its vendor offers; the decision is an
`OutputPlan`, with the reason when a preferred form had to be given up.
"""

from __future__ import annotations as _annotations

from dataclasses import dataclass
from typing import Literal

from ..definitions import ToolDefinition

__all__ = ["OutputMode", "OutputPlan", "OutputRequest", "ResolvedMode"]

OutputMode = Literal["auto", "native", "tool", "prompted"]
"""How structured output is asked for: ``auto`` lets the model's vendor decide (native where it can)."""

ResolvedMode = Literal["native", "tool", "prompted"]
"""The form a request really uses."""


@dataclass(frozen=True)
class OutputRequest:
    """Structured output in one request (`ModelSettings.output`), set by the agent loop.

    In ``tool`` mode the output tool is already among the request's tools; providers add nothing. In
    ``native`` mode the provider adds the vendor's structured-output field built from `definition`; in
    ``prompted`` mode it adds `prompt` to the system instructions.
    """

    definition: ToolDefinition
    """The output's object schema (`ToolDefinition.input_schema`), name and description."""
    mode: ResolvedMode
    prompt: str | None = None
    """The instructions a ``prompted`` request adds (the schema and how to answer)."""


@dataclass(frozen=True)
class OutputPlan:
    """How one model serves a structured output: the mode, and why, when it is not the one preferred.

    `reason` is set when ``auto`` could not use the vendor's native form (e.g. ``cohere does not accept
    response_format together with tools``); `strict` says whether the vendor enforces the native schema
    (constrained decoding with the strict rewrite, whose optional fields are nullable).
    """

    mode: ResolvedMode
    strict: bool = False
    reason: str | None = None
