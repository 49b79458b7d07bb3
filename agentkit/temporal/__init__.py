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
  activity (a tool's ``timeout`` bounds its attempt; `ActivityOptions` per tool key set the timeouts, the
  retry policy and what a call whose attempts ran out becomes); a background tool's call is its own
  activity, which the run waits for. Activities heartbeat, so a dead worker's calls move on in seconds.
* With code mode, a program runs in ``agentkit.run_program`` activities (each until it waits on its calls)
  and each call it makes is an ``agentkit.call_tool`` activity; an approval inside it pauses the run.
* A model request's messages reach its activity by reference, not as its input: the run's Temporal
  history grows with the conversation, not with its square; a payload over `TemporalLimits` fails the run
  with a `TemporalLimitError` naming the limit (a tool's oversized result becomes an error result).
* MCP servers' tools are listed by an activity and called as activities; `TemporalRun.events` follows a
  run's events from any process.
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

from ._agent import WORKFLOW, TemporalAgent
from ._dev import DevServer
from ._options import ActivityOptions, TemporalLimitError, TemporalLimits, effect_key
from ._run import RunState, TemporalRun
from ._worker import AgentWorker, worker
from ._workflow import AgentRunWorkflow

__all__ = [
    "WORKFLOW",
    "ActivityOptions",
    "AgentRunWorkflow",
    "AgentWorker",
    "DevServer",
    "RunState",
    "TemporalAgent",
    "TemporalLimitError",
    "TemporalLimits",
    "TemporalRun",
    "effect_key",
    "worker",
]
