"""Durable, single-use pauses: `RunSnapshot` (a paused run as signed JSON) and the run stores.

```python
result = await agent.generate("Refund order 42.")          # status "awaiting_approval"
text = result.snapshot().to_json()                           # store it anywhere (a database row, a queue)
...                                                          # later, in any process
snapshot = RunSnapshot.from_json(text)
result = await agent.resume(snapshot, {snapshot.pending[0].call_id: True})
```

Every resume claims its pause in the agent's run store first (`SQLiteRunStore` at `default_store_path`
unless ``Agent(store=...)``), so one pause runs its pending calls once, whatever was copied. See the guide
"Pausing and resuming runs".
"""

from __future__ import annotations as _annotations

from ._journal import EffectJournal, JournalEntry, effect_key
from ._snapshot import FORMAT, VERSION, RunSnapshot, SnapshotKey, fingerprint
from ._stores import (
    SCHEMA_VERSION,
    MemoryRunStore,
    ResumeRecord,
    ResumeRecords,
    RunStore,
    SQLiteRunStore,
    default_store,
    default_store_path,
)

__all__ = [
    "FORMAT",
    "SCHEMA_VERSION",
    "VERSION",
    "EffectJournal",
    "JournalEntry",
    "MemoryRunStore",
    "ResumeRecord",
    "ResumeRecords",
    "RunSnapshot",
    "RunStore",
    "SQLiteRunStore",
    "SnapshotKey",
    "default_store",
    "default_store_path",
    "effect_key",
    "fingerprint",
]
