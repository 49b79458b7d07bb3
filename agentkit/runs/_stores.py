"""Run stores: where pauses are claimed (single use) and where paused runs and finished histories wait.

`Agent.resume` claims each pause in a store before anything runs, so two resumes of one pause (two
copies of a result, the same snapshot JSON in two processes) run its pending calls at most once: the
second gets `AlreadyResumedError`. With the claim, the store keeps a `ResumeRecord` of how that resume
went (started, paused again with the next pause's id, finished, failed), so an operator or a retry can
tell a run that was lost mid-way (a crash: started, no end) from one that finished. The UI adapters
(`agentkit.ui`) also keep paused snapshots (keyed by the id the UI echoes back) and finished histories
in one.

* `SQLiteRunStore`: an embedded SQLite database (stdlib `sqlite3`, WAL mode), shared by every process
  on one machine that opens the same file. The default (`default_store`).
* `MemoryRunStore`: this process only (tests; a single-process server that accepts losing paused runs
  on restart).
"""

from __future__ import annotations as _annotations

import asyncio
import dataclasses
import json
import os
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, runtime_checkable

from ..exceptions import AgentSetupError
from ..messages import Message
from ._codec import decode_messages, encode_messages, storable_json

if TYPE_CHECKING:
    import sqlite3

    from ._snapshot import RunSnapshot

__all__ = [
    "SCHEMA_VERSION",
    "MemoryRunStore",
    "ResumeRecord",
    "ResumeRecords",
    "RunStore",
    "SQLiteRunStore",
    "default_store",
    "default_store_path",
]

T = TypeVar("T")

ResumeState = Literal["started", "paused", "finished", "failed", "unknown"]
"""How a claimed resume went: running or lost (``started``), ``paused`` again, ``finished``, ``failed``
(an exception ended it), or ``unknown`` (claimed by an agentkit that recorded nothing more)."""


@dataclass(frozen=True)
class ResumeRecord:
    """What a run store knows of the one resume of a pause: claimed when, and how far it got.

    ``started`` with no later record after the process is gone means the resume was lost mid-way (the
    process crashed or was killed): the calls it had started may or may not have run. See the pausing guide,
    "After a crash".
    """

    pause_id: str
    state: ResumeState
    claimed_at: float
    """When the pause was claimed (seconds since the epoch)."""
    updated_at: float | None = None
    """When `state` was last written."""
    run_id: str | None = None
    """The run the pause belongs to (the same across its pauses)."""
    next_pause_id: str | None = None
    """For ``paused``: the id of the pause the resumed run stopped at (resume that one next)."""
    status: str | None = None
    """For ``paused`` and ``finished``: the run's status then (``"complete"``, ``"awaiting_approval"``, ...)."""
    error: str | None = None
    """For ``failed``: the exception's type (its message could carry secrets)."""

    def describe(self) -> str:
        """One sentence for an error message or an operator."""
        when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(self.claimed_at))
        if self.state == "paused":
            return f"it was resumed at {when} and paused again ({self.status}, pause {self.next_pause_id})"
        if self.state == "finished":
            return f"it was resumed at {when} and finished ({self.status})"
        if self.state == "failed":
            return f"it was resumed at {when} and failed ({self.error})"
        if self.state == "started":
            return (
                f"it was resumed at {when} and recorded no end: it is still running, or its process was lost "
                "mid-way (its started calls may or may not have run; see 'After a crash' in the pausing guide)"
            )
        return f"it was resumed at {when}"


@runtime_checkable
class ResumeRecords(Protocol):
    """A `RunStore` that also records how each claimed resume went (both stores shipped here do)."""

    async def record_resume(self, pause_id: str, **progress: Any) -> None:
        """Update the claimed pause's record: ``state=`` and any of `ResumeRecord`'s other fields."""
        ...

    async def resume_record(self, pause_id: str) -> ResumeRecord | None:
        """The record of the pause's resume, or ``None`` when it was never claimed here."""
        ...


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
        self._claims: dict[str, ResumeRecord] = {}
        self._lock = threading.Lock()  # runs on other event loops (threads) may claim concurrently
        self._paused: OrderedDict[str, RunSnapshot] = OrderedDict()
        self._histories: OrderedDict[str, list[Message]] = OrderedDict()

    def _put(self, table: OrderedDict[str, Any], key: str, value: Any) -> None:
        table[key] = value
        table.move_to_end(key)
        while len(table) > self.max_entries:
            table.popitem(last=False)

    async def claim(self, pause_id: str) -> bool:
        """Mark the pause as resumed (its record: ``started``); False when it already was."""
        with self._lock:
            if pause_id in self._claims:
                return False
            self._claims[pause_id] = ResumeRecord(pause_id, "started", time.time())
            return True

    async def record_resume(self, pause_id: str, **progress: Any) -> None:
        """Update the claimed pause's record (nothing happens for a pause never claimed here)."""
        with self._lock:
            record = self._claims.get(pause_id)
            if record is not None:
                self._claims[pause_id] = dataclasses.replace(record, updated_at=time.time(), **progress)

    async def resume_record(self, pause_id: str) -> ResumeRecord | None:
        """The pause's record, or ``None``."""
        return self._claims.get(pause_id)

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
"""The first schema (version 0): what every database starts from, old or new, before `_MIGRATIONS`."""

_MIGRATIONS: tuple[tuple[str, ...], ...] = (
    # 1: how each claimed resume went (a claim from before has state NULL: "unknown")
    (
        "ALTER TABLE agentkit_claims ADD COLUMN state TEXT",
        "ALTER TABLE agentkit_claims ADD COLUMN updated_at REAL",
        "ALTER TABLE agentkit_claims ADD COLUMN run_id TEXT",
        "ALTER TABLE agentkit_claims ADD COLUMN next_pause_id TEXT",
        "ALTER TABLE agentkit_claims ADD COLUMN status TEXT",
        "ALTER TABLE agentkit_claims ADD COLUMN error TEXT",
    ),
)
"""Schema changes in order; the database's ``PRAGMA user_version`` says how many it has. Append, never edit,
and only add (tables, nullable columns): an older agentkit keeps working on a database a newer one migrated,
so processes of both versions can share it during an upgrade."""

SCHEMA_VERSION = len(_MIGRATIONS)
"""The schema version this agentkit writes (``PRAGMA user_version`` of a migrated database)."""

_RECORD_FIELDS = ("state", "updated_at", "run_id", "next_pause_id", "status", "error")


def _migrate(db: sqlite3.Connection) -> None:
    """Bring the database up to `SCHEMA_VERSION`, once, whichever process opens it first (one write transaction).

    A database already past it (a newer agentkit's) is used as it is: migrations only add.
    """
    if db.execute("PRAGMA user_version").fetchone()[0] >= SCHEMA_VERSION:
        return
    db.execute("BEGIN IMMEDIATE")  # another process migrating at the same time waits here, then sees it done
    try:
        version = int(db.execute("PRAGMA user_version").fetchone()[0])
        for statements in _MIGRATIONS[version:]:
            for statement in statements:
                db.execute(statement)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


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
            _migrate(connection)
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
        """Mark the pause as resumed (state ``started``): one conditional insert; False when the id was there."""

        def insert(db: sqlite3.Connection) -> bool:
            cursor = db.execute(
                "INSERT INTO agentkit_claims (pause_id, claimed_at, state) VALUES (?, ?, 'started') "
                "ON CONFLICT (pause_id) DO NOTHING",
                (pause_id, time.time()),
            )
            return cursor.rowcount == 1

        return await self._call(insert)

    async def record_resume(self, pause_id: str, **progress: Any) -> None:
        """Update the claimed pause's record (one ``UPDATE``; nothing happens for a pause never claimed here)."""
        unknown = sorted(set(progress) - set(_RECORD_FIELDS))
        if unknown:
            raise TypeError(f"record_resume() takes {list(_RECORD_FIELDS)}, got {unknown}")
        values = {**progress, "updated_at": time.time()}
        columns = ", ".join(f"{name} = ?" for name in values)  # names checked against _RECORD_FIELDS above
        await self._call(
            lambda db: db.execute(
                f"UPDATE agentkit_claims SET {columns} WHERE pause_id = ?",  # fixed column names (checked above)
                (*values.values(), pause_id),
            )
        )

    async def resume_record(self, pause_id: str) -> ResumeRecord | None:
        """The pause's record, or ``None``."""
        row = await self._call(
            lambda db: db.execute(
                f"SELECT claimed_at, {', '.join(_RECORD_FIELDS)} FROM agentkit_claims WHERE pause_id = ?",
                (pause_id,),
            ).fetchone()
        )
        if row is None:
            return None
        claimed_at, state, *rest = row
        fields = dict(zip(_RECORD_FIELDS[1:], rest, strict=True))
        return ResumeRecord(pause_id, state or "unknown", claimed_at, **fields)

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
