"""Stream events as JSON: payloads dumped (never repr'd), nested subagent events, fail-closed."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import uuid
from decimal import Decimal
from typing import Any

import pytest
from pydantic import BaseModel

from agentkit.events import (
    ApprovalRequestedEvent,
    FinishEvent,
    StepFinishEvent,
    SubagentEvent,
    TextDeltaEvent,
    ToolErrorEvent,
    ToolProgressEvent,
    ToolResultEvent,
)
from agentkit.messages import Usage
from agentkit.ui import event_to_dict, event_to_json, jsonable

from .helpers import SECRET, Secret, collect, kitchen_sink


class Point(BaseModel):
    x: int
    label: str = "p"


@dataclasses.dataclass
class Box:
    point: Point
    when: dt.date


def test_pydantic_models_dataclasses_and_rich_types_are_dumped_as_json_data() -> None:
    value = {
        "model": Point(x=1),
        "box": Box(Point(x=2), dt.date(2026, 1, 2)),
        "when": dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc),
        "id": uuid.UUID(int=7),
        "money": Decimal("1.10"),
        "tags": {"a"},
        "raw": b"\xff\x00",
        "nan": float("nan"),
        3: "int key",
    }
    out = event_to_dict(ToolResultEvent("c1", "tool", value, 0))
    assert out["output"] == {
        "model": {"x": 1, "label": "p"},
        "box": {"point": {"x": 2, "label": "p"}, "when": "2026-01-02"},
        "when": "2026-01-02T03:04:05Z",
        "id": "00000000-0000-0000-0000-000000000007",
        "money": "1.10",
        "tags": ["a"],
        "raw": "_wA=",  # URL-safe base64
        "nan": None,
        "3": "int key",
    }
    assert "serialize_error" not in out
    assert out["kind"] == "tool-result" and out["call_id"] == "c1" and out["transform_error"] is None
    text = event_to_json(ToolResultEvent("c1", "tool", value, 0))
    assert json.loads(text)["output"]["model"] == {"x": 1, "label": "p"}
    assert "NaN" not in text and "Point(" not in text


@pytest.mark.parametrize("bad", [Secret(), {"nested": [Secret()]}, object()])
def test_a_value_that_cannot_be_dumped_is_withheld_never_its_repr(bad: Any) -> None:
    out = event_to_dict(ToolResultEvent("c1", "tool", bad, 0))
    assert out["output"] is None
    assert (
        out["serialize_error"]
        == "output could not be serialized to JSON (PydanticSerializationError); payload withheld"
    )
    assert SECRET not in event_to_json(ToolResultEvent("c1", "tool", bad, 0))


def test_a_circular_value_is_withheld() -> None:
    loop: list[Any] = []
    loop.append(loop)
    out = event_to_dict(ToolProgressEvent("c1", "tool", loop))
    assert out["data"] is None and "data could not be serialized to JSON (ValueError)" in out["serialize_error"]


def test_transform_errors_are_kept_and_withheld_payloads_stay_null() -> None:
    event = ToolErrorEvent("c1", "tool", None, "tool_error", 2, "transform 'error' failed (KeyError); payload withheld")
    assert event_to_dict(event) == {
        "call_id": "c1",
        "tool_name": "tool",
        "error": None,
        "error_kind": "tool_error",
        "step": 2,
        "transform_error": "transform 'error' failed (KeyError); payload withheld",
        "kind": "tool-error",
    }


def test_nested_subagent_events_are_converted_recursively() -> None:
    inner = ToolResultEvent("c2", "deep", Point(x=3), 0)
    event = SubagentEvent("agent-a", "a", "c1", SubagentEvent("agent-b", "b", "c9", inner))
    out = event_to_dict(event)
    assert out["event"]["event"] == {
        "call_id": "c2",
        "tool_name": "deep",
        "output": {"x": 3, "label": "p"},
        "step": 0,
        "transform_error": None,
        "kind": "tool-result",
    }
    assert out["event"]["kind"] == "subagent" and out["event"]["agent_id"] == "b"


def test_usage_and_status_fields() -> None:
    finish = event_to_dict(FinishEvent("hi", "complete", Usage(3, 4, 1)))
    assert finish == {
        "text": "hi",
        "status": "complete",
        "usage": {
            "input_tokens": 3,
            "output_tokens": 4,
            "requests": 1,
            "cache_read_tokens": 0,
            "cache_write_tokens": 0,
            "reasoning_tokens": 0,
        },
        "kind": "finish",
    }
    step = event_to_dict(StepFinishEvent(0, "stop", 0, Usage(1, 2, 1, cache_read_tokens=1)))
    assert step["usage"] == {
        "input_tokens": 1,
        "output_tokens": 2,
        "requests": 1,
        "cache_read_tokens": 1,
        "cache_write_tokens": 0,
        "reasoning_tokens": 0,
    }


def test_every_event_of_a_real_run_serializes_to_json() -> None:
    import asyncio

    events = asyncio.run(collect(kitchen_sink().stream("go")))
    kinds = {event.kind for event in events}
    assert kinds >= {"text-delta", "tool-call-start", "tool-call-delta", "tool-call", "tool-result", "tool-error"}
    assert kinds >= {"tool-progress", "subagent", "approval-requested", "step-finish", "finish"}
    for event in events:
        parsed = json.loads(event_to_json(event))
        assert parsed["kind"] == event.kind
    opaque = next(e for e in events if isinstance(e, ToolResultEvent) and e.tool_name == "opaque")
    assert event_to_dict(opaque)["output"] is None and "serialize_error" in event_to_dict(opaque)
    approval = next(e for e in events if isinstance(e, ApprovalRequestedEvent))
    assert event_to_dict(approval)["payload"] == {"amount": 5}  # the approval transform's view, not the IBAN


def test_non_events_are_refused_with_a_clear_error() -> None:
    with pytest.raises(TypeError, match="takes an agentkit stream event, got dict"):
        event_to_dict({"kind": "text-delta"})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="got type"):
        event_to_dict(TextDeltaEvent)  # type: ignore[arg-type]


def test_jsonable_reports_instead_of_raising() -> None:
    assert jsonable({"a": Point(x=1)}) == ({"a": {"x": 1, "label": "p"}}, None)
    value, problem = jsonable(Secret())
    assert value is None and problem is not None and SECRET not in problem


def test_every_event_class_has_to_dict_and_to_json() -> None:
    event = ToolResultEvent("c1", "tool", Point(x=1), 0)
    assert event.to_dict() == event_to_dict(event)
    assert json.loads(event.to_json()) == event_to_dict(event)
    nested = SubagentEvent("agent-a", "a", "c1", TextDeltaEvent("hi", 0))
    assert nested.to_dict()["event"] == {"text": "hi", "step": 0, "kind": "text-delta"}
    assert not hasattr(event, "__dict__")  # still slotted


def test_transcript_entries_dump_with_jsonable() -> None:
    from agentkit.agent import TranscriptEntry

    entry = TranscriptEntry(0, "c1", "tool", {"p": Point(x=1)}, output=Box(Point(x=2), dt.date(2026, 1, 1)))
    data, problem = jsonable(entry)
    assert problem is None and data["output"] == {"point": {"x": 2, "label": "p"}, "when": "2026-01-01"}
