"""Agents as Temporal workflows: durable runs that survive crashes, deploys and days-long pauses.

Needs the ``temporal`` extra (``pip install 'agentkit-tools[temporal]'``, the official ``temporalio`` SDK).

```python
from agentkit.temporal import TemporalAgent

durable = TemporalAgent(agent)                           # the agent's model and tools run as activities
async with durable.worker(client):                       # a worker (in this process, or its own)
    run = await durable.start(client, "Refund order 42", id="refund-42")
    state = await run.wait()                             # paused (approval, data, client) or ended
    if state.status == "awaiting_approval":
        await run.resume({p.call_id: True for p in state.pending})   # from any process
    result = await run.result()                          # the RunResult
```

* Each model request is an ``agentkit.model_request`` activity, each tool call an ``agentkit.call_tool``
  activity (a tool's ``timeout`` bounds its attempt; `ActivityOptions` per tool key set the timeout and
  the retry policy); a background tool's call is its own activity, which the run waits for.
* Approvals, suspensions and client-tool outputs arrive as a ``resume`` update, checked before it is
  accepted: wrong answers are refused (`ResumeError`) and leave nothing in the workflow's history.
* ``cancel`` is a signal (status ``"cancelled"`` at the next safe point); the ``state`` query and the
  ``wait`` update tell what the run does; the workflow's result is the run's `RunResult`.
"""

from __future__ import annotations as _annotations

try:
    # fail here, with the install hint, rather than deep inside
    import temporalio  # noqa: F401  # pyright: ignore[reportUnusedImport]
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("agentkit.temporal needs the Temporal SDK: pip install 'agentkit-tools[temporal]'") from exc

from ._agent import WORKFLOW, ActivityOptions, RunState, TemporalAgent, TemporalRun, worker
from ._dev import DevServer
from ._workflow import AgentRunWorkflow

__all__ = [
    "WORKFLOW",
    "ActivityOptions",
    "AgentRunWorkflow",
    "DevServer",
    "RunState",
    "TemporalAgent",
    "TemporalRun",
    "worker",
]
