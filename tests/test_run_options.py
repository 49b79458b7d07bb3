"""The options of one run are declared once (`RunOptions`); the typed dicts the entry points unpack follow it."""

from __future__ import annotations

import dataclasses
from typing import Any, ForwardRef

from agentkit._agent._options import RESUME_KEYWORDS, RUN_KEYWORDS, ResumeKwargs, RunKwargs, RunOptions


def _typed(annotations: dict[str, Any]) -> dict[str, str]:
    # the typed dicts type `deps` by the agent's Deps; the run time record takes any
    return {key: _text(value).replace("DepsT", "Any") for key, value in annotations.items()}


def _text(annotation: Any) -> str:
    return annotation.__forward_arg__ if isinstance(annotation, ForwardRef) else str(annotation)


def test_run_kwargs_are_run_options_written_out() -> None:
    declared = {field.name: str(field.type) for field in dataclasses.fields(RunOptions)}
    assert _typed(RunKwargs.__annotations__) == declared  # the same keys, the same types
    assert set(declared) | {"output_type"} == RUN_KEYWORDS


def test_resume_kwargs_are_the_options_resume_takes() -> None:
    resumable = {f.name: str(f.type) for f in dataclasses.fields(RunOptions) if f.metadata.get("resume")}
    assert _typed(ResumeKwargs.__annotations__) == resumable
    assert set(resumable) == RESUME_KEYWORDS
    assert set(ResumeKwargs.__annotations__) < set(RunKwargs.__annotations__)


def test_the_check_sees_a_drift() -> None:
    drifted = {**RunKwargs.__annotations__, "max_steps": "str | None"}
    declared = {field.name: str(field.type) for field in dataclasses.fields(RunOptions)}
    assert _typed(drifted) != declared
