"""Run stores: where pauses are claimed (single use) and where paused runs and finished histories wait.

`Agent.resume` claims each pause in a store before anything runs, so two resumes of one pause (two
copies of a result, the same snapshot JSON in two processes) run its pending calls once: the second gets
`AlreadyResumedError`. The UI adapters (`agentkit.ui`) also keep paused snapshots (keyed by the id the UI
echoes back) and finished histories in one.

* `SQLiteRunStore`: an embedded SQLite database (stdlib `sqlite3`, WAL mode), shared by every process
  on one machine that opens the same file. The default (`default_store`).
* `MemoryRunStore`: this process only (tests; a single-process server that accepts losing paused runs
  on restart).
"""

from __future__ import annotations as _annotations

import asyncio
import json
import os
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from ..exceptions import AgentSetupError
from ..messages import Message
from ._codec import decode_messages, encode_messages, storable_json

if TYPE_CHECKING:
    import sqlite3

    from ._snapshot import RunSnapshot

__all__ = ["MemoryRunStore", "RunStore", "SQLiteRunStore", "default_store", "default_store_path"]

T = TypeVar("T")


@runtime_checkable
class RunStore(Protocol):
    """Where pauses are claimed, paused runs wait, and finished histories are kept. Async: never blocks a loop.

    A store may carry a snapshot key as ``key`` (bytes, str or several): agents without their own
    ``snapshot_key`` sign and verify with it.
    """

    async def claim(self, pause_id: str) -> bool:
        """Mark the pause as resumed, atomically; False when it already was (by anyone using this store)."""
        ...

    async def save_paused(self, run_id: str, snapshot: RunSnapshot) -> None:
        """Keep a paused run's snapshot until one `claim_paused(run_id)` takes it."""
        ...

    async def paused(self, run_id: str) -> RunSnapshot | None:
        """Look at a paused run's snapshot without taking it."""
        ...

    async def claim_paused(self, run_id: str) -> RunSnapshot | None:
        """Take the snapshot away atomically (a second claim gets ``None``)."""
        ...

    async def save_history(self, message_id: str, messages: list[Message]) -> None:
        """Record a finished run's neutral history under the id of the last message a UI was sent."""
        ...

    async def history(self, message_id: str) -> list[Message] | None:
        """The history recorded for `message_id`, or ``None``."""
        ...


class MemoryRunStore:
    """A `RunStore` in this process: claims for its lifetime, paused runs and histories bounded.

    Past `max_entries` of paused runs (or of histories) the oldest go first. Claims are never forgotten
    (one short string per resumed pause), so a pause cannot be resumed twice for the store's lifetime.
    Claims hold per store object: give every agent that may resume the same runs the same store. Nothing
    is shared with other processes: use `SQLiteRunStore` for that.
    """

    def __init__(self, max_entries: int = 1000, *, key: Any = None) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be at least 1, got {max_entries}")
        self.max_entries = max_entries
        self.key = key
        """The snapshot key(s) of agents using this store without their own (None: snapshots unsigned)."""
        self._claims: set[str] = set()
        self._lock = threading.Lock()  # runs on other event loops (threads) may claim concurrently
        self._paused: OrderedDict[str, RunSnapshot] = OrderedDict()
        self._histories: OrderedDict[str, list[Message]] = OrderedDict()

    def _put(self, table: OrderedDict[str, Any], key: str, value: Any) -> None:
        table[key] = value
        table.move_to_end(key)
        while len(table) > self.max_entries:
            table.popitem(last=False)

    async def claim(self, pause_id: str) -> bool:
        """Mark the pause as resumed; False when it already was."""
        with self._lock:
            if pause_id in self._claims:
                return False
            self._claims.add(pause_id)
            return True

    async def save_paused(self, run_id: str, snapshot: RunSnapshot) -> None:
        """Keep a snapshot until it is claimed (or pushed out by newer ones)."""
        with self._lock:
            self._put(self._paused, run_id, snapshot)

    async def paused(self, run_id: str) -> RunSnapshot | None:
        """The snapshot, left in place."""
        return self._paused.get(run_id)

    async def claim_paused(self, run_id: str) -> RunSnapshot | None:
        """Take the snapshot."""
        with self._lock:
            return self._paused.pop(run_id, None)

    async def save_history(self, message_id: str, messages: list[Message]) -> None:
        """Record a history (a copy of the list)."""
        with self._lock:
            self._put(self._histories, message_id, list(messages))

    async def history(self, message_id: str) -> list[Message] | None:
        """The history recorded for `message_id` (a copy), or ``None``."""
        found = self._histories.get(message_id)
        return list(found) if found is not None else None


_SCHEMA = """
CREATE TABLE IF NOT EXISTS agentkit_claims (pause_id TEXT PRIMARY KEY, claimed_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS agentkit_paused (
    run_id TEXT PRIMARY KEY, pause_id TEXT NOT NULL, snapshot TEXT NOT NULL, saved_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS agentkit_histories (
    message_id TEXT PRIMARY KEY, messages TEXT NOT NULL, saved_at REAL NOT NULL
);
"""


class SQLiteRunStore:
    """A `RunStore` in an SQLite file: every process on the machine that opens the same path shares it.

    The claim is one conditional ``INSERT`` (a pause id already present inserts nothing), atomic across
    processes under SQLite's own locking; the database runs in WAL mode, so readers never wait for the
    writer. Every call runs in a worker thread (the event loop never blocks on the disk). Paused runs
    are stored as snapshot JSON, histories as neutral-message JSON (tool outputs as JSON values).

    The connection closes with `close()`, at the end of a ``with`` block, or when the store is garbage
    collected: a store dropped without `close()` leaks nothing.

    Args:
        path: the database file (created with its folder if missing); ``":memory:"`` for a private one.
        key: snapshot key(s) for agents using this store without their own ``snapshot_key``.
        timeout: seconds to wait for another process's write lock before failing.
    """

    def __init__(self, path: str | os.PathLike[str], *, key: Any = None, timeout: float = 30.0) -> None:
        self.path = str(path)
        self.key = key
        """The snapshot key(s) of agents using this store without their own (None: snapshots unsigned)."""
        self.timeout = timeout
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None
        self._pid = 0
        self._finalizer: weakref.finalize[Any, Any] | None = None

    def __repr__(self) -> str:
        return f"SQLiteRunStore({self.path!r})"

    def __enter__(self) -> SQLiteRunStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _connect(self) -> sqlite3.Connection:
        import sqlite3  # on first use: `import agentkit` stays cheap

        # A connection must not cross a fork: a child process opens its own.
        if self._connection is not None and self._pid == os.getpid():
            return self._connection
        if self.path != ":memory:":
            try:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise AgentSetupError(
                    f"cannot create the folder of the run store {self.path!r} ({exc}); pass another path "
                    "(or set AGENTKIT_RUN_STORE), or Agent(store=MemoryRunStore()) for one process"
                ) from None
        try:
            connection = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            connection.executescript(_SCHEMA)
        except sqlite3.Error as exc:
            raise AgentSetupError(
                f"cannot open the run store {self.path!r} ({exc}); pass another path (or set AGENTKIT_RUN_STORE), "
                "or Agent(store=MemoryRunStore()) for one process"
            ) from None
        self._connection, self._pid = connection, os.getpid()
        # Dropping the store closes its connection (Python 3.13 warns about an unclosed one); the finalizer
        # holds the connection, never the store.
        self._finalizer = weakref.finalize(self, _close_if_owner, connection, self._pid)
        return connection

    def _run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            return fn(self._connect())

    async def _call(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        return await asyncio.to_thread(self._run, fn)

    def close(self) -> None:
        """Close this process's connection (a later call opens a new one)."""
        with self._lock:
            if self._finalizer is not None:
                self._finalizer()  # closes the connection when this process opened it; runs once
                self._finalizer = None
            self._connection = None

    async def claim(self, pause_id: str) -> bool:
        """Mark the pause as resumed: one conditional insert; False when the id was there already."""

        def insert(db: sqlite3.Connection) -> bool:
            cursor = db.execute(
                "INSERT INTO agentkit_claims (pause_id, claimed_at) VALUES (?, ?) ON CONFLICT (pause_id) DO NOTHING",
                (pause_id, time.time()),
            )
            return cursor.rowcount == 1

        return await self._call(insert)

    async def save_paused(self, run_id: str, snapshot: RunSnapshot) -> None:
        """Keep the snapshot JSON under `run_id` (replacing an older one)."""
        text = snapshot.to_json()

        def upsert(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT OR REPLACE INTO agentkit_paused (run_id, pause_id, snapshot, saved_at) VALUES (?, ?, ?, ?)",
                (run_id, snapshot.pause_id, text, time.time()),
            )

        await self._call(upsert)

    async def paused(self, run_id: str) -> RunSnapshot | None:
        """The stored snapshot, left in place."""
        row = await self._call(
            lambda db: db.execute("SELECT snapshot FROM agentkit_paused WHERE run_id = ?", (run_id,)).fetchone()
        )
        return _snapshot(row[0]) if row is not None else None

    async def claim_paused(self, run_id: str) -> RunSnapshot | None:
        """Take the snapshot: one ``DELETE ... RETURNING``, so two takers never both get it."""
        row = await self._call(
            lambda db: db.execute(
                "DELETE FROM agentkit_paused WHERE run_id = ? RETURNING snapshot", (run_id,)
            ).fetchone()
        )
        return _snapshot(row[0]) if row is not None else None

    async def save_history(self, message_id: str, messages: list[Message]) -> None:
        """Record the history as JSON."""
        text = storable_json(encode_messages(messages, {}))  # UTF-8 safe: any string a history holds
        await self._call(
            lambda db: db.execute(
                "INSERT OR REPLACE INTO agentkit_histories (message_id, messages, saved_at) VALUES (?, ?, ?)",
                (message_id, text, time.time()),
            )
        )

    async def history(self, message_id: str) -> list[Message] | None:
        """The recorded history, or ``None``."""
        row = await self._call(
            lambda db: db.execute(
                "SELECT messages FROM agentkit_histories WHERE message_id = ?", (message_id,)
            ).fetchone()
        )
        return decode_messages(json.loads(row[0])) if row is not None else None


def _close_if_owner(connection: sqlite3.Connection, pid: int) -> None:
    # A forked child inherits the parent's connection object but must never use it, not even to close it.
    if os.getpid() == pid:
        connection.close()


def _snapshot(text: str) -> RunSnapshot:
    from ._snapshot import RunSnapshot

    return RunSnapshot.from_json(text)


def default_store_path() -> Path:
    """Where the default store lives.

    ``$AGENTKIT_RUN_STORE``, else ``$XDG_STATE_HOME/agentkit/runs.sqlite3`` (``~/.local/state/...``
    without ``XDG_STATE_HOME``).
    """
    explicit = os.environ.get("AGENTKIT_RUN_STORE")
    if explicit:
        return Path(explicit).expanduser()
    state_home = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state_home) / "agentkit" / "runs.sqlite3"


_DEFAULTS: dict[Path, SQLiteRunStore] = {}
_DEFAULTS_LOCK = threading.Lock()


def default_store() -> SQLiteRunStore:
    """The store of agents given none: one `SQLiteRunStore` per machine at `default_store_path`."""
    path = default_store_path()
    with _DEFAULTS_LOCK:
        store = _DEFAULTS.get(path)
        if store is None:
            store = _DEFAULTS[path] = SQLiteRunStore(path)
        return store
